# Class: training under CPU contention, run pinned to 2 CPUs (taskset -c 0-1) beside 8 busy loops
# on the same CPUs (started by the collect script, not by this file). Each step's backward() runs on
# PyTorch's autograd engine thread for the GPU; the loop thread waits for it (a condition variable:
# futex) at loss.backward() (line 15). Starved of CPUs, that engine thread waits for a CPU while the
# loop waits for it: the GPU idles because other processes hold the CPUs.
import time, torch
torch.set_num_threads(1)
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(12)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(64, 1024, device="cuda")
t = time.time(); steps = 0
while time.time() - t < 12:
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()   # BACKWARD
    opt.step(); steps += 1
torch.cuda.synchronize(); print(f"c40 wall_s={time.time()-t:.3f} steps={steps}")
