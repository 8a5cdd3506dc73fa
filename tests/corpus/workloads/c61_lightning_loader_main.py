# Class: a real Lightning job (lightning.Trainer, one GPU) whose DataLoader has num_workers=0 and a
# Dataset whose __getitem__ is CPU-heavy pure Python (line 17): every sample is made on the main
# thread, under Lightning's fit loop (trainer.fit, line 34) (many library frames deep), while the GPU waits. The model's
# step is small.
import os, time, warnings
warnings.filterwarnings("ignore")
import torch
import lightning as L
from torch.utils.data import DataLoader, Dataset

class Rows(Dataset):
    def __len__(self): return 128 * 120
    def __getitem__(self, i):
        vals, acc = [], i
        for k in range(128):
            for _ in range(12):
                acc = (acc * 1103515245 + 12345) & 0x7fffffff   # the sample's transform, per value
            vals.append(acc / 0x7fffffff)
        return torch.tensor(vals), i % 10

class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.f = torch.nn.Sequential(torch.nn.Linear(128, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10))
    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.f(x), y)
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), lr=0.01)

if __name__ == "__main__":
    t = time.time()
    trainer = L.Trainer(max_epochs=1, accelerator="gpu", devices=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(Net(), DataLoader(Rows(), batch_size=128, num_workers=0))   # the user's one call
    print(f"c61 wall_s={time.time()-t:.3f}")
