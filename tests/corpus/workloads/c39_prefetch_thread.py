# Class: a hand-written prefetch thread (no DataLoader). A background thread builds each batch with
# numpy (a sort and an FFT over the batch, line 11: numpy releases the GIL while it works) and puts
# it on a queue.Queue; the training loop takes it (line 21) and runs a short step. The thread is
# slower than the GPU: the loop waits on the queue while the prefetch thread works.
import queue, threading, time, numpy as np, torch
def prefetch(q, n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 8192)).astype(np.float32)
    for i in range(n):
        x = np.roll(x, 1, axis=0)
        b = np.abs(np.fft.rfft(np.sort(x, axis=1), axis=1))[:, :1024].astype(np.float32)   # BUILD
        q.put(b)
    q.put(None)
if __name__ == "__main__":
    q = queue.Queue(maxsize=2)
    threading.Thread(target=prefetch, args=(q, 400), name="prefetch", daemon=True).start()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    t = time.time(); steps = 0
    while True:
        b = q.get()
        if b is None: break
        loss = model(torch.from_numpy(b).cuda()).square().mean()
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); steps += 1
    torch.cuda.synchronize(); print(f"c39 wall_s={time.time()-t:.3f} steps={steps}")
