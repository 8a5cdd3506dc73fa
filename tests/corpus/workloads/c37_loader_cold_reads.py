# Class: data loading bound by storage. A Dataset of 4,096 items of 256 KiB in one 1 GiB file on
# local disk, read per item at a random offset without the page cache (O_DIRECT; where the file
# system refuses it, the range dropped from the cache first), by 4 DataLoader workers, 32 items a
# batch, for a small MLP whose step is far shorter than a batch's reads. The GPU waits on storage.
import mmap, os, time, torch
from torch.utils.data import Dataset, DataLoader, RandomSampler
ITEM, N = 256 * 1024, 4096
PATH = os.path.join(os.getcwd(), "c37_data.bin")
def make():
    block = os.urandom(16 << 20)
    with open(PATH, "wb") as f:
        for _ in range(N * ITEM // len(block)): f.write(block)
        f.flush(); os.fsync(f.fileno())
class ColdFile(Dataset):
    def __len__(self): return N
    def __getitem__(self, i):
        if not hasattr(self, "fd"):                # opened once per worker
            try: self.fd, self.direct = os.open(PATH, os.O_RDONLY | os.O_DIRECT), True
            except OSError: self.fd, self.direct = os.open(PATH, os.O_RDONLY), False
            self.buf = mmap.mmap(-1, ITEM)         # page-aligned, as O_DIRECT needs
        off = i * ITEM
        if not self.direct: os.posix_fadvise(self.fd, off, ITEM, os.POSIX_FADV_DONTNEED)
        try: os.preadv(self.fd, [self.buf], off)   # the read from storage
        except OSError:                            # O_DIRECT refused at read time
            self.direct = False; os.close(self.fd); self.fd = os.open(PATH, os.O_RDONLY)
            os.posix_fadvise(self.fd, off, ITEM, os.POSIX_FADV_DONTNEED); os.preadv(self.fd, [self.buf], off)
        return torch.frombuffer(bytearray(self.buf[:8192]), dtype=torch.int16).float()
if __name__ == "__main__":
    make()
    ds = ColdFile(); t0 = time.perf_counter(); lat = []
    for i in range(64):                            # how cold a read is, untraced by the loader
        s = time.perf_counter(); ds[(i * 977) % N]; lat.append(time.perf_counter() - s)
    lat.sort(); print(f"c37 read_p50_us={lat[32]*1e6:.0f} direct={ds.direct}")
    net = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    dl = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=True,
                    sampler=RandomSampler(ds, replacement=True, num_samples=32 * 3000))
    t = time.time(); steps = 0
    for x in dl:
        loss = net(x.cuda()).square().mean()
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
        if time.time() - t > 12: break
    torch.cuda.synchronize(); print(f"c37 wall_s={time.time()-t:.3f} steps={steps}")
    os.unlink(PATH)
