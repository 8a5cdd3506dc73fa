# Class: healthy GPT training as nanoGPT writes it. GPT-2 small (12 layers, 768 wide, 1,024 tokens)
# in bf16 autocast with flash attention (scaled_dot_product_attention), fused AdamW, gradient clipping,
# 4 micro-batches of 12 sequences a step; the batches are random slices of a token file read through
# np.memmap (line 37), pinned and copied non_blocking, the next one fetched while the GPU runs the
# current (as nanoGPT does); the loss read once a step (line 52). Not compiled (compile=False).
# An expert says: the GPU is busy nearly all the time with the model's GEMMs and attention; the
# memmap input and the one .item() a step cost nothing worth a finding; faster means torch.compile
# or a larger batch, not a fix of starvation. No input-pipeline, sync or launch finding above LOW.
import math, os, time, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
P = os.path.join(os.getcwd(), "c79_tokens.bin")
np.random.default_rng(0).integers(0, 50257, 50_000_000, dtype=np.uint16).tofile(P)
B, T, ACC, V, L, C, H = 12, 1024, 4, 50304, 12, 768, 12
class Block(nn.Module):
    def __init__(s):
        super().__init__(); s.ln1, s.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        s.qkv, s.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        s.fc, s.out = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
    def forward(s, x):
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(x.size(0), T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(x.shape)
        x = x + s.proj(y)
        return x + s.out(F.gelu(s.fc(s.ln2(x))))
class GPT(nn.Module):
    def __init__(s):
        super().__init__(); s.wte, s.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        s.blocks = nn.ModuleList(Block() for _ in range(L)); s.ln = nn.LayerNorm(C)
        s.head = nn.Linear(C, V, bias=False); s.head.weight = s.wte.weight
    def forward(s, idx, tgt):
        x = s.wte(idx) + s.wpe(torch.arange(T, device=idx.device))
        for b in s.blocks: x = b(x)
        logits = s.head(s.ln(x))
        return F.cross_entropy(logits.view(-1, V), tgt.view(-1))
model = GPT().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
def get_batch():
    data = np.memmap(P, dtype=np.uint16, mode="r")   # re-opened each batch, as nanoGPT does
    ix = torch.randint(len(data) - T - 1, (B,))
    x = torch.stack([torch.from_numpy(data[i:i + T].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + T].astype(np.int64)) for i in ix])
    return x.pin_memory().cuda(non_blocking=True), y.pin_memory().cuda(non_blocking=True)
x, y = get_batch(); t = time.time(); it = 0
while time.time() - t < 5:
    for g in opt.param_groups: g["lr"] = 6e-4 * min(1.0, (it + 1) / 20)
    for micro in range(ACC):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y) / ACC
        x, y = get_batch()                           # the next batch while the GPU runs this one
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step(); opt.zero_grad(set_to_none=True)
    lossf = loss.item() * ACC; it += 1
torch.cuda.synchronize(); print(f"c79 wall_s={time.time()-t:.3f} iters={it} loss={lossf:.3f}")
os.unlink(P)
