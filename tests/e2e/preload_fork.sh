#!/bin/sh
# preload_fork.sh — processes forked before and after the first CUDA call
# (and a grandchild) are traced, each under its own pid with the right
# parent; children that call CUDA before their parent ever did trace on a
# ring of their own (nng may be used there) and still name their parent.
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_KERNEL_US=1

check_parents() { # TRUTH SINKOUT
	bad=0
	for p in $(sed 's/^truth pid=\([0-9]*\) ppid=\([0-9]*\) .*/\1:\2/' "$1" | sort -u); do
		got=$(sink_field "$2" hello "${p%%:*}" ppid)
		[ "$got" = "${p#*:}" ] || { echo "# pid ${p%%:*}: ppid ${p#*:} expected, HELLO says $got"; bad=1; }
	done
	return $bad
}

start_sink "$T/fork.sink" -i 1000
traced "$B/tests/preload_calls" fork 40 2 >"$T/fork.truth"
check_eq "forking workload exits 0" 0 $?
wait_sink
check_eq "parent, 2 children forked before, 2 after, 1 grandchild" 6 \
	"$(sed 's/^truth pid=\([0-9]*\) .*/\1/' "$T/fork.truth" | sort -u | wc -l | tr -d ' ')"
check "every process's calls counted exactly" compare_truth "$T/fork.truth" "$T/fork.sink" fork
check "every process announced with its real parent" check_parents "$T/fork.truth" "$T/fork.sink"
for p in $(sed 's/^truth pid=\([0-9]*\) .*/\1/' "$T/fork.truth" | sort -u); do
	made=$(grep "^truth pid=$p " "$T/fork.truth" | sed 's/.* count=//' | awk '{ s += $1 } END { print s }')
	check_eq "pid $p: COUNTS made = its own count" "$made" "$(sink_field "$T/fork.sink" counts "$p" made)"
done

start_sink "$T/first.sink" -i 1000
traced "$B/tests/preload_calls" fork-first 30 3 >"$T/first.truth"
check_eq "children calling CUDA before their parent: exits 0" 0 $?
wait_sink
check "children first: every call counted" compare_truth "$T/first.truth" "$T/first.sink" fork-first
check "children first: right parents" check_parents "$T/first.truth" "$T/first.sink"
finish
