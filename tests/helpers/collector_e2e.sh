# collector_e2e.sh — shared by tests/e2e/collector_*.sh (sourced after
# tests/lib.sh): a collector in the background on a private endpoint.
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
export INGERO_ENDPOINT="ipc://$T/ingero.sock"

# start_collector ARGS...: runs the collector in the background (CPID) on a
# fresh $DB (a previous trace removed), returns once its socket exists (a
# killed collector's is removed first: it would say so at once)
start_collector() {
	rm -f "$DB" "$DB-wal" "$DB-shm" "$T/ingero.sock"
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

# explain_run NAME KERNEL_US SAMPLE_HZ SCRIPT ARGS...: traces `python3 SCRIPT
# LIBCUDART ARGS...` on the fake runtime (kernels of KERNEL_US µs) into $DB,
# checks its exit status, and writes explain and explain --json to
# $T/NAME.txt and $T/NAME.json (the analyzer's Python-workload tests)
explain_run() {
	_name=$1 _kus=$2 _hz=$3 _script=$4
	shift 4
	rm -f "$DB" "$DB-wal" "$DB-shm"
	FAKECUDA_KERNEL_US=$_kus "$B/ingero-collector" -o "$DB" --sample-hz "$_hz" -- python3 "$_script" \
		"$PWD/$B/fakecuda/libcudart.so.13" "$@" >/dev/null 2>"$T/err.txt"
	check_eq "$_name: collector and workload exit 0" 0 $?
	"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/$_name.txt" 2>&1
	"$B/ingero-analyze" explain --json "$DB" >"$T/$_name.json" 2>&1
}
