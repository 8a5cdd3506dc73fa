#!/bin/sh
# analyzer_waits.sh — what a blocked thread waited in is stored
# (off_cpu.syscall, schema version 5: the system call, x86_64 numbers) and
# named by explain: a main thread that sleeps, waits on a queue another
# thread fills, or reads a pipe another process writes, between steps, gets
# the system call in the gaps' timeline, a root cause and a fix of that kind
# (not the generic "I/O, a lock, a queue, sleep"), in --json too, and the
# timeline command says it per interval.  A loop that runs a subprocess each
# step and waits for it (its output through pipes: poll) gets the child
# named, not "a socket, a pipe"; the pipe's writer, a child that lives
# beside the loop, is no subprocess waited for — and where that writer is
# busy on a CPU while the loop waits (a producer process), it is named as
# the producer, with its line as the Source.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
if [ "$(uname -m)" != x86_64 ]; then skip "system call numbers are read on x86_64 only"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_waits.py
SPIN=$(marker_line "$PY" SPIN)

# mode syscall-number syscall-name root-cause-words fix-words
for m in "sleep 230 clock_nanosleep it_slept The_program_sleeps_before" \
	"queue 202 futex a_lock,_a_condition_or_a_queue Find_the_producer" \
	"pipe 0 read a_socket,_a_pipe_or_a_file_descriptor Fetch_what_the_main_thread_reads" \
	"producer 0 read a_pipe_or_a_queue_(.*)_that_its_subprocess_pid Make_the_producer" \
	"subprocess 7 poll it_waited_for_its_subprocesses_—_sleep_( Run_sleep_in_the_background"; do
	set -- $m
	mode=$1 nr=$2 name=$3 cause=$(echo "$4" | tr _ ' ') fix=$(echo "$5" | tr _ ' ')
	# the producer's line comes from its samples: a longer run, sampled faster
	steps=40 hz=99
	[ "$mode" = producer ] && steps=120 hz=299
	explain_run "$mode" 1000 $hz "$PY" "$mode" $steps
	sed -n 8,14p "$T/$mode.txt" | sed 's/^/# /'
	main=$(q "SELECT pid FROM processes WHERE ppid NOT IN (SELECT pid FROM processes) ORDER BY pid LIMIT 1")
	check_ge "$mode: the main thread's intervals in $name are stored (syscall = $nr)" \
		"$(q "SELECT count(*) FROM off_cpu WHERE tid = $main AND preempted != 1 AND syscall = $nr")" 30
	check_eq "$mode: no preempted interval carries a system call" 0 \
		"$(q "SELECT count(*) FROM off_cpu WHERE preempted = 1 AND syscall IS NOT NULL")"
	check "$mode: a gaps chain with the main thread blocked" \
		grep -Eq "^\[(HIGH|MEDIUM|LOW)\] GPU idle .*main thread blocked" "$T/$mode.txt"
	check "$mode: the gaps' timeline names $name first" \
		grep -q "^    \[HOST\] what it blocked in (system calls): $name " "$T/$mode.txt"
	check "$mode: the root cause says $cause" grep -q "Root cause: The main thread was blocked.*$cause" "$T/$mode.txt"
	check "$mode: the first fix: $fix" grep -q "1\. $fix" "$T/$mode.txt"
	case $mode in
	sleep) said="asleep in clock_nanosleep" ;;
	queue) said="on a lock, a condition or a queue, in futex" ;;
	pipe) said="on a socket, a pipe or a file descriptor, in read" ;;
	producer) said="waiting on a pipe or a queue its subprocess pid [0-9]* \"python3\" fills" ;;
	subprocess) said="waiting for its subprocess sleep" ;;
	esac
	check "$mode: the verdict says what it waited for ($said)" \
		grep -q "^Verdict: .*The cause: the main thread blocked between CUDA calls, $said" "$T/$mode.txt"
	check "$mode: not the cause left unknown" sh -c "! grep -q 'something other than a CPU' '$T/$mode.txt'"
	check "$mode: --json gaps.main_blocked_in names $name first" python3 - "$T/$mode.json" "$name" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
b = g["main_blocked_in"]
assert b[0]["syscall"] == sys.argv[2] and b[0]["ns"] >= 0.5 * g["main_blocked_ns"], b
PYEOF
	"$B/ingero-analyze" timeline --limit 0 "$DB" >"$T/tl.txt"
	check_ge "$mode: timeline lines say 'in $name'" "$(grep -c "OFF .*; in $name\$" "$T/tl.txt")" 30
	if [ "$mode" = producer ]; then
		check "$mode: the timeline gives the subprocesses' CPU time" \
			grep -q "^    \[HOST\] its subprocesses on-CPU in the gaps: " "$T/$mode.txt"
		check "$mode: the Source is the producer's busy line" grep -q "^  Source: .*python_waits.py:$SPIN\$" "$T/$mode.txt"
	else
		check "$mode: no producer named" sh -c "! grep -q 'that its subprocess' '$T/$mode.txt'"
	fi
	if [ "$mode" = subprocess ]; then
		check_ge "subprocess: the children's command lines stored from their exec (processes.cmdline)" \
			"$(q "SELECT count(*) FROM processes WHERE comm = 'sleep' AND cmdline = 'sleep 0.005'")" 38
		check "subprocess: the finding gives the command line" grep -q "Its command line: sleep 0.005\." "$T/$mode.txt"
		check "$mode: the timeline names the subprocesses" \
			grep -Eq "^    \[HOST\] subprocesses it waited for .*: sleep \((3[0-9]|40) runs\)" "$T/$mode.txt"
		check "$mode: --json gaps.children_in_gaps names sleep, 30-40 runs (of 40: the first steps are start-up)" python3 - "$T/$mode.json" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
c = g["children_in_gaps"]
assert c[0]["comm"] == "sleep" and 30 <= c[0]["count"] <= 40, c
assert g["children_alive_ns"] >= 0.5 * g["main_blocked_ns"], g
PYEOF
	else
		check "$mode: no subprocess named as waited for" sh -c "! grep -q 'subprocesses it waited for' '$T/$mode.txt'"
	fi
done
finish
