# Class: latency-bound inference at batch size 1. A small transformer encoder answers one request
# at a time and each answer is read back (.item()) before the next: every request is a few dozen
# tiny kernels the host issues one by one, and the GPU finishes each before the next arrives.
import time, torch
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4).cuda().eval()
x = torch.randn(1, 32, 256, device="cuda")
t = time.time(); answers = 0
with torch.no_grad():
    for req in range(3000):
        answers += int(model(x)[0, 0, 0].item() > 0)
print(f"c26 wall_s={time.time()-t:.3f} answers={answers}")
