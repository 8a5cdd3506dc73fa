# Class: a fresh large host buffer every step. Each step builds its input in a newly allocated
# 256 MiB numpy array (np.ones, line 13: glibc maps fresh memory for it, so every page is faulted
# in and zeroed by the kernel, then filled, and unmapped again when the step drops it); a slice of
# it goes to the GPU for a short matmul. The main thread spends the gaps faulting in new pages —
# an expert says: reuse one preallocated (ideally pinned) buffer instead of allocating every step.
import time, numpy as np, torch
if __name__ == "__main__":
    w = torch.randn(4096, 4096, device="cuda")
    x = torch.empty(0)
    t = time.time(); steps = 0
    for i in range(120):
        # the step's input, built in fresh memory each time
        buf = np.ones((64, 1 << 20), dtype=np.float32)   # FRESH
        x = torch.from_numpy(buf[:, :4096]).cuda()
        y = (x @ w).relu().sum()
        steps += 1
    torch.cuda.synchronize(); print(f"c42 wall_s={time.time()-t:.3f} steps={steps}")
