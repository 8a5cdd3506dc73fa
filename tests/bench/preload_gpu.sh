#!/bin/sh
# preload_gpu.sh — the preload library on a real GPU (run on the H200
# machine from the repository root, as root): a small PyTorch program under
# the library, with eBPF uprobes counting the same launches independently.
#
#   sh tests/bench/preload_gpu.sh DIR [PYTHON] [SCRIPT ARGS...]
#
# DIR holds libingero_preload.so, preload_sink, preload_uprobe_count,
# preload_count.bpf.o and their libraries (see docs/preload.md, "On the
# GPU").  Prints the library's counts per API and process, the uprobes'
# counts, and a few Python frames.
set -u
D=$(cd "$1" && pwd); shift
PY=${1:-python3}; [ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- examples/small_check.py --steps 50 --workers 4
T=$(mktemp -d)
EP="ipc://$T/s.sock"
. tests/bench/cuda_probes.sh
echo "# libcudart: $RT"
echo "# libcuda:   $DRV"
"$D/preload_sink" -v -r "$T/ready" -i 3000 "$EP" >"$T/sink.out" 2>&1 &
SINK=$!
while [ ! -f "$T/ready" ]; do sleep 0.05; done
s=$(date +%s%N)
"$D/preload_uprobe_count" "$D/preload_count.bpf.o" $probes -- \
	env LD_PRELOAD="$D/libingero_preload.so" INGERO_ENDPOINT="$EP" INGERO_DEBUG=1 "$PY" "$@" >"$T/run.out" 2>"$T/run.err"
rc=$?
e=$(date +%s%N)
wait $SINK
echo "# exit $rc in $(( (e - s) / 1000000 )) ms"
grep -v '^uprobe' "$T/run.out"
grep '^uprobe' "$T/run.out"
grep -E '^(hello|calls|counts|totals)' "$T/sink.out" | sed 's/ dur_sum=[0-9]*//; s/ bytes=[0-9]*//'
echo "# launches by the library:"
grep '^calls' "$T/sink.out" | grep -E 'api=(__)?cu(da)?(LaunchKernel|GraphLaunch)' |
	sed 's/.* count=\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print "library_launches=" s }'
echo "# distinct innermost Python frames:"
grep '^pyframe' "$T/sink.out" | grep 'depth=0' | sed 's/.*file=//' | sort | uniq -c | sort -rn | head -8
echo "# kernels named / unnamed:"
grep -c '^kernel .*name=.' "$T/sink.out"; grep -c '^kernel .*name=$' "$T/sink.out"
grep '^kernel .*name=$' "$T/sink.out" | head -3
grep 'ingero' "$T/run.err" | tail -8
rm -rf "$T"
