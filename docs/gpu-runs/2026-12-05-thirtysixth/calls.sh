#!/bin/sh
# The thirty-sixth session's device calls (build aa97523, schema 9).  Run on the device from the
# repository root, the bundle unpacked into .devbin from .devpack/devbin.txz (made here by
# `sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`: build/bundle, collect.sh and
# every workload).
#   toggle: the toggle of this build alone, run as two calls (`calls.sh 2`, then `3`, of
#       docs/gpu-runs/2026-12-03-twentysecond/calls.sh, PROCS=8, LIMIT 455 and 470), the first
#       after 2026-12-04-perf/calls.sh 1 (RUNS=7: the BPF programs' cost per context switch)
#   holders: whom a woken thread waited behind (off_cpu.holder_pid) on real jobs: c51 (32
#       DataLoader workers on 16 CPUs) through collect.sh, untraced then traced; c10 (12 sh loops
#       on the job's 4 CPUs) through collect.sh, traced only; c40 (pinned to 2 CPUs beside 8 sh
#       loops) by hand.  Their expectations were committed first.  Per trace: how many woken
#       waits carry a holder, the holders by name, explain's first finding and its "behind" lines.
#   ab (for the next session; not run in this one): two builds' toggles side by side on one host,
#       process by process (turns_lib.sh's `alt` variant: TURNS="full alt", ALT_RUN the other
#       bundle's ingero-run), so that a change in the figure is the build's and not the host's:
#       toggle_full_vs_alt=full pct=… ci95=… (this build less the other).  Pack the other build
#       here first: `sh calls.sh pack-alt REV` (a worktree of REV, its bundle into
#       .devpack/alt.txz), then carry .devpack.  ~60 s a process pair; LIMIT as the budget allows.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
holders)
	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	timeout 200 bash $D/corpus/collect.sh $D /tmp/tr c51_workers_oversubscribed 2>&1 | tail -2
	UNTRACED=0 timeout 150 bash $D/corpus/collect.sh $D /tmp/tr c10_contended_loop 2>&1 | tail -2
	hogs=""; for i in 1 2 3 4 5 6 7 8; do taskset -c 0-1 sh -c 'while :; do :; done' & hogs="$hogs $!"; done
	cd $D/corpus/workloads && timeout 120 $D/ingero-run -q -o /tmp/tr/c40_autograd_contended.db -- taskset -c 0-1 \
		python3 c40_autograd_contended.py > /tmp/tr/c40_autograd_contended.traced.txt 2>&1; echo "c40 rc=$?"
	kill $hogs; cd - >/dev/null
	$D/ingero-analyze explain /tmp/tr/c40_autograd_contended.db > /tmp/tr/c40_autograd_contended.explain.txt 2>&1
	xz -T0 -6 /tmp/tr/c40_autograd_contended.db
	for n in c51_workers_oversubscribed c10_contended_loop c40_autograd_contended; do
		xz -dc /tmp/tr/$n.db.xz > /tmp/$n.db
		echo "== $n: $(cat /tmp/tr/$n.run.txt 2>/dev/null | tr '\n' ' ') $(tail -1 /tmp/tr/$n.traced.txt)"
		python3 - /tmp/$n.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("woken waits (runq after a sleep) with a holder:", c.execute(
    "SELECT count(*), sum(holder_pid > 0), sum(holder_ns) FROM off_cpu WHERE preempted = 0 AND end_ns > runnable_ns").fetchone())
print("holders:", c.execute("""SELECT coalesce(p.comm, '?'), count(*), sum(o.holder_ns) FROM off_cpu o
    LEFT JOIN (SELECT pid, max(comm) comm FROM (SELECT pid, comm FROM threads UNION ALL
    SELECT pid, comm FROM competitors) GROUP BY pid) p ON p.pid = o.holder_pid
    WHERE o.holder_pid > 0 GROUP BY 1 ORDER BY 3 DESC LIMIT 6""").fetchall())
print("losses:", c.execute("SELECT source, count FROM losses WHERE count > 0").fetchall())
PY
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -o -E '(behind \([^)]*\): |for a CPU taken by )[^.]*' /tmp/tr/$n.explain.txt | head -4 | cut -c1-300
	done
	cp /tmp/tr/*.db.xz /tmp/tr/*.explain.txt /tmp/tr/*.txt $OUT/ 2>/dev/null ;;
pack-alt)
	rev=${2:?usage: calls.sh pack-alt REV}
	rm -rf /tmp/alt-wt && git worktree add -f /tmp/alt-wt "$rev" >/dev/null && make -C /tmp/alt-wt -j2 bundle >/dev/null &&
	mkdir -p .devpack && tar -C /tmp/alt-wt/build/bundle -cJf .devpack/alt.txz . &&
	git worktree remove --force /tmp/alt-wt && ls -la .devpack ;;
ab)
	mkdir -p .devbin .devalt && tar xJf .devpack/devbin.txz -C .devbin && tar xJf .devpack/alt.txz -C .devalt
	T=/tmp/ab; rm -rf $T; mkdir -p $T
	ALT_RUN=$PWD/.devalt/ingero-run ANALYZE=$D/ingero-analyze TOGGLE=${PROCS:-4} TOGGLE_AA=0 CHUNKS=1100 TSTEPS=30 \
		TURNS="full alt" PARTS=turns timeout ${LIMIT:-500} sh tests/bench/gpu_dataloader.sh $D $T/tg 7000000 0 \
		> $T/toggle.txt 2>&1
	rm -f $T/tg/*.db $T/tg/*.db-*
	grep -E "^toggle_(proc|variant|full_vs_alt)" $T/toggle.txt
	sh tests/bench/toggle_pool.sh $T/tg
	cd /tmp && tar czf $OUT/ab.tgz ab ;;
*) echo "usage: calls.sh holders | ab (on the device) | pack-alt REV (here)" >&2; exit 2 ;;
esac
