#!/bin/sh
# The thirty-seventh session's device calls (build 669070c, schema 10).  Run on the device from
# the repository root, .devpack carried (made here by `make bundle && sh
# docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`, and for `ab` also `sh
# docs/gpu-runs/2026-12-05-thirtysixth/calls.sh pack-alt 7ad941d`).
#   ab: this build's toggle and 7ad941d's (section 31's: 0.81 %) side by side, process by
#       process on one host: `PROCS=8 LIMIT=530 OUT=$OUT sh
#       docs/gpu-runs/2026-12-05-thirtysixth/calls.sh ab` (toggle_variant=full, =alt,
#       toggle_full_vs_alt).
#   toggle: this build alone, more processes for the pool: `PROCS=8 LIMIT=… OUT=$OUT sh
#       docs/gpu-runs/2026-12-03-twentysecond/calls.sh 2`.
#   holders: schema 10 on a GPU — which thread a woken thread waited behind (off_cpu.holder_tid)
#       in c10 (12 sh loops on the job's 4 CPUs) and c40 (autograd, 2 CPUs beside 8 sh loops),
#       traced only; per trace the holders by process and thread, and explain's "behind" lines.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
holders)
	mkdir -p .devbin /tmp/tr && tar xJf .devpack/devbin.txz -C .devbin
	UNTRACED=0 timeout 120 bash $D/corpus/collect.sh $D /tmp/tr c10_contended_loop 2>&1 | tail -2
	hogs=""; for i in 1 2 3 4 5 6 7 8; do taskset -c 0-1 sh -c 'while :; do :; done' & hogs="$hogs $!"; done
	cd $D/corpus/workloads && timeout 100 $D/ingero-run -q -o /tmp/tr/c40_autograd_contended.db -- taskset -c 0-1 \
		python3 c40_autograd_contended.py > /tmp/tr/c40_autograd_contended.traced.txt 2>&1; echo "c40 rc=$?"
	kill $hogs; cd - >/dev/null
	$D/ingero-analyze explain /tmp/tr/c40_autograd_contended.db > /tmp/tr/c40_autograd_contended.explain.txt 2>&1
	xz -T0 -6 /tmp/tr/c40_autograd_contended.db
	for n in c10_contended_loop c40_autograd_contended; do
		xz -dc /tmp/tr/$n.db.xz > /tmp/$n.db
		echo "== $n: $(tail -1 /tmp/tr/$n.traced.txt)"
		python3 - /tmp/$n.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print("woken waits with a holder (thread):", c.execute(
    "SELECT count(*), sum(holder_pid > 0), sum(holder_tid > 0), sum(holder_ns) FROM off_cpu WHERE preempted = 0 AND end_ns > runnable_ns").fetchone())
print("holders by thread:", c.execute("""SELECT coalesce(t.comm, p.comm, '?'), o.holder_pid = o.pid, count(*), sum(o.holder_ns)
    FROM off_cpu o
    LEFT JOIN (SELECT tid, max(comm) comm FROM threads GROUP BY tid) t ON t.tid = o.holder_tid
    LEFT JOIN (SELECT pid, max(comm) comm FROM (SELECT pid, comm FROM threads UNION ALL
    SELECT pid, comm FROM competitors) GROUP BY pid) p ON p.pid = o.holder_pid
    WHERE o.holder_pid > 0 GROUP BY 1, 2 ORDER BY 4 DESC LIMIT 8""").fetchall())
print("losses:", c.execute("SELECT source, count FROM losses WHERE count > 0").fetchall())
PY
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -o -E '(behind \([^)]*\): |for a CPU taken by )[^.]*' /tmp/tr/$n.explain.txt | head -4 | cut -c1-300
	done
	cp /tmp/tr/*.db.xz /tmp/tr/*.txt $OUT/ 2>/dev/null ;;
*) echo "usage: calls.sh holders (on the device); ab and toggle: see above" >&2; exit 2 ;;
esac
