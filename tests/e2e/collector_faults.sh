#!/bin/sh
# collector_faults.sh — page faults counted from the kernel's per-task counts
# (bpf/sched.bpf.c: each thread's min_flt + maj_flt since it last left a CPU)
# into page_allocs.faults: a program touching a known number of fresh pages
# has at least that many faults under its own pid (and no more than its
# start-up adds) and at least as many page allocations (mem.bpf.c's
# counter), none under a process not traced, each of two programs run by
# one shell separately, a thread
# asleep when the collector attaches to its process, and the
# faults of a thread still running when the collector stops are there too
# (by its last switch away, or else the stop's task iterator: which one,
# the machine's other tasks decide).
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh

PAGES=16384   # one round: 64 MiB of 4 KiB pages
[ "$(getconf PAGESIZE)" = 4096 ] || { skip "the page counts assume 4 KiB pages"; finish; }
faults_of() { q "SELECT coalesce(sum(faults), 0) FROM page_allocs WHERE pid = $1"; }
pid_of() { q "SELECT pid FROM processes WHERE comm LIKE 'collector_fau%' ORDER BY start_ns LIMIT 1 OFFSET ${1:-0}"; }

"$B/ingero-collector" -q --force --sample-hz 0 -o "$DB" -- "$B/tests/collector_faults" 2 >/dev/null 2>"$T/err"
check_eq "two rounds traced, exit 0" 0 $?
check_eq "the session says where faults come from" task_counts \
	"$(q "SELECT value FROM session WHERE key = 'page_faults'")"
n=$(faults_of "$(pid_of)")
check_ge "at least the pages it touched ($n)" "$n" $((2 * PAGES))
check "and not many more: its start-up ($n)" test "$n" -lt $((2 * PAGES + 4000))
# each fault of a fresh page allocates one: counted by mm_page_alloc's program,
# for traced processes only
n=$(q "SELECT coalesce(sum(pages), 0) FROM page_allocs WHERE pid = $(pid_of)")
check "its page allocations: at least its pages ($n)" test "$n" -ge $((2 * PAGES))
check_eq "no other process's allocations" 0 \
	"$(q "SELECT count(*) FROM page_allocs WHERE pid NOT IN (SELECT pid FROM processes)")"

"$B/ingero-collector" -q --force --sample-hz 0 -o "$DB" -- sh -c "'$B/tests/collector_faults' 1; '$B/tests/collector_faults' 3" \
	>/dev/null 2>"$T/err"
check_eq "two programs in one shell, exit 0" 0 $?
a=$(faults_of "$(pid_of 0)"); b=$(faults_of "$(pid_of 1)")
check "the first's under its own pid ($a)" test "$a" -ge $PAGES -a "$a" -lt $((PAGES + 4000))
check "the second's under its own ($b)" test "$b" -ge $((3 * PAGES)) -a "$b" -lt $((3 * PAGES + 4000))

# asleep when the collector attaches (-p), then 2 rounds of faults: counted
# from its first switch back onto a CPU, not lost until its next switch away
"$B/tests/collector_faults" 2 0 0 1.5 >"$T/out" &
FP=$!
"$B/ingero-collector" -q --force --sample-hz 0 -o "$DB" -p "$FP" --duration 4 2>"$T/err"
check_eq "attached with -p, exit 0" 0 $?
wait "$FP"
n=$(faults_of "$FP")
check "a thread asleep at the attach: its faults counted ($n)" test "$n" -ge $((2 * PAGES)) -a "$n" -lt $((2 * PAGES + 4000))

# faults, then 30 s on the CPU; the collector stops after the faults
start_collector -q --sample-hz 0 -- "$B/tests/collector_faults" 1 0 30 >"$T/out"
check "collector up" test -S "$T/ingero.sock"
i=0; while ! grep -q ns_per_fault "$T/out" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
stop_collector TERM
pkill -f "collector_faults 1 0 30" 2>/dev/null
n=$(faults_of "$(pid_of)")
check "a thread still running at the stop: its faults counted ($n)" test "$n" -ge $PAGES -a "$n" -lt $((PAGES + 4000))
finish
