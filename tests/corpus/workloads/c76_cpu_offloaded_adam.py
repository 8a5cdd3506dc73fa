# Class: a hand-rolled optimizer offload (what ZeRO-Offload does, done naively): the model trains on
# the GPU, but its master weights and Adam live on the CPU. Every step the gradients are copied to
# the host (line 24, pageable), torch.optim.Adam steps on the CPU tensors (line 25), and the
# updated weights are copied back (line 27, pageable). 8 Linear(2048, 2048) layers, 33.6 M parameters.
import time, torch
torch.manual_seed(0)
D, L, B = 2048, 8, 256

if __name__ == "__main__":
    layers = []
    for _ in range(L):
        layers += [torch.nn.Linear(D, D), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    master = [p.detach().cpu().clone().requires_grad_(True) for p in model.parameters()]
    opt = torch.optim.Adam(master, lr=1e-4)                                  # Adam on the CPU copies
    x = torch.randn(B, D, device="cuda")
    y = torch.randn(B, D, device="cuda")
    t = time.time()
    for step in range(60):
        loss = torch.nn.functional.mse_loss(model(x), y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        for p, m in zip(model.parameters(), master):
            m.grad = p.grad.to("cpu")                                        # grads to the host
        opt.step()                                                           # Adam on the CPU
        with torch.no_grad():
            for p, m in zip(model.parameters(), master): p.copy_(m)          # weights back
    torch.cuda.synchronize()
    print(f"c76 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
