# Class: a subprocess in the training loop. Every 10 steps the loop logs the GPU's utilisation and
# memory by running nvidia-smi and reading its output (line 17, subprocess.run with
# capture_output), and waits for it; a step is a few milliseconds of GPU work. The GPU idles while
# the main thread waits for its child process.
import subprocess, time, torch
layers = []
for _ in range(8):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(512, 2048, device="cuda")
t = time.time(); log = []
for step in range(600):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    if step % 10 == 0:
        r = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader"], capture_output=True, text=True)
        log.append((step, r.stdout.strip()))
torch.cuda.synchronize(); print(f"c34 wall_s={time.time()-t:.3f} logged={len(log)} last={log[-1][1]!r}")
