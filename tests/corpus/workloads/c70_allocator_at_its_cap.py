# Class: the caching allocator at its memory cap. Sequence lengths vary every step (a batch of
# 16 sequences of 256-2048 tokens, unpadded to a few sizes) and the process's GPU memory is capped
# (set_per_process_memory_fraction, line 25, as a job sharing a GPU does) a little above the
# longest step's peak. Blocks cached for one length do not fit the next: an allocation fails, the
# allocator frees its cache (cudaFree waits for the GPU) and retries, step after step.
import time, torch
torch.manual_seed(0)
H = 1024
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(H, 4 * H), torch.nn.GELU(),
                                                  torch.nn.Linear(4 * H, H)) for _ in range(2)]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

def step(length):
    x = torch.randn(16, length, H, device="cuda")
    loss = model(x).float().pow(2).mean()
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    return loss

step(2048); step(2048)                                       # the longest step's peak, measured
torch.cuda.synchronize()
peak = torch.cuda.max_memory_allocated()
torch.cuda.empty_cache()                                     # (once, before the loop)
total = torch.cuda.get_device_properties(0).total_memory
cap = int(peak * 1.15)
torch.cuda.set_per_process_memory_fraction(cap / total)     # the job's share of the GPU
lengths = torch.randint(256, 2049, (400,)).tolist()
t = time.time()
for n in lengths:
    loss = step(n)
torch.cuda.synchronize()
s = torch.cuda.memory_stats()
print(f"c70 wall_s={time.time()-t:.3f} cap_mib={cap >> 20} peak_mib={peak >> 20} "
      f"retries={s['num_alloc_retries']} frees={s.get('segment.all.freed', -1)}")
