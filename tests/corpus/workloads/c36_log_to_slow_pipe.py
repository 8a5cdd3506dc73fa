# Class: logging into a slow pipe. Each step the loop writes a ~4 KiB log record to a pipe whose
# reader (a log shipper, here a child process that takes ~10 ms a record) drains it slower than
# the steps come (lines 19-20: write and flush); once the pipe's buffer is full the main thread
# blocks in write until the reader catches up. A step is ~1 ms of GPU work.
import subprocess, sys, time, torch
shipper = subprocess.Popen([sys.executable, "-c",
    "import sys, time\nfor line in sys.stdin.buffer:\n    time.sleep(0.01)"], stdin=subprocess.PIPE)
layers = []
for _ in range(6):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
x = torch.randn(256, 2048, device="cuda")
record = ("step metrics " + "x" * 4096 + "\n").encode()
t = time.time()
for step in range(600):
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    shipper.stdin.write(record)
    shipper.stdin.flush()
shipper.stdin.close(); shipper.wait()
torch.cuda.synchronize(); print(f"c36 wall_s={time.time()-t:.3f}")
