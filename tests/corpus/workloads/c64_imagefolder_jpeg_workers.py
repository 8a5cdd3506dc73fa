# Class: the classic image pipeline: torchvision's ImageFolder over JPEG files, each decoded by PIL
# and augmented (RandomResizedCrop, flip, ToTensor, Normalize) in 3 DataLoader workers, for a
# ResNet-18 on the GPU (AMP, channels_last) on a 16-CPU machine: the workers decode and augment
# slower than the GPU trains (the loader at line 30, the loop at line 32).
import os, time, torch, torchvision
import numpy as np
from PIL import Image
import torchvision.transforms as T

ROOT = "/tmp/c64_jpegs"                                   # made once, shared by both runs
if not os.path.isdir(f"{ROOT}/c3"):
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:375, 0:500]
    for c in range(4):
        os.makedirs(f"{ROOT}/c{c}", exist_ok=True)
        for i in range(128):
            base = np.stack([(xx * (c + 1) + i) % 256, (yy * 2 + i) % 256, (xx + yy) % 256], -1)
            img = np.clip(base + rng.normal(0, 24, base.shape), 0, 255).astype(np.uint8)
            Image.fromarray(img).save(f"{ROOT}/c{c}/{i}.jpg", quality=90)

tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
ds = torchvision.datasets.ImageFolder(ROOT, transform=tf)
sampler = torch.utils.data.RandomSampler(ds, replacement=True, num_samples=64 * 60)
model = torchvision.models.resnet18(num_classes=4).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

if __name__ == "__main__":
    t = time.time()
    loader = torch.utils.data.DataLoader(ds, batch_size=64, sampler=sampler, num_workers=3, pin_memory=True)
    x = None
    for x, y in loader:
        x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last); y = y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    torch.cuda.synchronize(); print(f"c64 wall_s={time.time()-t:.3f}")
