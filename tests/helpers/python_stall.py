"""python_stall.py LIBCUDART DIR — a program whose collector stalls: 100
launches, then it writes DIR/phase1 and waits for DIR/go (the test stops the
collector with SIGSTOP in between), then 200,000 launches (more than the
ring holds, with nobody draining it) and exits while the collector is still
stopped: its last counts cannot arrive."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

g = FakeGPU(sys.argv[1])
d = sys.argv[2]
g.launch(100)
time.sleep(1.0)   # the sender's first batch (HELLO and the calls) goes out
open(os.path.join(d, "phase1"), "w").close()
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
g.launch(200000)
print(f"pid={os.getpid()}")
