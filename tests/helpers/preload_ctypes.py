"""preload_ctypes.py — Python calling the fake CUDA runtime through ctypes,
for tests/e2e/preload_python.sh.  Prints its own truth lines and the line
numbers the library should report ("expect ..." lines).

    python3 preload_ctypes.py LIBCUDART            frames: main thread, other thread, GIL held
    python3 preload_ctypes.py LIBCUDART mp METHOD  2 workers of multiprocessing METHOD
    python3 preload_ctypes.py LIBCUDART regen      code compiled again and again (exec):
        two sources of one function `gen` in one file name, freed after each call, so
        new code objects and line tables reuse the old ones' addresses
    python3 preload_ctypes.py LIBCUDART nopy HELPER N   N launches from Python, then N from a
        thread that runs no Python (HELPER: libnative_launcher.so's native_launches)
"""
import ctypes
import inspect
import os
import sys
import threading

LIB = sys.argv[1]


def line_of(marker):
    for n, text in enumerate(open(__file__), 1):
        if text.rstrip().endswith("# " + marker):
            return n
    raise SystemExit("no marker " + marker)


def sync_here(rt, n):
    s = ctypes.c_void_p()
    rt.cudaStreamCreate(ctypes.byref(s))
    for _ in range(n):
        rt.cudaStreamSynchronize(s)  # SYNC


class Model:
    def step(self, rt):
        sync_here(rt, 3)  # STEP


def worker(lib, q):
    rt = ctypes.CDLL(lib)
    sync_here(rt, 5)
    q.put((os.getpid(), os.getppid()))


def frames():
    rt = ctypes.CDLL(LIB)  # the GIL is released around each call
    Model().step(rt)
    t = threading.Thread(target=Model().step, args=(rt,))
    t.start()
    t.join()
    prt = ctypes.PyDLL(LIB)  # the GIL stays held
    prt.cudaDeviceSynchronize()  # GIL
    print(f"truth pid={os.getpid()} ppid={os.getppid()} api=cudaStreamSynchronize count=6")
    print(f"truth pid={os.getpid()} ppid={os.getppid()} api=cudaDeviceSynchronize count=1")
    print(f"expect sync={line_of('SYNC')} step={line_of('STEP')} gil={line_of('GIL')}")


def mp(method):
    import multiprocessing as m
    ctx = m.get_context(method)
    q = ctx.Queue()
    ps = [ctx.Process(target=worker, args=(LIB, q)) for _ in range(2)]
    for p in ps:
        p.start()
    got = [q.get(timeout=60) for _ in ps]
    for p in ps:
        p.join()
    for pid, ppid in got:
        print(f"truth pid={pid} ppid={ppid} api=cudaStreamSynchronize count=5")


# the same bytecode on other lines: the syncs sit on lines 2 and 3 in A, 5 and 6 in B
# (another line table), 8 and 9 in C (A's very table, from another first line)
REGEN_A = "def gen(rt, s):\n    rt.cudaStreamSynchronize(s)\n    rt.cudaStreamSynchronize(s)\n"
REGEN_B = "def gen(rt, s):\n\n\n\n    rt.cudaStreamSynchronize(s)\n    rt.cudaStreamSynchronize(s)\n"
REGEN_C = "\n" * 6 + REGEN_A


def regen(rounds=300):
    rt = ctypes.CDLL(LIB)
    s = ctypes.c_void_p()
    rt.cudaStreamCreate(ctypes.byref(s))
    for i in range(rounds):
        ns = {}
        exec(compile((REGEN_A, REGEN_B, REGEN_C)[i % 3], "<regen>", "exec"), ns)
        ns["gen"](rt, s)
        ns.clear()  # no cycle left: the code is freed now, its address reused next round
    n = rounds * 2
    print(f"truth pid={os.getpid()} ppid={os.getppid()} api=cudaStreamSynchronize count={n}")


def nopy(helper, n):
    rt = ctypes.CDLL(LIB, mode=ctypes.RTLD_GLOBAL)  # (the helper's thread finds it by name)
    sync_here(rt, 1)  # a first stack from Python: the library proves the interpreter's layout
    class Dim3(ctypes.Structure):
        _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]
    rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    for _ in range(n):
        rt.cudaLaunchKernel(0x1000, Dim3(1, 1, 1), Dim3(32, 1, 1), None, 0, None)
    done = ctypes.CDLL(helper).native_launches(ctypes.c_long(n))
    if done != n:
        raise SystemExit(f"native_launches: {done} of {n}")
    print(f"truth pid={os.getpid()} ppid={os.getppid()} api=cudaLaunchKernel count={2 * n}")
    print(f"truth pid={os.getpid()} ppid={os.getppid()} api=cudaStreamSynchronize count=1")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "regen":
        regen()
    elif len(sys.argv) > 4 and sys.argv[2] == "nopy":
        nopy(sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) > 3 and sys.argv[2] == "mp":
        mp(sys.argv[3])
    else:
        frames()
