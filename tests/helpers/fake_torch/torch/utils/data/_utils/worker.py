"""A stand-in for torch/utils/data/_utils/worker.py, for
tests/e2e/analyzer_loader.sh: a DataLoader worker's loop — its thread named
as PyTorch names it, blocked on its index pipe while it has nothing to do,
fetching a batch through the fetcher (fetch.py) when an index comes.
Loaded by path (tests/helpers/fake_gpu.py)."""
import ctypes
import os
import struct


def _worker_loop(fetcher, index_r, data_w):
    ctypes.CDLL(None).prctl(15, b"pt_data_worker", 0, 0, 0)  # PR_SET_NAME
    while True:
        raw = os.read(index_r, 8)  # WAIT_INDEX (nothing to do: not loading)
        if len(raw) < 8:
            return
        (i,) = struct.unpack("q", raw)
        if i < 0:
            return
        data = fetcher.fetch(i)
        os.write(data_w, struct.pack("qq", i, data))
