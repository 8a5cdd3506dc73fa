#!/bin/sh
# analyzer_check_cache.sh — a report.db found sound is not checked again
# while it is unchanged (analyzer/load/check_cache.h): the next command
# finds it in the list by device, inode, size and times; any write moves
# its change time, so a file damaged since is checked again and named.  A
# file written less than 2 s before is not listed (the kernel's file times
# are coarse), nor with the list turned off.  Shown on the real trace
# examples/small_check_h200.db with an off_cpu leaf partly zeroed — the
# damage only the check sees (issue 40): listed, it would be read.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

A=$B/ingero-analyze
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
SRC=$B/examples/small_check_h200.db
export INGERO_CHECK_CACHE="$T/list"
psize=$(sqlite3 "$SRC" "PRAGMA page_size")
settle() { sleep 2; }   # the file's times older than check_cache.c's QUIET_S

cp "$SRC" "$T/a.db"
"$A" explain "$T/a.db" >"$T/base.txt" 2>&1
check_eq "a file just written: explain exits 0" 0 $?
check "a file just written is not listed (its times not settled)" test ! -e "$T/list"
settle
"$A" explain "$T/a.db" >"$T/one.txt" 2>&1
check_eq "settled: explain exits 0" 0 $?
check_eq "found sound: one line in the list" 1 "$(wc -l <"$T/list")"
check "the line is the file's: its inode and size" \
	grep -q "^1 [0-9]* $(stat -c '%i %s' "$T/a.db") " "$T/list"
"$A" explain "$T/a.db" >"$T/two.txt" 2>&1
check_eq "listed: explain exits 0" 0 $?
check "listed: the same output" cmp -s "$T/one.txt" "$T/two.txt"
check_eq "listed: not listed twice" 1 "$(wc -l <"$T/list")"

# damaged in place after it was listed: its change time moved, checked again
zero_leaf() { # file page: 256 bytes of an off_cpu leaf zeroed
	head -c 256 /dev/zero | dd of="$1" bs=1 seek=$((($2 - 1) * psize + 2048)) conv=notrunc 2>/dev/null
}
pages=$(sqlite3 "$SRC" "SELECT pageno FROM dbstat WHERE name = 'off_cpu' AND pagetype = 'leaf'
	ORDER BY pageno LIMIT 4" | tr '\n' ' ')
page=${pages%% *}
zero_leaf "$T/a.db" "$page"
"$A" explain "$T/a.db" >/dev/null 2>"$T/err"
check_eq "damaged since it was listed: exit 3" 3 $?
check "damaged since it was listed: the damaged table named" grep -q "is corrupted: table off_cpu" "$T/err"
settle
"$A" explain "$T/a.db" >/dev/null 2>"$T/err"
check_eq "damaged and settled: still exit 3 (a damaged file is never listed)" 3 $?
check_eq "damaged: the list holds only the sound file's line" 1 "$(wc -l <"$T/list")"

# what a listed file is spared: a damaged file whose line is in the list is
# not checked (the line written here as check_cache.c writes it) — the
# page whose zeroed bytes SQLite itself does not notice when it reads them
line() { python3 -c 'import os, sys; s = os.stat(sys.argv[1]); n = 10**9
print(f"1 {s.st_dev} {s.st_ino} {s.st_size} {s.st_mtime_ns // n}.{s.st_mtime_ns % n:09d} "
      f"{s.st_ctime_ns // n}.{s.st_ctime_ns % n:09d}")' "$1"; }
spared=no
for p in $pages; do
	cp "$SRC" "$T/b.db"
	zero_leaf "$T/b.db" "$p"
	settle
	"$A" explain "$T/b.db" >/dev/null 2>&1
	[ $? -eq 3 ] || continue
	line "$T/b.db" >>"$T/list"
	if "$A" explain "$T/b.db" >/dev/null 2>&1; then
		spared="page $p"
		break
	fi
done
check "a listed file is not checked again (a damaged one listed by hand is read: $spared)" test "$spared" != no

# the same damage, not listed: the commands that compute before they print
# wait for the check after their analysis (IA_LOAD_CHECK_LATE) — the
# analysis ran on the damaged pages, and still nothing but the one line
# comes out; the MCP server's answer is that line too
if [ "$spared" != no ]; then
	cp "$SRC" "$T/d.db"
	zero_leaf "$T/d.db" "${spared#page }"
	for c in explain "stats --json" "per-process --json"; do
		# shellcheck disable=SC2086
		INGERO_CHECK_CACHE=off "$A" $c "$T/d.db" >"$T/d.out" 2>"$T/d.err"
		check_eq "checked after the analysis: $c exits 3" 3 $?
		check "checked after the analysis: $c prints nothing, one line naming off_cpu" \
			sh -c "test ! -s '$T/d.out' && test \$(wc -l <'$T/d.err') -eq 1 && grep -q 'is corrupted: table off_cpu' '$T/d.err'"
	done
	INGERO_CHECK_CACHE=off timeout 60 python3 - "$A" "$T/d.db" <<'PY' >"$T/mcp.tap" 2>&1
import sys
sys.path.insert(0, "tests/mcp")
from mcpserver import Server, ok, text, finish
s = Server(*sys.argv[1:3])
s.initialize()
# the statistics first (the light view: no analysis, the check waited for
# by the view itself), then what needs the analysis
for tool in ("get_trace_stats", "get_trace_stats", "get_gpu_idle"):
    res = (s.tool(tool, {}) or {}).get("result") or {}
    t = text(res)
    ok("is corrupted: table off_cpu" in t and res.get("isError") is True,
       f"mcp: {tool} answers the damage", t[:120])
s.close()
finish()
PY
	check "the MCP server answers the damage found after its analysis" \
		sh -c "grep -c '^ok ' '$T/mcp.tap' | grep -qx 3 && ! grep -q '^not ok' '$T/mcp.tap'"
else
	nok "no page whose damage only the check sees: the late check not shown"
fi

# the list's place: XDG_CACHE_HOME, its folder made; "off": none
unset INGERO_CHECK_CACHE
cp "$SRC" "$T/c.db"
settle
XDG_CACHE_HOME="$T/xdg" "$A" stats "$T/c.db" >/dev/null 2>&1
check_eq "XDG_CACHE_HOME: the list in ingero/checked, one line" 1 "$(wc -l <"$T/xdg/ingero/checked" 2>/dev/null || echo 0)"
XDG_CACHE_HOME="$T/xdg2" INGERO_CHECK_CACHE=off "$A" stats "$T/c.db" >/dev/null 2>&1
check "INGERO_CHECK_CACHE=off: no list" test ! -e "$T/xdg2"
finish
