#!/bin/sh
# preload_durations.sh — the durations the library reports are the ones the
# (simulated) device imposed: 1 MiB copies at the pinned and pageable rates,
# and syncs waiting for a kernel of known length.
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_PINNED_GBPS=25 FAKECUDA_PAGEABLE_GBPS=6 FAKECUDA_KERNEL_US=2000

median_us() { # SINKOUT API FLAGMATCH
	grep "^CALL $2 " "$1" | grep "flags=$3 " | sed 's/.* dur=\([0-9]*\) .*/\1/' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%d\n", v[int((NR + 1) / 2)] / 1000; else print 0 }'
}

start_sink "$T/copy.sink" -v -n 1
traced "$B/tests/preload_calls" copy-latency 20 >/dev/null
wait_sink
pin=$(median_us "$T/copy.sink" cudaMemcpy 0x1)
pag=$(median_us "$T/copy.sink" cudaMemcpy 0x2)
echo "# median 1 MiB copy: pinned ${pin} us (expect 42), pageable ${pag} us (expect 175)"
# at least what the device imposed; how much more is the machine's wake-up
# latency (a loaded 2-CPU VM read 150-180 us for the pinned one), so the upper
# bound only catches a wrong unit
check "pinned 1 MiB copy lasts at least 1 MiB / 25 GB/s" test "$pin" -ge 40 -a "$pin" -le 10000
check "pageable 1 MiB copy lasts at least 1 MiB / 6 GB/s" test "$pag" -ge 170 -a "$pag" -le 10000

start_sink "$T/sync.sink" -v -n 1
traced "$B/tests/preload_calls" launch-sync 10 >/dev/null
wait_sink
sync=$(median_us "$T/sync.sink" cudaStreamSynchronize 0x0)
echo "# median sync after a 2 ms kernel: ${sync} us"
check "a sync waits for the 2 ms kernel" test "$sync" -ge 1900 -a "$sync" -le 6000

# Timestamps are CLOCK_MONOTONIC (the library may stamp with the TSC and
# convert): every call lies within the caller's own clock reads around it.
# Twice: as the machine's clocksource has the library stamp, and with the
# TSC whatever the clocksource (INGERO_CLOCK_TSC=1: on a VM whose
# clocksource is kvm-clock, as CI's, the only run of the TSC conversion).
stamps() { # TAG [ENV=VALUE...]
	tag=$1; shift
	start_sink "$T/st$tag.sink" -v -n 1
	env FAKECUDA_SYNC_EXTRA_US=100 "$@" INGERO_DEBUG=1 LD_PRELOAD="$PRELOAD" \
		"$B/tests/preload_calls" stamps 100 >"$T/st$tag.out" 2>"$T/st$tag.err"
	wait_sink
	grep '^CALL cudaDeviceSynchronize' "$T/st$tag.sink" | sed 's/.* start=\([0-9]*\) dur=\([0-9]*\) .*/\1 \2/' >"$T/ours"
	grep '^stamp' "$T/st$tag.out" | awk '{ print $2, $3 }' >"$T/theirs"
	out=$(paste -d' ' "$T/ours" "$T/theirs" | awk '
		{ n++; if ($1 + 1000 < $3 || $1 + $2 > $4 + 1000) bad++ }
		END { printf "%d %d", n, bad }')
	check_eq "$tag: 100 calls compared with the caller's clock" 100 "${out% *}"
	check_eq "$tag: each call's [start, start+dur] inside the caller's clock reads (±1 us)" 0 "${out#* }"
}
stamps clocksource
stamps tsc INGERO_CLOCK_TSC=1
# (the library says which clock it stamps with when it is not the TSC)
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
if grep -q 'constant_tsc' /proc/cpuinfo && grep -q 'nonstop_tsc' /proc/cpuinfo; then
	case $cs in
	tsc* | kvm-clock | xen | hyperv_clocksource_tsc_page)
		check_eq "INGERO_CLOCK_TSC=1 on clocksource $cs: the TSC" 0 \
			"$(grep -c 'stamping with clock_gettime' "$T/sttsc.err")" ;;
	*)	check_eq "INGERO_CLOCK_TSC=1 on clocksource $cs: clock_gettime" 1 \
			"$(grep -c 'stamping with clock_gettime' "$T/sttsc.err")" ;;
	esac
fi
finish
