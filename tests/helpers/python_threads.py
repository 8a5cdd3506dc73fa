"""python_threads.py — a training loop on the fake CUDA runtime whose
process also runs a busy Python thread, for tests/e2e/analyzer_threads.sh:
CPython runs one thread's Python code at a time (the GIL), so the loop
waits for the thread before it can queue the next step.

    python3 python_threads.py LIBCUDART MODE [STEPS]

MODE busy:   a thread named "metrics" runs pure-Python work all along
     idle:   the same thread sleeps instead
     relay:  no metrics thread: each of 6 prompts is generated in a thread
             of its own (Thread(target=generate), as Hugging Face's
             streamer examples run model.generate), 150 tokens of 40
             launches and a sync, while the main thread reads the tokens
             from a queue
     library: the same with the loop in a library's file (a stand-in of
             site-packages/transformers/generation/utils.py): no line of
             this file on the generating threads' stacks
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gpu import FakeGPU  # noqa: E402

gpu = FakeGPU(sys.argv[1])
MODE = sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 60
done = threading.Event()


def summarise():
    while not done.is_set():
        if MODE == "busy":
            rows = [sum(i * j for j in range(50)) for i in range(200)]  # BUSY
            del rows
        else:
            time.sleep(0.01)


def generate(out, tokens):
    for i in range(tokens):
        gpu.launch(40)
        gpu.sync()  # the stop check, every token
        out.put(i)
    out.put(None)


if MODE in ("relay", "library"):
    import queue
    import importlib.util
    spec = importlib.util.spec_from_file_location("hf_generation", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "site-packages", "transformers", "generation", "utils.py"))
    hf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hf)
    for prompt in range(6):
        q = queue.Queue()
        if MODE == "relay":
            g = threading.Thread(target=generate, args=(q, 150))
        else:
            g = threading.Thread(target=hf.generate, args=(gpu.rt, gpu.stream, q, 150))
        g.start()
        while q.get() is not None:
            pass
        g.join()
    sys.exit(0)
t = threading.Thread(target=summarise, name="metrics")
t.start()
for _ in range(STEPS):
    x = [i * i for i in range(2000)]  # a little host work per step
    gpu.launch(4)
    gpu.sync()
done.set()
t.join()
