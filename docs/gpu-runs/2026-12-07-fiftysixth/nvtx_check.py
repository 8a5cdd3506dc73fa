# nvtx_check.py — torch.cuda.nvtx under ingero-run (docs/gpu-runs.md section 56): a loop whose
# "data" range prepares each batch on the CPU (a 10 ms sleep and CPU tensor work) while the GPU
# waits, its "train" range the model's step; a mark, a started range, and emit_nvtx's operator
# ranges for two passes. Expected: nvtx_ranges holds 60 of each of step/data/train, the mark,
# the started range and aten:: operator ranges; explain's section puts most GPU idle in "data".
import time
import torch

m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)


def load():
    a = torch.randn(512, 1024)
    for _ in range(20):
        a = a * 1.0001 + 0.1
    time.sleep(0.01)
    return a


for step in range(60):
    with torch.cuda.nvtx.range("step"):
        with torch.cuda.nvtx.range("data"):
            b = load().cuda()
        with torch.cuda.nvtx.range("train"):
            loss = m(b).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
torch.cuda.nvtx.mark("done")
rid = torch.cuda.nvtx.range_start("tail")
try:
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(2):
            m(b).sum().backward()
except Exception as e:  # emit_nvtx needs the profiler: say so, the rest stands
    print("emit_nvtx:", e)
torch.cuda.synchronize()
torch.cuda.nvtx.range_end(rid)
print("ok")
