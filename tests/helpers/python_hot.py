"""python_hot.py — a CPU-bound Python workload for tests/e2e/collector_python.sh:
the main process spends SECONDS in inner_hot (called from outer), then a
forked worker spends SECONDS in worker_hot.  The lines the samples should
name carry markers (# HOT, # OUTER, # WORKER).

    python3 python_hot.py [SECONDS] [subinterpreter]

With "subinterpreter" (3.12+), a subinterpreter is created first: the
runtime's newest interpreter is then not the main one.
"""
import multiprocessing
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.8


def inner_hot(n):
    s = 0
    for i in range(n):
        s += i * i  # HOT
    return s


def outer(deadline):
    while time.monotonic() < deadline:
        inner_hot(5000)  # OUTER


def worker_hot(deadline):
    s = 0
    while time.monotonic() < deadline:
        s += sum([i * 3 for i in range(500)])  # WORKER
    return s


def interpreters():
    try:
        import _interpreters as m  # 3.13
    except ImportError:
        import _xxsubinterpreters as m  # 3.12
    return m


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "subinterpreter":
        sub = interpreters().create()
        outer(time.monotonic() + SECONDS)
        interpreters().destroy(sub)  # before fork and exit: a live one hangs them
        sys.exit(0)
    outer(time.monotonic() + SECONDS)
    p = multiprocessing.get_context("fork").Process(target=worker_hot, args=(time.monotonic() + SECONDS,))
    p.start()
    p.join()
    sys.exit(p.exitcode)
