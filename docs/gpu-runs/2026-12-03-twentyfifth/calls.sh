#!/bin/sh
# The twenty-fifth session's device calls.  Run on the device from the repository root with
# .devbin carried (docs/gpu.md); the bundle is this session's build (schema version 5: a blocked
# thread's system call).
#   1: collect version-5 traces of the workloads whose main thread blocks (c01, c06, c14, c20,
#      c23, c25) and of two new ones written for it (c33 a socket, c34 a subprocess), ~4 min
#   1b: the same workloads' traces again, as one tar (call 1 brought eight files back)
#   2, 3: the toggle of this build, every recording window whole: PROCS processes of 1,100
#      chunks of 30 steps, cut at LIMIT seconds (the processes finished are kept)
#   5: two workloads written after those calls (c35 a producer process, c36 a slow log pipe)
#   6: c34 again with the exec record's arguments (a short-lived child's command line)
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
5)	# the session's last call: two new workloads of classes the corpus lacked (written after 1-3)
	UNTRACED=0 timeout 300 bash $D/corpus/collect.sh $D /tmp/tr c35_mp_queue_producer c36_log_to_slow_pipe 2>&1 | tail -4
	cd /tmp && tar czf $OUT/traces.tgz tr ;;
1)	uname -r; command -v nvidia-smi
	UNTRACED=0 timeout 420 bash $D/corpus/collect.sh $D $OUT/traces c25_requests_sleep c33_socket_requests \
		c34_nvidia_smi_every_10 c14_checkpoint_fsync c06_logger_thread c01_cnn_workers2 \
		c20_loader_spawn_workers c23_workers_keep_up 2>&1 | tail -20
	for f in $OUT/traces/*.traced.txt; do echo "== $f"; grep -i "ingero" "$f" | tail -3; done ;;
1b)	# call 1 brought back eight files only: the six other traces collected again, as one tar
	UNTRACED=0 timeout 300 bash $D/corpus/collect.sh $D /tmp/tr c25_requests_sleep c33_socket_requests \
		c34_nvidia_smi_every_10 c14_checkpoint_fsync c20_loader_spawn_workers c23_workers_keep_up 2>&1 | tail -8
	cd /tmp && tar czf $OUT/traces.tgz tr ;;
6)	# the exec record's arguments (built after call 5): c34 again, its nvidia-smi children's command lines
	UNTRACED=0 timeout 150 bash $D/corpus/collect.sh $D /tmp/tr6 c34_nvidia_smi_every_10 2>&1 | tail -2
	xz -dc /tmp/tr6/c34_nvidia_smi_every_10.db.xz > /tmp/c34.db
	$D/ingero-analyze explain --json /tmp/c34.db | python3 -c "import json,sys; print(json.load(sys.stdin)['gaps'].get('children_in_gaps'))"
	grep -m1 "Root cause" /tmp/tr6/c34_nvidia_smi_every_10.explain.txt | cut -c1-700
	cp /tmp/tr6/c34_nvidia_smi_every_10.db.xz $OUT/ ;;
2|3) sh docs/gpu-runs/2026-12-03-twentysecond/calls.sh "$1" ;;   # (its toggle: PROCS, LIMIT)
*) echo "usage: calls.sh 1|1b|2|3|5|6 (on the device, .devbin carried: docs/gpu.md)" >&2; exit 2 ;;
esac
