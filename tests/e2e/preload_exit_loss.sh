#!/bin/sh
# preload_exit_loss.sh — a collector slower than the program at its exit:
# the library's exit (sender.c, final_flush) sends for a bounded time, then
# takes what is left in the ring and the lanes without sending and counts
# it as dropped, so that the last COUNTS still add up: received + dropped
# = made, every call accounted for, none silently gone.  The sink sleeps
# 50 ms after each batch of calls (~2,048 calls): the ring's ~100,000
# calls of a burst need seconds, the exit's budget is 1.2 s.
# tests/run: pool (it counts calls, it reads no clock)
. tests/lib.sh
. tests/helpers/preload_lib.sh
export FAKECUDA_NOOP=1

start_sink "$T/slow.sink" -n 1 -d 50
INGERO_DEBUG=1 traced "$B/tests/preload_calls" threads 1 300000 >"$T/slow.truth" 2>"$T/slow.err"
check_eq "slow collector: the program exits 0" 0 $?
wait_sink
pid=$(sed -n 's/^truth pid=\([0-9]*\) .*/\1/p' "$T/slow.truth" | head -n 1)
got=$(sink_calls "$T/slow.sink" "$pid" cudaLaunchKernel)
drop=$(sink_field "$T/slow.sink" counts "$pid" dropped)
made=$(sink_field "$T/slow.sink" counts "$pid" made)
left=$(sed -n 's/.*exit: \([0-9]*\) records left unsent.*/\1/p' "$T/slow.err" | tail -n 1)
echo "# 300k launches at once, a sink taking 2,048 a 50 ms: $got received, $drop dropped, made $made; ${left:-no} records left at the exit's budget"
check "slow collector: the exit's budget ran out with calls left (the case tested)" test "${left:-0}" -gt 0
check_eq "slow collector: received + dropped = made (the program's 300,000)" 300000 $((got + drop))
check_eq "slow collector: the library's made is the program's count" 300000 "$made"
check "slow collector: some received" test "$got" -gt 0
finish
