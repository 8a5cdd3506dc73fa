# Class: training that keeps the GPU busy, and every 40 steps a validation pass whose metric is
# computed on the host: each validation batch's scores are moved with .tolist() (line 24) and the
# best F1 over 32 thresholds is computed in pure Python (line 15), while the GPU waits.
# A third of the job's wall time is validation; the training steps themselves are GPU-bound.
import time, torch
torch.manual_seed(0)
D = 2048
net = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(D, D), torch.nn.ReLU())], torch.nn.Linear(D, 1)).cuda()
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
val = [(torch.randn(4096, D, device="cuda"), torch.randint(0, 2, (4096,), device="cuda")) for _ in range(8)]

def best_f1(scores, labels):
    best = 0.0
    for th in [k / 32 - 0.5 for k in range(32)]:
        tp, fp = map(sum, zip(*((s > th and l, s > th and not l) for s, l in zip(scores, labels))))  # the metric
        best = max(best, 2 * tp / max(1, 2 * tp + fp + (sum(labels) - tp)))
    return best

def validate():
    net.eval(); out = []
    with torch.no_grad():
        for x, y in val:
            s = net(x).squeeze(1)
            out.append(best_f1(s.tolist(), y.tolist()))
    net.train(); return sum(out) / len(out)

t = time.time()
for step in range(1, 401):
    x, y = torch.randn(4096, D, device="cuda"), torch.randint(0, 2, (4096, 1), device="cuda").float()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 40 == 0:
        validate()
torch.cuda.synchronize(); print(f"c59 wall_s={time.time()-t:.3f}")
