"""preload_pystack.py — what a call stack costs in a Python program, for
tests/bench/preload.sh: ctypes calls to the fake cudaStreamSynchronize made
DEPTH Python frames deep, each frame a long function (300 lines: the line of
a frame is looked up in its code object's line table), printing the calling
thread's CPU time per call.

    python3 preload_pystack.py LIBCUDART [CALLS] [DEPTH]
"""
import ctypes
import sys
import time

LIB = sys.argv[1]
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
DEPTH = int(sys.argv[3]) if len(sys.argv) > 3 else 8

rt = ctypes.CDLL(LIB)
stream = ctypes.c_void_p()
rt.cudaStreamCreate(ctypes.byref(stream))
sync = rt.cudaStreamSynchronize


def long_function(k):
    body = ["    x = 0"] + [f"    x += {i}" for i in range(300)]
    if k == 0:
        body += ["    t = time.thread_time()", "    for _ in range(n):", "        sync(stream)",
                 "    return time.thread_time() - t"]
    else:
        body.append(f"    return f{k - 1}(n)")
    return f"def f{k}(n):\n" + "\n".join(body) + "\n"


src = "\n".join(long_function(k) for k in range(DEPTH))
exec(compile(src, "<long functions>", "exec"), globals())
top = globals()[f"f{DEPTH - 1}"]
top(CALLS // 10)  # warm-up
print("cpu_ns_per_call=%.1f" % (top(CALLS) / CALLS * 1e9))
