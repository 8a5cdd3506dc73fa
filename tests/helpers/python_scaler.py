"""python_scaler.py — a training loop on the fake CUDA runtime whose only
sync is inside a library call, for tests/e2e/analyzer_syncs.sh: the
stand-in GradScaler.step (fake_torch/torch/amp/grad_scaler.py) syncs every
step, after host work that then cannot overlap the GPU.

    python3 python_scaler.py LIBCUDART [STEPS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU, stand_in  # noqa: E402

amp = stand_in("torch", "amp", "grad_scaler.py")
gpu = FakeGPU(sys.argv[1])
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
scaler = amp.GradScaler()
for _ in range(STEPS):
    gpu.launch(4)
    scaler.step(gpu)  # STEP
    end = time.monotonic() + 0.003   # the next batch's host work
    while time.monotonic() < end:
        pass
