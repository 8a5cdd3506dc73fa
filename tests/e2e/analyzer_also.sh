#!/bin/sh
# analyzer_also.sh — one analysis, several views (--also VIEW=FILE, cli/views.c): every view
# written by --also is byte for byte what its own subcommand writes with the same options
# (explain text and JSON, stats, per-process, the HTML report, the Perfetto export, the gate's
# baseline), whichever command carries them; on a generated trace, a real one and a job of
# ranks (whole, and one rank with -p), with --width, --verbose and --compact honoured.  Wrong
# --also (unknown view, no FILE, standard output, a file named twice, a command with no
# analysis, several report.db) is refused with one line and exit 2 before any analysis; a file
# that cannot be written is said and the other views are still written, exit 4.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
GEN=$B/tests/gen_reportdb
A=$B/ingero-analyze
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
command -v cmp >/dev/null || { skip "also: cmp missing"; finish; }

"$GEN" contention "$T/gen.db" >/dev/null 2>&1 || nok "generate contention"
real=$(corpus_db tests/corpus/c07_compile_dynamic.db.xz "$T/real.db") || nok "unpack c07"
job=$(corpus_db tests/corpus/c47_ddp_gloo_slow_rank.db.xz "$T/job.db") || nok "unpack c47"
sp=$("$A" explain --json --compact "$job" | sed -n 's/.*"straggler":{[^}]*"pid":\([0-9]*\).*/\1/p' | head -n 1)
check_ge "the job's straggler has a pid" "${sp:-0}" 1

# each view alone (OPTS on every command), then all of them from COMMAND with --also
views() { # DB DIR COMMAND OPTS...
	db=$1 d=$2 cmd=$3; shift 3
	mkdir -p "$d/alone" "$d/also"
	"$A" explain "$@" "$db" >"$d/alone/explain" &&
		"$A" explain --json "$@" "$db" >"$d/alone/explain-json" &&
		"$A" stats "$@" "$db" >"$d/alone/stats" &&
		"$A" stats --json "$@" "$db" >"$d/alone/stats-json" &&
		"$A" per-process "$@" "$db" >"$d/alone/per-process" &&
		"$A" per-process --json "$@" "$db" >"$d/alone/per-process-json" &&
		"$A" report --html -o "$d/alone/html" "$@" "$db" &&
		"$A" export --format perfetto -o "$d/alone/perfetto" "$@" "$db" || return 1
	case " $* " in *" -p "*) ;; *) "$A" gate --save-baseline "$db" -o "$d/alone/baseline" 2>/dev/null || return 1 ;; esac
	set -- "$@" --also perfetto="$d/also/perfetto"
	for v in explain explain-json stats stats-json per-process per-process-json html; do
		case $cmd in "$v" | report) [ "$v" = html ] || [ "$cmd" = "$v" ] && continue ;; esac
		set -- "$@" --also "$v=$d/also/$v"
	done
	[ -f "$d/alone/baseline" ] && set -- "$@" --also baseline="$d/also/baseline"
	case $cmd in
	report) "$A" report --html -o "$d/also/html" "$@" "$db" ;;
	*) "$A" "$cmd" "$@" "$db" >"$d/also/$cmd" ;;
	esac
}
same() { # WHAT DIR
	for f in "$2"/alone/*; do
		v=$(basename "$f")
		if cmp -s "$f" "$2/also/$v"; then ok "$1: --also $v is the subcommand's own"; else
			nok "$1: --also $v is the subcommand's own"; diff "$f" "$2/also/$v" | head -n 5 | sed 's/^/# /'; fi
	done
}
views "$T/gen.db" "$T/g" explain && same "generated, explain carries them" "$T/g" || nok "generated: views run"
views "$real" "$T/r" stats --width 120 && same "c07, stats --width 120 carries them" "$T/r" || nok "c07: views run"
views "$real" "$T/v" per-process --verbose --compact && same "c07, per-process --verbose --compact" "$T/v" ||
	nok "c07 --verbose: views run"
views "$job" "$T/j" explain && same "c47 (a job of ranks), explain carries them" "$T/j" || nok "c47: views run"
views "$job" "$T/p" report -p "$sp" && same "c47, rank $sp alone (-p), report carries them" "$T/p" ||
	nok "c47 -p: views run"
# stats --kernels is its own view: the stats --also beside it is stats' plain one
"$A" stats --kernels "$real" --also stats-json="$T/k.json" >"$T/k.txt" && "$A" stats --json "$real" >"$T/k0.json"
check_eq "stats --kernels --also stats-json: the plain stats JSON" 0 "$(cmp -s "$T/k.json" "$T/k0.json"; echo $?)"
grep -q "GPU time per kernel\|kernel" "$T/k.txt" && ok "stats --kernels printed its own view" ||
	nok "stats --kernels printed its own view"

# refused, one line, exit 2, nothing written
refused() { # WHAT EXPECT-IN-LINE ARGS...
	w=$1 e=$2; shift 2
	"$A" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	check_eq "$w: exit 2" 2 "$rc"
	check_eq "$w: one error line" 1 "$(wc -l <"$T/err")"
	grep -q -- "$e" "$T/err" && ok "$w: says $e" || nok "$w: says $e ($(cat "$T/err"))"
}
rm -f "$T/x.json"
refused "an unknown view" "one of explain" explain "$T/gen.db" --also flame="$T/x.json"
refused "no FILE" "VIEW=FILE" explain "$T/gen.db" --also stats
refused "an empty FILE" "VIEW=FILE" explain "$T/gen.db" --also stats=
refused "standard output" "VIEW=FILE" explain "$T/gen.db" --also stats=-
refused "a file named twice" "written twice" explain "$T/gen.db" --also stats="$T/x.json" --also html="$T/x.json"
refused "the -o file again" "written twice" report --html -o "$T/x.json" "$T/gen.db" --also stats="$T/x.json"
refused "report's default file again" "written twice" report --html "$T/gen.db" --also html=report.html
refused "timeline" "no analysis to share" timeline "$T/gen.db" --also stats="$T/x.json"
refused "stacks" "no analysis to share" stacks "$T/gen.db" --also stats="$T/x.json"
refused "several report.db" "one report.db" explain "$T/gen.db" "$T/gen.db" --also stats="$T/x.json"
[ -e "$T/x.json" ] && nok "a refused --also wrote nothing" || ok "a refused --also wrote nothing"

# a file that cannot be written: said, the others written, exit 4 (a failure while running)
"$A" explain "$T/gen.db" --also stats="$T/no/such/dir/s.txt" --also html="$T/ok.html" >"$T/e.txt" 2>"$T/err"
check_eq "an unwritable --also file: exit 4" 4 "$?"
grep -q "no/such/dir/s.txt" "$T/err" && ok "an unwritable --also file is named" || nok "an unwritable file is named"
cmp -s "$T/e.txt" "$T/g/alone/explain" && ok "the command's own view still written" ||
	nok "the command's own view still written"
cmp -s "$T/ok.html" "$T/g/alone/html" && ok "the other --also view still written" ||
	nok "the other --also view still written"
finish
