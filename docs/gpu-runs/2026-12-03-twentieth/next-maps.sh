#!/bin/sh
# For a next turn (written in the twentieth session, not run: its device time was spent).  The
# symbolizer's /proc/PID/maps re-reads on real PyTorch — the launch-bound loop (examples/train_overhead.py, 8,000 steps) traced by 31de6c3's
# collector (data mappings placed, re-reads rationed; session key maps_reads) and by 7c7016e's
# (every sampled address outside the code mappings re-read them, at most every 50 ms), in turns:
# the collector's own CPU seconds (--stats cpu_s), its kernel records, the process's mappings.
# Needs 7c7016e's collector in the bundle as .devbin/ingero-collector-old (~100 s of command).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/rm; rm -rf $T; mkdir -p $T
W='import runpy, sys
sys.argv = ["train_overhead.py", "--steps", "8000"]
runpy.run_path("examples/train_overhead.py", run_name="__main__")
print("maps_lines=%d" % sum(1 for _ in open("/proc/self/maps")))'
for r in 1 2; do
	for c in ingero-collector ingero-collector-old; do
		"$D/$c" -q --stats $T/$c.$r.stats -o $T/$c.$r.db -- python3 -c "$W" >$T/$c.$r.out 2>&1
		reads=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("select value from session where key = \"maps_reads\"").fetchone()
print(r[0] if r else "-")' $T/$c.$r.db)
		echo "$c.$r $(grep -E '^(cpu_s|run_wall_s|kernel_records)=' $T/$c.$r.stats | tr '\n' ' ')maps_reads=$reads $(grep -E 'maps_lines|wall_s' $T/$c.$r.out | tr '\n' ' ')"
		rm -f $T/$c.$r.db*
	done
done | tee $OUT/maps.txt
