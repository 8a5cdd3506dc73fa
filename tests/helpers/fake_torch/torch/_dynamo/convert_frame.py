"""A stand-in for torch/_dynamo/convert_frame.py, for
tests/e2e/analyzer_compile.sh: only its path matters — the analyzer counts
on-CPU samples with a frame in torch.compile's compile-time files as
compiling (analyzer/base/util.c, ia_is_compile_file).  Not a package: loaded by
path (tests/helpers/fake_gpu.py)."""
import time


def _compile(seconds):
    deadline = time.monotonic() + seconds
    x = 0
    while time.monotonic() < deadline:
        for i in range(2000):
            x += i * i  # COMPILE
    return x
