"""python_compile.py — a training loop on the fake CUDA runtime that
"compiles" like torch.compile, for tests/e2e/analyzer_compile.sh: the
compiling is Python work in tests/helpers/fake_torch/torch/_dynamo/
convert_frame.py (its path is what the analyzer recognises), done while no
GPU work is queued.

    python3 python_compile.py LIBCUDART MODE [STEPS]

MODE once:      compiles 0.8 s after the first step, then STEPS GPU-bound steps
     again:     0.4 s after the first step and 0.4 s again three quarters in
     workers:   the compiling runs in a forked worker while the main thread
                waits for it (Inductor's compile workers)
"""
import ctypes
import importlib.util
import multiprocessing
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "fake_convert_frame", os.path.join(here, "fake_torch", "torch", "_dynamo", "convert_frame.py"))
convert_frame = importlib.util.module_from_spec(spec)
spec.loader.exec_module(convert_frame)

rt = ctypes.CDLL(sys.argv[1])
MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


s = ctypes.c_void_p()
rt.cudaStreamCreate(ctypes.byref(s))


def step():
    for _ in range(4):
        rt.cudaLaunchKernel(ctypes.c_void_p(0x1000), Dim3(64, 1, 1), Dim3(128, 1, 1), None,
                            ctypes.c_size_t(0), s)
    rt.cudaStreamSynchronize(s)


def compile_model(seconds):
    if MODE == "workers":
        p = multiprocessing.get_context("fork").Process(target=convert_frame._compile, args=(seconds,))
        p.start()
        p.join()
    else:
        convert_frame._compile(seconds)  # CALL


step()
compile_model(0.4 if MODE == "again" else 0.8)
for i in range(STEPS):
    if MODE == "again" and i == 3 * STEPS // 4:
        compile_model(0.4)
    step()
