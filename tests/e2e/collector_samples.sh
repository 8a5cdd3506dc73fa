#!/bin/sh
# collector_samples.sh — on-CPU samples of `starve --mode inline` (the main
# process gathers rows itself) resolve to the workload's own function
# gather_rows, through ELF symbols and the frame-pointer user stack; kernel
# frames are named from kallsyms.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh

"$B/ingero-collector" -o "$DB" --sample-hz 199 -- "$B/tests/starve" --mode inline --batches 16 \
	>/dev/null 2>"$T/err.txt"
check_eq "collector exits 0" 0 $?
total=$(q 'SELECT count(*) FROM cpu_samples')
check_ge "samples taken" "$total" 20
gather=$(q "SELECT count(DISTINCT s.rowid) FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id
	WHERE f.kind='native' AND f.symbol='gather_rows'")
check_ge "a quarter of the samples are in gather_rows ($gather of $total)" "$((gather * 4))" "$total"
check_eq "gather_rows frames point at the workload binary" 1 "$(q "SELECT count(DISTINCT module) FROM stack_frames WHERE symbol='gather_rows'")"
check "main is below gather_rows" test "$(q "SELECT count(*) FROM stack_frames a JOIN stack_frames b ON a.stack_id=b.stack_id AND a.kind=b.kind AND b.depth > a.depth WHERE a.symbol='gather_rows' AND b.symbol='main'")" -ge 1
check_ge "kernel frames named" "$(q "SELECT count(*) FROM stack_frames WHERE kind='kernel' AND symbol IS NOT NULL")" 1
check_eq "every sample's stack is stored" 0 "$(q 'SELECT count(*) FROM cpu_samples WHERE stack_id IS NOT NULL AND stack_id NOT IN (SELECT id FROM stacks)')"
finish
