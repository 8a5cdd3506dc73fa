"""A stand-in for Inductor's compile-worker pool (torch/_inductor/
compile_worker/__main__.py), for tests/e2e/analyzer_compile.sh: started as
its own process, as Inductor does; its path (command line and frames) is
what the analyzer recognises.

    python3 __main__.py SECONDS
"""
import sys
import time


def compile_kernels(seconds):
    deadline = time.monotonic() + seconds
    x = 0
    while time.monotonic() < deadline:
        for i in range(2000):
            x += i * i
    return x


compile_kernels(float(sys.argv[1]))
