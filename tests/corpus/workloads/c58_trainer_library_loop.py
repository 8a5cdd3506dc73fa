# Class: the training loop lives in a library (a Lightning-style Trainer installed in site-packages,
# written out by this script at start so it runs anywhere). The user's code is the model, a Dataset
# whose augment() is CPU-heavy pure Python (line 38) and one call, trainer.fit() (line 50). The
# library's loader defaults to num_workers=0: every sample is augmented on the main thread, inside
# five library frames (fit -> _epoch -> _batches -> DataLoader -> __getitem__), while the GPU waits.
import os, sys, tempfile, time, torch
LIB = '''
import torch
from torch.utils.data import DataLoader
class Trainer:
    def __init__(self, max_epochs=1, batch_size=128, num_workers=0):
        self.max_epochs, self.batch_size, self.num_workers = max_epochs, batch_size, num_workers
    def _batches(self, ds):
        dl = DataLoader(ds, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers)
        for x, y in dl:
            yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    def _epoch(self, module, opt, ds):
        for x, y in self._batches(ds):
            loss = module.training_step(x, y)
            opt.zero_grad(); loss.backward(); opt.step()
    def fit(self, module, ds):
        opt = module.configure_optimizers()
        for _ in range(self.max_epochs):
            self._epoch(module, opt, ds)
        torch.cuda.synchronize()
'''
root = os.path.join(tempfile.mkdtemp(), "lib", "python3", "site-packages")
os.makedirs(os.path.join(root, "minitrain"))
with open(os.path.join(root, "minitrain", "__init__.py"), "w") as f:
    f.write(LIB)
sys.path.insert(0, root)
from minitrain import Trainer

def augment(i):
    vals, acc = [], i
    for k in range(128):
        for _ in range(12):
            acc = (acc * 1103515245 + 12345) & 0x7fffffff                 # the augmentation, per value
        vals.append(acc / 0x7fffffff)
    return torch.tensor(vals)
class Rows(torch.utils.data.Dataset):
    def __len__(self): return 128 * 150
    def __getitem__(self, i): return augment(i), i % 10
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.f = torch.nn.Sequential(torch.nn.Linear(128, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10))
    def training_step(self, x, y): return torch.nn.functional.cross_entropy(self.f(x), y)
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), lr=0.01)
if __name__ == "__main__":
    t = time.time(); Trainer(max_epochs=2).fit(Net().cuda(), Rows())
    print(f"c58 wall_s={time.time()-t:.3f}")
