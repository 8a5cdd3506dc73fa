"""python_gaps.py — a host-bound training loop in Python for
tests/e2e/collector_python.sh: each step does pure-Python work (build_batch,
no CUDA call) and then launches and syncs on the fake CUDA runtime through
ctypes, so the GPU idles while the interpreter runs build_batch.

    python3 python_gaps.py LIBCUDART [STEPS]
"""
import ctypes
import sys

rt = ctypes.CDLL(sys.argv[1])


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 40


def build_batch(n):
    rows = []
    for i in range(n):
        rows.append([(i * j) % 7 for j in range(32)])  # BUILD
    return rows


def train():
    s = ctypes.c_void_p()
    rt.cudaStreamCreate(ctypes.byref(s))
    for _ in range(STEPS):
        build_batch(1500)  # STEP
        rt.cudaLaunchKernel(ctypes.c_void_p(0x1000), Dim3(64, 1, 1), Dim3(128, 1, 1), None,
                            ctypes.c_size_t(0), s)
        rt.cudaStreamSynchronize(s)


train()
