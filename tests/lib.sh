# tests/lib.sh — helpers for the shell tests (sourced).  Each check prints a
# TAP line that tests/run counts; the script's exit status is 1 if any failed.
B=${B:-build}
_failed=0
ok()   { echo "ok - $*"; }
nok()  { echo "not ok - $*"; _failed=1; }
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1 (expected '$2', got '$3')"; fi; }
# check_ge DESCRIPTION ACTUAL MIN
check_ge() { if [ "$2" -ge "$3" ] 2>/dev/null; then ok "$1"; else nok "$1 ($2 < $3)"; fi; }
check_le() { if [ "$2" -le "$3" ] 2>/dev/null; then ok "$1"; else nok "$1 ($2 > $3)"; fi; }
skip() { echo "ok - # SKIP $*"; }
# The sqlite3 shell and Python read cuda_calls through the SQLite extension
# (version-2 files store calls in call_blocks; analyzer/load/calls_vtab.h).
SQLITE_EXT=$(cd "$B" 2>/dev/null && pwd)/libingero_sqlite
export INGERO_SQLITE_EXT="$SQLITE_EXT"
# sql ARGS...: the sqlite3 shell with the extension loaded
sql() { sqlite3 -batch -cmd ".load $SQLITE_EXT" "$@"; }
q() { sql -noheader "$DB" "$1"; }
# the report.db version this tree's collector writes (include/ingero/schema.h)
SCHEMA_VERSION=$(sed -n 's/^#define INGERO_SCHEMA_VERSION \([0-9]*\)$/\1/p' include/ingero/schema.h)
# A python3 whose sqlite3 module can load extensions (pyenv's builds cannot);
# its scripts call db.enable_load_extension(True) and
# db.load_extension(os.environ["INGERO_SQLITE_EXT"]).  Empty when there is none.
# (tests/run finds it once for every test: PY_SQLITE_FOUND=1)
if [ -z "${PY_SQLITE_FOUND:-}" ]; then
	PY_SQLITE=
	for _p in python3 /usr/bin/python3; do
		if "$_p" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
			PY_SQLITE=$_p
			break
		fi
	done
fi
is_root() { [ "$(id -u)" -eq 0 ]; }
# marker_line FILE MARK: the line number of the line ending in "# MARK" (or
# with "# MARK " before a comment's rest) — where a test expects a finding
marker_line() { grep -n "# $2\( \|\$\)" "$1" | cut -d: -f1; }
finish() { exit $_failed; }
# npm_pinned PACKAGE_JSON DIR PROBE NAME: the pinned npm packages of
# PACKAGE_JSON installed once into DIR (again only when that file changed or
# DIR/PROBE is missing); on failure npm's last lines and a "not ok", status 1
npm_pinned() {
	mkdir -p "$2"
	_np=$(cd "$2" && pwd)   # (npm runs inside it: its log's path must not be relative)
	if ! cmp -s "$1" "$_np/package.json" || [ ! -f "$_np/$3" ]; then
		cp "$1" "$_np/package.json"
		if ! (cd "$_np" && npm install --no-audit --no-fund --loglevel=error >"$_np/npm.log" 2>&1); then
			sed 's/^/# npm: /' "$_np/npm.log" | tail -n 20
			rm -f "$_np/package.json"   # try again next run
			nok "npm install $4 into $2 (needs the npm registry)"
			return 1
		fi
	fi
}
# check_unclosed_rare: off-CPU intervals lost unclosed (a switch back onto a CPU that
# sched.bpf.c did not see: a few a run on the dev VM under load, cause not found) are
# at most 1 % of the trace's off_cpu rows, and counted ($DB)
check_unclosed_rare() {
	_u=$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'bpf_ringbuf_unclosed'")
	_n=$(q "SELECT count(*) FROM off_cpu")
	check "off-CPU intervals lost unclosed: $_u of $_n, at most 1 %" test "$((_u * 100))" -le "$_n"
}
# each_parallel SCRIPT ITEM...: `sh SCRIPT --one ITEM` for every item, JOBS
# at a time (default 2: the corpus tests are the pool's longest programs),
# their outputs printed whole in the items' order; a "not ok" line (or a
# non-zero exit) in any fails this test
each_parallel() {
	_s=$1; shift
	_d=$(mktemp -d "${TMPDIR:-/tmp}/ingero-par.XXXXXX")
	_i=0
	for _x in "$@"; do _i=$((_i + 1)); printf '%05d %s\n' "$_i" "$_x"; done |
		_D=$_d xargs -P "${JOBS:-2}" -L 1 sh -c 'sh "$0" --one "$2" >"$_D/$1" 2>&1 || echo "exit $?" >"$_D/$1.rc"' "$_s"
	for _f in "$_d"/[0-9]*; do
		[ -f "$_f" ] || continue
		case $_f in *.rc) nok "$(basename "$_s"): one part exited non-zero ($(cat "$_f"))"; continue ;; esac
		cat "$_f"
		grep -q '^not ok' "$_f" && _failed=1
	done
	rm -rf "$_d"
}
tmpdir() { mktemp -d "${TMPDIR:-/tmp}/ingero-test.XXXXXX"; }
# Headless Chromium's flags for the page tests (report_chromium, perfetto_viewer):
# one process (no zygote, no renderer and GPU processes apart): a view cost ~7
# CPU-seconds, ~5 so, and the two tests ~100, a tenth of make check's CPU
# (2026-12-07).  A page without WebGL (the HTML report: SVG) adds
# --disable-software-rasterizer (no SwiftShader: Skia paints on the CPU);
# speedscope's flame graph needs WebGL ("Setup failure" without it).
CHROME_LEAN="--single-process --no-zygote"
# corpus_db X.db.xz DEST: prints the path of X unpacked (tests/corpus/unpack.sh).
# A trace of tests/corpus/ is unpacked once into $B/corpus/ (or $CORPUS_CACHE:
# tests/run's tmpfs) and shared (several
# tests sweep the same traces; read it, never write it), again only when the
# .xz or unpack.sh is newer; made under a temporary name and renamed, so tests
# running at once never meet half a file.  Any other trace is unpacked to DEST.
corpus_db() {
	case $1 in
	tests/corpus/*.db.xz) ;;
	*) sh tests/corpus/unpack.sh "$1" "$2" && echo "$2"; return ;;
	esac
	_d=${CORPUS_CACHE:-$B/corpus}
	_c=$_d/$(basename "$1" .db.xz).db
	if [ ! -f "$_c" ] || [ "$1" -nt "$_c" ] || [ tests/corpus/unpack.sh -nt "$_c" ]; then
		mkdir -p "$_d" && _u=$(mktemp "$_c.XXXXXX") || return 1
		sh tests/corpus/unpack.sh "$1" "$_u" && mv -f "$_u" "$_c" || { rm -f "$_u" "$_u.tmp" "$_u.sql"; return 1; }
	fi
	echo "$_c"
}
# python3, then every CPython 3.10-3.13 that pyenv has (the versions whose
# frames the tool reads)
pythons() {
	echo python3
	command -v pyenv >/dev/null 2>&1 || return 0
	for d in "$(pyenv root)"/versions/3.1[0-3].*; do
		[ -x "$d/bin/python3" ] && echo "$d/bin/python3"
	done
	return 0
}
