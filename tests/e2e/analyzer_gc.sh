#!/bin/sh
# analyzer_gc.sh — the main thread's host time between CUDA calls is
# CPython's cyclic garbage collector (issue 43): the sampler tells it from
# the interpreter itself (its gc.collecting flag set, the sampled thread
# holding the GIL), not from native symbols a stripped python3 lacks, and
# gives such samples an innermost Python frame "<gc>" / "garbage
# collection" (docs/schema.md, stack_frames).  A loop on the fake CUDA
# runtime with 2.5 million live lists and 50,000 more each step
# (tests/helpers/python_gc.py) gets those samples in the gaps, and explain's
# first finding says the collector, gc.freeze() first among its fixes, with
# the loop's line as the Source (not "<gc>").  The same loop with
# gc.freeze() after setup has far fewer such samples, with gc.disable()
# none.  For python3 and pyenv's 3.12 (3.10-3.13 have the offsets).
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_gc.py
BUILD=$(marker_line "$PY" BUILD)
HZ=199
STEPS=100

pys=python3
v3=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
p312=""
if command -v pyenv >/dev/null 2>&1; then
	for d in "$(pyenv root)"/versions/3.12.*; do [ -x "$d/bin/python3" ] && p312=$d/bin/python3; done
fi
if [ "$v3" = 3.12 ]; then
	:   # python3 is the 3.12
elif [ -n "$p312" ]; then
	pys="$pys $p312"
else
	skip "no CPython 3.12 under pyenv: only python3 ($v3) tested"
fi

# run PY MODE: the loop traced into $DB, explain into $T/MODE.txt/.json,
# the loop's own account of the collector in $T/MODE.out; sets MAIN and GCS
# (the main thread's samples with the "<gc>" frame between its first and
# last CUDA call: the loop's, not setup's or exit's)
run() {
	rm -f "$DB" "$DB-wal" "$DB-shm" "$T/$2.out"
	FAKECUDA_KERNEL_US=200 "$B/ingero-collector" --force -o "$DB" --sample-hz $HZ -- "$1" "$PY" \
		"$PWD/$B/fakecuda/libcudart.so.13" "$2" $STEPS "$T/$2.out" >/dev/null 2>"$T/err.txt"
	check_eq "$v $2: collector and workload exit 0" 0 $?
	"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/$2.txt" 2>&1
	"$B/ingero-analyze" explain --json "$DB" >"$T/$2.json" 2>&1
	MAIN=$(q "SELECT pid FROM cuda_calls GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
	GCS=$(q "SELECT count(*) FROM cpu_samples s WHERE s.tid = ${MAIN:-0}
		AND s.ts_ns BETWEEN (SELECT min(start_ns) FROM cuda_calls WHERE tid = s.tid)
		AND (SELECT max(start_ns) FROM cuda_calls WHERE tid = s.tid)
		AND EXISTS (SELECT 1 FROM stack_frames f WHERE f.stack_id = s.stack_id AND f.kind = 'python'
			AND f.depth = 0 AND f.file = '<gc>' AND f.symbol = 'garbage collection')")
}
# field MODE KEY: from the loop's account
field() { python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))[sys.argv[2]] * 1000))' "$T/$1.out" "$2"; }

for py in $pys; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	run "$py" gc
	gc_samples=$GCS
	full=$(field gc full); gc_ms=$(field gc gc_s)
	echo "# python $v: $((full / 1000)) full collections, ${gc_ms} ms collecting in the loop; $GCS samples with <gc>"
	check_ge "$v gc: full collections in the loop ($((full / 1000)))" "$full" 3000
	# on-CPU samples of ~gc_ms of collecting at $HZ Hz: a quarter of them
	# at least (the CPUs are shared; waiting for one is not sampled)
	floor=$((gc_ms * HZ / 4000)); [ $floor -lt 20 ] && floor=20
	check_ge "$v gc: the main thread's samples in the loop carry the <gc> frame ($GCS, ${gc_ms} ms collecting)" \
		"$GCS" $floor
	check_eq "$v gc: the <gc> frame has no line, and nothing but the main thread has it" 0 \
		"$(q "SELECT count(*) FROM stack_frames f JOIN cpu_samples s ON s.stack_id = f.stack_id
			WHERE f.file = '<gc>' AND (f.line IS NOT NULL OR s.tid != $MAIN)")"
	under=$(q "SELECT count(*) FROM cpu_samples s JOIN stack_frames a ON a.stack_id = s.stack_id
		AND a.kind = 'python' AND a.depth = 0 AND a.file = '<gc>' JOIN stack_frames b ON b.stack_id = s.stack_id
		AND b.kind = 'python' AND b.depth = 1 AND b.file = '$PY' AND b.line = $BUILD WHERE s.tid = $MAIN")
	check_ge "$v gc: under it, the loop's line that made the objects ($under at python_gc.py:$BUILD)" \
		"$((under * 2))" "$GCS"
	sed -n '/^\[/,/^$/p' "$T/gc.txt" | sed -n '1,/^$/p' >"$T/first.txt"
	sed 's/^/# /' "$T/first.txt" | cut -c1-300
	check "$v gc: the first finding is a gaps one, the main thread on-CPU" \
		grep -q "^\[HIGH\] GPU idle .*main thread on-CPU" "$T/first.txt"
	check "$v gc: its root cause names the garbage collector" \
		grep -q "Root cause: .* of those samples are CPython's cyclic garbage collector" "$T/first.txt"
	check "$v gc: its first fix is gc.freeze()" \
		grep -q "^    1\. Stop the cyclic garbage collector .*gc\.freeze() after setup" "$T/first.txt"
	check "$v gc: its Source is the loop's line, not <gc>" \
		grep -q "^  Source: $PY:$BUILD\$" "$T/first.txt"
	check "$v gc: --json: the first chain, gaps_host_busy, gc.freeze() first" python3 - "$T/gc.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))["chains"][0]
assert c["kind"] == "gaps_host_busy", c["kind"]
assert "garbage collector" in c["root_cause"] and "gc.freeze()" in c["fixes"][0], c
assert "<gc>" not in (c["source"] or ""), c["source"]
PYEOF

	run "$py" freeze
	echo "# python $v, gc.freeze(): $(field freeze full | sed 's/000$//') full collections, $(field freeze gc_s) ms collecting; $GCS samples with <gc>"
	check_le "$v freeze: gc.freeze() after setup: under half the <gc> samples ($GCS of $gc_samples)" \
		"$((GCS * 2))" "$gc_samples"
	run "$py" disable
	check_eq "$v disable: gc.disable(): no <gc> sample in the loop" 0 "$GCS"
	check "$v disable: explain does not name the collector" \
		sh -c "! grep -q 'garbage collector' '$T/disable.txt'"
done
finish
