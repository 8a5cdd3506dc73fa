# Class: a hidden sync every step. The loss is taken over the valid positions only, picked by
# boolean-mask indexing (line 19): logits[mask] must learn on the host how many positions are True
# (aten::nonzero: a copy to the host and a sync) before it can size its result, so every step the
# host waits for the GPU there, then queues the rest of the step while the GPU idles.
import time, torch
if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, D, V = 16, 128, 256, 1024
    model = torch.nn.Sequential(torch.nn.Linear(D, 1024), torch.nn.GELU(), torch.nn.Linear(1024, V)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(B, T, D, device="cuda")
    y = torch.randint(0, V, (B, T), device="cuda")
    t = time.time(); steps = 0
    for i in range(300):
        lengths = torch.randint(T // 2, T + 1, (B, 1), device="cuda")
        mask = torch.arange(T, device="cuda")[None, :] < lengths      # the valid positions
        logits = model(x)
        # the loss over the valid positions only: boolean-mask indexing
        loss = torch.nn.functional.cross_entropy(logits[mask], y[mask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        steps += 1
    torch.cuda.synchronize(); print(f"c54 wall_s={time.time()-t:.3f} steps={steps}")
