#!/bin/sh
# collector_python.sh — on-CPU samples of a CPython process carry its Python
# frames (bpf/samples.bpf.c walks them, collector/python.c names them): for
# python3 and every CPython 3.10-3.13 that pyenv has, a hot loop's samples
# name the loop's function, file and line, with its caller below it; a
# forked worker's samples name the worker's function; frames are stored
# once per distinct stack.  And through explain: a host-bound loop (Python
# work between CUDA calls on the fake runtime, through ctypes) gets a gaps
# chain whose samples, root cause, fix and Source name the Python function
# and line that kept the CPU busy.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=tests/helpers/python_hot.py
FILE=$PWD/$PY
HOT=$(marker_line "$PY" HOT); OUTER=$(marker_line "$PY" OUTER); WORKER=$(marker_line "$PY" WORKER)

for py in $(pythons); do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
	rm -f "$DB" "$DB-wal" "$DB-shm"
	"$B/ingero-collector" --force -o "$DB" --sample-hz 199 -- "$py" "$FILE" 0.8 >/dev/null 2>"$T/err.txt"
	check_eq "python $v: collector and workload exit 0" 0 $?
	main=$(q "SELECT pid FROM processes WHERE ppid NOT IN (SELECT pid FROM processes) ORDER BY pid LIMIT 1")
	total=$(q "SELECT count(*) FROM cpu_samples WHERE pid = $main")
	withpy=$(q "SELECT count(*) FROM cpu_samples s WHERE pid = $main AND EXISTS
		(SELECT 1 FROM stack_frames f WHERE f.stack_id = s.stack_id AND f.kind = 'python')")
	check_ge "python $v: main process sampled ($total)" "$total" 40
	check_eq "python $v: session.python_frames" on "$(q "SELECT value FROM session WHERE key = 'python_frames'")"
	check_ge "python $v: most of its samples carry Python frames ($withpy of $total)" "$((withpy * 4))" "$((total * 3))"
	hot=$(q "SELECT count(*) FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id
		WHERE s.pid = $main AND f.kind = 'python' AND f.depth = 0 AND f.symbol = 'inner_hot'
		AND f.file = '$FILE' AND f.line BETWEEN $((HOT - 2)) AND $HOT")
	check_ge "python $v: innermost frame inner_hot at $PY:$((HOT - 2))-$HOT in half the samples ($hot)" \
		"$((hot * 2))" "$total"
	check_ge "python $v: its caller below it, outer at line $OUTER" \
		"$(q "SELECT count(*) FROM stack_frames a JOIN stack_frames b ON b.stack_id = a.stack_id AND b.kind = 'python'
			AND b.depth = a.depth + 1 WHERE a.kind = 'python' AND a.symbol = 'inner_hot'
			AND b.symbol = 'outer' AND b.line = $OUTER")" 1
	# the worker: the most sampled other process (a pyenv shim adds a few shells)
	wpid=$(q "SELECT pid FROM cpu_samples WHERE pid != $main GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
	wtotal=$(q "SELECT count(*) FROM cpu_samples WHERE pid = ${wpid:-0}")
	wnamed=$(q "SELECT count(*) FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id
		WHERE s.pid = ${wpid:-0} AND f.kind = 'python' AND f.symbol LIKE 'worker_hot%' AND f.line = $WORKER")
	check_ge "python $v: the forked worker's samples name worker_hot at line $WORKER ($wnamed of $wtotal)" \
		"$((wnamed * 2))" "$((wtotal > 0 ? wtotal : 1))"
	check_eq "python $v: one row per frame of each stored stack" 0 \
		"$(q "SELECT count(*) FROM (SELECT stack_id, depth FROM stack_frames WHERE kind = 'python'
			GROUP BY 1, 2 HAVING count(*) > 1)")"
	# with a subinterpreter, the runtime's newest interpreter is not the main one
	case $v in 3.1[0-1]) continue ;; esac
	rm -f "$DB" "$DB-wal" "$DB-shm"
	"$B/ingero-collector" --force -o "$DB" --sample-hz 199 -- "$py" "$FILE" 0.5 subinterpreter >/dev/null 2>"$T/err.txt"
	check_eq "python $v, a subinterpreter made: exits 0" 0 $?
	main=$(q "SELECT pid FROM cpu_samples GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
	hot=$(q "SELECT count(*) FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id
		WHERE s.pid = $main AND f.kind = 'python' AND f.depth = 0 AND f.symbol = 'inner_hot'")
	check_ge "python $v, a subinterpreter made: the main thread's frames still found ($hot)" "$hot" 20
done

rm -f "$DB" "$DB-wal" "$DB-shm"
"$B/ingero-collector" --force -o "$DB" --sample-hz 199 --no-python-frames -- python3 "$FILE" 0.3 >/dev/null 2>"$T/err.txt"
check_eq "--no-python-frames: exits 0" 0 $?
check_ge "--no-python-frames: still sampled (the native program)" "$(q "SELECT count(*) FROM cpu_samples")" 20
check_eq "--no-python-frames: no Python frame in any sample" 0 \
	"$(q "SELECT count(*) FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id AND f.kind = 'python'")"
check_eq "--no-python-frames: the session says so" "off: --no-python-frames" \
	"$(q "SELECT value FROM session WHERE key = 'python_frames'")"
check "--no-python-frames: explain says so under its Trace line" sh -c \
	"'$B/ingero-analyze' explain --verbose --width 1000 '$DB' | sed -n '2,/^$/p' | grep -q '^On-CPU samples have native frames only (Python frames off: --no-python-frames)'"

GP=tests/helpers/python_gaps.py
BUILD=$(marker_line "$GP" BUILD)
# The checks below need a CPU free for the loop.  When the scheduler saw the
# main thread wait on a run queue for a fifth of the gaps or more (something
# else held the CPUs: a CI neighbour), that trace is not this test's case, so
# it runs again (3 tries).  The measurement decides, not explain's verdict.
worst=0
for try in 1 2 3; do
	rm -f "$DB" "$DB-wal" "$DB-shm"
	FAKECUDA_KERNEL_US=200 "$B/ingero-collector" --force -o "$DB" --sample-hz 199 -- python3 "$PWD/$GP" \
		"$PWD/$B/fakecuda/libcudart.so.13" 160 >/dev/null 2>"$T/err.txt"
	rc=$?
	[ $rc -ne 0 ] && worst=$rc
	"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/explain.txt" 2>&1
	runq=$("$B/ingero-analyze" explain --json "$DB" 2>/dev/null | python3 -c '
import json, sys
g = json.load(sys.stdin)["gaps"]
print(int(100 * g["main_runq_ns"] / g["total_ns"]) if g["total_ns"] else 0)' 2>/dev/null || echo 0)
	[ "$runq" -lt 20 ] && break
	echo "# try $try: the main thread waited for a CPU $runq % of the gaps (contended); again"
done
check_eq "host-bound Python loop: exits 0 (every try)" 0 $worst
sed 's/^/# /' "$T/explain.txt" | head -n 16
check "explain: a HIGH gaps chain with the main thread on-CPU" \
	grep -q "^\[HIGH\] GPU idle .*main thread on-CPU" "$T/explain.txt"
check "explain: the gaps' samples are named by the Python function (build_batch)" \
	grep -q "main thread's on-CPU samples in the gaps: build_batch" "$T/explain.txt"
check "explain: root cause says how much ran Python code and where" \
	grep -q "of those samples run Python code, the most in build_batch.* at $PWD/$GP:$BUILD" "$T/explain.txt"
check "explain: the first fix names that code" \
	grep -q "1\. Make the Python code the samples name cheaper (build_batch.* at $PWD/$GP:$BUILD first, [0-9]*% of the samples)" "$T/explain.txt"
check "explain: Source is that line" grep -q "^  Source: $PWD/$GP:$BUILD\$" "$T/explain.txt"
# (seen once, under two CPU hogs: the processes as they were, to tell why)
if grep -q 'workers on-CPU 0ns' "$T/explain.txt"; then
	nok "explain: the pyenv shim's shells (if any) are not workers"
	"$B/ingero-analyze" per-process "$DB" | sed 's/^/# /'
	q "SELECT pid, ppid, comm, exe, start_ns, exit_ns FROM processes" | sed 's/^/# /'
else
	ok "explain: the pyenv shim's shells (if any) are not workers"
fi
"$B/ingero-analyze" explain --json "$DB" >"$T/explain.json" 2>&1
check "explain --json: the chain's top main stack is Python code with its user line, the share given" \
	python3 - "$T/explain.json" "$PWD/$GP:$BUILD" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["chains"] if c["kind"].startswith("gaps_")][0]["evidence"]
top = c["main_stacks"][0]
assert top["python_code"] is True and top["symbol"].startswith("build_batch"), top
assert top["user_line"] == sys.argv[2], top
# (a few samples land in the library's own call-site lookup, native code: at
# 40 steps, ~18 samples, one of them made the share 0.88 on CI)
assert c["main_python_share"] >= 0.8, c["main_python_share"]
PYEOF
finish
