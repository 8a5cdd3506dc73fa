#!/bin/sh
# tests/e2e/analyzer_races.sh — the analyzer's threads share nothing they write: helgrind
# (valgrind's happens-before checker: it sees the machine code, so also stores the compiler
# made wider than the source) reads explain on a real trace and finds no data race. The loader
# indexes the calls and the off-CPU rows on two threads; when both wrote their spans into the
# same thread structs, GCC -O2 blended each pair's stores into 8-byte read-modify-writes of the
# other pair, and one table's spans vanished now and then (c08's trace: 9 of 150 runs printed
# other context switches, CPU times and lines). Helgrind reports that on every run.
# tests/run: pool (no clock it asserts on: run beside another test)
. "$(dirname "$0")/../lib.sh"
A=$B/ingero-analyze
command -v valgrind >/dev/null || { skip "races: valgrind missing"; finish; }
command -v xz >/dev/null || { skip "races: xz missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
sh tests/corpus/unpack.sh tests/corpus/c25_requests_sleep.db.xz "$T/c25.db"
valgrind -q --tool=helgrind --log-file="$T/hg.txt" "$A" explain "$T/c25.db" >"$T/out.txt" 2>"$T/err.txt"
check "explain under helgrind explains the trace" grep -q "^\[HIGH\]" "$T/out.txt"
n=$(grep -c "Possible data race" "$T/hg.txt")
[ "$n" = 0 ] || grep -A8 "Possible data race" "$T/hg.txt" | head -24 >&2
check "helgrind finds no data race in explain ($n found)" test "$n" = 0
finish
