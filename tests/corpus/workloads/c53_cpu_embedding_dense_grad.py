# Class: a recommendation-style model whose 1M x 64 embedding table stays on the CPU (line 10, dense
# gradients: sparse=False) while its MLP runs on the GPU. Every step the main thread computes the
# embedding's forward on the CPU and, in loss.backward() (line 21), a dense gradient of the whole
# 256 MB table, in memory PyTorch's CPU allocator takes fresh from glibc (mmap) each step and frees
# again: its pages faulted in and zeroed by the kernel, then SGD (line 22) walks all of it.
import time, torch
if __name__ == "__main__":
    torch.manual_seed(0)
    n_rows, dim, bags, per_bag = 1 << 20, 64, 4096, 40
    emb = torch.nn.EmbeddingBag(n_rows, dim, mode="sum")                     # on the CPU, dense grads
    mlp = torch.nn.Sequential(torch.nn.Linear(dim, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).cuda()
    opt = torch.optim.SGD(list(emb.parameters()) + list(mlp.parameters()), lr=0.01)
    t = time.time(); steps = 0
    for i in range(60):
        idx = torch.randint(0, n_rows, (bags * per_bag,))
        offsets = torch.arange(0, bags * per_bag, per_bag)
        y = torch.rand(bags, 1, device="cuda")
        h = emb(idx, offsets).cuda(non_blocking=True)
        loss = torch.nn.functional.mse_loss(mlp(h), y)
        opt.zero_grad()
        loss.backward()                                                    # the table's dense gradient
        opt.step()
        steps += 1
    torch.cuda.synchronize(); print(f"c53 wall_s={time.time()-t:.3f} steps={steps}")
