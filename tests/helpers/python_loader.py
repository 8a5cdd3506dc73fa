"""python_loader.py — a training loop on the fake CUDA runtime fed by two
DataLoader-style worker processes (the stand-ins of torch's worker loop and
fetcher in fake_torch/), for tests/e2e/analyzer_loader.sh: the workers load
each item in a way the analyzer must tell apart.

    python3 python_loader.py LIBCUDART MODE [STEPS]

MODE sleep:  each item sleeps 1 ms in __getitem__ (a rate limit, a remote
             store's latency): the workers block loading (clock_nanosleep)
     socket: each item is a request to a store process that answers after
             1 ms: the workers block loading in recvfrom
     cpu:    each item is 1 ms of Python work: the workers load on CPUs
     idle:   items cost nothing, and the loop does 4 ms of host work a
             step: the workers keep up, waiting for their next index
     inline: no workers (num_workers=0): the loop fetches each batch itself
             through the stand-in fetcher, 1 ms of Python work an item
     slow:   four workers; items cost nothing but the first of every 16th
             batch, 60 ms of Python work, and batches are taken in order
             (as the DataLoader hands them over): the loop waits for that
             one batch while the other workers, theirs done, wait for their
             next index (head-of-line blocking)
Each batch is 8 items; a step's GPU work (2 kernels of the runtime's
FAKECUDA_KERNEL_US) is shorter than a batch's loading, so the loop waits on
its workers in every mode but idle.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU, stand_in  # noqa: E402

MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 400
WORKERS, ITEMS, ITEM_S = {"slow": 4, "inline": 0}.get(MODE, 2), 8, 0.001
worker = stand_in("torch", "utils", "data", "_utils", "worker.py")
fetch = stand_in("torch", "utils", "data", "_utils", "fetch.py")


class Dataset:
    def __init__(self, store=None):
        self.store = store

    def __getitem__(self, i):
        if MODE == "sleep":
            time.sleep(ITEM_S)  # LOAD_SLEEP
        elif MODE == "idle":
            pass
        elif MODE == "inline":
            end = time.monotonic() + ITEM_S
            while time.monotonic() < end:  # LOAD_INLINE
                pass
        elif MODE == "slow":
            end = time.monotonic() + (0.06 if i % (16 * ITEMS) == 0 else 0)
            while time.monotonic() < end:  # LOAD_SLOW
                pass
        elif MODE == "socket":
            self.store.sendall(struct.pack("q", i))
            return struct.unpack("q", self.store.recv(8))[0]  # LOAD_RECV
        else:
            end = time.monotonic() + ITEM_S
            while time.monotonic() < end:  # LOAD_SPIN
                pass
        return i


def serve(conn):
    """The store: each request answered after ITEM_S."""
    while True:
        req = conn.recv(8)
        if len(req) < 8:
            os._exit(0)
        time.sleep(ITEM_S)
        conn.sendall(req)


data_r, data_w = os.pipe()
index_w = []
for w in range(WORKERS):
    r, iw = os.pipe()
    store = None
    if MODE == "socket":
        store, theirs = socket.socketpair()
        if os.fork() == 0:
            store.close()
            serve(theirs)
        theirs.close()
    if os.fork() == 0:
        os.close(iw)
        os.close(data_r)
        worker._worker_loop(fetch._MapDatasetFetcher(Dataset(store), ITEMS), r, data_w)
        os._exit(0)
    os.close(r)
    if store:
        store.close()
    index_w.append(iw)
os.close(data_w)

gpu = FakeGPU(sys.argv[1])
# two batches in flight per worker, as the DataLoader's prefetch_factor=2
sent = 0
for _ in range(2 * WORKERS):
    os.write(index_w[sent % WORKERS], struct.pack("q", sent))
    sent += 1
ready = set()
inline = fetch._MapDatasetFetcher(Dataset(), ITEMS)
for step in range(STEPS):
    if MODE == "inline":
        inline.fetch(step)  # FETCH_INLINE
        gpu.launch(2)
        gpu.sync()
        continue
    while MODE == "slow" and step not in ready:   # in order: this step's batch, whoever made it
        ready.add(struct.unpack("qq", os.read(data_r, 16))[0])
    if MODE != "slow":
        os.read(data_r, 16)  # NEXT_BATCH
    ready.discard(step)
    if sent < STEPS:
        os.write(index_w[sent % WORKERS], struct.pack("q", sent))
        sent += 1
    gpu.launch(2)
    gpu.sync()
    if MODE == "idle":
        end = time.monotonic() + 0.004
        while time.monotonic() < end:  # HOST_WORK
            pass
for iw in index_w:
    os.write(iw, struct.pack("q", -1))
for _ in range(2 * WORKERS if MODE == "socket" else WORKERS):
    os.wait()
