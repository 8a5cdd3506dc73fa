"""python_deep.py SECONDS [DEPTH] — pure-Python work DEPTH frames deep for
SECONDS (tests/bench/collector.sh: what one on-CPU sample of a traced
Python thread costs the sampler: its user stack and its Python frames)."""
import sys
import time


def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(i * i for i in range(1000))


def deep(n, seconds):
    return busy(seconds) if n == 0 else deep(n - 1, seconds)


deep(int(sys.argv[2]) if len(sys.argv) > 2 else 40, float(sys.argv[1]))
