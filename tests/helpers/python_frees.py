"""python_frees.py — a training loop on the fake CUDA runtime that frees
device memory every step, for tests/e2e/analyzer_frees.sh: cudaFree waits
for the device to drain, so the GPU idles while the host prepares the next
step.

    python3 python_frees.py LIBCUDART MODE [STEPS] [LIBFAKE_ATEN]

MODE empty_cache: torch.cuda.empty_cache() every step (the stand-in in
                  fake_torch/torch/cuda/memory.py), then cudaMalloc again
     direct:      cudaFree from the loop itself (no empty_cache)
     conv:        cudaFree inside a stand-in of cuDNN's convolution
                  (libfake_aten.so: at::native::cudnn_convolution), as the
                  caching allocator frees when a workspace does not fit
     null:        cudaFree(NULL) every step (frees nothing, waits for nothing)
     none:        the same loop without frees
"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU, stand_in  # noqa: E402

memory = stand_in("torch", "cuda", "memory.py")
gpu = FakeGPU(sys.argv[1])
rt = gpu.rt
MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
if MODE == "conv":
    conv = getattr(ctypes.CDLL(sys.argv[4]), "_ZN2at6native17cudnn_convolutionERKNS_6TensorES3_N3c108ArrayRefIlEES6_S6_lbbb")


def alloc(n):
    blocks = []
    for _ in range(n):
        p = ctypes.c_void_p()
        rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20))
        blocks.append(p)
    return blocks


def host_work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


blocks = alloc(2)
for i in range(STEPS):
    gpu.launch(4)
    if MODE == "empty_cache":
        memory.empty_cache(rt, blocks)  # CALL
        blocks = alloc(2)
    elif MODE == "direct":
        for b in blocks:
            rt.cudaFree(b)  # DIRECT
        blocks = alloc(2)
    elif MODE == "conv":
        for b in blocks:
            conv(b)  # CONV
        blocks = alloc(2)
    elif MODE == "null":
        rt.cudaFree(None)
    host_work(0.004)
gpu.sync()
