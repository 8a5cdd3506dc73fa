"""python_waits.py — a training loop on the fake CUDA runtime whose main
thread blocks between steps on something other than a CPU, for
tests/e2e/analyzer_waits.sh: what it blocks in (the system call) is what
the analyzer must name.

    python3 python_waits.py LIBCUDART MODE [STEPS]

MODE sleep: time.sleep(5 ms) before each step (clock_nanosleep)
     queue: queue.get() of an item a producer thread puts every 5 ms (futex)
     pipe:  os.read() of a byte a child process writes every 5 ms (read)
     producer: os.read() of a byte a child process writes after 5 ms of
            busy work each (read; the child on a CPU meanwhile: a producer)
     subprocess: subprocess.run(["sleep", "0.005"], capture_output=True) each
            step: the child's output read through pipes (poll), then its exit
     thread: queue.get() of an item a producer thread makes by hashing
            buffers for 10 ms (hashlib releases the GIL: the thread is on a CPU in
            native code, not holding the GIL) — the wait followed to it
"""
import hashlib
import os
import queue
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
PERIOD = 0.005

if MODE == "queue":
    q = queue.Queue()

    def produce():
        for i in range(STEPS):
            time.sleep(PERIOD)
            q.put(i)

    threading.Thread(target=produce, daemon=True).start()
    wait = q.get
elif MODE == "thread":
    q = queue.Queue(maxsize=1)
    CHUNK = bytes(256 << 10)

    # Each item takes 10 ms of wall time (twice the main thread's step),
    # however fast the CPU: the main thread waits for every one of them.
    def produce():
        for i in range(STEPS):
            h, end = hashlib.sha256(), time.monotonic() + 2 * PERIOD
            while time.monotonic() < end:
                h.update(CHUNK)  # PRODUCE
            q.put(h.digest())

    threading.Thread(target=produce, daemon=True).start()
    wait = q.get
elif MODE in ("pipe", "producer"):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        for _ in range(STEPS):
            if MODE == "pipe":
                time.sleep(PERIOD)
            else:
                end = time.monotonic() + PERIOD
                while time.monotonic() < end:  # SPIN (building the next item)
                    pass
            os.write(w, b"x")
        os._exit(0)
    os.close(w)

    def wait():
        os.read(r, 1)  # BLOCK_READ
elif MODE == "subprocess":
    def wait():
        subprocess.run(["sleep", str(PERIOD)], capture_output=True, check=True)  # BLOCK_RUN
else:
    def wait():
        time.sleep(PERIOD)  # BLOCK_SLEEP

gpu = FakeGPU(sys.argv[1])
for _ in range(STEPS):
    wait()  # BLOCK_WAIT (queue.get itself)
    gpu.launch(2)
    gpu.sync()
if MODE in ("pipe", "producer"):
    os.wait()
