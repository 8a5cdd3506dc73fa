# Class: autoregressive generation at batch size 1. A small decoder (4 blocks, d=512) generates 200
# tokens per prompt with a KV cache grown by torch.cat (line 19), the next token picked on the GPU and
# read with .item() every token to test for the stop token (line 36). Each token is ~60 small
# kernels issued one by one, then a sync.
import time, torch
import torch.nn.functional as F
D, H, L, V = 512, 8, 4, 8192

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.qkv, self.proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(D, 4 * D), torch.nn.GELU(), torch.nn.Linear(4 * D, D))
    def forward(self, x, cache):
        B, T, _ = x.shape
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(D, -1))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)   # the KV cache grows
        y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x)), (k, v)

if __name__ == "__main__":
    torch.manual_seed(0)
    emb, blocks, head = torch.nn.Embedding(V, D).cuda(), [Block().cuda().eval() for _ in range(L)], torch.nn.Linear(D, V).cuda()
    t = time.time(); tokens = 0
    with torch.no_grad():
        for prompt in range(6):
            x, caches = torch.randint(0, V, (1, 32), device="cuda"), [None] * L
            for step in range(200):
                h = emb(x)
                for i, b in enumerate(blocks):
                    h, caches[i] = b(h, caches[i])
                x = head(h[:, -1:]).argmax(-1)
                if x.item() == V:                                            # the stop-token check, every token
                    break
                tokens += 1
    print(f"c56 wall_s={time.time()-t:.3f} tokens={tokens}")
