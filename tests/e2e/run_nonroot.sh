#!/bin/sh
# run_nonroot.sh — ingero-run without root:
#   - no sudo: a clear warning, the collector in CUDA-only mode, the
#     command's exit status passed through, its CUDA calls still recorded;
#   - with `sudo -n` allowed: the sudo path (CMD started by ingero-run as the
#     user, held on a FIFO, the collector attached with -p).  Tested with a
#     stand-in `sudo` that runs the collector as the same user (no root
#     here), which checks everything but the privilege itself.
# As root the test drops to nobody (setpriv); as a user it runs as itself.
. tests/lib.sh
RUN=$(pwd)/scripts/ingero-run
if [ ! -x "$B/ingero-collector" ] || [ ! -x "$B/ingero-analyze" ]; then
	skip "needs $B/ingero-collector and $B/ingero-analyze (make)"
	finish
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
W=$T/w            # writable by the unprivileged user
mkdir -p "$W/tmp" "$W/bin"
chmod -R 0777 "$W"
BB=$(cd "$B" && pwd)

if is_root; then
	if ! command -v setpriv >/dev/null 2>&1; then
		skip "setpriv (util-linux) needed to drop to nobody"
		finish
	fi
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$BB/ingero-collector"; then
		skip "nobody cannot reach $BB (permissions of the checkout)"
		finish
	fi
	as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$W" TMPDIR="$W/tmp" "$@"; }
else
	as_user() { env TMPDIR="$W/tmp" "$@"; }
fi
workload=0
[ -f "$BB/libingero_preload.so" ] && [ -x "$BB/tests/starve" ] && workload=1

# --- no sudo: CUDA-only with a warning -------------------------------------------------------
as_user env PATH=/usr/bin:/bin "$RUN" -o "$W/a.db" -- sh -c 'echo out; exit 4' >"$T/a.out" 2>"$T/a.err"
check_eq "no root, no sudo: exit status passes through" 4 $?
check_eq "no root, no sudo: stdout passes through" "out" "$(cat "$T/a.out")"
check "no root, no sudo: a clear warning" grep -q '^ingero-run: warning: not root.*CUDA calls only' "$T/a.err"
DB=$W/a.db
check_eq "no root, no sudo: the report says cuda-only" "cuda-only" "$(q "SELECT value FROM session WHERE key = 'mode'")"
check "the report path is printed" grep -q "^ingero-run: report: $W/a.db\$" "$T/a.err"

if [ "$workload" -eq 1 ]; then
	as_user env PATH=/usr/bin:/bin "$RUN" -o "$W/b.db" -- "$BB/tests/starve" --mode workers --workers 2 \
		--batches 10 --truth "$W/b.truth" >"$T/b.out" 2>"$T/b.err"
	check_eq "CUDA-only workload: exit 0" 0 $?
	DB=$W/b.db
	want=$(tr ' ' '\n' <"$W/b.truth" | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=[0-9]+$' |
		cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
	check_ge "CUDA-only workload: CUDA calls recorded" "$(q 'SELECT count(*) FROM cuda_calls')" 1
	check_eq "CUDA-only workload: every CUDA call of every process recorded" "$want" \
		"$(q 'SELECT count(*) FROM cuda_calls')"
	check_eq "CUDA-only workload: no off-CPU rows (no eBPF)" 0 "$(q 'SELECT count(*) FROM off_cpu')"
else
	skip "CUDA-only workload run needs libingero_preload.so and tests/starve"
fi

# --- sudo -n allowed: the held-command path ----------------------------------------------------
cat >"$W/bin/sudo" <<'EOF'
#!/bin/sh
# stand-in for sudo in tests: `sudo -n -l CMD` says yes; `sudo -n CMD...` runs CMD
[ "${1:-}" = -n ] && shift
[ "${1:-}" = -l ] && exit 0
echo "test-sudo: $*" >>"${TMPDIR:-/tmp}/../sudo.log"
exec "$@"
EOF
chmod 0755 "$W/bin/sudo"
as_user env PATH="$W/bin:/usr/bin:/bin" "$RUN" -o "$W/c.db" -- sh -c 'echo held; exit 6' >"$T/c.out" 2>"$T/c.err"
check_eq "sudo path: exit status passes through" 6 $?
check_eq "sudo path: stdout passes through" "held" "$(cat "$T/c.out")"
check "sudo path: the collector went through sudo -n" grep -q "ingero-collector .* -p [0-9]" "$W/sudo.log"
check "sudo path: no CUDA-only warning from ingero-run" sh -c "! grep -q '^ingero-run: warning' '$T/c.err'"
DB=$W/c.db
check "sudo path: the collector attached with -p" sh -c \
	"sqlite3 -batch -noheader '$DB' \"SELECT value FROM session WHERE key = 'command'\" | grep -q -- ' -p [0-9]'"
check "sudo path: report opens" sh -c "'$BB/ingero-analyze' stats --json '$DB' >/dev/null 2>&1"
if [ "$workload" -eq 1 ]; then
	as_user env PATH="$W/bin:/usr/bin:/bin" "$RUN" -o "$W/d.db" -- "$BB/tests/starve" --mode workers \
		--workers 2 --batches 10 --truth "$W/d.truth" >"$T/d.out" 2>"$T/d.err"
	check_eq "sudo path workload: exit 0" 0 $?
	DB=$W/d.db
	want=$(tr ' ' '\n' <"$W/d.truth" | grep -E '^(cuda|cu[A-Z]|__cuda)[A-Za-z0-9_]*=[0-9]+$' |
		cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
	check_eq "sudo path workload: every CUDA call recorded (held until the collector listened)" \
		"$want" "$(q 'SELECT count(*) FROM cuda_calls')"
fi
check "temporary folders are removed" test -z "$(ls "$W/tmp")"
finish
