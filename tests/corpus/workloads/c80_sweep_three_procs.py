# Class: a sweep sharing one GPU. The script starts three copies of itself at once (line 12), each
# training the same MLP (4 × Linear(4096, 4096), batch 1,024, FP32) with its own learning rate for
# 10 s, as a hyper-parameter sweep on one machine does; each alone would keep the GPU busy. The GPU
# time-slices between the three processes, so each one's kernels take about three times as long
# as they would alone, and each one's queue is full. An expert says: the GPU is busy (shared by
# three processes, none starving it); each run is ~3× slower than alone because they share the
# GPU; run them one after another (or on separate GPUs) if each run's time matters; nothing in
# the input pipeline, no sync or launch problem.
import subprocess, sys, time, torch
if len(sys.argv) == 1:
    lrs = ("0.1", "0.01", "0.001")
    procs = [subprocess.Popen([sys.executable, sys.argv[0], lr]) for lr in lrs]
    sys.exit(max(p.wait() for p in procs))
lr = float(sys.argv[1])
net = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(4096, 4096), torch.nn.ReLU())],
                          torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(net.parameters(), lr=lr)
x = torch.randn(1024, 4096, device="cuda"); y = torch.randint(0, 10, (1024,), device="cuda")
t = time.time(); steps = 0
while time.time() - t < 10:
    loss = torch.nn.functional.cross_entropy(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); steps += 1
    if steps % 50 == 0: loss.item()                  # the sweep's progress line reads it now and then
torch.cuda.synchronize(); print(f"c80 lr={lr} wall_s={time.time()-t:.3f} steps={steps}")
