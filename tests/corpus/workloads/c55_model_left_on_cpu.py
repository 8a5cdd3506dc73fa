# Class: the model left on the CPU by mistake. The MLP is built without .cuda() (line 9), so its
# forward (line 16), backward and SGD step run in PyTorch's CPU kernels on the host's threads; only
# the loss is computed on the GPU, from the output copied there (line 17). The GPU has almost nothing
# to do.
import time, torch
if __name__ == "__main__":
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    target = torch.randn(256, 1024, device=dev)
    t = time.time(); steps = 0
    for i in range(80):
        x = torch.randn(256, 1024)
        # the forward runs where the model's weights are: on the CPU
        out = model(x)
        loss = torch.nn.functional.mse_loss(out.to(dev), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    torch.cuda.synchronize(); print(f"c55 wall_s={time.time()-t:.3f} steps={steps}")
