#!/bin/sh
# cli_conventions.sh — every program says the same things the same way
# (issue 14, item 7):
#   - --version on every program and every ingero-analyze subcommand, all
#     with the one version of include/ingero/version.h (and the man pages');
#   - SUBCOMMAND --help prints that subcommand's usage, exit 0;
#   - ingero-collector --help prints its usage line once;
#   - one exit-status convention (include/ingero/exit.h): 2 bad usage,
#     3 bad input, 4 a failure while running — checked here for the cases
#     the other tests do not reach (gate_cli.sh, analyzer_robustness.sh,
#     analyzer_corrupt.sh, collector_cli.sh and run_exit.sh check theirs).
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
A=$B/ingero-analyze
C=$B/ingero-collector
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
V=$(sed -n 's/^#define INGERO_VERSION "\(.*\)"$/\1/p' include/ingero/version.h)
check "include/ingero/version.h has a version" test -n "$V"

version_is() { # expected-output command...
	want=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	check_eq "$* -> '$want', exit 0" "$want 0" "$out $rc"
}
version_is "ingero-collector $V" "$C" --version
version_is "ingero-collector $V" "$C" -V
version_is "ingero-analyze $V" "$A" --version
version_is "ingero-analyze $V" "$A" -V
for s in explain stats per-process timeline export report merge mcp; do
	version_is "ingero-analyze $V" "$A" "$s" --version
done
version_is "ingero-gate $V" "$A" gate --version
version_is "ingero-gate $V" scripts/ingero-gate --version
version_is "ingero-run $V" scripts/ingero-run --version
version_is "ingero-run $V" scripts/ingero-run -V
for m in man/*.[1-8]; do
	check "$m is of version $V" grep -q "^\\.TH .*\"Ingero $V\"" "$m"
done

# each subcommand's own help
for s in explain stats per-process timeline export report; do
	"$A" "$s" --help >"$T/h" 2>"$T/e"
	rc=$?
	check_eq "$s --help: exit 0, its own usage, nothing on stderr" "0|Usage: ingero-analyze $s [OPTIONS] report.db|" \
		"$rc|$(head -n 1 "$T/h" | sed 's/ --format perfetto -o trace.json//; s/ --html -o report.html//')|$(cat "$T/e")"
	"$A" help "$s" >"$T/h2"
	check "help $s prints the same" cmp -s "$T/h" "$T/h2"
	"$A" "$s" -h >"$T/h3"
	check "$s -h prints the same" cmp -s "$T/h" "$T/h3"
done
"$A" merge --help >"$T/h" 2>"$T/e"
check_eq "merge --help: exit 0, its own usage, nothing on stderr" "0|Usage: ingero-analyze merge -o JOB.db [--force] node0.db node1.db ...|" \
	"$?|$(head -n 1 "$T/h")|$(cat "$T/e")"
"$A" explain --help >"$T/h"
"$A" --help >"$T/h2"
check "explain's help is not the program's" sh -c "! cmp -s '$T/h' '$T/h2'"
check_eq "--help: the program's usage" "Usage: ingero-analyze [SUBCOMMAND] [OPTIONS] report.db" "$("$A" --help | head -n 1)"
check_eq "gate --help: the gate's usage" "Usage: ingero-gate [OPTIONS] BASELINE CURRENT" "$("$A" gate --help | head -n 1)"
check_eq "mcp --help: the server's usage" "Usage: ingero-analyze mcp [OPTIONS] report.db" "$("$A" mcp --help | head -n 1)"

# the collector's usage, once
"$C" --help >"$T/ch" 2>&1
check_eq "ingero-collector --help: exit 0" 0 $?
check_eq "ingero-collector --help: one usage line" 1 "$(grep -ci 'usage:' "$T/ch")"
check "ingero-collector --help: the usage names -o FILE and -- CMD" \
	grep -q '^Usage: ingero-collector \[OPTION\.\.\.\] -o FILE \[-- CMD \[ARGS\.\.\.\]\]$' "$T/ch"
check_eq "ingero-collector --help: no line over 79 columns" 0 "$(awk 'length > 79' "$T/ch" | wc -l | tr -d ' ')"

# exit statuses not covered elsewhere
status_is() { # want, description, command...
	want=$1 d=$2
	shift 2
	"$@" >/dev/null 2>"$T/e"
	rc=$?
	check_eq "$d: exit $want, one line on stderr" "$want 1" "$rc $(wc -l <"$T/e" | tr -d ' ')"
}
DB=$B/examples/small_check_h200.db
status_is 2 "ingero-analyze: an unknown option" "$A" explain --bogus "$DB"
status_is 2 "ingero-analyze: -p of a process not in the trace" "$A" stats -p 999999 "$DB"
status_is 3 "ingero-analyze: a missing report.db" "$A" stats "$T/missing.db"
status_is 3 "ingero-analyze timeline: a missing report.db" "$A" timeline "$T/missing.db"
status_is 4 "ingero-analyze: an output that cannot be written" "$A" explain -o "$T/no/such/dir/x.txt" "$DB"
status_is 4 "ingero-analyze export: an output that cannot be written" \
	"$A" export --format perfetto -o "$T/no/such/dir/x.json" "$DB"
status_is 2 "ingero-analyze mcp: an unknown option" "$A" mcp --bogus "$DB"
status_is 3 "ingero-analyze mcp: a missing report.db" "$A" mcp "$T/missing.db"
status_is 2 "ingero-collector: no -o" "$C" --no-bpf -- true
status_is 4 "ingero-collector: an output that cannot be created" \
	env INGERO_ENDPOINT="ipc://$T/c.sock" "$C" -q --no-bpf -o "$T/no/such/dir/r.db" -- true
mkdir "$T/alone"
cp scripts/ingero-gate "$T/alone/"
status_is 4 "ingero-gate without ingero-analyze" env -u INGERO_ANALYZE PATH=/usr/bin:/bin sh "$T/alone/ingero-gate" a b
finish
