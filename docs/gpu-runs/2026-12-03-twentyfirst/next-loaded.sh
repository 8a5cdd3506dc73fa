#!/bin/sh
# For a next turn (written in the twenty-first session, not run: its device time was spent).
# SCHED_BATCH for the tracer's threads on real PyTorch with no idle CPU: every CPU but the
# first runs two busy loops, and examples/train_overhead.py (3,000 steps) runs untraced, traced,
# and traced with INGERO_TRACER_BATCH=0, six times in turn (tests/bench/loaded.sh; ~4 min).
# On the dev VM the fake-CUDA loop's tracer cost fell from 4.6-4.8 % to 2.8-3.1 % with the GPU
# watcher batched too, which widened the measured GPU idle bounds (it is not, since a81d0b1);
# with the sender and collector alone 3.79 against 3.70 (docs/benchmarks.md).
export PATH=/opt/torch/.venv/bin:$PATH
INGERO_COLLECTOR=$PWD/.devbin/ingero-collector LOADED_PAIRS=6 \
	LOADED_CMD="python3 examples/train_overhead.py --steps 3000" \
	timeout 400 sh tests/bench/loaded.sh - | tee "$OUT/loaded.txt"
# And which threads run under SCHED_BATCH in a real job (a review's question: only the tracer's
# — ingero-sender, nng:* — not ingero-gpu, never PyTorch's, the driver's or a DataLoader
# worker's): each thread's
# policy (stat field 41) in the traced process and its two workers, mid-epoch.
P='import multiprocessing as mp, os, torch
from torch.utils.data import DataLoader, TensorDataset
def pol(pid):
    out = []
    for t in sorted(os.listdir("/proc/%d/task" % pid)):
        s = open("/proc/%d/task/%s/stat" % (pid, t)).read()
        out.append("%s=%s" % (s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()[38]))
    return " ".join(sorted(set(out)))
dl = DataLoader(TensorDataset(torch.randn(4096, 256)), batch_size=64, num_workers=2)
m = torch.nn.Linear(256, 256).cuda()
for i, (x,) in enumerate(dl):
    m(x.cuda()).sum().item()
    if i == 20:
        print("main", pol(os.getpid()))
        for c in mp.active_children():
            print("worker", pol(c.pid))'
"$PWD/.devbin/ingero-collector" -q -o /tmp/pol.db -- python3 -c "$P" 2>&1 | tee -a "$OUT/loaded.txt"
