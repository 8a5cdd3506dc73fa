"""A stand-in for torch/cuda/memory.py, for tests/e2e/analyzer_frees.sh:
empty_cache hands the cached blocks back with cudaFree, as PyTorch's
caching allocator does.  Loaded by path (tests/helpers/fake_gpu.py)."""


def empty_cache(rt, blocks):
    for b in blocks:
        rt.cudaFree(b)  # FREE
    blocks.clear()
