#!/bin/sh
# collector_fork_storm.sh — many short-lived children in open mode (issue
# 40, item 4): right after its first CUDA call (before the collector has
# enrolled it, so the kernel reports its forks as untraced), a program
# forks 64, then 256, children at once, each making 200 CUDA calls into
# its parent's ring and exiting.  The receiver never waits for the
# kernel's records of children already gone (before: 300 ms once per
# exited child; the trace lost most calls and SIGTERM waited 20-40 s here,
# 76-93 s in the issue): every call is stored or counted (the library
# drops what its ring cannot hold before its sender connects, and says
# so), and SIGTERM sent when the program is done is answered within the
# 3 s drain limit (+1 s).
. tests/lib.sh
if ! is_root; then skip "the kernel's fork records need eBPF (root)"; finish; fi
. tests/helpers/collector_e2e.sh

storm() { # children
	check "collector starts in open mode ($1 children)" start_collector --sample-hz 0
	sleep 1   # (the socket comes before BPF is loaded)
	PRELOAD_CALLS_NAP_MS=0 LD_PRELOAD="$(cd "$B" && pwd)/libingero_preload.so" "$B/tests/preload_calls" storm 100 "$1" >"$T/truth.txt"
	check_eq "$1 children: the program exits 0" 0 $?
	t0=$(date +%s%N)
	stop_collector TERM
	ms=$((($(date +%s%N) - t0) / 1000000))
	check_eq "$1 children: the collector exits 0 on SIGTERM" 0 "$CRC"
	check "$1 children: ... within the drain limit, 3 s (+1 s): ${ms} ms" test "$ms" -lt 4000
	made=$(q "SELECT coalesce(sum(made), 0) FROM processes")
	check_ge "$1 children: the calls made, counted by the library" "$made" $((200 * $1))
	# (the library drops what its ring cannot hold, and counts it)
	dropped=$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'preload_dropped'")
	check_eq "$1 children: every one stored, or counted as dropped by the library ($dropped)" "$made" \
		"$(($(q 'SELECT count(*) FROM cuda_calls') + dropped))"
	check_eq "$1 children: calls of each child and the parent" $(($1 + 1)) \
		"$(q 'SELECT count(DISTINCT pid) FROM processes WHERE made > 0')"
	check_eq "$1 children: none refused" 0 \
		"$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source IN ('spoofed_record', 'untraced_sender')")"
}
storm 64
storm 256
finish
