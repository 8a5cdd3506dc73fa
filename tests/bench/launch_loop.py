"""launch_loop.py — a launch-bound training loop on the fake CUDA runtime,
for tests/bench/overhead.sh: each step runs a forward and a backward pass
over LAYERS layers, each layer a few Python frames deep and a little Python
work before each of its launches, then an optimizer pass (one launch per
parameter) and one cudaStreamSynchronize — the shape of the H200's Adam loop
(examples/train_overhead.py: ~31 launches and a sync per step).

    python3 launch_loop.py LIBCUDART [--steps N] [--turns MINE THEIRS READY | --toggle] [--chunks N]
                           [--fault-pages N]

--fault-pages N: each step also maps N fresh pages, touches each, and unmaps
them (N user page faults a step: tests of the memory evidence).

Without --turns: one line "steps=N wall_s=W thread_cpu_s=C calls_per_s=R".
With --turns or --toggle: as examples/train_overhead.py (tests/bench/turns_lib.sh).
"""
import argparse
import ctypes
import mmap
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("lib")
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--layers", type=int, default=5)
ap.add_argument("--turns", nargs=3, metavar=("MINE", "THEIRS", "READY"))
ap.add_argument("--toggle", action="store_true")
ap.add_argument("--chunks", type=int, default=60)
ap.add_argument("--fault-pages", type=int, default=0)
a = ap.parse_args()

rt = ctypes.CDLL(a.lib)


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


stream = ctypes.c_void_p()
rt.cudaStreamCreate(ctypes.byref(stream))
launch, sync = rt.cudaLaunchKernel, rt.cudaStreamSynchronize
GRID, BLOCK, ZERO = Dim3(256, 1, 1), Dim3(128, 1, 1), ctypes.c_size_t(0)
KERNELS = [ctypes.c_void_p(0x1000 + 0x40 * i) for i in range(12)]


def dispatch(k, shape):
    # what an operator's Python and C++ dispatch does before its launch
    n = 1
    for d in shape:
        n *= d
    return launch(KERNELS[k % len(KERNELS)], GRID, BLOCK, None, ZERO, stream), n


def linear(i, shape):
    dispatch(3 * i, shape)       # matmul
    dispatch(3 * i + 1, shape)   # bias add
    return dispatch(3 * i + 2, shape)   # activation


def forward(shape):
    for i in range(a.layers):
        linear(i, shape)


def backward(shape):
    for i in reversed(range(a.layers)):
        dispatch(i, shape)
        dispatch(i + 1, shape)


def step():
    shape = (1024, 256)
    forward(shape)
    backward(shape)
    for p in range(2 * a.layers):   # the optimizer: one launch per parameter
        dispatch(p, (256,))
    sync(stream)
    if a.fault_pages:
        m = mmap.mmap(-1, a.fault_pages * mmap.PAGESIZE)
        for off in range(0, len(m), mmap.PAGESIZE):
            m[off] = 1
        m.close()


def run(steps):
    w, c = time.perf_counter(), time.thread_time()
    for _ in range(steps):
        step()
    return time.perf_counter() - w, time.thread_time() - c


run(max(1, a.steps // 5))   # warm-up
calls_per_step = 3 * a.layers + 2 * a.layers + 2 * a.layers + 1
if a.toggle:
    for i in range(a.chunks):
        on = i % 2
        (rt.cudaProfilerStart if on else rt.cudaProfilerStop)()
        time.sleep(0.01)   # the tracer's sender drains what the last chunk queued
        wall, cpu = run(a.steps)
        print(f"chunk={i} on={on} wall_s={wall:.5f} thread_cpu_s={cpu:.5f}", flush=True)
elif not a.turns:
    wall, cpu = run(a.steps)
    print(f"steps={a.steps} wall_s={wall:.4f} thread_cpu_s={cpu:.4f} "
          f"calls_per_s={a.steps * calls_per_step / wall:.0f}")
else:
    # O_RDWR: opening a FIFO this way never waits for the other end (Linux)
    mine, theirs, ready = (os.open(f, os.O_RDWR) for f in a.turns)
    os.write(ready, b"r")
    for i in range(a.chunks):
        if os.read(mine, 1) != b"t":
            raise SystemExit("launch_loop: bad turn token")
        wall, cpu = run(a.steps)
        print(f"chunk={i} wall_s={wall:.5f} thread_cpu_s={cpu:.5f}", flush=True)
        os.write(theirs, b"t")
