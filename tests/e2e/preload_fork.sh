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

# Launches on both sides of a fork from the same thread: the launch path
# the parent's thread had taken (its lane, its id) is not the child's.
start_sink "$T/launch.sink" -i 1000
traced "$B/tests/preload_calls" fork-launch 300 2 >"$T/launch.truth"
check_eq "launches across fork: exits 0" 0 $?
wait_sink
check_eq "launches across fork: the parent and 2 children" 3 \
	"$(sed 's/^truth pid=\([0-9]*\) .*/\1/' "$T/launch.truth" | sort -u | wc -l | tr -d ' ')"
check "launches across fork: each process's launches under its own pid" \
	compare_truth "$T/launch.truth" "$T/launch.sink" fork-launch

# A child still running when its parent, the ring's owner, exits: nothing
# drains the ring after that and the child cannot send (nng after fork), so
# the owner names it in an ORPHAN record as it stops; the child's calls from
# then on are not written into the dead ring.
start_sink "$T/outlive.sink" -i 1500
traced "$B/tests/preload_calls" outlive 20 >"$T/outlive.truth"
check_eq "outliving child: the parent exits 0" 0 $?
parent=$(sed -n 1p "$T/outlive.truth" | sed 's/^truth pid=\([0-9]*\) .*/\1/')
i=0   # the child prints its truth once it has made its calls after the parent's exit
while [ "$(sed 's/^truth pid=\([0-9]*\) .*/\1/' "$T/outlive.truth" | sort -u | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
wait_sink
child=$(sed 's/^truth pid=\([0-9]*\) .*/\1/' "$T/outlive.truth" | sort -u | grep -vx "$parent")
check_eq "outliving child: its truth says 40 syncs (20 before, 20 after the parent)" 40 \
	"$(grep "^truth pid=$child .* api=cudaStreamSynchronize " "$T/outlive.truth" | sed 's/.* count=//')"
check_eq "outliving child: one ORPHAN record names it" 1 "$(grep -c "^orphan pid=$child\$" "$T/outlive.sink")"
check_eq "outliving child: its 20 syncs before the parent's exit arrived" 20 \
	"$(sink_calls "$T/outlive.sink" "$child" cudaStreamSynchronize)"
check_eq "outliving child: no ORPHAN for the parent itself" 0 "$(grep -c "^orphan pid=$parent\$" "$T/outlive.sink")"
finish
