#!/bin/sh
# run_signals.sh — stopping ingero-run mid-run still leaves a complete
# report:
#   Ctrl-C: SIGINT to ingero-run's whole process group (what the terminal
#   does) stops the workload and its forked workers; the collector drains
#   and commits; the report opens, passes an integrity check and is
#   analysed; the explain summary and the path are printed; exit 130.
#   SIGTERM to ingero-run alone (a CI timeout) is passed on: exit 143.
# ingero-run is started in its own session (setsid) so the test can signal
# its process group as a terminal would, with SIGINT at its default
# disposition (a background job of this shell would have it ignored).
. tests/lib.sh
RUN=scripts/ingero-run
if [ ! -x "$B/ingero-collector" ] || [ ! -x "$B/ingero-analyze" ] || [ ! -x "$B/tests/starve" ]; then
	skip "needs $B/ingero-collector, $B/ingero-analyze and $B/tests/starve (make)"
	finish
fi
if ! command -v setsid >/dev/null 2>&1 || ! env --default-signal=INT true 2>/dev/null; then
	skip "needs setsid and env --default-signal (util-linux, coreutils >= 8.31)"
	finish
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
mkdir "$T/tmp"
export TMPDIR="$T/tmp"
preload=0
[ -f "$B/libingero_preload.so" ] && preload=1

# start NAME: the workload under ingero-run, long enough to be interrupted
start() {
	env --default-signal=INT,QUIT setsid "$RUN" -o "$T/$1.db" -- \
		"$B/tests/starve" --mode workers --workers 2 --batches 1000000 --rows 4096 \
		>"$T/$1.out" 2>"$T/$1.err" &
	pid=$!
	# underway: the report exists and the workers have been forked
	i=0
	while [ "$i" -lt 100 ]; do
		[ -s "$T/$1.db" ] && [ "$(ps -o pid= -g "$pid" | wc -l)" -ge 5 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
}

# finished NAME: waits (bounded) and checks what must hold after any stop
finished() {
	i=0
	while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		nok "$1: ingero-run still running 30 s after the signal"
		kill -s KILL -- -"$pid" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	DB=$T/$1.db
	# orphaned workers see their parent go and exit; give them a moment
	i=0
	while [ -n "$(ps -o pid= -g "$pid")" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check_eq "$1: no process of the run is left after 5 s" "" "$(ps -o pid=,stat=,args= -g "$pid")"
	check_eq "$1: report passes SQLite's integrity check" "ok" "$(q 'PRAGMA integrity_check')"
	check "$1: the session was closed (end time written)" \
		test -n "$(q "SELECT value FROM session WHERE key = 'end_mono_ns'")"
	"$B/ingero-analyze" stats --json "$DB" >"$T/$1.json" 2>&1
	check_eq "$1: the analyzer reads the report" 0 $?
	check_ge "$1: the workload's processes are in the report" "$(q 'SELECT count(*) FROM processes')" 3
	if [ "$preload" -eq 1 ]; then
		check_ge "$1: CUDA calls recorded before the stop" "$(q 'SELECT count(*) FROM cuda_calls')" 1
	fi
	check "$1: the report path is printed" grep -q "^ingero-run: report: $DB\$" "$T/$1.err"
	check "$1: the explain summary was run" \
		sh -c "[ \$(grep -vc '^ingero-\\(run\\|collector\\):' '$T/$1.err') -ge 2 ]"
}

start int
kill -s INT -- -"$pid"
finished int
check_eq "Ctrl-C: exit status 130" 130 "$rc"
check "Ctrl-C: ingero-run says it was stopped" grep -q '^ingero-run: stopped by SIGINT' "$T/int.err"

start term
kill -TERM "$pid"
finished term
check_eq "SIGTERM to ingero-run alone: passed on, exit 143" 143 "$rc"

check "temporary folders are removed" test -z "$(ls "$T/tmp")"
finish
