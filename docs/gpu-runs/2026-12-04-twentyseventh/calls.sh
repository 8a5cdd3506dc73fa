#!/bin/sh
# The twenty-seventh session's device calls.  Run on the device from the repository root, the
# bundle unpacked into .devbin from .devpack/devbin.txz (docs/gpu-runs.md section 25: the tracked
# tree is too big to carry it too).  The bundle is this session's build (8df91a8 and on: the
# analyzer reads the DataLoader workers' block stacks; the collector and preload are 3dd5c7f's).
#   1: collect c37 (workers reading cold from storage) and c38 (workers fetching from a store over
#      TCP), whose expectations were committed before (expectations/), and c01, c23 again (workers
#      on CPUs: version-6 traces, so their workers' block stacks are there to misread); per trace,
#      the workers' block stacks and what explain makes of them
#   2, 3: the toggle of this build (the twenty-second session's script: PROCS, LIMIT)
#   4: real PyTorch under a CPU quota, the collector inside the cgroup (a8df26c): c23's loader
#      under 1.5 CPUs (the defaults), then QUOTA=30000 WL=c05_python_lists (a host-bound loop, 0.3 CPU)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
1)	UNTRACED=0 timeout 540 bash $D/corpus/collect.sh $D /tmp/tr c37_loader_cold_reads c38_loader_remote_store \
		c01_cnn_workers2 c23_workers_keep_up 2>&1 | tail -8
	for f in /tmp/tr/*.db.xz; do
		n=$(basename $f .db.xz); xz -dc $f > /tmp/$n.db
		python3 - /tmp/$n.db $n <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
w = "SELECT DISTINCT pid FROM threads WHERE comm = 'pt_data_worker'"
print("==", sys.argv[2], "workers", len(q(w)), "worker stacks", q(f"SELECT count(*) FROM off_cpu_stacks WHERE pid IN ({w})")[0][0],
      "worker D-state blocks", q(f"SELECT count(*), sum(end_ns - start_ns) / 1e6 FROM off_cpu WHERE preempted = 2 AND pid IN ({w})"),
      "losses", q("SELECT source, count FROM losses WHERE count > 0"))
PY
		grep -E "workers blocked|where they blocked|Source:|Root cause" /tmp/tr/$n.explain.txt | head -4 | cut -c1-400
		grep -h "c3[78] " /tmp/tr/$n.run.txt /tmp/tr/$n.traced.txt 2>/dev/null | head -3
	done
	cd /tmp && tar czf $OUT/traces.tgz tr ;;
2|3) sh docs/gpu-runs/2026-12-03-twentysecond/calls.sh "$1" ;;   # (its toggle: PROCS, LIMIT)
4)	# a8df26c: real PyTorch under a CPU quota, the collector inside the cgroup (as in a container):
	# QUOTA (us of CPU per 100 ms; 150000 = 1.5 CPUs) and WL (a workload; c23's 8 workers by default)
	Q=${QUOTA:-150000} W=${WL:-c23_workers_keep_up}
	cat /proc/self/cgroup | head -3
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		CG=/sys/fs/cgroup/ingero-quota; mkdir -p $CG
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
		echo "$Q 100000" > $CG/cpu.max; P=$CG/cgroup.procs
	else
		CG=/sys/fs/cgroup/cpu/ingero-quota; mkdir -p $CG; echo $Q > $CG/cpu.cfs_quota_us; P=$CG/tasks
	fi
	cd $D/corpus/workloads
	timeout 200 sh -c "echo \$\$ > $P && exec $D/ingero-collector -q -o /tmp/q.db -- python3 $W.py" 2>&1 | tail -3
	python3 -c "import sqlite3; c = sqlite3.connect('/tmp/q.db'); print(c.execute(\"SELECT key, value FROM session WHERE key LIKE 'cpu%'\").fetchall())"
	$D/ingero-analyze explain /tmp/q.db > $OUT/quota.explain.txt 2>&1; head -30 $OUT/quota.explain.txt
	xz -T0 -c /tmp/q.db > $OUT/quota.db.xz ;;
*) echo "usage: calls.sh 1|2|3 (on the device, .devpack/devbin.txz unpacked into .devbin)" >&2; exit 2 ;;
esac
