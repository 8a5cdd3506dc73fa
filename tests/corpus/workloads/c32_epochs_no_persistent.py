# Class: DataLoader workers started again every epoch. A small dataset (4,096 samples, 64 a batch:
# 64 batches an epoch) read by 4 workers without persistent_workers, for 15 epochs: each epoch
# forks its workers anew, and the GPU waits while they start and fetch their first batches. An
# expert says: the epoch boundaries are the cost; persistent_workers=True keeps the workers.
import time, torch
class DS(torch.utils.data.Dataset):
    def __len__(self): return 4096
    def __getitem__(self, i):
        x = torch.randn(1024); return x, x.sum()
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
dl = torch.utils.data.DataLoader(DS(), batch_size=64, num_workers=4, pin_memory=True)
t = time.time()
for epoch in range(15):
    for x, y in dl:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = (model(x).squeeze(1) - y).square().mean(); opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c32 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
