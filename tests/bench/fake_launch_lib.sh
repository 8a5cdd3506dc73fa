# fake_launch_lib.sh — what the launch microbenchmarks on the fake runtime
# share (ring_cold.sh, cold_call.sh): sourced after B is set.  Finds
# preload_calls and the test sink in a build tree or in a bundle (B=BUNDLE/
# bench with LD_LIBRARY_PATH=BUNDLE: docs/gpu-runs.md), makes a temporary
# directory T, starts the sink on INGERO_ENDPOINT there (killed at exit),
# and defines med (the median of stdin's numbers).
CALLS=$B/tests/preload_calls
[ -x "$CALLS" ] || CALLS=$B/preload_calls
SINK=$B/tests/preload_sink
[ -x "$SINK" ] || SINK=$B/preload_sink
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-bench.XXXXXX")
export INGERO_ENDPOINT="ipc://$T/bench.sock"
"$SINK" -r "$T/ready" "$INGERO_ENDPOINT" >/dev/null 2>&1 &
S=$!
trap 'kill $S 2>/dev/null; rm -rf "$T"' EXIT
i=0
while [ ! -f "$T/ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
med() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }'; }
