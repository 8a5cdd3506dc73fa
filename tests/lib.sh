# tests/lib.sh — helpers for the shell tests (sourced).  Each check prints a
# TAP line that tests/run counts; the script's exit status is 1 if any failed.
B=${B:-build}
_failed=0
ok()   { echo "ok - $*"; }
nok()  { echo "not ok - $*"; _failed=1; }
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1 (expected '$2', got '$3')"; fi; }
# check_ge DESCRIPTION ACTUAL MIN
check_ge() { if [ "$2" -ge "$3" ] 2>/dev/null; then ok "$1"; else nok "$1 ($2 < $3)"; fi; }
skip() { echo "ok - # SKIP $*"; }
q() { sqlite3 -batch -noheader "$DB" "$1"; }
is_root() { [ "$(id -u)" -eq 0 ]; }
finish() { exit $_failed; }
tmpdir() { mktemp -d "${TMPDIR:-/tmp}/ingero-test.XXXXXX"; }
