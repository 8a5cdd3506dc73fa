#!/bin/sh
# analyzer_copies.sh — a loop bound by host-to-device copies from pinned
# memory (tests/helpers/python_copies.py on the fake runtime: 8 MiB a step at
# 25 GB/s, one 50 us kernel): the GPU always has work, so nothing starves it
# (a loaded machine can leave it idle a few per cent: "mostly busy"),
# and the verdict says the transfer bounds the steps, with its bytes and rate,
# and the fix (fewer bytes over the bus) — not pinning, not faster kernels.
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_copies.py
explain_run copies 50 99 "$PY" 600
sed -n '/^Verdict/,/^$/p' "$T/copies.txt" | sed 's/^/# /'
check "copies: the verdict says the GPU is not starving (or mostly busy, on a loaded machine)" \
	grep -Eq "^Verdict: (not starving|mostly busy)" "$T/copies.txt"
check "copies: host-to-device copies named as what bounds the steps, with bytes and rate" \
	grep -Eq "Host-to-device copies are [5-9][0-9]% of that work \([0-9.]+ [MG]iB at 2[0-9](\.[0-9])? GB/s on the GPU\): the transfer bounds the steps" \
	"$T/copies.txt"
check "copies: the fix: fewer bytes over the bus" grep -q "move fewer bytes over the bus: keep the data in GPU memory" "$T/copies.txt"
check "copies: not pinning (the copies are pinned)" sh -c "! grep -Eq 'pin_memory|pageable' '$T/copies.txt'"
finish
