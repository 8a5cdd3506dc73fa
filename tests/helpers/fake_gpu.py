"""fake_gpu.py — what the Python workloads of the analyzer's e2e tests
share: the fake CUDA runtime through ctypes, one stream, a launch and a
sync, and loading a stand-in of a torch file by its path (only the path of
a frame's file matters to the analyzer: tests/helpers/fake_torch/)."""
import ctypes
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class FakeGPU:
    def __init__(self, lib):
        self.rt = ctypes.CDLL(lib)
        self.stream = ctypes.c_void_p()
        self.rt.cudaStreamCreate(ctypes.byref(self.stream))

    def launch(self, n=1, kernel=0x1000):
        for _ in range(n):
            self.rt.cudaLaunchKernel(ctypes.c_void_p(kernel), Dim3(64, 1, 1), Dim3(128, 1, 1), None,
                                     ctypes.c_size_t(0), self.stream)

    def renew(self):
        """A new stream made, and the old one destroyed once its work is
        done (made first, so the two handles differ; a later one may get a
        destroyed one's address back)."""
        self.sync()
        old = self.stream
        self.stream = ctypes.c_void_p()
        self.rt.cudaStreamCreate(ctypes.byref(self.stream))
        self.rt.cudaStreamDestroy(old)

    def sync(self):
        self.rt.cudaStreamSynchronize(self.stream)


def stand_in(*path):
    """The module at tests/helpers/fake_torch/PATH..., loaded by path."""
    spec = importlib.util.spec_from_file_location("stand_in_" + "_".join(path).replace(".", "_"),
                                                  os.path.join(HERE, "fake_torch", *path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
