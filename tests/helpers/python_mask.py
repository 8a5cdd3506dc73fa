"""python_mask.py — a training loop on the fake CUDA runtime whose only
sync is inside a stand-in of boolean-mask indexing (libfake_aten.so:
at::_ops::index_Tensor::call → at::_ops::nonzero::call, which waits for
the stream), for tests/e2e/analyzer_syncs.sh: the sync_per_step chain names
the operation and gives the static-shape fix.

    python3 python_mask.py LIBCUDART LIBFAKE_ATEN [STEPS]
"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

gpu = FakeGPU(sys.argv[1])
index = getattr(ctypes.CDLL(sys.argv[2]), "_ZN2at4_ops12index_Tensor4callERKNS_6TensorE")
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
for _ in range(STEPS):
    gpu.launch(4)
    index(gpu.stream)  # MASK (logits[mask] in PyTorch)
    end = time.monotonic() + 0.003   # the next batch's host work
    while time.monotonic() < end:
        pass
