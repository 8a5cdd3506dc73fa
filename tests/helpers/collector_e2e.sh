# collector_e2e.sh — shared by tests/e2e/collector_*.sh (sourced after
# tests/lib.sh): a collector in the background on a private endpoint.
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
export INGERO_ENDPOINT="ipc://$T/ingero.sock"

# start_collector ARGS...: runs the collector in the background (CPID),
# returns once its socket exists
start_collector() {
	"$B/ingero-collector" -o "$DB" "$@" 2>"$T/collector.err" &
	CPID=$!
	i=0
	while [ ! -S "$T/ingero.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -S "$T/ingero.sock" ]
}

# stop_collector [SIGNAL]: signals it and waits; sets CRC
stop_collector() {
	kill -"${1:-TERM}" "$CPID" 2>/dev/null
	wait "$CPID"
	CRC=$?
}
