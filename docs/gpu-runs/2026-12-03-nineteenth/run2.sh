#!/bin/sh
# device call 2 (nineteenth session): call 1 read the runs without eBPF ~0.5-0.8 points below the
# rest (two runs each, within-run SE ~0.35): more runs of that pair, interleaved, and one without
# the on-CPU sampler (--sample-hz=0: the sched, mem and proc programs alone), so as to tell the
# sampler's share from the scheduler records'.  As call 1's lines (run1.sh).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r2; rm -rf $T; mkdir -p $T
. tests/bench/turns_lib.sh
lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA node)' | tr -s ' '
ncore=$(lscpu -p=CORE | grep -v '^#' | sort -un | wc -l)
half=$((ncore / 2))
prog=$(lscpu -p=CPU,CORE | grep -v '^#' | awk -F, -v h=$half '$2 < h && !s[$2]++ { printf "%s%s", c, $1; c = "," }')
trac=$(lscpu -p=CPU,CORE | grep -v '^#' | awk -F, -v h=$half '$2 >= h { printf "%s%s", c, $1; c = "," }')
echo "cores=$ncore program_cpus=$prog tracer_cpus=$trac"
onoff() {
	sed 's/[a-z_]*=//g' "$1" | awk '{ on[$1] = $2; w[$1] = $3; c[$1] = $4; n = $1 }
		END { for (i = 31; i < n; i++) if (on[i] == 1) { a += w[i]; b += (w[i-1] + w[i+1]) / 2; x += c[i]; y += (c[i-1] + c[i+1]) / 2 }
			printf "wall_pct=%.2f cpu_pct=%.2f", 100 * (a / b - 1), 100 * (x / y - 1) }'
}
modes() { # ERR: recording minus paused, real / gap / short gap
	p=$(sed -n 's/^ingero: paused: real functions \([0-9.]*\) ns.* the program \([0-9.]*\) ns.*, \([0-9.]*\) ns over the.*/\1 \2 \3/p' "$1")
	r=$(sed -n 's/^ingero: recording: real functions \([0-9.]*\) ns.* the program \([0-9.]*\) ns.*, \([0-9.]*\) ns over the.*/\1 \2 \3/p' "$1")
	echo "$p $r" | awk '{ printf "dreal=%.0f dgap=%.0f dshort=%.0f short=%.0f", $4 - $1, $5 - $2, $6 - $3, $3 }'
}
long() { # TAG PREFIX-COMMAND [RUN-OPTION] [ENV...]
	tag=$1; pre=$2; shift 2; opt=
	case "${1:-}" in --*) opt=$1; shift ;; esac
	$pre env INGERO_SELF_TIME=1 INGERO_BPF_STATS=1 INGERO_CAPTURE=cudaProfilerApi "$@" "$D/ingero-run" -q $opt -o $T/$tag.db -- \
		$PIN python3 examples/train_overhead.py --steps 30 --chunks 600 --toggle >$T/$tag.chunks 2>$T/$tag.err
	self=$(sed -n 's/^ingero: self time: \([0-9.]*\) ns.*/\1/p' $T/$tag.err)
	st=$(sed -n 's/^ingero: stacks: \([0-9]*\) unwound, \([0-9]*\) remembered, \([0-9.]*\) us.*/\1\/\2\/\3/p' $T/$tag.err)
	echo "$tag self=$self stacks=$st $(modes $T/$tag.err) $(onoff $T/$tag.chunks) bpf=$(toggle_bpf_modes $T/$tag.db)"
	rm -f $T/$tag.db*
}
t0=$(date +%s)
for round in 1 2 3 4; do
	[ $(($(date +%s) - t0)) -lt 300 ] || break   # a round takes ~140 s
	PIN= long def$round ""
	PIN= long nobpf$round "" --cuda-only
	PIN= long nosampler$round "" --sample-hz=0
done 2>&1 | tee $T/long.txt $OUT/long.txt
cd /tmp && tar czf $OUT/r2.tgz r2
