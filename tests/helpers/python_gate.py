"""python_gate.py — a training loop on the fake CUDA runtime for the CI
gate's traced test (tests/e2e/gate_steady.sh): a healthy baseline, and the
regressions a CI gate must catch, each one flag away.

    python3 python_gate.py LIBCUDART [--steps N] [--workers N] [--item]
                           [--pageable] [--host-ms X] [--load-ms X]

Each step: a batch from the loader, a 4 MiB host-to-device copy (from a
pinned staging buffer, as pin_memory=True gives; --pageable: from ordinary
memory), LAUNCHES kernels of the runtime's FAKECUDA_KERNEL_US, then the
loop's own host work (--host-ms of CPU: the optimizer's Python, logging).
The host runs at most three steps ahead of the GPU (it waits on the event
of the third step back, as a full launch queue would make it), so host
work shorter than a step's GPU work is hidden behind it, a moment of a
busy machine's preemption too: the baseline is GPU-bound, its GPU busy.

The loader: --workers DataLoader-style worker processes (the stand-ins of
torch's worker loop and fetcher, tests/helpers/fake_torch/), four by
default, two batches in flight each; every batch costs --load-ms (a read
from storage: mostly asleep, a little CPU), so four workers keep ahead of
the GPU and none (--workers 0: the main process loads) cannot.

The regressions of tests/e2e/gate_steady.sh:
  --workers 0      num_workers 4 -> 0: the main thread loads every batch
  --item           a per-step .item(): a 4-byte copy back and a stream sync
  --pageable       pin_memory removed: copies staged from pageable memory
  --host-ms 20     a CPU-heavy step: more host work than the GPU's step
"""
import argparse
import ctypes
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import Dim3, stand_in  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("lib")
p.add_argument("--steps", type=int, default=150)
p.add_argument("--workers", type=int, default=4)
p.add_argument("--item", action="store_true")
p.add_argument("--pageable", action="store_true")
p.add_argument("--host-ms", type=float, default=4.0)
p.add_argument("--load-ms", type=float, default=12.0)
p.add_argument("--launches", type=int, default=4)
a = p.parse_args()
BATCH = 4 << 20
worker = stand_in("torch", "utils", "data", "_utils", "worker.py")
fetch = stand_in("torch", "utils", "data", "_utils", "fetch.py")


def spin(ms):
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        pass


class Dataset:
    """Each item: a read from storage (asleep) and a little decoding (CPU)."""

    def __getitem__(self, i):
        time.sleep(a.load_ms * 0.9 / 1000)  # LOAD
        spin(a.load_ms * 0.1)
        return i


fetcher = fetch._MapDatasetFetcher(Dataset(), 1)
data_r, data_w = os.pipe()
index_w = []
for w in range(a.workers):
    r, iw = os.pipe()
    if os.fork() == 0:
        os.close(iw)
        os.close(data_r)
        worker._worker_loop(fetcher, r, data_w)
        os._exit(0)
    os.close(r)
    index_w.append(iw)
os.close(data_w)

rt = ctypes.CDLL(a.lib)
stream = ctypes.c_void_p()
rt.cudaStreamCreate(ctypes.byref(stream))
dev = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(BATCH))
if a.pageable:
    host = ctypes.create_string_buffer(BATCH)
    src = ctypes.cast(host, ctypes.c_void_p)
else:
    src = ctypes.c_void_p()
    rt.cudaHostAlloc(ctypes.byref(src), ctypes.c_size_t(BATCH), 0)
small = ctypes.c_void_p()   # .item() reads into pinned memory, then syncs (as torch's _local_scalar_dense)
rt.cudaHostAlloc(ctypes.byref(small), ctypes.c_size_t(8), 0)
events = []
for _ in range(4):
    e = ctypes.c_void_p()
    rt.cudaEventCreate(ctypes.byref(e))
    events.append(e)

sent = 0
if a.workers:
    for _ in range(2 * a.workers):  # prefetch_factor=2
        os.write(index_w[sent % a.workers], struct.pack("q", sent))
        sent += 1


def next_batch(step):
    global sent
    if not a.workers:
        return fetcher.fetch(step)  # NEXT_BATCH (num_workers=0: loaded here)
    os.read(data_r, 16)  # NEXT_BATCH
    if sent < a.steps:
        os.write(index_w[sent % a.workers], struct.pack("q", sent))
        sent += 1


t0 = time.monotonic()
for step in range(a.steps):
    if step >= 3:
        rt.cudaEventSynchronize(events[(step - 3) % 4])  # THROTTLE (a full launch queue)
    next_batch(step)
    rt.cudaMemcpyAsync(dev, src, ctypes.c_size_t(BATCH), 1, stream)  # COPY (HostToDevice)
    for k in range(a.launches):
        rt.cudaLaunchKernel(ctypes.c_void_p(0x1000 + 0x40 * k), Dim3(64, 1, 1), Dim3(128, 1, 1), None,
                            ctypes.c_size_t(0), stream)
    rt.cudaEventRecord(events[step % 4], stream)
    if a.item:
        rt.cudaMemcpyAsync(small, dev, ctypes.c_size_t(4), 2, stream)  # .item(): DeviceToHost, then
        rt.cudaStreamSynchronize(stream)  # ITEM
    spin(a.host_ms)  # HOST_WORK
rt.cudaStreamSynchronize(stream)
wall = time.monotonic() - t0
for iw in index_w:
    os.write(iw, struct.pack("q", -1))
for _ in index_w:
    os.wait()
print(f"python_gate: steps={a.steps} workers={a.workers} item={int(a.item)} pageable={int(a.pageable)} "
      f"host_ms={a.host_ms} wall_s={wall:.3f} ms_per_step={1000 * wall / a.steps:.2f}")
