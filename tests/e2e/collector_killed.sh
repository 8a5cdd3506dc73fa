#!/bin/sh
# collector_killed.sh — a trace cut short says so (issue 40, item 6): the
# collector killed with SIGKILL while its program makes calls leaves a
# file every view reads (exit 0) and marks "incomplete: the collector
# stopped at T (killed?)", text and JSON; the program goes on, and at its
# exit the preload library says on stderr how many calls it made and
# never sent (the trace cannot).  A trace with no evidence at all says
# that too.  (Before: nothing said the trace was cut, and the calls after
# the kill were counted nowhere.)
. tests/lib.sh
. tests/helpers/collector_e2e.sh
A=$B/ingero-analyze

start_collector --no-bpf -- env FAKECUDA_SYNC_EXTRA_US=200 "$B/tests/preload_calls" thin 6000 >"$T/truth.txt"
i=0   # until calls are in the file
while [ "$(q 'SELECT count(*) FROM call_blocks' 2>/dev/null || echo 0)" -eq 0 ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.5
kill -KILL "$CPID"
wait "$CPID" 2>/dev/null
i=0   # the program runs on without its collector, to its end
while ! grep -q "^truth .*cudaFreeHost" "$T/truth.txt" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "the program ran to its end" grep -q "^truth .*cudaFreeHost" "$T/truth.txt"
sleep 0.5   # (its library's last line)
stored=$(q 'SELECT count(*) FROM cuda_calls')
check_ge "the calls committed before the kill are there" "$stored" 1
line=$(grep "^ingero: pid [0-9]*: the collector was gone at exit (killed?)" "$T/collector.err")
check "the library said what the trace lacks" test -n "$line"
made=$(echo "$line" | sed -n 's/.* \([0-9]*\) CUDA calls made by .*/\1/p')
unsent=$(echo "$line" | sed -n 's/.*, \([0-9]*\) never sent;.*/\1/p')
truth=$(awk '/^truth/ { for (i = 1; i <= NF; i++) if ($i ~ /^count=/) n += substr($i, 7) } END { print n }' "$T/truth.txt")
check_ge "... every call it made ($made)" "$made" "$truth"
check_ge "... and the ones never sent ($unsent): what the trace lacks, at least" "$unsent" 1
check "... no more than it lacks" test "$unsent" -le $((made - stored))

for c in explain stats per-process timeline; do
	"$A" $c --width 1000 "$DB" >"$T/$c.txt" 2>"$T/$c.err"
	check_eq "$c exits 0" 0 $?
	check "$c says the trace is incomplete" grep -q "^Incomplete: the collector stopped at .* (killed?)" "$T/$c.txt"
	"$A" $c --json "$DB" >"$T/$c.json" 2>"$T/$c.err"
	check_eq "$c --json: incomplete, killed?" "killed?" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print((d.get("trace") or d)["incomplete"]["reason"])' "$T/$c.json")"
done
"$A" export --format perfetto -o "$T/p.json" "$DB" 2>/dev/null
check "export says so" grep -q '"incomplete":"incomplete: the collector stopped at' "$T/p.json"
"$A" report --html -o "$T/r.html" "$DB" 2>/dev/null
check "the HTML report says so" grep -q "class='incomplete'><b>incomplete: the collector stopped at" "$T/r.html"

# a trace with no evidence: the collector ran, nobody sent
check "an idle collector starts" start_collector --no-bpf
stop_collector TERM
"$A" explain --width 1000 "$DB" >"$T/idle.txt" 2>&1
check_eq "explain of an empty trace exits 0" 0 $?
check "and says no evidence was recorded" grep -q "^Incomplete: no evidence was recorded" "$T/idle.txt"
finish
