#!/bin/sh
# tracer_sched.sh — the tracer's own threads run under SCHED_BATCH
# (include/ingero/sched_batch.h), the program's never: the collector's
# threads (nng's too), the preload library's sender and the nng threads it
# made, not its GPU watcher, read from /proc while a fake-CUDA loop runs;
# the launched program's own thread and a process it starts keep
# SCHED_OTHER; INGERO_TRACER_BATCH=0 changes nothing; a policy the user
# chose for the collector (chrt --batch: not SCHED_OTHER) is left as it
# is, and the program keeps it too.
. tests/lib.sh
. tests/helpers/collector_e2e.sh

# policies PID: "comm=policy" for each of its threads, sorted (policy as
# the kernel numbers it: 0 other, 3 batch; stat's field 41, the 39th after
# the comm's closing parenthesis — /proc/PID/sched needs a debug kernel)
policies() {
	for t in /proc/"$1"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null)=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f39)"
	done | sort -u
}
# run [ENV=V...] [-- PREFIX...]: the collector (CUDA only) runs a shell that
# starts the fake-CUDA loop and, meanwhile, notes its own policy in
# $T/shell; each thread's policy of the loop in $T/prog, of the collector
# in $T/coll, read once the loop's sender, watcher and nng threads are up
run() {
	rm -f "$DB" "$DB-wal" "$DB-shm" "$T/shell"
	env "$@" "$B/ingero-collector" -q --force --no-bpf -o "$DB" -- sh -c "
		python3 tests/bench/launch_loop.py '$PWD/$B/fakecuda/libcudart.so.13' --steps 2500 >/dev/null &
		sed 's/.*) //' /proc/self/stat | cut -d' ' -f39 > '$T/shell'; wait" 2>"$T/collector.err" &
	CPID=$!
	P="" i=0
	while [ -z "$P" ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
		for c in $(pgrep -f "launch_loop.py $PWD/$B/fakecuda"); do
			pc=$(policies "$c")
			echo "$pc" | grep -q '^ingero-gpu=' && echo "$pc" | grep -q '^nng:' && P=$c
		done
	done
	policies "$P" >"$T/prog"
	policies "$CPID" >"$T/coll"
	wait "$CPID"
	RC=$?
}
# only THREAD_PATTERN POLICY FILE: every thread matching the pattern has
# that policy, and there is at least one
only() { grep -q "^$1" "$3" && ! grep "^$1" "$3" | grep -vq "=$2\$"; }

run
check_eq "traced, exit 0" 0 "$RC"
check "the program's main thread: SCHED_OTHER ($(grep '^python3=' "$T/prog"))" only 'python3=' 0 "$T/prog"
check "the process it starts: SCHED_OTHER" test "$(cat "$T/shell")" = 0
check "the library's sender: SCHED_BATCH" only 'ingero-sender=' 3 "$T/prog"
check "its GPU watcher keeps SCHED_OTHER (late marks widen the GPU idle bounds)" only 'ingero-gpu=' 0 "$T/prog"
check "the nng threads its sender made: SCHED_BATCH" only 'nng:' 3 "$T/prog"
check "the collector's threads: all SCHED_BATCH ($(tr '\n' ' ' < "$T/coll"))" only '' 3 "$T/coll"
check_eq "the session says so" batch "$(q "SELECT value FROM session WHERE key = 'collector_sched'")"

run INGERO_TRACER_BATCH=0
check_eq "INGERO_TRACER_BATCH=0: traced, exit 0" 0 "$RC"
check "INGERO_TRACER_BATCH=0: the library's threads keep SCHED_OTHER" only '' 0 "$T/prog"
check "INGERO_TRACER_BATCH=0: the collector's too" only '' 0 "$T/coll"
check_eq "INGERO_TRACER_BATCH=0: the session says unchanged" unchanged \
	"$(q "SELECT value FROM session WHERE key = 'collector_sched'")"

if command -v chrt >/dev/null; then
	run chrt --batch 0
	check_eq "collector started under SCHED_BATCH: traced, exit 0" 0 "$RC"
	check_eq "the session says the collector left it unchanged" unchanged \
		"$(q "SELECT value FROM session WHERE key = 'collector_sched'")"
	check "the program keeps the policy the user chose" only 'python3=' 3 "$T/prog"
	check "so does the process it starts" test "$(cat "$T/shell")" = 3
else
	skip "chrt missing: the user's own policy is not checked"
fi
finish
