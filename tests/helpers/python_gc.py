"""python_gc.py — a training loop on the fake CUDA runtime whose host time
between steps is mostly CPython's cyclic garbage collector, for
tests/e2e/analyzer_gc.sh (issue 43): millions of live container objects
made at setup, and each step makes more that live until the next step's
replace them: they reach the oldest generation, so full collections (which
walk every live object) come every few steps.

    python3 python_gc.py LIBCUDART MODE STEPS OUT

MODE gc:      the collector as it is
     freeze:  gc.freeze() after setup (the live objects leave its generations)
     disable: gc.disable() (no collection at all in the loop)
OUT: a JSON file of what the collector did in the loop, from gc.get_stats()
     and gc.callbacks: full collections, all collections, seconds collecting.
"""
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

LIVE = 2_500_000   # long-lived containers (lists: always tracked)
PER_STEP = 50_000  # containers made each step, alive for one step
MODE, STEPS, OUT = sys.argv[2], int(sys.argv[3]), sys.argv[4]

gpu = FakeGPU(sys.argv[1])
gc.disable()  # (setup itself quickly)
live = [[] for _ in range(LIVE)]
if MODE == "freeze":
    gc.freeze()
if MODE != "disable":
    gc.enable()

spent = [0.0, 0.0]


def timed(phase, info):
    if phase == "start":
        spent[1] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - spent[1]


gc.callbacks.append(timed)
before = gc.get_stats()
batch = None
t0 = time.perf_counter()
for _ in range(STEPS):
    batch = [[] for _ in range(PER_STEP)]  # BUILD
    gpu.launch(2)
    gpu.sync()
loop = time.perf_counter() - t0
after = gc.get_stats()
gc.callbacks.remove(timed)
gc.freeze()  # no full collection at exit: only the loop's are the test's
with open(OUT, "w") as f:
    json.dump({"full": after[2]["collections"] - before[2]["collections"],
               "collections": sum(a["collections"] - b["collections"] for a, b in zip(after, before)),
               "gc_s": spent[0], "loop_s": loop, "version": "%d.%d" % sys.version_info[:2]}, f)
