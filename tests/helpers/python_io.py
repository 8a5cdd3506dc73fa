"""python_io.py — a training loop on the fake CUDA runtime whose main
thread waits on storage every step, for tests/e2e/analyzer_io.sh: it writes
a chunk to FILE and fsyncs it (the thread sleeps in D state until the disk
has it), then launches and syncs.

    python3 python_io.py LIBCUDART FILE MODE [STEPS]

MODE io:    write 1 MiB (O_DIRECT where it can) and fsync, again until 5 ms
            have passed, every step
     none:  the same loop without the write; it opens no file at all (a
            file's creation and removal wait on the filesystem's journal,
            in D state, when the disk is busy)
"""
import mmap
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

gpu = FakeGPU(sys.argv[1])
PATH, MODE = sys.argv[2], sys.argv[3]
STEPS = int(sys.argv[4]) if len(sys.argv) > 4 else 40
# O_DIRECT where the file system has it: the write waits for the device
# itself, in D state, with no copy into the page cache on the CPU — the
# wait is storage's however fast the disk (a buffered 2 MiB copy took about as
# long as a fast disk's flush, and the CPU's share then rivalled the D state's)
fd = -1
if MODE == "io":
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(PATH, flags | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError:
        fd = os.open(PATH, flags, 0o600)
chunk = mmap.mmap(-1, 1 << 20)   # page-aligned, as O_DIRECT needs
chunk.write(os.urandom(1 << 20))
for _ in range(STEPS):
    # (chunks until 5 ms have passed: on a fast disk one chunk is over in
    # a millisecond, as short as the main thread's wait for a CPU after
    # each wake-up on a loaded 2-CPU machine, and the storage wait would
    # no longer be what the gaps are made of)
    t0 = time.monotonic()
    while fd >= 0:
        os.pwrite(fd, chunk, 0)
        os.fsync(fd)  # IO
        if time.monotonic() - t0 >= 0.005:
            break
    gpu.launch(4)
    gpu.sync()
if fd >= 0:
    os.close(fd)
    os.unlink(PATH)
