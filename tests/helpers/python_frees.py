"""python_frees.py — a training loop on the fake CUDA runtime that frees
device memory every step, for tests/e2e/analyzer_frees.sh: cudaFree waits
for the device to drain, so the GPU idles while the host prepares the next
step.

    python3 python_frees.py LIBCUDART MODE [STEPS]

MODE empty_cache: torch.cuda.empty_cache() every step (the stand-in in
                  fake_torch/torch/cuda/memory.py), then cudaMalloc again
     direct:      cudaFree from the loop itself (no empty_cache)
     none:        the same loop without frees
"""
import ctypes
import importlib.util
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "fake_cuda_memory", os.path.join(here, "fake_torch", "torch", "cuda", "memory.py"))
memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memory)

rt = ctypes.CDLL(sys.argv[1])
MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


s = ctypes.c_void_p()
rt.cudaStreamCreate(ctypes.byref(s))


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
    for _ in range(4):
        rt.cudaLaunchKernel(ctypes.c_void_p(0x1000), Dim3(64, 1, 1), Dim3(128, 1, 1), None,
                            ctypes.c_size_t(0), s)
    if MODE == "empty_cache":
        memory.empty_cache(rt, blocks)  # CALL
        blocks = alloc(2)
    elif MODE == "direct":
        for b in blocks:
            rt.cudaFree(b)  # DIRECT
        blocks = alloc(2)
    host_work(0.004)
rt.cudaStreamSynchronize(s)
