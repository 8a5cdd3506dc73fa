"""python_copies.py — a loop on the fake CUDA runtime bound by host-to-device
copies, for tests/e2e/analyzer_copies.sh: each step copies 8 MiB from pinned
host memory (cudaHostAlloc) with cudaMemcpyAsync (at the runtime's
FAKECUDA_PINNED_GBPS) and launches one short kernel; the host never waits
but every 50 steps.  The GPU always has work, most of it the copy engine's.

    python3 python_copies.py LIBCUDART [STEPS]
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

gpu = FakeGPU(sys.argv[1])
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 600
BATCH = 8 << 20
dev, src = ctypes.c_void_p(), ctypes.c_void_p()
gpu.rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(BATCH))
gpu.rt.cudaHostAlloc(ctypes.byref(src), ctypes.c_size_t(BATCH), 0)
for step in range(STEPS):
    gpu.rt.cudaMemcpyAsync(dev, src, ctypes.c_size_t(BATCH), 1, gpu.stream)  # COPY (HostToDevice)
    gpu.launch(1)
    if step % 50 == 49:
        gpu.sync()
gpu.sync()
