# Class: GC pauses with many live objects. The job keeps millions of small Python containers alive
# (a 3-million-entry list of dicts built at start, line 11, and a per-step log of dicts it keeps,
# line 18); the objects it leaves behind make CPython's cyclic garbage collector run full
# collections that walk every live container, seconds of the main thread's time spread over a few
# long steps. An expert says: the GPU idles in garbage-collection pauses — gc.freeze() after setup
# (or fewer long-lived container objects), not "make line 18 cheaper".
import gc, time, torch
if __name__ == "__main__":
    model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 2048)).cuda()
    x = torch.randn(512, 2048, device="cuda")
    table = [{"id": i, "tags": [i, i + 1]} for i in range(3_000_000)]   # SETUP
    history = []
    t = time.time(); steps = 0
    for i in range(400):
        y = model(x).square().mean()
        y.backward()
        # the step's bookkeeping: 5,000 small containers kept each step
        history.extend({"step": i, "k": k, "v": [k]} for k in range(5000))   # KEEP
        steps += 1
    torch.cuda.synchronize(); print(f"c43 wall_s={time.time()-t:.3f} steps={steps} gc={gc.get_stats()[2]}")
