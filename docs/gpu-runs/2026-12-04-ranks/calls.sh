#!/bin/sh
# Issue 44's device call: ONE call on nvidia-h200, about 4-6 minutes.  Run from the repository root
# on the device, the bundle of this branch (make bundle; then
#   mkdir -p .devpack && tar cJf .devpack/devbin.txz -C build/bundle .
# here, .devpack named in the call's carry) unpacked into .devbin:
#
#   sh docs/gpu-runs/2026-12-04-ranks/calls.sh
#
# (issue 44 named them c39-c42; renumbered c47-c50 when it merged: main's corpus had taken c39-c46)
# 1. c50_nccl_world1: a one-rank NCCL process group (real NCCL 2.28 through PyTorch 2.11): the NCCL
#    calls libingero_preload.so interposed — table collectives by op, their communicator identity,
#    sequence numbers, and the GPU marks around them.
# 2. c47 (torchrun --nproc_per_node=2, DDP over gloo, rank 1 with 1 DataLoader worker), c49 (the same,
#    balanced), c48 (--nproc_per_node=4, rank 3 with a CPU-heavy transform): explain across the ranks.
#    Expectations written before: docs/gpu-runs/2026-12-04-ranks/expectations/ (since moved to
#    tests/corpus/ with the traces; tests/e2e/analyzer_corpus.sh checks them: CORPUS=DIR ONLY=c47 ...).
# 3. make bench-nccl on the H200's CPU (fake NCCL, the library's own cost per NCCL call).
# Everything comes back as one tar, $OUT/ranks.tgz (traces xz'd, explain, the checks' output).
set -u
export PATH=/opt/torch/.venv/bin:$PATH
R=$PWD
D=$R/.devbin
[ -x "$D/ingero-run" ] || { mkdir -p "$D" && tar xJf "$R/.devpack/devbin.txz" -C "$D"; }
OUT=${OUT:-/tmp/ranks-out}
X=/tmp/ranks; rm -rf "$X"; mkdir -p "$X/tr" "$X/expectations" "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$R/tests/corpus/workloads"
for w in c50_nccl_world1:70 c47_ddp_gloo_slow_rank:90 c49_ddp_gloo_balanced:80 c48_ddp_gloo_4ranks_transform:110; do
	n=${w%:*}; lim=${w#*:}
	s=$(date +%s)
	timeout "$lim" "$D/ingero-run" -q -o "$X/tr/$n.db" -- python3 "$n.py" >"$X/tr/$n.traced.txt" 2>&1
	rc=$?
	"$D/ingero-analyze" explain "$X/tr/$n.db" >"$X/tr/$n.explain.txt" 2>&1
	"$D/ingero-analyze" explain --json "$X/tr/$n.db" >"$X/tr/$n.explain.json" 2>&1
	"$D/ingero-analyze" per-process "$X/tr/$n.db" >"$X/tr/$n.per-process.txt" 2>&1
	echo "== $n rc=$rc $(( $(date +%s) - s ))s | $(grep -h 'wall_s' "$X/tr/$n.traced.txt" | tr '\n' ' ' | cut -c1-200)"
	python3 - "$X/tr/$n.db" "$D/libingero_sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
try:
    c.enable_load_extension(True); c.load_extension(sys.argv[2]); ext = True
except Exception as e:
    ext = False
print("  schema", q("PRAGMA user_version")[0][0], "losses", q("SELECT source, count FROM losses WHERE count > 0"))
print("  ranks", q("SELECT p.pid, p.comm, group_concat(e.key || '=' || e.value, ' ') FROM process_env e JOIN processes p "
                   "ON p.pid = e.pid WHERE e.key IN ('RANK','LOCAL_RANK','WORLD_SIZE') GROUP BY p.pid"))
print("  collectives", q("SELECT op, count(*), count(DISTINCT comm_id), min(seq), max(seq), sum(flags & 2 > 0), "
                         "sum(flags & 4 > 0), min(nranks), max(bytes) FROM collectives GROUP BY op"))
print("  gloo threads' syncs+copies", q("SELECT count(*) FROM cuda_calls c JOIN threads t ON t.tid = c.tid "
                                        "WHERE t.tid <> t.pid AND c.api IN (13, 204) AND c.stream NOT IN (0, 1, 2)")
      if ext else "(no extension)")
PY
	grep -E "^Job:|^  rank |^\[(HIGH|MEDIUM|LOW)\]|^The ranks are|^Rank [0-9]+ on its own" "$X/tr/$n.explain.txt" | head -12 | cut -c1-300
done
# the expectations, as tests/e2e/analyzer_corpus.sh reads them, against these traces
cp "$R"/tests/corpus/c4[789]_ddp_gloo_*.expect "$R"/tests/corpus/c50_nccl_world1.expect "$X/expectations/"
for f in "$X"/tr/*.db; do cp "$f" "$X/expectations/"; done
if command -v jq >/dev/null; then
	(cd "$R" && CORPUS="$X/expectations" B="$D" sh tests/e2e/analyzer_corpus.sh 2>&1 | grep -Ev '^ok' | head -30)
else
	echo "(no jq on the device: the expectations are checked on the dev machine)"
fi
rm -f "$X"/expectations/*.db
# the library's cost per NCCL call on this CPU (fake NCCL: the interposition alone)
(cd "$R" && LD_LIBRARY_PATH="$D" B="$D/bench" RUNS=3 sh tests/bench/nccl.sh 2>&1 | tail -4)
rm -f "$X"/tr/*.db-wal "$X"/tr/*.db-shm /dev/shm/fakenccl-* 2>/dev/null
xz -T0 -6 "$X"/tr/*.db
ls -la "$X/tr" | awk '{ s += $5 } END { print "traces and texts:", s, "bytes" }'
tar czf "$OUT/ranks.tgz" -C /tmp ranks
