"""python_compile.py — a training loop on the fake CUDA runtime that
"compiles" like torch.compile, for tests/e2e/analyzer_compile.sh: the
compiling is Python work in tests/helpers/fake_torch/torch/_dynamo/
convert_frame.py (its path is what the analyzer recognises), done while no
GPU work is queued.

    python3 python_compile.py LIBCUDART MODE [STEPS]

MODE once:      compiles 0.8 s after the first step, then STEPS GPU-bound steps
     again:     0.4 s after the first step and 0.4 s again three quarters in
     workers:   the compiling runs in a forked worker while the main thread
                waits for it
     pool:      it runs in a process started as Inductor starts its compile-worker
                pool (fake_torch/torch/_inductor/compile_worker/__main__.py)
"""
import multiprocessing
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU, stand_in  # noqa: E402

convert_frame = stand_in("torch", "_dynamo", "convert_frame.py")
gpu = FakeGPU(sys.argv[1])
MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40


def step():
    gpu.launch(4)
    gpu.sync()


def compile_model(seconds):
    if MODE == "pool":
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "fake_torch", "torch", "_inductor", "compile_worker",
                                                     "__main__.py"), str(seconds)], check=True)
    elif MODE == "workers":
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
