# sink.sh — sourced by the preload library's benches (preload.sh, nccl.sh):
# a temporary folder $T and the test sink (tests/helpers/preload_sink.c)
# listening on $INGERO_ENDPOINT, ready when this returns; both are gone when
# the bench exits.  The sink drains the ring as a collector would.
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-bench.XXXXXX")
SINK=
trap '[ -n "$SINK" ] && kill $SINK 2>/dev/null; rm -rf "$T"' EXIT
export INGERO_ENDPOINT="ipc://$T/bench.sock"
"$B/tests/preload_sink" -r "$T/ready" "$INGERO_ENDPOINT" >"$T/sink.out" 2>&1 &
SINK=$!
i=0
while [ ! -f "$T/ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# median FILE: the median of the numbers in FILE, one decimal (the mean of the middle two for an even count)
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
