#!/bin/sh
# run_exit.sh — ingero-run passes the command through: its stdout, its exit
# status (including 127 for a missing command and 128+N for a signal), and
# traces it end to end (the workload's CUDA calls all land in the report,
# then the explain summary and the report's path are printed).  Its own
# failures exit 125.
. tests/lib.sh
RUN=scripts/ingero-run
if [ ! -x "$B/ingero-collector" ] || [ ! -x "$B/ingero-analyze" ]; then
	skip "ingero-run tests need $B/ingero-collector and $B/ingero-analyze (make)"
	finish
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
mkdir "$T/tmp"
export TMPDIR="$T/tmp"

out=$("$RUN" -o "$T/a.db" -- sh -c 'echo through; exit 7' 2>"$T/err")
rc=$?
check_eq "exit status of the command passes through" 7 "$rc"
check_eq "stdout of the command passes through untouched" "through" "$out"
check "the report path is printed" grep -q "^ingero-run: report: $T/a.db\$" "$T/err"
check "report.db written" test -s "$T/a.db"

"$RUN" -q -o "$T/b.db" -- false 2>/dev/null
check_eq "false -> 1" 1 $?
"$RUN" -q -o "$T/c.db" -- sh -c 'kill -KILL $$' 2>/dev/null
check_eq "a command killed by SIGKILL -> 137" 137 $?
"$RUN" -q -o "$T/d.db" -- /nonexistent/command 2>/dev/null
check_eq "a missing command -> 127" 127 $?
"$RUN" -q -o "$T/e.db" --cuda-only -- sh -c 'exit 3' 2>"$T/err"
check_eq "--cuda-only: exit status passes through" 3 $?
check_eq "--cuda-only: the report says cuda-only" "cuda-only" \
	"$(sqlite3 -batch -noheader "$T/e.db" "SELECT value FROM session WHERE key = 'mode'")"

# the default name is timestamped in the current directory
(cd "$T" && "$OLDPWD/$RUN" -q -- true 2>"$T/err")
check_eq "default output: exit 0" 0 $?
check "default output: ./ingero-YYYYMMDD-HHMMSS.db" sh -c "ls '$T' | grep -Eq '^ingero-[0-9]{8}-[0-9]{6}\\.db\$'"

# ingero-run's own failures: 125, one line, the command not run
usage_case() { # description, args...
	d=$1
	shift
	"$RUN" "$@" >"$T/uo" 2>"$T/ue"
	rc=$?
	if [ "$rc" -eq 125 ] && [ "$(wc -l <"$T/ue" | tr -d ' ')" -eq 1 ] && [ ! -s "$T/uo" ]; then
		ok "$d: exit 125, one line"
	else
		nok "$d: exit $rc: $(head -c 200 "$T/ue")"
	fi
}
usage_case "no command"
usage_case "only --" --
usage_case "unknown option" --frobnicate -- true
usage_case "-o without a value" -o
usage_case "bad --sample-hz" --sample-hz fast -- true
usage_case "output folder missing" -o "$T/no/such/dir/r.db" -- sh -c 'echo ran'
INGERO_COLLECTOR=/nonexistent/ingero-collector usage_case "collector not found" -o "$T/f.db" -- true
"$RUN" --help >"$T/help"
check_eq "--help exits 0" 0 $?
check "--help shows the usage" grep -q '^Usage: ingero-run' "$T/help"
check "temporary folders are removed" test -z "$(ls "$T/tmp")"

# the workload, traced for real: every CUDA call it says it made is in the report
if [ ! -f "$B/libingero_preload.so" ] || [ ! -x "$B/tests/starve" ]; then
	skip "workload run needs $B/libingero_preload.so and $B/tests/starve"
	finish
fi
DB=$T/w.db
"$RUN" -o "$DB" -- "$B/tests/starve" --mode direct --batches 10 --truth "$T/truth" >"$T/out" 2>"$T/err"
check_eq "workload: exit 0" 0 $?
want=$(tr ' ' '\n' <"$T/truth" | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=[0-9]+$' |
	cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
check_ge "workload: the truth counts some CUDA calls" "$want" 1
check_eq "workload: every CUDA call is in the report" "$want" "$(q 'SELECT count(*) FROM cuda_calls')"
if is_root; then
	check_eq "workload as root: full mode" "full" "$(q "SELECT value FROM session WHERE key = 'mode'")"
fi
check "workload: the explain summary is printed before the path" \
	sh -c "[ \$(grep -vc '^ingero-\\(run\\|collector\\):' '$T/err') -ge 2 ]"
finish
