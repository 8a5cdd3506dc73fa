# Class: augmentation done on the GPU one sample at a time: a Python loop over the batch (line 17)
# flips, normalizes and writes back each of 128 images with small kernels, ~6 launches a sample,
# before a small convolutional model. The host issues ~800 tiny launches a step; the GPU waits for
# them. The same augmentation over the whole batch is a handful of launches.
import time, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                            torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(128, 3, 64, 64, device="cuda")
labels = torch.randint(0, 10, (128,), device="cuda")
flips = torch.rand(200, 128) < 0.5                          # decided on the host, once
t = time.time()
for step in range(200):
    batch = torch.empty_like(data)
    for i in range(data.shape[0]):
        img = data[i].flip(-1) if flips[step, i] else data[i]; batch[i] = (img - img.mean()) / (img.std() + 1e-5)
    loss = torch.nn.functional.cross_entropy(model(batch), labels)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c67 wall_s={time.time()-t:.3f}")
