"""python_gpu_idle.py LIBCUDART [STEPS] [LAUNCHES] [KERNEL_US] [HOST_MS] [SPACING_US] [KERNELS] — a
loop that never waits for the GPU: each step queues LAUNCHES kernels of
KERNEL_US (the fake runtime's FAKECUDA_KERNEL_US, passed again here) and then
keeps the host busy for HOST_MS while the GPU drains.  The GPU's true busy
time is known (the kernels of a step run back to back from its first launch:
the host queues them faster than they run), so the test can hold the
measured GPU idle (gpu_marks) to it.  With SPACING_US (more than KERNEL_US)
the host works that long after each launch: every kernel runs alone, the GPU
keeps up (a launch-bound loop), and the truth is the same sum.  With KERNELS,
the kernel launched changes that many times over the run (as after each
recompilation of a compiled model: new kernel handles).  With RENEW=1 in the
environment each step runs on a stream of its own, made for it and destroyed
after it.  With DISTINCT=1 each launch of a step (SPACING_US) is a kernel of its
own, the same ones every step (a model's layers).  Prints one truth line."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

lib = sys.argv[1]
steps, launches = int(sys.argv[2]), int(sys.argv[3])
kernel_us, host_ms = float(sys.argv[4]), float(sys.argv[5])
spacing_ns = int(float(sys.argv[6]) * 1000) if len(sys.argv) > 6 else 0
kernels = int(sys.argv[7]) if len(sys.argv) > 7 else 1
renew = os.environ.get("RENEW") == "1"
distinct = os.environ.get("DISTINCT") == "1"


def spin_until(t):
    while time.monotonic_ns() < t:
        pass


g = FakeGPU(lib)
g.launch(1)
g.sync()
t0 = time.monotonic_ns()
busy = 0
for step in range(steps):
    a = time.monotonic_ns()
    if renew and step:
        g.renew()
    k = 0x1000 + 0x40 * (step * kernels // steps)
    if spacing_ns:
        for i in range(launches):
            g.launch(1, 0x100000 + 0x40 * i if distinct else k)
            spin_until(time.monotonic_ns() + spacing_ns)
    else:
        g.launch(launches, k)
    # the kernels run from the first launch on, one after another
    busy += int(launches * kernel_us * 1000)
    spin_until((time.monotonic_ns() if spacing_ns else a) + int(host_ms * 1e6))
g.sync()
t1 = time.monotonic_ns()
print(f"truth t0_ns={t0} t1_ns={t1} busy_ns={busy}")
