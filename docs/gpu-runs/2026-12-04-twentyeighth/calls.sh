#!/bin/sh
# The twenty-eighth session's device calls.  Run on the device from the repository root, the bundle
# unpacked into .devbin from .devpack/devbin.txz (made here by pack-bundle below: build/bundle plus
# /work/shared/corpus/collect.sh and every workload, shared and tests/corpus/workloads/).
#   43: follow the wait (schema 7: off_cpu.waker_tid): c39 (a prefetch thread), c41 (a pin-memory
#       heavy loader) through collect.sh, and c40 (training pinned to 2 CPUs beside 8 busy loops
#       there, the autograd engine thread starved) by hand; their expectations were committed first
#       (expectations/).  Per trace: how many blocked intervals carry a waker, and explain's first
#       finding.
#   pack-bundle (here, not on the device): .devpack/devbin.txz
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
pack-bundle)
	rm -rf /tmp/devbin && cp -r build/bundle /tmp/devbin && mkdir -p /tmp/devbin/corpus/workloads &&
	cp /work/shared/corpus/collect.sh /tmp/devbin/corpus/ &&
	cp /work/shared/corpus/workloads/*.py tests/corpus/workloads/*.py /tmp/devbin/corpus/workloads/ &&
	mkdir -p .devpack && tar -C /tmp/devbin -cJf .devpack/devbin.txz . && ls -la .devpack ;;
43)	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	UNTRACED=0 timeout 200 bash $D/corpus/collect.sh $D /tmp/tr c39_prefetch_thread c41_pin_memory_heavy 2>&1 | tail -4
	# c40: pinned to CPUs 0-1 beside 8 busy loops pinned there too
	hogs=""; for i in 1 2 3 4 5 6 7 8; do taskset -c 0-1 sh -c 'while :; do :; done' & hogs="$hogs $!"; done
	cd $D/corpus/workloads && timeout 120 $D/ingero-run -q -o /tmp/tr/c40_autograd_contended.db -- taskset -c 0-1 \
		python3 c40_autograd_contended.py > /tmp/tr/c40_autograd_contended.traced.txt 2>&1; echo "c40 rc=$?"
	kill $hogs; cd - >/dev/null
	$D/ingero-analyze explain /tmp/tr/c40_autograd_contended.db > /tmp/tr/c40_autograd_contended.explain.txt 2>&1
	xz -T0 -6 /tmp/tr/c40_autograd_contended.db
	for n in c39_prefetch_thread c40_autograd_contended c41_pin_memory_heavy; do
		xz -dc /tmp/tr/$n.db.xz > /tmp/$n.db
		echo "== $n: $(tail -1 /tmp/tr/$n.traced.txt 2>/dev/null)"
		python3 -c "import sqlite3,sys; c=sqlite3.connect('/tmp/$n.db'); print('blocked intervals', c.execute('SELECT count(*), count(waker_tid) FROM off_cpu WHERE preempted != 1').fetchone(), 'losses', c.execute('SELECT source, count FROM losses WHERE count > 0').fetchall())"
		sed -n '/^Verdict/p; /^\[/{p;q}' /tmp/tr/$n.explain.txt | cut -c1-300
		grep -m1 'Root cause' /tmp/tr/$n.explain.txt | cut -c1-700
		grep -m2 -E '^    1\.|^  Source' /tmp/tr/$n.explain.txt | cut -c1-300
	done
	cp /tmp/tr/*.db.xz /tmp/tr/*.explain.txt /tmp/tr/*.txt $OUT/ 2>/dev/null ;;
*) echo "usage: calls.sh pack-bundle (here) | 43 (on the device)" >&2; exit 2 ;;
esac
