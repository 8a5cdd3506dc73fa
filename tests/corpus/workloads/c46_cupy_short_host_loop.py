# Class: a short CuPy steady state, host-bound. After its imports and one warm-up, the job runs
# 300 steps for well under a second of steady state: each step prepares its input on the host
# with numpy (a sort of 2M values, line 14), copies it to the GPU and runs a small reduction. The
# GPU idles most of that short steady state. An expert says: the GPU waits for the host's numpy
# work at line 14 each step (move it to the GPU, cupy.sort) — a steady-state finding however
# short, not "start-up".
import time, numpy as np, cupy as cp
if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1 << 21).astype(np.float32)
    cp.asarray(a).sum(); cp.cuda.Device().synchronize()
    t = time.time(); steps = 0
    for i in range(300):
        h = np.sort(a[: (1 << 21) - i])   # HOST
        s = cp.asarray(h).sum()
        steps += 1
    cp.cuda.Device().synchronize(); print(f"c46 wall_s={time.time()-t:.3f} steps={steps}")
