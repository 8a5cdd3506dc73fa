#!/bin/sh
# analyzer_robustness.sh — a bad report.db gives one clear error line on
# stderr, nothing on stdout, and exit status 3 (bad input); bad usage exits 2.  Every
# subcommand is tried on every bad file.  The database is opened read-only:
# the analysed file is byte-identical afterwards and no -wal/-shm appears.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
GEN=$B/tests/gen_reportdb
A=$B/ingero-analyze
T=$(tmpdir)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT

"$GEN" healthy "$T/good.db" --steps 40 >/dev/null 2>&1 || nok "generate"
size=$(stat -c %s "$T/good.db")

: >"$T/empty.db"
head -c $((size / 2)) "$T/good.db" >"$T/truncated.db"
printf 'this is not a database\n' >"$T/text.db"
mkdir "$T/dir.db"
cp "$T/good.db" "$T/version.db"
sqlite3 "$T/version.db" "PRAGMA user_version=99"
cp "$T/good.db" "$T/noversion.db"
sqlite3 "$T/noversion.db" "PRAGMA user_version=0"
sqlite3 "$T/notables.db" "CREATE TABLE x(a); PRAGMA user_version=1"
# corrupted: garbage over pages in the middle (b-tree pages of the big tables)
cp "$T/good.db" "$T/corrupt.db"
dd if=/dev/urandom of="$T/corrupt.db" bs=4096 seek=$((size / 4096 / 3)) count=8 conv=notrunc 2>/dev/null
# call blocks that do not decode, or hold another number of calls than their
# row says (call_block.h): the file is sound, the blob is not
cp "$T/good.db" "$T/badblock.db"
sqlite3 "$T/badblock.db" "UPDATE call_blocks SET data = x'00' WHERE id = (SELECT min(id) FROM call_blocks)"
cp "$T/good.db" "$T/badblob.db"
sqlite3 "$T/badblob.db" "UPDATE call_blocks SET data = substr(data, 1, length(data) / 2) WHERE id = (SELECT max(id) FROM call_blocks)"
cp "$T/good.db" "$T/badcount.db"
sqlite3 "$T/badcount.db" "UPDATE call_blocks SET calls = calls + 1 WHERE id = (SELECT max(id) FROM call_blocks)"
# corrupted header page count: claims more pages than the file has
cp "$T/good.db" "$T/header.db"
printf '\377\377\377\377' | dd of="$T/header.db" bs=1 seek=28 conv=notrunc 2>/dev/null

bad() { # name file
	for cmd in explain "explain --json" stats "stats --json" per-process timeline \
		"export --format perfetto -o $T/out.json" "report --html -o $T/out.html"; do
		# shellcheck disable=SC2086
		"$A" $cmd "$2" >"$T/stdout" 2>"$T/stderr"
		rc=$?
		lines=$(wc -l <"$T/stderr" | tr -d ' ')
		if [ "$rc" -eq 3 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/stdout" ] && grep -q '^ingero-analyze: ' "$T/stderr"; then
			ok "$1: $cmd -> one error line, exit 3"
		else
			nok "$1: $cmd -> exit $rc, $lines stderr lines, stdout $(wc -c <"$T/stdout") bytes: $(head -c 200 "$T/stderr")"
		fi
	done
}
bad missing "$T/missing.db"
bad empty "$T/empty.db"
bad truncated "$T/truncated.db"
bad "not sqlite" "$T/text.db"
bad directory "$T/dir.db"
bad "wrong version" "$T/version.db"
bad "no version" "$T/noversion.db"
bad "tables missing" "$T/notables.db"
bad "page count beyond the file" "$T/header.db"
bad "a call block that is not one" "$T/badblock.db"
bad "a call block cut in half" "$T/badblob.db"
bad "a call block with a wrong count" "$T/badcount.db"
for f in badblock badblob badcount; do
	check_eq "$f: the error names the block" 1 \
		"$("$A" stats "$T/$f.db" 2>&1 | grep -c 'is corrupted: call block [0-9]*: ')"
done

# Random garbage in the middle may hit pages no query reads; whatever it
# hits, the analyzer either works or says so in one line — never crashes.
for cmd in explain stats timeline; do
	"$A" $cmd "$T/corrupt.db" >"$T/stdout" 2>"$T/stderr"
	rc=$?
	lines=$(wc -l <"$T/stderr" | tr -d ' ')
	if { [ "$rc" -eq 0 ] && [ "$lines" -eq 0 ]; } || { [ "$rc" -eq 3 ] && [ "$lines" -eq 1 ]; }; then
		ok "corrupted pages: $cmd exits $rc with $lines error lines"
	else
		nok "corrupted pages: $cmd exits $rc with $lines lines: $(head -c 200 "$T/stderr")"
	fi
done

check_eq "wrong version is named" 1 "$("$A" stats "$T/version.db" 2>&1 | grep -c 'schema version 99')"
msg=$("$A" stats "$T/truncated.db" 2>&1)
case "$msg" in *truncated*) ok "truncation is named";; *) nok "truncation is named: $msg";; esac

# usage errors: exit 2
for args in "" "stats" "--bogus x.db" "--from abc $T/good.db" "--since 5x $T/good.db" "-p 0 $T/good.db" \
	"--since 1s --from 1 $T/good.db" "export $T/good.db" "export --format svg -o $T/x $T/good.db" "report $T/good.db" \
	"stats $T/good.db $T/good.db"; do
	# shellcheck disable=SC2086
	"$A" $args >/dev/null 2>"$T/stderr"
	rc=$?
	check_eq "usage '$args' exits 2 with one line" "2 1" "$rc $(wc -l <"$T/stderr" | tr -d ' ')"
done
"$A" --help >/dev/null
check_eq "--help exits 0" 0 $?
"$A" stats -p 99999 "$T/good.db" >/dev/null 2>"$T/stderr"
check_eq "-p for a pid not in the trace: exit 2 (usage)" "2" "$?"

# a database still being written (WAL not checkpointed): the WAL's rows count.
# The writer adds a copy of the last call block, whose syncs are counted here
# through the extension (rowids of block N are N*1024 and up).
cp "$T/good.db" "$T/live.db"
DB=$T/live.db
more=$(q "SELECT count(*) FROM cuda_calls c JOIN apis a ON a.id = c.api WHERE a.name = 'cudaStreamSynchronize'
	AND c.rowid >= (SELECT max(id) FROM call_blocks) * 1024")
check_ge "the last call block has syncs" "$more" 1
python3 - "$T/live.db" "$A" "$more" <<'PY' >"$T/live.out" 2>&1
import json, os, sqlite3, subprocess, sys
db, a, more = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = json.loads(subprocess.run([a, "stats", "--json", db], capture_output=True, text=True).stdout)
n0 = {x["api"]: x["count"] for x in base["apis"]}["cudaStreamSynchronize"]
c = sqlite3.connect(db, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("INSERT INTO call_blocks(pid, first_ns, last_ns, calls, data) "
          "SELECT pid, first_ns, last_ns, calls, data FROM call_blocks ORDER BY id DESC LIMIT 1")
assert os.path.getsize(db + "-wal") > 0
live = json.loads(subprocess.run([a, "stats", "--json", db], capture_output=True, text=True).stdout)
n1 = {x["api"]: x["count"] for x in live["apis"]}["cudaStreamSynchronize"]
assert n1 == n0 + more, (n0, more, n1)
PY
check "a live database: rows still in the WAL are read" test $? -eq 0
sed 's/^/# /' "$T/live.out"

# read-only: the file is untouched, even in a read-only directory
sum1=$(md5sum <"$T/good.db")
mkdir "$T/ro" && cp "$T/good.db" "$T/ro/r.db" && chmod a-w "$T/ro"
"$A" explain "$T/ro/r.db" >/dev/null 2>&1
check_eq "explain works in a read-only directory" 0 $?
"$A" explain "$T/good.db" >/dev/null 2>&1
check_eq "the database is unchanged" "$sum1" "$(md5sum <"$T/good.db")"
check_eq "no -wal or -shm left behind" "" "$(ls "$T" | grep -E 'good.db-(wal|shm)')"
finish
