#!/bin/sh
# device call 1 (sixteenth session): where the toggle's chunk noise (~7 % a
# 30-step chunk) comes from — the same untraced loop under conditions that
# remove one suspect each: deep C-states (PM QoS: /dev/cpu_dma_latency held at
# 0), the threads wandering over 16 cores (taskset), short chunks; then main's
# tracer (ca4dd52) toggled as usual and with C-states held shallow
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
T=/tmp/r1; rm -rf $T; mkdir -p $T
lscpu | grep -i -E "model name|mhz|numa" > $T/lscpu.txt
cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor > $T/gov.txt 2>&1
ls /sys/devices/system/cpu/cpu0/cpuidle/ > $T/cpuidle.txt 2>&1
for s in /sys/devices/system/cpu/cpu0/cpuidle/state*; do echo "$s $(cat $s/name) $(cat $s/latency)"; done >> $T/cpuidle.txt 2>&1
ls -l /dev/cpu_dma_latency >> $T/cpuidle.txt 2>&1
u() { # NAME PREFIX... : an untraced toggle process
	n=$1; shift
	"$@" python3 examples/train_overhead.py --toggle --chunks ${CH:-400} --steps ${ST:-30} > $T/u.$n.out 2>&1
}
dma0() { exec 3>/dev/cpu_dma_latency && printf '\000\000\000\000' >&3; }
dmaoff() { exec 3>&-; }
u base
dma0; u dma0; dmaoff
u pin taskset -c 4-7
dma0; u dma0pin taskset -c 4-7; dmaoff
dma0; CH=100 ST=120 u dma0long; dmaoff
u base2
for c in base dma0; do
	[ $c = dma0 ] && dma0
	ANALYZE=$D/ingero-analyze TOGGLE=1 TOGGLE_AA=0 CHUNKS=400 TSTEPS=30 TURNS=full PARTS=turns \
		timeout 150 sh tests/bench/gpu_dataloader.sh $D $T/tg.$c 7000000 0 > $T/toggle.$c.txt 2>&1
	[ $c = dma0 ] && dmaoff
	rm -f $T/tg.$c/*.db $T/tg.$c/*.db-*
	tail -4 $T/toggle.$c.txt
done
cat $T/cpuidle.txt $T/gov.txt
cd /tmp && tar czf $OUT/r1.tgz r1
