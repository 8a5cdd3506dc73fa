#!/bin/sh
# device call 1 (eighteenth session): where the toggle's other half goes, and the toggle.
# (1) long in-place runs (600 chunks) with INGERO_SELF_TIME=1 (the library's own time, and since
# this session the real functions' time a call and the program's own between calls, recording
# against paused) and INGERO_BPF_STATS=1 (BPF time by capture mode); the trace's per-thread
# evidence rates while recording; the chunk files' on/off wall and CPU ratios.  This build's
# collector (off-CPU records sent at the switch-out) against the previous one's (at the
# switch-in: ingero-collector-old, 39bdf8b).  (2) The toggle of this build, five processes.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r1; rm -rf $T; mkdir -p $T
. tests/bench/turns_lib.sh
rates() {
	python3 - "$1" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
cap = d.execute("SELECT t_ns, recording FROM capture ORDER BY t_ns").fetchall()
rec = 0; start = None
for t, r in cap:
    if r and start is None: start = t
    elif not r and start is not None: rec += t - start; start = None
rec /= 1e9
out = ["rec_s=%.1f" % rec]
for tid, comm in d.execute("SELECT tid, comm FROM threads"):
    o = d.execute("SELECT count(*), sum(end_ns - start_ns) FROM off_cpu WHERE tid = ?", (tid,)).fetchone()
    s = d.execute("SELECT count(*) FROM cpu_samples WHERE tid = ?", (tid,)).fetchone()[0]
    if rec and (o[0] + s) / rec > 5:
        out.append("%s:off/s=%.0f,samples/s=%.0f" % (comm, o[0] / rec, s / rec))
out.append("marks=" + ",".join("%s:%d" % (f, n) for f, n in d.execute("SELECT flags & 1, count(*) FROM gpu_marks GROUP BY 1")))
s = dict(d.execute("SELECT key, value FROM session"))
for k in sorted(s):
    if k.startswith("bpf_run_ns.") or k.startswith("bpf_runs.") or k.startswith("bpf_mode_ns"):
        out.append("%s=%s" % (k, s[k]))
print(" ".join(out))
PY
}
onoff() { # chunk file: recording chunks' wall and thread CPU over their paused neighbours (skipping 30)
	sed 's/[a-z_]*=//g' "$1" | awk '{ on[$1] = $2; w[$1] = $3; c[$1] = $4; n = $1 }
		END { for (i = 31; i < n; i++) if (on[i] == 1) { a += w[i]; b += (w[i-1] + w[i+1]) / 2; x += c[i]; y += (c[i-1] + c[i+1]) / 2 }
			printf "wall_pct=%.2f cpu_pct=%.2f\n", 100 * (a / b - 1), 100 * (x / y - 1) }'
}
long() { # TAG [RUN-OPTION] ENV...
	tag=$1; shift; opt=
	case "${1:-}" in --*) opt=$1; shift ;; esac
	env INGERO_SELF_TIME=1 INGERO_BPF_STATS=1 INGERO_CAPTURE=cudaProfilerApi "$@" "$D/ingero-run" -q $opt -o $T/$tag.db -- \
		python3 examples/train_overhead.py --steps 30 --chunks 600 --toggle >$T/$tag.chunks 2>$T/$tag.err
	grep '^ingero:' $T/$tag.err | sed "s/^/$tag /"
	echo "$tag $(onoff $T/$tag.chunks) bpf_modes=$(toggle_bpf_modes $T/$tag.db)"
	echo "$tag $(rates $T/$tag.db)"
	rm -f $T/$tag.db*
}
{
	long new1
	long old1 INGERO_COLLECTOR=$D/ingero-collector-old
} > $T/long.txt 2>&1
cat $T/long.txt
ANALYZE=$D/ingero-analyze TOGGLE=5 TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 TURNS=full PARTS=turns \
	timeout 420 sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 > $T/toggle.txt 2>&1
rm -f $T/tg/*.db $T/tg/*.db-*
cat $T/toggle.txt
cd /tmp && tar czf $OUT/r1.tgz r1
