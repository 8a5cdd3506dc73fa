#!/bin/sh
# The twenty-sixth session's device calls.  Run on the device from the repository root, the
# bundle unpacked into .devbin from .devpack/devbin.txz (docs/gpu-runs.md section 25: the tracked
# tree is too big to carry it too).  The bundle is this session's build: schema version 6, stacks
# of a sample of traced threads' blocks (off_cpu_stacks).
#   1: collect version-6 traces of the workloads whose main thread blocks (c25 a sleep, c33 a
#      socket, c34 a subprocess, c36 a slow pipe, c14 fsync, c06 the GIL) as one tar; per trace,
#      the block stacks' session key and counts, and where explain says the main thread blocked
#   2, 3: the toggle of this build, every recording window whole: PROCS processes of 1,100
#      chunks of 30 steps, cut at LIMIT seconds (the processes finished are kept)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
1)	uname -r
	UNTRACED=0 timeout 480 bash $D/corpus/collect.sh $D /tmp/tr c25_requests_sleep c33_socket_requests \
		c34_nvidia_smi_every_10 c36_log_to_slow_pipe c14_checkpoint_fsync c06_logger_thread 2>&1 | tail -8
	for f in /tmp/tr/*.db.xz; do
		n=$(basename $f .db.xz); xz -dc $f > /tmp/$n.db
		python3 - /tmp/$n.db $n <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
print("==", sys.argv[2], q("SELECT value FROM session WHERE key = 'block_stacks'"),
      "stacks", q("SELECT count(*) FROM off_cpu_stacks")[0][0],
      "joined", q("SELECT count(*) FROM off_cpu_stacks s JOIN off_cpu o ON o.tid = s.tid AND o.start_ns = s.start_ns")[0][0],
      "losses", q("SELECT source, count FROM losses WHERE count > 0"))
PY
		grep -E "where it blocked|Source:" /tmp/tr/$n.explain.txt | head -3 | cut -c1-300
	done
	cd /tmp && tar czf $OUT/traces.tgz tr ;;
2|3) sh docs/gpu-runs/2026-12-03-twentysecond/calls.sh "$1" ;;   # (its toggle: PROCS, LIMIT)
*) echo "usage: calls.sh 1|2|3 (on the device, .devpack/devbin.txz unpacked into .devbin)" >&2; exit 2 ;;
esac
