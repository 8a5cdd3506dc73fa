# Class: batch assembly in the main process. An in-memory TensorDataset served by a DataLoader with
# num_workers=0 and shuffle=True: every batch is 1,024 rows fetched one by one and stacked by the
# default collate in the training process, while the GPU waits; the model's step is short.
import time, torch
from torch.utils.data import TensorDataset, DataLoader
data = TensorDataset(torch.randn(200_000, 256), torch.randint(0, 10, (200_000,)))
net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
t = time.time()
for x, y in DataLoader(data, batch_size=1024, shuffle=True, num_workers=0):
    loss = torch.nn.functional.cross_entropy(net(x.cuda()), y.cuda())
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c27 wall_s={time.time()-t:.3f}")
