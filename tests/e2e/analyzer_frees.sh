#!/bin/sh
# analyzer_frees.sh — cudaFree waits for the device to drain (the fake
# runtime does as the real one), so frees inside a training loop open gaps:
# explain counts them (gaps, and the sync_frees chain: how many, from which
# line, the mallocs that follow), names torch.cuda.empty_cache() when the
# frees come from it (the stand-in at fake_torch/torch/cuda/memory.py),
# gives the memory-pressure fix otherwise, and says nothing for the same
# loop without frees, or with cudaFree(NULL) (context set-up: it waits for
# nothing, and the preload flags it).
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_frees.py
CALL=$(marker_line "$PY" CALL)
DIRECT=$(marker_line "$PY" DIRECT)
STEPS=40

trace() { # mode [LIBFAKE_ATEN]
	m=$1; shift
	explain_run "$m" 1500 99 "$PY" "$m" "$STEPS" "$@"
	grep -A8 "frees that wait" "$T/$m.txt" | sed 's/^/# /'
}
json() { # mode, python assertion over f (the sync_frees chain or None) and gaps (the gaps chain or None)
	python3 - "$T/$1.json" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
by = lambda k: next((c for c in d["chains"] if c["kind"].startswith(k)), None)
f, gaps = by("sync_frees"), by("gaps_")
assert eval(sys.argv[2]), (sys.argv[2], f and f["evidence"], gaps and gaps["evidence"]["gaps"])
PYEOF
}
# the last step's frees come after its launches: teardown, not counted; the
# loop's frees count from the window's start, the first GPU work — on a
# loaded machine a step later now and then (CI read 76 of 78 once)
N=$((2 * (STEPS - 1)))

trace empty_cache
check "empty_cache: sync_frees with every free and the mallocs after them" json empty_cache \
	"f and $N - 4 <= f['evidence']['frees'] <= $N and f['evidence']['mallocs_after'] == f['evidence']['frees'] and f['evidence']['empty_cache']"
# (about one per step: measured GPU idle may leave out the first and the
# last, and the first steps' gaps may fall in start-up, set apart: phases.h;
# a clean-clone run on the loaded 2-vCPU CI machine read 36 of 40, another
# 32 — a host late into the next step leaves the GPU idle from one free to
# the next, one gap where there were two: at least one every second step)
check "empty_cache: the frees open the loop's gaps" json empty_cache "gaps and gaps['evidence']['gaps'] >= $STEPS / 2"
check "empty_cache: root cause names empty_cache and the line calling it" \
	grep -q "Here they come from torch.cuda.empty_cache(), called at $PY:$CALL\." "$T/empty_cache.txt"
check "empty_cache: first fix, out of the loop" \
	grep -q "1\. Take torch.cuda.empty_cache() out of the loop at $PY:$CALL" "$T/empty_cache.txt"
check "empty_cache: Source is that line" grep -q "^  Source: $PY:$CALL\$" "$T/empty_cache.txt"

trace direct
check "direct: sync_frees, not empty_cache" json direct \
	"f and $N - 4 <= f['evidence']['frees'] <= $N and not f['evidence']['empty_cache'] and f['evidence']['line'] == '$PY:$DIRECT'"
check "direct: first fix, memory pressure" grep -q "1\. If the GPU's memory is nearly full .*num_alloc_retries" "$T/direct.txt"
check "direct: the slow cudaFree tail is the GPU draining, not a host cause" \
	sh -c "! grep -A6 '^\[[A-Z]*\] cudaFree p99' '$T/direct.txt' | grep -q 'Look inside the driver call'"

# frees inside cuDNN's convolution (no autotuning in the trace): the
# caching allocator giving its cache back for a workspace that did not fit
trace conv "$PWD/$B/tests/libfake_aten.so"
check "conv: sync_frees, every free read as the allocator's retry" json conv \
	"f and f['evidence']['frees'] >= $N - 4 and f['evidence']['frees_in_allocation_retry'] == f['evidence']['frees']"
check "conv: first fix, fragmentation" grep -q "1\. Stop the fragmentation: .*expandable_segments:True" "$T/conv.txt"

trace null
check_eq "null: every cudaFree(NULL) flagged (32)" "$STEPS" \
	"$(q "SELECT count(*) FROM cuda_calls WHERE api = 28 AND flags & 32")"
# the GPU does idle while the host works (measured), but the frees are not why
check "null: no free chain, and no gap blamed on frees" json null \
	"f is None and (gaps is None or 'cudaFree' not in gaps['root_cause'])"

trace none
# the loop keeps the GPU queued, so it has no gaps of its own; on a loaded
# machine (CI's 2 vCPUs) the main thread can lose its CPU long enough for the
# queue to drain, and that is what explain must then say (4 busy loops here:
# 3 runs of 5 read gaps_host_preempted, 27-33 gaps)
check "none: no sync_frees chain, no gaps chain but the CPU's" json none \
	"f is None and (gaps is None or gaps['kind'] == 'gaps_host_preempted')"
finish
