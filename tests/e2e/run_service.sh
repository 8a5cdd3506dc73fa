#!/bin/sh
# run_service.sh — dist/ingero-collector.service as documented in
# libingero_preload(7): the unit is valid; its ExecStart (the collector in
# open mode, one report per start in $STATE_DIRECTORY) records a program
# that an unprivileged user starts from a shell with LD_PRELOAD; SIGTERM
# (systemctl stop) closes a complete report.  The unit's own command line
# is run, with the collector's path and a private endpoint swapped in.
. tests/lib.sh
UNIT=dist/ingero-collector.service
check "the unit exists" test -f "$UNIT"
if command -v systemd-analyze >/dev/null 2>&1; then
	# man pages and /usr/local/sbin are not installed here: only those complaints are expected
	systemd-analyze verify "$UNIT" 2>&1 | grep -v "Command 'man .*' failed" >"${TMPDIR:-/tmp}/verify.$$"
	check "systemd-analyze verify finds nothing else" test ! -s "${TMPDIR:-/tmp}/verify.$$"
	sed 's/^/# /' "${TMPDIR:-/tmp}/verify.$$"
	rm -f "${TMPDIR:-/tmp}/verify.$$"
else
	skip "systemd-analyze not installed"
fi
if ! is_root; then skip "the service flow needs root"; finish; fi
for f in "$B/ingero-collector" "$B/libingero_preload.so" "$B/tests/starve"; do
	if [ ! -e "$f" ]; then skip "needs $f (make)"; finish; fi
done
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
mkdir -p "$T/state" "$T/run" "$T/user"
chmod 0777 "$T/user"
BB=$(cd "$B" && pwd)

# ExecStart=/bin/sh -c '...' with systemd's %% unescaped and our collector
cmd=$(sed -n "s/^ExecStart=\\/bin\\/sh -c '\\(.*\\)'\$/\\1/p" "$UNIT" | sed -e 's/%%/%/g' \
	-e "s|/usr/local/sbin/ingero-collector|$BB/ingero-collector|")
check "ExecStart found" test -n "$cmd"
export INGERO_ENDPOINT="ipc://$T/run/ingero.sock"
STATE_DIRECTORY="$T/state" sh -c "$cmd" 2>"$T/collector.err" &
svc=$!
i=0
while [ ! -S "$T/run/ingero.sock" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "the service listens" test -S "$T/run/ingero.sock"

# a user's shell: LD_PRELOAD set by hand
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
command -v setpriv >/dev/null 2>&1 || as_user() { "$@"; }
as_user env LD_PRELOAD="$BB/libingero_preload.so" INGERO_ENDPOINT="$INGERO_ENDPOINT" \
	"$BB/tests/starve" --mode workers --workers 2 --batches 10 --truth "$T/user/truth" >/dev/null 2>&1
check_eq "the user's program ran" 0 $?
sleep 0.5
kill -TERM "$svc"   # systemctl stop
wait "$svc"
check_eq "SIGTERM: the collector exits 0" 0 $?
DB=$(ls "$T"/state/report-*.db 2>/dev/null | head -n 1)
check "one report in the state directory, named by the start time" \
	sh -c "ls '$T/state' | grep -Eq '^report-[0-9]{8}-[0-9]{6}\\.db\$'"
if [ -n "$DB" ]; then
	want=$(tr ' ' '\n' <"$T/user/truth" | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=[0-9]+$' |
		cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
	check_eq "every CUDA call of the user's program and its workers is in the report" "$want" \
		"$(q 'SELECT count(*) FROM cuda_calls')"
	check_eq "the report is complete" "ok" "$(q 'PRAGMA integrity_check')"
	check_eq "full mode (eBPF) as a root service" "full" "$(q "SELECT value FROM session WHERE key = 'mode'")"
fi
finish
