# Class: an inference service waiting for requests. A model answers a request every ~20 ms (the
# time between requests is a sleep, standing in for waiting on a socket); each answer is ~2 ms of
# GPU work and its result is read back. The GPU idles because there is nothing to do.
import time, torch
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda().eval()
x = torch.randn(2048, 4096, device="cuda")
t = time.time(); served = 0
with torch.no_grad():
    for req in range(300):
        time.sleep(0.02)                       # waiting for the next request
        served += int(model(x).argmax(dim=1)[0].item() >= 0)
print(f"c25 wall_s={time.time()-t:.3f} served={served}")
