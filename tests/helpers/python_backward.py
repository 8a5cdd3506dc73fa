"""python_backward.py — a training loop on the fake CUDA runtime whose only
syncs are boolean-mask indexing's: in the forward pass (index_Tensor ->
nonzero), and in the backward pass on a thread of the engine's own with no
Python frame (libfake_aten.so: pt_autograd_0 runs _index_put_impl_ ->
nonzero -> the sync) while the main thread waits in the stand-in
torch/autograd/graph.py, for tests/e2e/analyzer_syncs.sh: the backward's
sync is the user's backward line's, and its fix is at the forward's line.

    python3 python_backward.py LIBCUDART LIBFAKE_ATEN [STEPS]
"""
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU, stand_in  # noqa: E402

graph = stand_in("torch", "autograd", "graph.py")
gpu = FakeGPU(sys.argv[1])
aten = ctypes.CDLL(sys.argv[2])
aten.fake_autograd_backward.argtypes = [ctypes.c_void_p]
index = getattr(aten, "_ZN2at4_ops12index_Tensor4callERKNS_6TensorE")
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
for _ in range(STEPS):
    gpu.launch(4)
    index(gpu.stream)  # MASK (logits[mask] in PyTorch)
    gpu.launch(4)
    graph._engine_run_backward(aten, gpu)  # BACKWARD (loss.backward() in PyTorch)
    end = time.monotonic() + 0.003   # the next batch's host work
    while time.monotonic() < end:
        pass
