# preload_lib.sh — shared by tests/e2e/preload_*.sh (sourced after tests/lib.sh).
# A test gets a temporary folder $T, an endpoint $EP, and helpers to run the
# test sink (build/tests/preload_sink) and compare its totals with a
# program's own ground truth ("truth pid=P ppid=Q api=NAME count=N").
T=$(tmpdir)
trap 'kill $SINK_PID 2>/dev/null; rm -rf "$T"' EXIT
EP="ipc://$T/ingero.sock"
export INGERO_ENDPOINT="$EP"
PRELOAD="$PWD/$B/libingero_preload.so"
SINK_PID=

# start_sink OUT [sink options...]: listens on $EP; returns once it does.
# Its idle timer (-i) runs from wait_sink on (-u): a program at idle priority
# on a loaded machine can wait seconds between its hello and its calls.
start_sink() {
	out=$1; shift
	rm -f "$T/ready"
	"$B/tests/preload_sink" -u -r "$T/ready" "$@" "$EP" >"$out" 2>&1 &
	SINK_PID=$!
	i=0
	while [ ! -f "$T/ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}

# wait_sink: the program has ended (SIGUSR1 starts the sink's idle timer); the sink
# exits by itself (-i / -n); give it 20 s at most.
wait_sink() {
	kill -USR1 "$SINK_PID" 2>/dev/null
	i=0
	while kill -0 "$SINK_PID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	kill "$SINK_PID" 2>/dev/null
	wait "$SINK_PID" 2>/dev/null
	SINK_PID=
}

# traced CMD...: CMD under the library
traced() { LD_PRELOAD="$PRELOAD" "$@"; }

# sink_calls SINKOUT PID API: calls the sink received
sink_calls() {
	v=$(grep "^calls pid=$2 api=$3 " "$1" | sed 's/.* count=\([0-9]*\).*/\1/')
	echo "${v:-0}"
}

# sink_field SINKOUT KIND PID FIELD: e.g. counts 123 made
sink_field() {
	v=$(grep "^$2 pid=$3 " "$1" | sed "s/.* $4=\([^ ]*\).*/\1/" | tail -n 1)
	echo "${v:-0}"
}

# compare_truth TRUTH SINKOUT LABEL: every API of every process, counted exactly
compare_truth() {
	bad=0
	n=0
	while read -r _ pid ppid api count; do
		pid=${pid#pid=}; api=${api#api=}; count=${count#count=}
		case "$api" in *"("*) continue ;; esac   # calls the program marks as not traced
		n=$((n + 1))
		got=$(sink_calls "$2" "$pid" "$api")
		if [ "$got" != "$count" ]; then
			echo "# $3: pid $pid $api: expected $count, got $got"
			bad=1
		fi
	done <"$1"
	[ $n -gt 0 ] && [ $bad -eq 0 ]
}
