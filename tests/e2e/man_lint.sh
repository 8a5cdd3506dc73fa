#!/bin/sh
# man_lint.sh — the man pages are clean and say what the programs say:
#   - mandoc -T lint (every level, style included) and groff -ww find
#     nothing in man/*.[1-8];
#   - every long option a program's --help prints is in its man page;
#   - every subcommand of ingero-analyze is in ingero-analyze(1);
#   - every environment variable of include/ingero/config.h is in
#     libingero_preload(7);
#   - every gate config key is in ingero-gate(1) and docs/gate-config.md.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

pages=$(ls man/*.[1-8] 2>/dev/null)
check "man pages exist" test -n "$pages"
for m in $pages; do
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -T lint "$m" >"$T/lint" 2>&1
		rc=$?
		if [ "$rc" -eq 0 ] && [ ! -s "$T/lint" ]; then
			ok "mandoc -T lint: $m"
		else
			nok "mandoc -T lint: $m"
			sed 's/^/# /' "$T/lint"
		fi
	else
		skip "mandoc not installed: $m"
	fi
	if command -v groff >/dev/null 2>&1; then
		groff -ww -z -man "$m" >"$T/lint" 2>&1
		if [ ! -s "$T/lint" ]; then
			ok "groff -ww: $m"
		else
			nok "groff -ww: $m"
			sed 's/^/# /' "$T/lint"
		fi
	else
		skip "groff not installed: $m"
	fi
done

# man source with roff escapes of the dash undone, for grepping
plain() { sed -e 's/\\-/-/g' -e 's/\\(en/-/g' "$1"; }

# options_in PAGE HELP-TEXT-FILE WHAT: every --long option of the help is in the page
options_in() {
	page=$1
	help=$2
	what=$3
	plain "$page" >"$T/page"
	missing=""
	for o in $(grep -oE -- '--[a-z][a-z0-9-]+' "$help" | sort -u); do
		case $o in --usage) continue ;; esac   # argp's own
		grep -q -- "$o" "$T/page" || missing="$missing $o"
	done
	check_eq "$what: every option of --help is in $page" "" "$missing"
}

if [ -x "$B/ingero-collector" ]; then
	"$B/ingero-collector" --help >"$T/h" 2>&1
	options_in man/ingero-collector.8 "$T/h" "ingero-collector"
else
	skip "$B/ingero-collector not built"
fi
if [ -x "$B/ingero-analyze" ]; then
	"$B/ingero-analyze" --help >"$T/h" 2>&1
	options_in man/ingero-analyze.1 "$T/h" "ingero-analyze"
	for s in explain stats per-process timeline export report mcp; do
		"$B/ingero-analyze" "$s" --help >"$T/h" 2>&1
		options_in man/ingero-analyze.1 "$T/h" "ingero-analyze $s"
	done
	"$B/ingero-analyze" gate --help >"$T/h" 2>&1
	options_in man/ingero-gate.1 "$T/h" "ingero-analyze gate"
	plain man/ingero-analyze.1 >"$T/page"
	missing=""
	for s in $("$B/ingero-analyze" --help | sed -n '/^Subcommands:/,/^$/p' |
		awk 'NR > 1 && /^  [a-z]/ { print $1 }') gate mcp; do
		grep -q "^\\.B $s\$" "$T/page" || missing="$missing $s"
	done
	check_eq "every subcommand is described in ingero-analyze(1)" "" "$missing"
else
	skip "$B/ingero-analyze not built"
fi
scripts/ingero-run --help >"$T/h" 2>&1
options_in man/ingero-run.1 "$T/h" "ingero-run"

# environment variables of the preload library
plain man/libingero_preload.7 >"$T/page"
missing=""
for v in $(sed -n 's/^#define INGERO_ENV_[A-Z_]*[[:space:]]*"\([A-Z_]*\)".*/\1/p' include/ingero/config.h); do
	grep -q "^\\.B $v\$" "$T/page" || missing="$missing $v"
done
check_eq "every variable of config.h is described in libingero_preload(7)" "" "$missing"

# gate config keys
plain man/ingero-gate.1 >"$T/page"
missing=""
for k in $(grep -oE 'strcmp\(key, "[a-z0-9_]+"\)' analyzer/gate/gate_config.c | sed 's/.*"\(.*\)".*/\1/' | sort -u); do
	grep -q "^\\.B $k\$" "$T/page" || missing="$missing man:$k"
	grep -q "\`$k\`" docs/gate-config.md 2>/dev/null || missing="$missing doc:$k"
done
check_eq "every gate config key is in ingero-gate(1) and docs/gate-config.md" "" "$missing"
finish
