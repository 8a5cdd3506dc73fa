#!/bin/sh
# collector_cli.sh — the command line and lifecycle: usage errors (one
# line, exit 2), CMD's output and exit code passed through (128+N when
# killed), -p attaching to a running process and its future children,
# --duration, --max-size, CUDA-only mode without root or with --no-bpf,
# and a sender in its own pid namespace translated to root pids.
. tests/lib.sh
. tests/helpers/collector_e2e.sh
C=$B/ingero-collector

"$C" >/dev/null 2>"$T/e1"; rc=$?
check_eq "no -o: exit 2" 2 "$rc"
check "no -o: says so" grep -q -- "-o FILE is required" "$T/e1"
"$C" -o "$DB" --sample-hz abc >/dev/null 2>&1
check_eq "bad --sample-hz: exit 2" 2 $?
"$C" -o "$DB" -- >/dev/null 2>&1
check_eq "nothing after --: exit 2" 2 $?
"$C" -o "$DB" python3 x.py >/dev/null 2>&1
check_eq "command without --: exit 2" 2 $?
"$C" -o "$DB" -p 999999999 >/dev/null 2>&1
check_eq "-p of no process: exit 2" 2 $?
"$C" -o /nonexistent/dir/x.db -- true >/dev/null 2>&1
check_eq "unwritable output: exit 4" 4 $?
check "--help exits 0" "$C" --help >/dev/null

out=$("$C" -q --force -o "$DB" -- sh -c 'echo out; echo err >&2; exit 3' 2>"$T/err")
check_eq "exit code passed through" 3 $?
check_eq "stdout untouched" out "$out"
check_eq "stderr untouched" err "$(cat "$T/err")"
"$C" -q --force -o "$DB" -- sh -c 'kill -9 $$' 2>/dev/null
check_eq "killed by SIGKILL: 137" 137 $?
"$C" -q --force -o "$DB" -- /nonexistent-program 2>/dev/null
check_eq "command not found: 127" 127 $?
exec 3>"$T/fd3"
"$C" -q --force -o "$DB" -- sh -c 'echo via3 >&3' 2>/dev/null
exec 3>&-
check_eq "inherited fds reach the command" via3 "$(cat "$T/fd3")"

if is_root; then
	sh -c 'while :; do sleep 0.02; done' &
	LOOP=$!
	"$C" -q --force -o "$DB" -p "$LOOP" --duration 1
	check_eq "-p with --duration: exit 0" 0 $?
	kill "$LOOP"
	check_ge "-p: the process is traced" "$(q "SELECT count(*) FROM off_cpu WHERE pid=$LOOP")" 5
	check_ge "-p: its new children are enrolled" "$(q "SELECT count(*) FROM processes WHERE ppid=$LOOP AND comm='sleep'")" 5
	check_ge "-p: and traced" "$(q "SELECT count(DISTINCT o.pid) FROM off_cpu o JOIN processes p ON p.pid=o.pid WHERE p.ppid=$LOOP")" 5

	# an off-CPU interval is sent when its thread next leaves the CPU: at
	# the stop, those of threads still on a CPU (here: each 50 ms nap is
	# followed by 250 ms of spinning, SCHED_FIFO so that nothing preempts
	# it) are sent by the final flush — every nap the program logged inside
	# the traced span is in the trace, once (without the flush, the last
	# one is missing)
	chrt -f 10 python3 -c '
import time
while True:
    a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    time.sleep(0.05)
    b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    print(a, b, flush=True)
    while time.clock_gettime_ns(time.CLOCK_MONOTONIC) < b + 250000000:
        pass
' >"$T/naps.txt" &
	NAPPER=$!
	sleep 0.3
	"$C" -q -o "$T/naps.db" -p "$NAPPER" --duration 1.4
	check_eq "-p of a spinning napper: exit 0" 0 $?
	kill "$NAPPER"
	check "-p: every nap inside the traced span recorded once, the last one's too" python3 - "$T/naps.db" "$T/naps.txt" "$NAPPER" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = dict(db.execute("SELECT key, value FROM session"))
# (the kernel's evidence ends as sched_switch is detached, some 10 ms before
# end_mono_ns: a nap that ended between the two was counted in, and missed)
t0, t1 = int(s["start_mono_ns"]) + 200000000, int(s["sched_end_mono_ns"]) - 2000000
naps = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
naps = [(a, b) for a, b in naps if a > t0 and b < t1]
assert len(naps) >= 3, naps
for a, b in naps:
    n = db.execute("SELECT count(*) FROM off_cpu WHERE tid = ? AND start_ns >= ? AND end_ns <= ? "
                   "AND end_ns - start_ns > 40000000", (int(sys.argv[3]), a, b)).fetchone()[0]
    assert n == 1, (a, b, n)
PYEOF

	# a thread asleep at the stop: its interval cut there (here the
	# command's child, left asleep as the command ends and the trace stops)
	"$C" -q --force -o "$T/asleep.db" -- sh -c "sleep 30 & echo \$! >'$T/asleep.pid'; sleep 0.3"
	check_eq "a child asleep at the stop: its sleep cut at sched_end_mono_ns" 1 "$(sqlite3 "$T/asleep.db" \
		"SELECT count(*) FROM off_cpu WHERE pid = $(cat "$T/asleep.pid") AND syscall = 230
		 AND end_ns = (SELECT value FROM session WHERE key = 'sched_end_mono_ns') AND runnable_ns = end_ns")"
	kill "$(cat "$T/asleep.pid")"
	# a command the collector ends at its stop: its last sleep is kept
	# (the switch that sent it came after its reaping, and the detach)
	"$C" -q --force -o "$T/killed.db" --duration 0.3 -- sleep 5 2>/dev/null
	check_eq "--duration with a command: SIGTERM's 143" 143 $?
	check_eq "a command ended at the stop: its last sleep kept" 1 \
		"$(sqlite3 "$T/killed.db" "SELECT count(*) FROM off_cpu WHERE syscall = 230 AND end_ns - start_ns > 150000000")"
	# (a loaded clean-clone run once found none: what the trace held of the command, in the log)
	[ "$(sqlite3 "$T/killed.db" "SELECT count(*) FROM off_cpu WHERE syscall = 230 AND end_ns - start_ns > 150000000")" = 1 ] ||
		sqlite3 "$T/killed.db" "SELECT 'off_cpu', pid, tid, syscall, start_ns, end_ns - start_ns FROM off_cpu
			ORDER BY end_ns - start_ns DESC LIMIT 5; SELECT 'session', key, value FROM session
			WHERE key LIKE '%end%' OR key LIKE 'start%'" | sed 's/^/# /'

	# CUDA-only without root
	chmod 0777 "$T"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$C" -o "$T/nobody.db" --duration 0.3 2>"$T/err"
	check_eq "non-root: exit 0" 0 $?
	check "non-root: CUDA-only said on stderr" grep -q "CUDA-only mode" "$T/err"
	check_eq "non-root: session.mode" cuda-only "$(sqlite3 "$T/nobody.db" "SELECT value FROM session WHERE key='mode'")"

	# a sender in its own pid namespace (it believes it is pid 1)
	start_collector
	unshare --pid --fork --mount-proc "$B/tests/collector_send" valid --calls 10 >/dev/null
	stop_collector TERM
	check_eq "namespaced sender: calls kept" 10 "$(q 'SELECT count(*) FROM cuda_calls')"
	check_eq "namespaced sender: stored under its root pid" 0 "$(q 'SELECT count(*) FROM cuda_calls WHERE pid=1 OR tid=1')"
	check_eq "namespaced sender: nothing refused" 0 "$(q "SELECT coalesce(sum(count),0) FROM losses WHERE source IN ('spoofed_record','untraced_sender')")"
else
	skip "root-only cases (-p, non-root fallback, pid namespaces)"
fi

"$C" -q --force -o "$DB" --no-bpf --duration 0.2 2>"$T/err"
check_eq "--no-bpf: cuda-only" cuda-only "$(q "SELECT value FROM session WHERE key='mode'")"
check_eq "session has every well-known key but the GPU ones" 11 "$(q "SELECT count(*) FROM session WHERE key IN ('command','start_wall_ns','start_mono_ns','end_mono_ns','host','kernel','cpus','cpu_model','mem_bytes','mode','collector_version')")"

# --max-size keeps the file small and says what it dropped (a call block
# stores this sender's calls in ~4 bytes each: 1M calls are ~4 MB)
start_collector --no-bpf --max-size 2
"$B/tests/collector_send" valid --calls 1000000 --batch 2000 --interval-ms 5 >/dev/null
stop_collector TERM
kept=$(q 'SELECT count(*) FROM cuda_calls')
dropped=$(q "SELECT coalesce(sum(count),0) FROM losses WHERE source='size_cap_rows'")
check_ge "--max-size: rows dropped and counted" "$dropped" 1
check_eq "--max-size: kept + dropped = sent" 1000000 "$((kept + dropped))"
check_ge "--max-size: live pages within the cap (+1 MB slack)" "$((3 * 1048576))" "$(q 'SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, pragma_freelist_count, pragma_page_size')"
finish
