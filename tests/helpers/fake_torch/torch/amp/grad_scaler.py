"""A stand-in for torch/amp/grad_scaler.py, for tests/e2e/analyzer_syncs.sh:
GradScaler.step reads the inf check on the host (found_inf.item() in the
real one: a sync) before it steps the optimizer.  Loaded by path
(tests/helpers/fake_gpu.py)."""


class GradScaler:
    def step(self, gpu):
        return self._maybe_opt_step(gpu)

    def _maybe_opt_step(self, gpu):
        gpu.rt.cudaStreamSynchronize(gpu.stream)  # ITEM (the real one: found_inf.item())
        return None
