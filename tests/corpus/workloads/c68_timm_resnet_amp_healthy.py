# Class: healthy, GPU-bound training of a real library model: timm's ResNet-50 (no pretrained
# weights), channels_last, bf16 autocast, fused AdamW, a batch of 128 224x224 images made once on
# the GPU (line 12), no sync in the loop. Each step is ~100 ms of convolutions queued in a fraction
# of that. An expert says: healthy; the GPU is busy with its convolutions; nothing to fix on the host.
import time, warnings
warnings.filterwarnings("ignore")
import torch, timm
torch.manual_seed(0)
model = timm.create_model("resnet50", pretrained=False, num_classes=1000).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
crit = torch.nn.CrossEntropyLoss()
x = torch.randn(128, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
y = torch.randint(0, 1000, (128,), device="cuda")
t = time.time()
for step in range(60):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = crit(model(x), y)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
torch.cuda.synchronize(); print(f"c68 wall_s={time.time()-t:.3f} loss={loss.item():.4f}")
