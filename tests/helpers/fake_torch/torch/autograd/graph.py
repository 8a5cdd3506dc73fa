"""A stand-in for torch/autograd/graph.py, for tests/e2e/analyzer_syncs.sh:
_engine_run_backward hands the backward pass to the engine, which runs it
on its own thread (pt_autograd_0, tests/helpers/so/fake_aten.c) while this
one waits.  Loaded by path (tests/helpers/fake_gpu.py)."""


def _engine_run_backward(aten, gpu):
    return aten.fake_autograd_backward(gpu.stream)  # ENGINE (Variable._execution_engine.run_backward)
