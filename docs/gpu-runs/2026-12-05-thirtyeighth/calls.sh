#!/bin/sh
# The thirty-eighth session's last device call (build cbc922b: the exit counts what its budget
# leaves as dropped).  Run on the device from the repository root, .devpack carried (made here by
# `make bundle && sh docs/gpu-runs/2026-12-04-twentyninth/calls.sh pack-bundle`).  Calls 1-3 of
# docs/gpu-runs.md section 38 were the thirty-seventh session's calls.sh as written.
#   exit: c01 (two DataLoader worker processes) and c26 (launch-bound inference)
#         traced with this library; per process, the library's made and dropped
#         (processes table) against the calls stored (per-process), and the collector's line.
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
exit)
	mkdir -p .devbin /tmp/tr && tar xJf .devpack/devbin.txz -C .devbin
	UNTRACED=0 timeout 90 bash $D/corpus/collect.sh $D /tmp/tr c01_cnn_workers2 c26_batch1_inference 2>&1 | tail -3
	for n in c01_cnn_workers2 c26_batch1_inference; do
		[ -f /tmp/tr/$n.db.xz ] && xz -dc /tmp/tr/$n.db.xz > /tmp/$n.db
		echo "== $n: $(tail -2 /tmp/tr/$n.traced.txt | head -1 | cut -c1-200)"
		python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print("made/dropped:", c.execute("SELECT pid, comm, made, dropped FROM processes WHERE made > 0").fetchall()); print("losses:", c.execute("SELECT source, pid, count FROM losses WHERE count > 0").fetchall())' /tmp/$n.db
		$D/ingero-analyze per-process /tmp/$n.db | sed -n '/^Processes/,$p' | head -8
	done
	cp /tmp/tr/*.txt $OUT/ 2>/dev/null ;;
*) echo "usage: calls.sh exit (on the device)" >&2; exit 2 ;;
esac
