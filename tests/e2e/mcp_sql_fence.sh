#!/bin/sh
# mcp_sql_fence.sh — run_sql cannot reach code through SQL functions
# (issue 14, item 1).  The crash found by probing: fts3_tokenizer('simple')
# gave out an address, fts3_tokenizer('simple', X'4141…') registered any
# pointer as the tokenizer, and a query on an FTS3 table in the trace file
# then called it (SIGSEGV at 0x4141414141414141).  Through the real server:
# each step is refused with a line naming the function, every request gets
# its answer, and the server is still there afterwards.  Every function of
# SQLite's list is called in tests/unit/test_analyzer_mcp_functions.c.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
cp $B/examples/small_check_h200.db "$DB" || { nok "copy the example trace"; finish; }
sqlite3 "$DB" "CREATE VIRTUAL TABLE ft USING fts3(x); INSERT INTO ft VALUES('hello world');" ||
	{ nok "add an FTS3 table"; finish; }

req() { # id, sql
	python3 -c 'import json, sys; print(json.dumps({"jsonrpc": "2.0", "id": int(sys.argv[1]), "method": "tools/call",
	"params": {"name": "run_sql", "arguments": {"sql": sys.argv[2]}}}))' "$1" "$2"
}
{
	req 1 "SELECT hex(fts3_tokenizer('simple'))"
	req 2 "SELECT fts3_tokenizer('simple', x'4141414141414141')"
	req 3 "SELECT * FROM ft WHERE ft MATCH 'hello'"
	req 4 "SELECT load_extension('/tmp/nothing.so')"
	req 5 "SELECT count(*), abs(-2), json_extract('{\"a\":3}', '\$.a') FROM session"
} | timeout 60 "$B/ingero-analyze" mcp "$DB" >"$T/out" 2>"$T/err"
rc=$?
check_eq "the server ends normally at the end of input (no crash)" 0 "$rc"
python3 - "$T/out" <<'PY'
import json, sys
replies = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    replies[r["id"]] = r["result"]
def text(r):
    return "".join(c.get("text", "") for c in r["content"])
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else f" ({extra})"))
ok(sorted(replies) == [1, 2, 3, 4, 5], "one answer per request", sorted(replies))
for i, fn in [(1, "fts3_tokenizer"), (2, "fts3_tokenizer"), (4, "load_extension")]:
    r = replies.get(i, {})
    ok(r.get("isError") is True and f"refused: function {fn}() is not allowed" in text(r),
       f"request {i}: {fn}() refused by name", text(r)[:200] if r else "no answer")
r = replies.get(3, {})
ok(r.get("isError") is True and "refused" in text(r), "the FTS3 table is not reachable", text(r)[:200] if r else "no answer")
r = replies.get(5, {})
ok(r.get("isError") is False and r.get("structuredContent", {}).get("rows", [[0]])[0][1:] == [2, 3],
   "pure functions still run", text(r)[:200] if r else "no answer")
PY
finish
