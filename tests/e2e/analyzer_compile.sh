#!/bin/sh
# analyzer_compile.sh — gaps where torch.compile compiles are told apart:
# a Python loop on the fake runtime "compiles" (Python work in a file at
# fake_torch/torch/_dynamo/convert_frame.py: the path is what counts) while
# no GPU work is queued — once after the first step, again three quarters
# in, or in a forked worker while the main thread waits — and explain says
# gaps_compiling, start-up or recompilation, with the steady state apart and
# the line that called the compile.  A plain host-bound loop stays
# gaps_host_busy (tests/e2e/collector_python.sh).
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_compile.py
CALL=$(marker_line "$PY" CALL)
FAKE=$PWD/tests/helpers/fake_torch/torch/_dynamo/convert_frame.py
COMPILE=$(marker_line "$FAKE" COMPILE)

trace() { # mode
	explain_run "$1" 5000 199 "$PY" "$1"
	sed 's/^/# /' "$T/$1.txt" | sed -n 4,14p
}
json() { # mode, python assertion over c (the gaps chain's evidence) and ch (the chain)
	python3 - "$T/$1.json" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ch = [c for c in d["chains"] if c["kind"].startswith("gaps_")][0]
c = ch["evidence"]
assert eval(sys.argv[2]), (sys.argv[2], ch["kind"], {k: v for k, v in c.items() if "compile" in k})
PYEOF
}

trace once
check "once: the first chain is gaps_compiling" grep -q "^\[HIGH\] GPU idle .*torch.compile compiling in the on-CPU samples" "$T/once.txt"
# the loop's lines: the sample lands on the for, the while or the body
check "once: root cause names the compiling code and its caller" \
	grep -Eq "The most sampled: _compile at $FAKE:($((COMPILE - 2))|$((COMPILE - 1))|$COMPILE), called from $PY:$CALL\." "$T/once.txt"
check "once: a start-up cost" grep -q "Compiling ended .* after the first GPU work: a start-up cost" "$T/once.txt"
check "once: the steady state apart (GPU-bound steps: under 5 %)" \
	grep -Eq "Outside those gaps no GPU work was queued [0-4]\.[0-9]% of the time" "$T/once.txt"
check "once: first fix, judge after warm-up" grep -q "1\. Judge the steady state after warm-up steps" "$T/once.txt"
check "once: no recompile fix" sh -c "! grep -q 'TORCH_LOGS=recompiles' '$T/once.txt'"
check "once: Source is the line that called it" grep -q "^  Source: $PY:$CALL\$" "$T/once.txt"
check "once: --json kind, share, one compile gap" json once \
	'ch["kind"] == "gaps_compiling" and c["compile_share"] >= 0.9 and c["compile_gaps"] == 1 and c["compile_gap_ns"] >= 700e6'

trace again
check "again: gaps_compiling" json again 'ch["kind"] == "gaps_compiling" and c["compile_gaps"] == 2'
check "again: said to recompile" grep -q "It compiled again in the second half of the run" "$T/again.txt"
check "again: first fix, find what recompiles" grep -q "1\. Find what makes it recompile: TORCH_LOGS=recompiles" "$T/again.txt"

trace workers
check "workers: gaps_compiling, not waiting on (DataLoader) workers" \
	json workers 'ch["kind"] == "gaps_compiling" and c["workers"] == 1'
check "workers: the workers' samples are the compiling" grep -q "(workers) are in its compile-time code" "$T/workers.txt"
check "workers: no DataLoader fix" sh -c "! grep -Eq 'num_workers|DataLoader' '$T/workers.txt'"

trace pool
check "pool: gaps_compiling, and the pool is not a (DataLoader) worker" \
	json pool 'ch["kind"] == "gaps_compiling" and c["workers"] == 0 and c["compile_share"] >= 0.8'
check "pool: said to be compile workers" grep -q "(compile workers or other threads) are in its compile-time code" "$T/pool.txt"
finish
