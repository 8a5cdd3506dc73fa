#!/bin/sh
# install.sh — `make install` honours PREFIX and DESTDIR, puts every product,
# man page and the systemd unit (with PREFIX's paths) in place, the installed
# tools run, and `make uninstall` removes all of it.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
P=/opt/ingero-test
make -s install DESTDIR="$T" PREFIX="$P" >"$T/log" 2>&1
check_eq "make install exits 0" 0 $?
for f in sbin/ingero-collector bin/ingero-analyze bin/ingero-run bin/ingero-gate lib/libingero_preload.so lib/libingero_sqlite.so \
	share/man/man8/ingero-collector.8 share/man/man1/ingero-analyze.1 share/man/man1/ingero-run.1 \
	share/man/man1/ingero-gate.1 share/man/man7/libingero_preload.7 lib/systemd/system/ingero-collector.service; do
	check "installed $f" test -s "$T$P/$f"
done
check "the unit starts the collector from PREFIX" grep -q "ExecStart=.*$P/sbin/ingero-collector" "$T$P/lib/systemd/system/ingero-collector.service"
check "installed ingero-analyze runs" sh -c "'$T$P/bin/ingero-analyze' --help >/dev/null"
check "installed ingero-run finds its collector" sh -c "'$T$P/bin/ingero-run' --help >/dev/null"
# the SQLite extension loads in the shell and shows a version-2 trace's calls
H=$(tmpdir)
"$B/tests/gen_reportdb" healthy "$H/h.db" >/dev/null 2>&1
check_eq "installed libingero_sqlite serves cuda_calls" "$(sqlite3 "$H/h.db" 'SELECT sum(calls) FROM call_blocks')" \
	"$(sqlite3 -cmd ".load $T$P/lib/libingero_sqlite" "$H/h.db" 'SELECT count(*) FROM cuda_calls' 2>&1)"
rm -rf "$H"
make -s uninstall DESTDIR="$T" PREFIX="$P" >>"$T/log" 2>&1
check_eq "make uninstall exits 0" 0 $?
check_eq "nothing left after uninstall" 0 "$(find "$T" -type f ! -name log | wc -l | tr -d ' ')"
finish
