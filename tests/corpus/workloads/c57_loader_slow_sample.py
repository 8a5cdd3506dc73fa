# Class: DataLoader head-of-line blocking. 4 workers, batches delivered in order; one batch in 16
# holds one slow sample (a ~0.2 s pure-Python decode, line 16), every other sample is cheap. On
# average the workers keep up with the GPU, but the loop waits for that one batch while the other
# workers have their batches ready and stop (prefetch full): one long wait every 16 steps.
import time, torch
from torch.utils.data import Dataset, DataLoader
B = 256
class Rows(Dataset):
    def __len__(self): return B * 16 * 30   # 30 slow batches (60 before: a trace half the size)
    def __getitem__(self, i):
        if i % (16 * B):                                         # all but the first sample of every 16th batch
            return torch.rand(256), i % 10
        v, acc = torch.empty(256), i
        for k in range(256):
            for _ in range(9000):
                acc = (acc * 1103515245 + 12345) & 0x7fffffff   # the slow decode: pure Python per value
            v[k] = acc / 0x7fffffff
        return v, i % 10
if __name__ == "__main__":
    net = torch.nn.Sequential(torch.nn.Linear(256, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                              torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    dl = DataLoader(Rows(), batch_size=B, num_workers=4, pin_memory=True, persistent_workers=True)
    t = time.time(); steps = 0
    for x, y in dl:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        for _ in range(8):                                       # ~8 ms of GPU work a batch
            loss = torch.nn.functional.cross_entropy(net(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        steps += 1
    torch.cuda.synchronize(); print(f"c57 wall_s={time.time()-t:.3f} steps={steps}")
