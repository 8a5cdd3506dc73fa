"""Four ways a real PyTorch loop starves its GPU that explain names, for the
H200 run (tests/bench/gpu_dataloader.sh, part `patterns`; docs/gpu-runs.md).
Each mode runs a small MLP training loop on CUDA with one fault:

  python3 examples/starve_patterns.py compile      torch.compile'd model: compiling at start
  python3 examples/starve_patterns.py empty_cache  torch.cuda.empty_cache() every step
  python3 examples/starve_patterns.py gil          a Python thread summarising metrics all along
  python3 examples/starve_patterns.py io           a checkpoint written and fsync'ed every step
  python3 examples/starve_patterns.py amp          mixed precision with GradScaler and an unfused AdamW

What explain should say (chains.md): compilation (a one-time phase); sync_frees
naming empty_cache; gaps_host_blocked with the GIL and the thread's line;
gaps_host_blocked with the main thread in D state (storage); sync_per_step
inside GradScaler (fix: fused=True).  Prints one line: mode=… steps=… wall_s=….
"""
import argparse
import os
import threading
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["compile", "empty_cache", "gil", "io", "amp"])
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                            torch.nn.ReLU(), torch.nn.Linear(4096, 10)).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x = torch.randn(4096, 1024, device=dev)
    y = torch.randint(0, 10, (4096,), device=dev)
    model = torch.compile(m) if a.mode == "compile" else m

    done = threading.Event()

    def summarise():   # pure Python: holds the GIL while it runs
        while not done.is_set():
            rows = [sum(i * j for j in range(100)) for i in range(500)]
            del rows

    t = threading.Thread(target=summarise, name="metrics") if a.mode == "gil" else None
    if t:
        t.start()
    # in the working directory: a real disk (on tmpfs fsync does not wait)
    ckpt = os.path.abspath("starve_patterns.ckpt") if a.mode == "io" else None
    blob = os.urandom(16 << 20) if ckpt else b""

    scaler = torch.amp.GradScaler("cuda") if a.mode == "amp" else None

    t0 = time.perf_counter()
    for _ in range(a.steps):
        opt.zero_grad(set_to_none=True)
        if scaler:   # AdamW without fused=True: GradScaler.step reads found_inf on the host
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        if a.mode == "empty_cache":
            torch.cuda.empty_cache()
        if ckpt:
            with open(ckpt, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    done.set()
    if t:
        t.join()
    if ckpt:
        os.unlink(ckpt)
    print(f"mode={a.mode} steps={a.steps} wall_s={wall:.3f}")


if __name__ == "__main__":
    main()
