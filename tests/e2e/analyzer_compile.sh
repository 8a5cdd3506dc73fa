#!/bin/sh
# analyzer_compile.sh — torch.compile's compiling is a phase of the run, not
# its steady state: a Python loop on the fake runtime "compiles" (Python work
# in a file at fake_torch/torch/_dynamo/convert_frame.py: the path is what
# counts) — once after the first step, again three quarters in, in a forked
# child while the main thread waits, or in a process started as Inductor's
# compile-worker pool — and explain reports a compilation finding (a
# recompilation one when it compiles again after steps ran), with the line
# that called the compile, the child processes as compilers (not DataLoader
# workers), and no starvation chain for the GPU-bound steps.  The real-trace
# counterpart is tests/corpus/c07_compile_dynamic (recompiling on new shapes).
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_compile.py
CALL=$(marker_line "$PY" CALL)

trace() { # mode
	explain_run "$1" 5000 199 "$PY" "$1"
	sed 's/^/# /' "$T/$1.txt" | sed -n 3,16p
}
# late: the machine held the loop's wake-ups back — its steady state's GPU
# idle 10 % or more, the main thread asleep or waiting for a CPU in most of
# it (a CI run: the fake sync's sleeps ended 2.5 ms late each 20 ms step, a
# real MEDIUM gaps chain, put before the compilation, a phase paid once)
json() { # mode, python assertion over d (explain --json), k (kinds in order), ch(kind), late, first(kind)
	python3 - "$T/$1.json" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
k = [c["kind"] for c in d["chains"]]
ch = lambda kind: [c for c in d["chains"] if c["kind"] == kind][0]
g = d["gaps"]
late = g["total_ns"] >= 0.1 * d["phases"]["steady_ns"] and g["main_blocked_ns"] + g["main_runq_ns"] >= 0.5 * g["total_ns"]
if late:
    print("# the steady state's GPU idle:", g["total_ns"], "ns: the host's wake-ups came late")
# the first chain is kind — or, late, the first of the phases' chains
first = lambda kind: k[0] == kind or (late and [c["kind"] for c in d["chains"] if c["phase"] != "steady"][0] == kind)
assert eval(sys.argv[2]), (sys.argv[2], [(c["severity"], c["kind"]) for c in d["chains"]], d["phases"])
PYEOF
}

trace once
check "once: the first chain is compilation (the first of the phases, where the machine made the steps starve)" \
	json once 'first("compilation")'
check "once: it is most of the compiling time (0.8 s)" json once \
	'ch("compilation")["evidence"]["phase_ns"] >= 600e6 and d["phases"]["compilation_ns"] >= 600e6'
check "once: no recompilation" json once '"recompilation" not in k'
check "once: no starvation chain for the GPU-bound steps (unless the machine made them starve)" \
	json once 'late or all(c["severity"] == "LOW" for c in d["chains"] if c["phase"] == "steady")'
check "once: Source is the line that called it" json once "ch('compilation')['source'] == '$PY:$CALL'"
check "once: first fix, judge after warm-up" grep -q "1\. Measure the steady state after warm-up steps" "$T/once.txt"
check "once: no recompile fix" sh -c "! grep -q 'TORCH_LOGS=recompiles' '$T/once.txt'"

trace again
check "again: a recompilation finding" json again '"recompilation" in k and ch("recompilation")["evidence"]["repeats"] == 1'
check "again: the first compile apart" json again '"compilation" in k'
check "again: first fix, find what recompiles" grep -q "1\. Find what makes it recompile: TORCH_LOGS=recompiles" "$T/again.txt"

trace workers
check "workers: compilation first (of the phases, where the machine made the steps starve), not waiting on (DataLoader) workers" \
	json workers 'first("compilation") and "gaps_waiting_workers" not in k'
check "workers: the forked child is a compiler, from its samples" \
	json workers 'any(p["role"] == "compiler" and "compile-time" in (p["role_evidence"] or "") for p in d["processes"])'
check "workers: no DataLoader fix" sh -c "! grep -Eq 'num_workers|DataLoader' '$T/workers.txt'"

trace pool
check "pool: compilation first (of the phases, where the machine made the steps starve), the pool is a compiler process, not a worker" \
	json pool 'first("compilation") and not any(p["role"] == "worker" for p in d["processes"]) and any(p["role"] == "compiler" for p in d["processes"])'
check "pool: said to be compiler processes" grep -q "compiler processes (ptxas, nvlink, cc1, compile workers)" "$T/pool.txt"
finish
