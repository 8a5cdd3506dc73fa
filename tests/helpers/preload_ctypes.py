"""preload_ctypes.py — Python calling the fake CUDA runtime through ctypes,
for tests/e2e/preload_python.sh.  Prints its own truth lines and the line
numbers the library should report ("expect ..." lines).

    python3 preload_ctypes.py LIBCUDART            frames: main thread, other thread, GIL held
    python3 preload_ctypes.py LIBCUDART mp METHOD  2 workers of multiprocessing METHOD
    python3 preload_ctypes.py LIBCUDART regen      code compiled again and again (exec):
        two sources of one function `gen` in one file name, freed after each call, so
        new code objects and line tables reuse the old ones' addresses
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


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "regen":
        regen()
    elif len(sys.argv) > 3 and sys.argv[2] == "mp":
        mp(sys.argv[3])
    else:
        frames()
