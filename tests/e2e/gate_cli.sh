#!/bin/sh
# gate_cli.sh — the CI gate through its command line (scripts/ingero-gate →
# ingero-analyze gate), on report.db files from tests/helpers/gen_reportdb:
#   identical runs pass; 20 seeded pairs of equal-but-noisy runs pass;
#   an injected regression (every cudaMemcpyAsync 20x slower) fails
#   with exit 1 and names the API in the table; syncs that wait twice as
#   long while the steps per second held pass, said why (a sync waits for
#   the GPU: the host has more slack); a steady state too short to judge
#   warns and passes; a saved JSON baseline judges like the database it
#   came from; Markdown, JUnit and JSON outputs are well formed; every usage
#   error exits 2, every input error 3, a file that cannot be written 4,
#   each with one line (include/ingero/exit.h).
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
GEN=$B/tests/gen_reportdb
GATE=scripts/ingero-gate
export INGERO_ANALYZE="$B/ingero-analyze"
if [ ! -x "$GEN" ] || [ ! -x "$INGERO_ANALYZE" ]; then
	skip "gate tests need $GEN and $INGERO_ANALYZE (make)"
	finish
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

"$GEN" healthy "$T/base.db" --seed 1 --steps 200 >/dev/null 2>&1
"$GEN" healthy "$T/same.db" --seed 2 --steps 200 >/dev/null 2>&1
check "generator wrote the databases" test -s "$T/base.db" -a -s "$T/same.db"

# --- identical and equal-but-noisy runs pass -------------------------------------------
"$GATE" "$T/base.db" "$T/base.db" >"$T/out" 2>&1
check_eq "identical runs pass (exit 0)" 0 $?
check "identical runs: PASS headline" grep -q '^ingero-gate: PASS' "$T/out"

fails=0
for i in $(seq 1 20); do
	"$GEN" healthy "$T/a.db" --seed $((100 + i)) --steps 200 >/dev/null 2>&1
	"$GEN" healthy "$T/b.db" --seed $((200 + i)) --steps 200 >/dev/null 2>&1
	"$GATE" "$T/a.db" "$T/b.db" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fails=$((fails + 1))
		sed 's/^/# /' "$T/out" | head -n 20
	fi
done
check_eq "20 seeded pairs of equal runs all pass" 0 "$fails"

# --- injected regression: every copy twenty times as slow ----------------------------------
# (a copy: a launch made slower while the GPU stays busy waits for a full queue, not a regression)
cp "$T/same.db" "$T/slow.db"
DB=$T/slow.db
check_eq "every cudaMemcpyAsync made twenty times as slow" "$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api
	WHERE a.name = 'cudaMemcpyAsync'")" "$("$B/tests/calls_edit" "$DB" --api cudaMemcpyAsync --dur-mul 20)"
"$GATE" "$T/base.db" "$T/slow.db" --markdown "$T/gate.md" --junit "$T/gate.xml" >"$T/out" 2>"$T/err"
check_eq "slower copies fail (exit 1)" 1 $?
check "FAIL headline" grep -q '^ingero-gate: FAIL' "$T/out"
check "the table names the slower API's p50 as FAIL" \
	grep -Eq '^  cudaMemcpyAsync p50 .* FAIL$' "$T/out"
check "a one-line reason per regression" grep -q '^regression: cudaMemcpyAsync got slower' "$T/out"
check "unchanged APIs are not blamed" sh -c "! grep -Eq '^  __cudaLaunchKernel p50 .* FAIL' '$T/out'"
check "nothing on stderr" test ! -s "$T/err"

# --- syncs that wait longer while the steps held: the host has more slack -------------------
cp "$T/same.db" "$T/syncs.db"
DB=$T/syncs.db
"$B/tests/calls_edit" "$DB" --api cudaStreamSynchronize --dur-mul 2 >/dev/null
"$GATE" -v "$T/base.db" "$T/syncs.db" >"$T/out2" 2>&1
check_eq "syncs twice as long, steps per second unchanged: pass" 0 $?
check "... and --verbose says why" \
	grep -q "^note: cudaStreamSynchronize waits longer for the GPU while the steady state's throughput held" "$T/out2"

# --- a steady state too short to judge ----------------------------------------------------------
"$GEN" healthy "$T/short.db" --seed 5 --steps 10 >/dev/null 2>&1
"$GATE" "$T/base.db" "$T/short.db" >"$T/out2" 2>&1
check_eq "ten steps: passes (exit 0)" 0 $?
check "... with the warning: not enough steady state to judge" \
	grep -q '^warning: not enough steady state to judge: the current run has' "$T/out2"

"$GATE" "$T/base.db" "$T/slow.db" >"$T/out" 2>&1   # the regression's lines again, for JUnit's count

# --- Markdown and JUnit ---------------------------------------------------------------------
check "Markdown written with the table" grep -q '^| Check | Baseline | Current |' "$T/gate.md"
check "Markdown says FAIL" grep -q '^## Ingero GPU perf gate: \*\*FAIL\*\*' "$T/gate.md"
python3 - "$T/gate.xml" "$T/out" <<'EOF' >"$T/junit.txt" 2>&1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = suite.findall("testcase")
failed = [c for c in cases if c.find("failure") is not None]
regressions = sum(1 for l in open(sys.argv[2]) if l.startswith("regression: "))
assert int(suite.get("tests")) == len(cases), "tests count"
assert int(suite.get("failures")) == len(failed) == regressions, (suite.get("failures"), len(failed), regressions)
assert any(c.get("name") == "cudaMemcpyAsync p50" for c in failed), [c.get("name") for c in failed]
print("junit ok", len(cases), len(failed))
EOF
check "JUnit XML parses; failures match the regressions" grep -q '^junit ok' "$T/junit.txt"
[ -s "$T/junit.txt" ] && ! grep -q '^junit ok' "$T/junit.txt" && sed 's/^/# /' "$T/junit.txt"

# --- JSON result ------------------------------------------------------------------------------
"$GATE" --json "$T/base.db" "$T/slow.db" >"$T/res.json"
check_eq "--json keeps the exit status" 1 $?
check "--json result: verdict fail with the copy check" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "fail" and r["regressions"] >= 1
assert any(c["check"] == "cudaMemcpyAsync p50" and c["verdict"] == "FAIL" for c in r["checks"])
' "$T/res.json"

# --- a new HIGH causal chain: main thread waiting on DataLoader-style workers ------------------
"$GEN" blocked "$T/blocked.db" --seed 3 --steps 200 >/dev/null 2>&1
"$GEN" blocked "$T/blocked2.db" --seed 4 --steps 200 >/dev/null 2>&1
"$GATE" "$T/base.db" "$T/blocked.db" >"$T/out" 2>&1
check_eq "a new HIGH chain fails (exit 1)" 1 $?
check "the table names the new chain" grep -Eq '^  new HIGH chain: gaps_waiting_workers .* FAIL$' "$T/out"
check "its reason names the cause, the cost and the chain's own summary" \
	grep -q '^regression: new HIGH causal chain: the main thread waiting for DataLoader workers, 0% -> [0-9]*% of the steady state .*: GPU idle' "$T/out"
"$GATE" --set new_high_chains=warn --set gpu_idle_growth_pts=off --set throughput_drop_pct=off \
	"$T/base.db" "$T/blocked.db" >"$T/out" 2>&1
check_eq "new_high_chains = warn: reported, not failed" 0 $?
check "the warning is printed" grep -q '^warning: new HIGH causal chain' "$T/out"
"$GATE" "$T/blocked.db" "$T/blocked2.db" >"$T/out" 2>&1
check "the same chain in both runs is not new" sh -c "! grep -q 'new HIGH chain:' '$T/out'"
# num_workers=0 -> workers: the gaps remain HIGH with another cause; not a new problem
"$GEN" assembly "$T/assembly.db" --seed 5 --steps 200 >/dev/null 2>&1
"$GATE" -v --set gpu_idle_growth_pts=off --set calls_per_sec_drop_pct=off "$T/assembly.db" "$T/blocked.db" >"$T/out" 2>&1
check "gaps chain with another cause: not a new chain" sh -c "! grep -q 'new HIGH chain:' '$T/out'"
check "the change of cause is listed" grep -Eq '^  HIGH chain gaps: cause changed +gaps_host_busy +gaps_waiting_workers' "$T/out"

# --- a saved baseline judges like its database -------------------------------------------------
"$GATE" --save-baseline "$T/base.db" -o "$T/base.json" 2>"$T/err"
check_eq "--save-baseline exits 0" 0 $?
check "baseline file is a versioned JSON summary" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
assert b["ingero_gate_baseline"] == 2 and len(b["runs"]) == 1 and b["runs"][0]["steady"]["steps"] == 200
assert b["apis"] and all("samples_ns" in a and len(a["runs_p50_ns"]) == 1 for a in b["apis"])
' "$T/base.json"
"$GATE" "$T/base.json" "$T/same.db" >/dev/null 2>&1
check_eq "baseline.json vs an equal run: pass" 0 $?
"$GATE" "$T/base.json" "$T/slow.db" >"$T/out.json" 2>&1
check_eq "baseline.json vs slower copies: regression" 1 $?
"$GATE" "$T/base.db" "$T/slow.db" >"$T/out.db" 2>&1
check_eq "same verdict lines from the JSON baseline as from the database" \
	"$(grep -c '^regression:' "$T/out.db")" "$(grep -c '^regression:' "$T/out.json")"

# --- thresholds: a config that tolerates 3x syncs passes; --set overrides ---------------------
cat >"$T/gate.conf" <<'EOF'
# copies may be twenty times as slow on this runner
cudaMemcpyAsync.p50_growth_pct = 2500
cudaMemcpyAsync.p99_growth_pct = 2500   # tail too
calls_per_sec_drop_pct = off   # the old name of throughput_drop_pct still reads
EOF
"$GATE" --config "$T/gate.conf" "$T/base.db" "$T/slow.db" >"$T/out" 2>&1
check_eq "a config tolerating the slowdown passes" 0 $?
"$GATE" -c "$T/gate.conf" -s cudaMemcpyAsync.p50_growth_pct=20 "$T/base.db" "$T/slow.db" >/dev/null 2>&1
check_eq "--set after --config wins" 1 $?
"$GATE" -s cudaMemcpyAsync.ignore=yes "$T/base.db" "$T/slow.db" >/dev/null 2>&1
check_eq "an ignored API is not judged" 0 $?

# --- usage errors: exit 2, input errors: exit 3, one line -------------------------------------------
printf 'garbage, not a report\n' >"$T/garbage"
head -c 3000 "$T/base.db" >"$T/trunc.db"
printf 'p50_growth = 20\n' >"$T/badkey.conf"
error_case() { # status, description, args...
	want=$1 d=$2
	shift 2
	"$GATE" "$@" >"$T/uo" 2>"$T/ue"
	rc=$?
	lines=$(wc -l <"$T/ue" | tr -d ' ')
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && [ ! -s "$T/uo" ]; then
		ok "$d: exit $want, one line"
	else
		nok "$d: exit $rc (want $want), $lines stderr lines: $(head -c 200 "$T/ue")"
	fi
}
error_case 2 "no arguments"
error_case 2 "one argument" "$T/base.db"
error_case 2 "three arguments" "$T/base.db" "$T/base.db" "$T/base.db"
error_case 2 "unknown option" --frobnicate "$T/base.db" "$T/base.db"
error_case 3 "missing baseline" "$T/nonexistent.db" "$T/base.db"
error_case 3 "missing current" "$T/base.db" "$T/nonexistent.db"
error_case 3 "garbage baseline" "$T/garbage" "$T/base.db"
error_case 3 "truncated database" "$T/base.db" "$T/trunc.db"
error_case 3 "unknown config key" --config "$T/badkey.conf" "$T/base.db" "$T/base.db"
error_case 3 "missing config file" --config "$T/none.conf" "$T/base.db" "$T/base.db"
error_case 2 "bad --set" --set p99_growth_pct=lots "$T/base.db" "$T/base.db"
error_case 2 "--save-baseline without -o" --save-baseline "$T/base.db"
error_case 2 "--config without a value" --config
"$GATE" --markdown "$T/no/such/dir.md" "$T/base.db" "$T/base.db" >/dev/null 2>"$T/ue"
check_eq "a Markdown file that cannot be written: exit 4, one line" "4 1" "$? $(wc -l <"$T/ue" | tr -d ' ')"
"$GATE" --config "$T/badkey.conf" "$T/base.db" "$T/base.db" 2>&1 | grep -q "badkey.conf:1: unknown key 'p50_growth'"
check "a config error names the file, the line and the key" test $? -eq 0
"$GATE" --help >"$T/help"
check_eq "--help exits 0" 0 $?
check "--help shows the usage" grep -q '^Usage: ingero-gate' "$T/help"
finish
