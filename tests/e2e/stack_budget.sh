#!/bin/sh
# stack_budget.sh — the preload's stack-time budget end to end: a program
# whose every sync wants a 20-frame stack, under a budget of 1 ppm, through
# the collector into a report.  The calls without their stack carry the
# "withheld" flag (16) through the wire and the call blocks, and
# `ingero-analyze stats` counts them (text and JSON); with no limit every
# call has its stack and none is withheld.
. tests/lib.sh

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
export INGERO_ENDPOINT="ipc://$T/ingero.sock"
export FAKECUDA_NOOP=1
N=5000

run() { # ppm db
	"$B/ingero-collector" --no-bpf -q -o "$2" -- env INGERO_STACK_BUDGET_PPM="$1" \
		"$B/tests/preload_calls" loop $N 0 20 >/dev/null 2>"$T/err"
}
run 1 "$T/tight.db"
check_eq "collector and workload exit 0" 0 $?
DB=$T/tight.db
syncs=$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api WHERE a.name = 'cudaStreamSynchronize'")
with=$(q "SELECT count(*) FROM cuda_calls WHERE stack_id IS NOT NULL AND stack_id != 0")
held=$(q "SELECT count(*) FROM cuda_calls WHERE flags & 16")
total=$(q "SELECT count(*) FROM cuda_calls")
check_ge "every sync stored ($syncs)" "$syncs" $N
check_ge "1 ppm: the first syncs have stacks" "$with" 1
# (the starting credit pays for a number of stacks that depends on how fast
# this machine unwinds and how long the run took: 223 once on a loaded 2-vCPU
# VM; without the budget every one of the N syncs has its stack)
check "1 ppm: few stacks ($with of $total)" test "$with" -lt $((N / 10))
check_eq "1 ppm: every call without its stack is flagged withheld" "$total" "$((with + held))"
check_eq "no call has both a stack and the withheld flag" 0 \
	"$(q "SELECT count(*) FROM cuda_calls WHERE flags & 16 AND stack_id IS NOT NULL AND stack_id != 0")"

"$B/ingero-analyze" stats --verbose --width 400 "$DB" >"$T/stats.txt" 2>&1
check "stats: one line gives stacks and withheld ones" \
	grep -q "^Call stacks: [0-9,]* of [0-9,]* calls; [0-9,]* more were due and withheld by the stack-time budget" "$T/stats.txt"
"$B/ingero-analyze" stats --json "$DB" >"$T/stats.json" 2>&1
check_eq "stats --json: stacks_withheld summed over APIs" "$held" \
	"$(tr -d ' \t' <"$T/stats.json" | grep -o '"stacks_withheld":[0-9]*' | sed 's/.*://' | awk '{ s += $1 } END { print s + 0 }')"
check_eq "stats --json: stacks summed over APIs" "$with" \
	"$(tr -d ' \t' <"$T/stats.json" | grep -o '"stacks":[0-9]*' | sed 's/.*://' | awk '{ s += $1 } END { print s + 0 }')"

# launch samples (every 4th launch here) under the same budget: each due one
# has its stack or the withheld flag, whether the budget was asked or the
# launch knew it would refuse (record.c launch_refused) and stayed on its path
"$B/ingero-collector" --no-bpf -q -o "$T/launch.db" -- env INGERO_STACK_BUDGET_PPM=1 INGERO_LAUNCH_SAMPLE=4 \
	PRELOAD_CALLS_LAUNCH=1 "$B/tests/preload_calls" loop $N 0 20 >/dev/null 2>"$T/err"
check_eq "launches: collector and workload exit 0" 0 $?
DB=$T/launch.db
L="c JOIN apis a ON a.id = c.api WHERE a.name = 'cudaLaunchKernel'"
launches=$(q "SELECT count(*) FROM cuda_calls $L")
lwith=$(q "SELECT count(*) FROM cuda_calls $L AND stack_id IS NOT NULL AND stack_id != 0")
lheld=$(q "SELECT count(*) FROM cuda_calls $L AND flags & 16")
check_ge "launches: every launch stored ($launches)" "$launches" $N
check_eq "launches: each 4th has its stack or is flagged withheld" "$((launches / 4))" "$((lwith + lheld))"
check "launches: most withheld at 1 ppm ($lheld of $((launches / 4)))" test "$lheld" -gt $((launches / 8))
check_eq "launches: none has both" 0 "$(q "SELECT count(*) FROM cuda_calls $L AND flags & 16 AND stack_id != 0")"

run 1000000 "$T/free.db"
DB=$T/free.db
check_eq "no limit: every sync has its stack" \
	"$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api WHERE a.name = 'cudaStreamSynchronize'")" \
	"$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api WHERE a.name = 'cudaStreamSynchronize' AND stack_id != 0")"
check_eq "no limit: none withheld" 0 "$(q "SELECT count(*) FROM cuda_calls WHERE flags & 16")"
"$B/ingero-analyze" stats --verbose --width 400 "$DB" >"$T/stats2.txt" 2>&1
check "stats: no withheld clause when none was withheld" \
	sh -c "grep '^Call stacks: ' '$T/stats2.txt' | grep -qv withheld"
finish
