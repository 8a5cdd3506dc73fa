#!/bin/sh
# judge.sh DIR [OUT] — the gate's verdicts on what calls.sh brought back from the H200, on the dev
# machine (the judging needs no GPU; the JSON summaries judge exactly like their report.db).
# DIR holds summaries.tar.xz.  Prints, per workload:
#   A/A: every ordered pair of its identical runs gated with the defaults (10 runs: 90
#        pairs) — failures and warnings counted, each failure's reasons shown
#   a baseline of its runs 1-5 (--save-baseline, several runs: median and spread), and runs
#        6-10 against it
#   the regressions, each against that baseline and against run 1 alone: the verdict, the
#        reasons, and whether the cause the issue asks for is named
# and one summary line.  Writes everything to OUT (default /tmp/gate-judged; DIR, where the device
# tool leaves the files, is read-only): report.txt, and the Markdown of each regression.
# Usage: sh docs/gpu-runs/2026-12-04-gate/judge.sh DIR [OUT]   (from the repository root, after make)
set -u
DIR=$(cd "${1:?usage: judge.sh DIR}" && pwd)
GATE=${GATE:-scripts/ingero-gate}
export INGERO_ANALYZE=${INGERO_ANALYZE:-$PWD/build/ingero-analyze}
J=${2:-/tmp/gate-judged}
rm -rf "$J" && mkdir -p "$J"
tar xJf "$DIR/summaries.tar.xz" -C "$J"
S=$J/gate
REPORT=$J/report.txt
say() { echo "$*" | tee -a "$REPORT"; }
total_pairs=0 total_fails=0

aa() { # WORKLOAD
	w=$1 pairs=0 fails=0 warns=0
	runs=$(ls "$S" | sed -n "s/^\(${w}_[0-9]*\)\.json$/\1/p" | sort -t_ -k2 -n)
	for b in $runs; do
		for c in $runs; do
			[ "$b" = "$c" ] && continue
			pairs=$((pairs + 1))
			"$GATE" "$S/$b.json" "$S/$c.json" >"$J/aa.out" 2>&1
			rc=$?
			grep -q '^ingero-gate: PASS: 0 regressions, [1-9]' "$J/aa.out" && warns=$((warns + 1))
			if [ "$rc" -ne 0 ]; then
				fails=$((fails + 1))
				say "  FAIL $b vs $c (exit $rc):"
				grep -E '^(regression|ingero-gate): ' "$J/aa.out" | cut -c1-400 | sed 's/^/    /' | tee -a "$REPORT"
			fi
		done
	done
	say "$w A/A: $pairs ordered pairs, $fails failed, $warns passed with a warning"
	total_pairs=$((total_pairs + pairs))
	total_fails=$((total_fails + fails))
	set -- $runs
	if [ $# -ge 10 ]; then
		"$GATE" --save-baseline "$S/${w}_1.json" "$S/${w}_2.json" "$S/${w}_3.json" "$S/${w}_4.json" \
			"$S/${w}_5.json" -o "$J/${w}_base.json" 2>>"$J/save.err"
		for i in 6 7 8 9 10; do
			"$GATE" "$J/${w}_base.json" "$S/${w}_$i.json" >"$J/aa.out" 2>&1
			rc=$?
			say "  ${w}_$i against the baseline of runs 1-5: exit $rc"
			[ "$rc" -eq 0 ] || grep '^regression' "$J/aa.out" | cut -c1-400 | sed 's/^/    /' | tee -a "$REPORT"
		done
	fi
}

reg() { # NAME WORKLOAD 'REGEX OF THE CAUSE' 'what the cause is'
	n=$1 w=$2 want=$3 what=$4
	[ -f "$S/$n.json" ] || { say "$n: not run"; return; }
	for base in "$J/${w}_base.json" "$S/${w}_1.json"; do
		[ -f "$base" ] || continue
		"$GATE" --markdown "$J/$n.$(basename "$base" .json).md" "$base" "$S/$n.json" >"$J/$n.out" 2>&1
		rc=$?
		named=no
		grep -Eq "$want" "$J/$n.out" && named=yes
		say "$n against $(basename "$base"): exit $rc, $what named: $named"
		grep -E '^regression' "$J/$n.out" | cut -c1-600 | sed 's/^/    /' | tee -a "$REPORT"
	done
}

for w in loader healthy launches; do aa "$w"; done
say "A/A overall: $total_pairs ordered pairs, $total_fails failed"
reg loader_workers0 loader 'DataLoader worker processes 4 -> 0' 'workers 4 -> 0'
reg loader_nopin loader 'pin_memory removed\?|copies from pageable host memory' 'pin_memory removed'
reg loader_heavy loader "waiting for DataLoader workers|DataLoader workers' CPU time per step" 'a CPU-heavy transform (the workers)'
reg healthy_item healthy 'a sync every step|\(an \.item\(\)' 'a per-step .item()'
say "(the whole report: $REPORT; Markdown of each regression in $J)"
