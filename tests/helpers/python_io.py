"""python_io.py — a training loop on the fake CUDA runtime whose main
thread waits on storage every step, for tests/e2e/analyzer_io.sh: it writes
a chunk to FILE and fsyncs it (the thread sleeps in D state until the disk
has it), then launches and syncs.

    python3 python_io.py LIBCUDART FILE MODE [STEPS]

MODE io:    write 2 MiB and fsync, every step
     none:  the same loop without the write; it opens no file at all (a
            file's creation and removal wait on the filesystem's journal,
            in D state, when the disk is busy)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

gpu = FakeGPU(sys.argv[1])
PATH, MODE = sys.argv[2], sys.argv[3]
STEPS = int(sys.argv[4]) if len(sys.argv) > 4 else 40
fd = os.open(PATH, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) if MODE == "io" else -1
chunk = os.urandom(2 << 20)
for _ in range(STEPS):
    if fd >= 0:
        os.pwrite(fd, chunk, 0)
        os.fsync(fd)  # IO
    gpu.launch(4)
    gpu.sync()
if fd >= 0:
    os.close(fd)
    os.unlink(PATH)
