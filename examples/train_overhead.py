"""A launch-heavy training loop for measuring the tracer's overhead: a small
MLP trained with Adam for many steps (thousands of small kernels per second).

  python3 examples/train_overhead.py [--steps 3000]
Prints steps_per_s, wall_s and thread_cpu_s: the main thread's CPU time over
the loop, where a tracer's per-call and per-switch costs land.

  python3 examples/train_overhead.py --turns MINE THEIRS READY --chunks 60 --steps 300
Takes turns with a second copy of itself (one traced, one not): after its
warm-up it writes a byte to the FIFO READY, then --chunks times waits for a
byte on the FIFO MINE, runs --steps steps and passes the byte on to THEIRS.
Only one process runs at a time and each chunk lasts well under a second, so
the two are compared on the same machine state: whole runs minutes apart
differ by ~10 % on a shared machine (docs/gpu-runs.md), neighbouring chunks
do not.  Prints one line per chunk.

  python3 examples/train_overhead.py --toggle --chunks 60 --steps 300
One process against itself: chunks alternate between torch.cuda.profiler
stop() and start(), which a tracer run with INGERO_CAPTURE=cudaProfilerApi
takes as pause and resume; untraced they change nothing.  Prints
"chunk=I on=0|1 wall_s=W thread_cpu_s=C" per chunk (turns_lib.sh, turns_toggle).
"""
import argparse
import os
import time

import torch
import torch.cuda.profiler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--turns", nargs=3, metavar=("MINE", "THEIRS", "READY"))
    ap.add_argument("--toggle", action="store_true")
    ap.add_argument("--no-profiler-calls", action="store_true",
                    help="--toggle without the profiler start()/stop() calls: the method's A/A without them")
    ap.add_argument("--settle-ms", type=float, default=10,
                    help="--toggle: sleep before each chunk, for the tracer's sender to drain the last one")
    ap.add_argument("--chunks", type=int, default=60)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                            torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x = torch.randn(512, 32, device=dev)
    y = torch.randn(512, 1, device=dev)
    for _ in range(50):  # warm-up: cuBLAS handles, allocator
        opt.zero_grad(); torch.nn.functional.mse_loss(m(x), y).backward(); opt.step()
    torch.cuda.synchronize()

    def run(steps):
        t0 = time.perf_counter()
        c0 = time.thread_time()
        for _ in range(steps):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        return time.perf_counter() - t0, time.thread_time() - c0, loss

    if a.toggle:
        for i in range(a.chunks):
            on = i % 2
            if not a.no_profiler_calls:
                (torch.cuda.profiler.start if on else torch.cuda.profiler.stop)()
            time.sleep(a.settle_ms / 1000)
            wall, cpu, _ = run(a.steps)
            print(f"chunk={i} on={on} wall_s={wall:.5f} thread_cpu_s={cpu:.5f}", flush=True)
        return
    if not a.turns:
        wall, cpu, loss = run(a.steps)
        print(f"steps={a.steps} wall_s={wall:.4f} thread_cpu_s={cpu:.4f} "
              f"steps_per_s={a.steps / wall:.1f} loss={loss.item():.5f}")
        return
    # O_RDWR: opening a FIFO this way never waits for the other end (Linux)
    mine, theirs, ready = (os.open(f, os.O_RDWR) for f in a.turns)
    os.write(ready, b"r")
    for i in range(a.chunks):
        if os.read(mine, 1) != b"t":
            raise SystemExit("train_overhead: bad turn token")
        wall, cpu, _ = run(a.steps)
        print(f"chunk={i} wall_s={wall:.5f} thread_cpu_s={cpu:.5f}", flush=True)
        os.write(theirs, b"t")


if __name__ == "__main__":
    main()
