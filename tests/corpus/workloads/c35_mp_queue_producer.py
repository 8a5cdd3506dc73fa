# Class: a custom input pipeline (no DataLoader). One producer process (multiprocessing, forked
# before CUDA starts) builds each batch with per-sample numpy work (line 10) and puts it on a
# multiprocessing.Queue; the training loop takes it (q.get(), line 21) and runs a short step. The
# producer is slower than the GPU: the main thread waits on the queue's pipe while the producer
# runs.
import multiprocessing as mp, time, numpy as np, torch
def produce(q, n):
    rng = np.random.default_rng(0)
    for i in range(n):
        rows = [rng.standard_normal(1024).astype(np.float32) * (j % 7) for j in range(768)]
        q.put(np.stack(rows))
    q.put(None)
if __name__ == "__main__":
    mp.set_start_method("fork")
    q = mp.Queue(maxsize=4)
    p = mp.Process(target=produce, args=(q, 500), name="producer"); p.start()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    t = time.time(); steps = 0
    while True:
        b = q.get()
        if b is None: break
        loss = model(torch.from_numpy(b).cuda()).square().mean()
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); steps += 1
    torch.cuda.synchronize(); p.join(); print(f"c35 wall_s={time.time()-t:.3f} steps={steps}")
