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
# the producer, with its line as the Source.  Where the main thread blocked
# comes from the stacks taken of some of its blocks (off_cpu_stacks, schema
# version 6): each joins its off_cpu interval, and the line it blocked at
# is the Source (the producer's busy line stays that mode's).
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
if [ "$(uname -m)" != x86_64 ]; then skip "system call numbers are read on x86_64 only"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_waits.py
SPIN=$(marker_line "$PY" SPIN)
block_line() { # mode: the line its main thread blocks at
	case $1 in
	sleep) marker_line "$PY" BLOCK_SLEEP ;;
	queue) marker_line "$PY" BLOCK_WAIT ;;
	pipe | producer) marker_line "$PY" BLOCK_READ ;;
	subprocess) marker_line "$PY" BLOCK_RUN ;;
	esac
}

# mode syscall-number syscall-name root-cause-words fix-words
for m in "sleep 230 clock_nanosleep it_slept The_program_sleeps_at" \
	"queue 202 futex waited_[0-9.]*[mu]*s_for_thread_tid_[0-9]*_\"python3\"_(it_ended_[0-9]*%_of_those_waits),_which_slept The_thread_tid_[0-9]*_\"python3\"_sleeps" \
	"pipe 0 read waited_[0-9.]*[mu]*s_for_process_pid_[0-9]*_\"python3\"_(it_ended_[0-9]*%_of_those_waits),_which_slept The_process_pid_[0-9]*_\"python3\"_sleeps" \
	"producer 0 read a_pipe_or_a_queue_(.*)_that_its_subprocess_pid Make_the_producer" \
	"subprocess 7 poll it_waited_for_its_subprocesses_—_sleep_( Run_sleep_in_the_background"; do
	set -- $m
	mode=$1 nr=$2 name=$3 cause=$(echo "$4" | tr _ ' ') fix=$(echo "$5" | tr _ ' ')
	# the producer's line comes from its samples: a longer run, sampled
	# faster; the others' from block stacks, a few dozen a second
	steps=200 hz=99
	[ "$mode" = producer ] && steps=200 hz=299
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
	# (a producer starved of CPUs under load gets 'CPUs of its own' first: its own fix second)
	check "$mode: the first fix: $fix" grep -Eq "1\. $fix|1\. Give the producer .* CPUs of its own" "$T/$mode.txt"
	case $mode in
	sleep) said="asleep in clock_nanosleep" ;;
	queue) said="waiting for its thread tid [0-9]* \"python3\", which slept" ;;
	pipe) said="waiting for its process pid [0-9]* \"python3\", which slept" ;;
	producer) said="waiting on a pipe or a queue its subprocess pid [0-9]* \"python3\" fills" ;;
	subprocess) said="waiting for its subprocess sleep" ;;
	esac
	check "$mode: the verdict says what it waited for ($said)" \
		grep -q "^Verdict: .*The cause: the main thread blocked between CUDA calls, $said" "$T/$mode.txt"
	check "$mode: not the cause left unknown" sh -c "! grep -q 'something other than a CPU' '$T/$mode.txt'"
	at=$(block_line "$mode")
	check_ge "$mode: stacks of the main thread's blocks stored (off_cpu_stacks)" \
		"$(q "SELECT count(*) FROM off_cpu_stacks WHERE tid = $main")" 5
	# each joins the blocked interval that began as it was taken, or that
	# interval's row was lost and counted: its switch back onto a CPU found
	# no task storage (the kernel refuses it now and then while a task on
	# that CPU exits), the loss "bpf_ringbuf_unclosed"
	unjoined=$(q "SELECT count(*) FROM off_cpu_stacks s WHERE s.tid = $main AND NOT EXISTS (SELECT 1
		FROM off_cpu o WHERE o.tid = s.tid AND o.start_ns = s.start_ns AND o.preempted != 1)")
	check_le "$mode: each joins the blocked interval that began as it was taken ($unjoined do not)" \
		"$unjoined" "$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'bpf_ringbuf_unclosed'")"
	# (one that does not: when, against the thread's other intervals and the losses)
	q "SELECT 'unjoined: start ' || (s.start_ns - (SELECT min(start_ns) FROM off_cpu)) || ' ns, intervals after '
		|| (SELECT count(*) FROM off_cpu o WHERE o.tid = s.tid AND o.start_ns > s.start_ns) || ', before '
		|| (SELECT count(*) FROM off_cpu o WHERE o.tid = s.tid AND o.start_ns < s.start_ns) || ', trace end +'
		|| ((SELECT max(end_ns) FROM off_cpu) - s.start_ns) || ' ns, nearest interval '
		|| coalesce((SELECT min(abs(o.start_ns - s.start_ns)) FROM off_cpu o WHERE o.tid = s.tid), -1) || ' ns; losses '
		|| coalesce((SELECT group_concat(source || '=' || count) FROM losses WHERE count > 0), 'none')
		FROM off_cpu_stacks s WHERE s.tid = $main AND NOT EXISTS (SELECT 1 FROM off_cpu o
		WHERE o.tid = s.tid AND o.start_ns = s.start_ns AND o.preempted != 1)" | sed 's/^/# /'
	check "$mode: the timeline says where it blocked (python_waits.py:$at first)" \
		grep -q "^    \[HOST\] where it blocked ([0-9]* stacks of its blocks in the gaps): .*python_waits.py:$at " "$T/$mode.txt"
	check "$mode: --json gaps.main_blocked_at names that line first" python3 - "$T/$mode.json" "python_waits.py:$at" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
b = g["main_blocked_at"]
assert g["main_blocks_sampled"] >= 3 and b[0]["line"].endswith(sys.argv[2]), g
PYEOF
	check "$mode: --json gaps.main_blocked_in names $name first" python3 - "$T/$mode.json" "$name" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
b = g["main_blocked_in"]
assert b[0]["syscall"] == sys.argv[2] and b[0]["ns"] >= 0.5 * g["main_blocked_ns"], b
PYEOF
	"$B/ingero-analyze" timeline --limit 0 "$DB" >"$T/tl.txt"
	check_ge "$mode: timeline lines say 'in $name'" "$(grep -c "OFF .*; in $name\( at .*\)\{0,1\}\$" "$T/tl.txt")" 30
	# the intervals a stack was taken of say where they blocked
	check_ge "$mode: timeline lines say 'in $name at python_waits.py:$at'" \
		"$(grep -c "OFF .*; in $name at $PY:$at\$" "$T/tl.txt")" 3
	if [ "$mode" = producer ]; then
		check "$mode: the timeline gives the subprocesses' CPU time" \
			grep -q "^    \[HOST\] its subprocesses on-CPU in the gaps: " "$T/$mode.txt"
		check "$mode: the Source is the producer's busy line" grep -q "^  Source: .*python_waits.py:$SPIN\$" "$T/$mode.txt"
	else
		check "$mode: no producer named" sh -c "! grep -q 'that its subprocess' '$T/$mode.txt'"
		check "$mode: the Source is the line it blocked at" grep -q "^  Source: .*python_waits.py:$at\$" "$T/$mode.txt"
		check "$mode: the root cause says it blocked there" grep -Eq "(It|The main thread) blocked at .*python_waits.py:$at" "$T/$mode.txt"
	fi
	if [ "$mode" = subprocess ]; then
		check_ge "subprocess: the children's command lines stored from their exec (processes.cmdline)" \
			"$(q "SELECT count(*) FROM processes WHERE comm = 'sleep' AND cmdline = 'sleep 0.005'")" 195
		check "subprocess: the finding gives the command line" grep -q "Its command line: sleep 0.005\." "$T/$mode.txt"
		check "$mode: the timeline names the subprocesses" \
			grep -Eq "^    \[HOST\] subprocesses it waited for .*: sleep \((1[6-9][0-9]|200) runs\)" "$T/$mode.txt"
		check "$mode: --json gaps.children_in_gaps names sleep, 160-200 runs (of 200: the first steps are start-up)" python3 - "$T/$mode.json" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))["gaps"]
c = g["children_in_gaps"]
assert c[0]["comm"] == "sleep" and 160 <= c[0]["count"] <= 200, c
assert g["children_alive_ns"] >= 0.5 * g["main_blocked_ns"], g
PYEOF
	else
		check "$mode: no subprocess named as waited for" sh -c "! grep -q 'subprocesses it waited for' '$T/$mode.txt'"
	fi
done
# Follow the wait (schema version 7: off_cpu.waker_tid): the main thread
# waits on a queue a producer thread fills by hashing a buffer (on a CPU in
# native code, the GIL released: not the GIL rule).  Each futex wait is
# ended by that thread; the finding names it, says what it did meanwhile,
# and gives its busy line as the Source.  Then the same with six busy loops
# on the machine's CPUs: the producer waits for a CPU more than it runs, and
# the wait ends in the CPU contention, whose takers are named.
PRODUCE=$(marker_line "$PY" PRODUCE)
for mode in thread starved; do
	hogs=""
	if [ $mode = starved ]; then
		for _ in 1 2 3 4 5 6; do sh -c 'while :; do :; done' & hogs="$hogs $!"; done
	fi
	explain_run "$mode" 1000 299 "$PY" thread 150
	[ -n "$hogs" ] && kill $hogs
	sed -n '/Root cause: The main/p' "$T/$mode.txt" | cut -c1-400 | sed 's/^/# /'
	main=$(q "SELECT pid FROM processes WHERE ppid NOT IN (SELECT pid FROM processes) ORDER BY pid LIMIT 1")
	prod=$(q "SELECT tid FROM cpu_samples WHERE pid = $main AND tid != $main GROUP BY tid ORDER BY count(*) DESC LIMIT 1")
	check_ge "$mode: the main thread's futex waits have their waker stored (the producer thread)" \
		"$(q "SELECT count(*) FROM off_cpu WHERE tid = $main AND syscall = 202 AND waker_tid = $prod")" 10
	check_eq "$mode: no preempted interval has a waker" 0 \
		"$(q "SELECT count(*) FROM off_cpu WHERE preempted = 1 AND waker_tid IS NOT NULL")"
	check "$mode: the root cause follows the wait to the producer thread tid $prod" \
		grep -q "Root cause: The main thread was blocked.*the main thread waited .* for thread tid $prod \"python3\" (it ended [0-9]*% of those waits), which " "$T/$mode.txt"
	check "$mode: --json evidence wait_for: the producer first, most of the waits" python3 - "$T/$mode.json" "$prod" "$mode" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))["chains"][0]
w = c["evidence"]["wait_for"]
h = w["hops"][0]
assert c["kind"] == "gaps_host_blocked" and h["tid"] == int(sys.argv[2]) and h["share"] >= 0.5, w
ends = {"thread": ("on_cpu", "waiting_for_cpu"), "starved": ("waiting_for_cpu",)}[sys.argv[3]]
assert w["end"] in ends, w
PYEOF
	if [ $mode = starved ]; then
		check "starved: the wait ends waiting for a CPU taken by the busy loops (sh)" \
			grep -q "Root cause: The main thread was blocked.*which waited [0-9.]*[mun]*s for a CPU taken by .*sh (" "$T/$mode.txt"
		check "starved: the first fix gives the producer CPUs of its own" \
			grep -q "1\. Give the thread tid $prod \"python3\" CPUs of its own" "$T/$mode.txt"
	elif grep -Eq '"end":[[:space:]]*"on_cpu"' "$T/$mode.json"; then
		check "thread: the Source is the producer's busy line (python_waits.py:$PRODUCE)" \
			grep -q "^  Source: .*python_waits.py:$PRODUCE\$" "$T/$mode.txt"
		check "thread: the fix makes the producer's work cheaper" \
			grep -q "1\. Make the work of the thread tid $prod \"python3\" cheaper or start it earlier (its time goes to .* at .*python_waits.py:$PRODUCE)" "$T/$mode.txt"
	else
		skip "thread: the producer waited for a CPU more than it ran (a loaded machine): its line is not the end"
	fi
done
# the stacks can be turned off, and the session says why there are none
rm -f "$DB"
"$B/ingero-collector" --force -o "$DB" --no-block-stacks -- python3 -c 'import time
for _ in range(50): time.sleep(0.01)' >/dev/null 2>"$T/err.txt"
check_eq "--no-block-stacks: the session says so" "off: --no-block-stacks" \
	"$(q "SELECT value FROM session WHERE key = 'block_stacks'")"
check_eq "--no-block-stacks: no stacks of blocks" 0 "$(q "SELECT count(*) FROM off_cpu_stacks")"
check_ge "--no-block-stacks: the blocked intervals are still there" \
	"$(q "SELECT count(*) FROM off_cpu WHERE syscall = 230")" 40
finish
