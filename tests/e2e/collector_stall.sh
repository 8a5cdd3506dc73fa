#!/bin/sh
# collector_stall.sh — a collector stopped (SIGSTOP) while its program runs
# and exits: the program's last counts (calls made and dropped) can never
# arrive, so the report must not show "0 dropped" for it; the loss
# preload_counts_unknown says its losses are unknown, and explain says so.
. tests/lib.sh
. tests/helpers/collector_e2e.sh
export FAKECUDA_KERNEL_US=0 FAKECUDA_LAUNCH_NS=0

check "collector starts" start_collector
env LD_PRELOAD="$PWD/$B/libingero_preload.so" python3 tests/helpers/python_stall.py \
	"$PWD/$B/fakecuda/libcudart.so.13" "$T" >"$T/out.txt" 2>"$T/err.txt" &
W=$!
i=0
while [ ! -f "$T/phase1" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
check "program reached its first phase" test -f "$T/phase1"
sleep 0.5   # the first batch is in
kill -STOP "$CPID"
touch "$T/go"
wait "$W"
check_eq "program exits 0 with its collector stopped" 0 $?
kill -CONT "$CPID"
sleep 0.5
stop_collector INT
check_eq "collector exits 0" 0 "$CRC"
pid=$(sed -n 's/^pid=//p' "$T/out.txt")
check_ge "its first calls are stored" "$(q "SELECT count(*) FROM cuda_calls WHERE pid = ${pid:-0}")" 100
check_eq "its losses are marked unknown" 1 \
	"$(q "SELECT count FROM losses WHERE source = 'preload_counts_unknown' AND pid = ${pid:-0}")"
"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/explain.txt" 2>&1
check "explain lists it among the losses" grep -q 'preload_counts_unknown' "$T/explain.txt"

# the same program with its collector running all along: counts arrive, nothing unknown
rm -f "$DB" "$DB-wal" "$DB-shm" "$T/phase1" "$T/go"
check "collector starts again" start_collector
touch "$T/go"
env LD_PRELOAD="$PWD/$B/libingero_preload.so" python3 tests/helpers/python_stall.py \
	"$PWD/$B/fakecuda/libcudart.so.13" "$T" >"$T/out.txt" 2>"$T/err.txt"
check_eq "program exits 0" 0 $?
stop_collector INT
pid=$(sed -n 's/^pid=//p' "$T/out.txt")
check_eq "no unknown losses when the counts arrived" 0 \
	"$(q "SELECT count(*) FROM losses WHERE source = 'preload_counts_unknown' AND count > 0")"
check_eq "made = stored + dropped" "$(q "SELECT made FROM processes WHERE pid = ${pid:-0}")" \
	"$(q "SELECT (SELECT count(*) FROM cuda_calls WHERE pid = ${pid:-0}) + dropped FROM processes WHERE pid = ${pid:-0}")"
finish
