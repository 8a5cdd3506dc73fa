# Class: training data in shards that the main thread loads. Six shards of 96 MiB (torch.save'd
# tensors) on local disk, each dropped from the page cache before it is read (a big dataset's next
# shard is not cached); the loop trains 30 steps on a shard, and between shards the main thread
# torch.load()s the next (line 25: read from storage and unpickled) while no GPU work is queued.
# An expert says: the GPU idles at every shard boundary for the load's time, the main thread reading
# the file (storage I/O) and copying it; fix: load the next shard in a background thread or process
# (or an IterableDataset over shards with DataLoader workers) so it overlaps the current shard's
# steps. Not CUDA Graphs, not the launch rate, not a per-step sync.
import os, time, torch
D = os.path.join(os.getcwd(), "c78_shards"); os.makedirs(D, exist_ok=True)
def path(i): return os.path.join(D, f"shard{i}.pt")
for i in range(6):                                  # the dataset, written once
    torch.save({"x": torch.randn(6144, 4096)}, path(i))
    with open(path(i), "rb+") as f: os.fsync(f.fileno())
def cold(i):                                        # as a big dataset's next shard would be
    fd = os.open(path(i), os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
net = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(4096, 4096), torch.nn.ReLU())],
                          torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
t = time.time(); steps = 0
for epoch in range(2):
    for i in range(6):
        cold(i)
        # the next shard, loaded by the loop itself before its steps can be queued
        xs = torch.load(path(i))["x"]
        for s in range(30):
            x = xs[s * 192:(s + 1) * 192].cuda()
            loss = net(x).square().mean()
            opt.zero_grad(); loss.backward(); opt.step(); steps += 1
torch.cuda.synchronize(); print(f"c78 wall_s={time.time()-t:.3f} steps={steps}")
for i in range(6): os.unlink(path(i))
