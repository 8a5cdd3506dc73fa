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

# The same trace stores each distinct frame once (schema version 8, folded
# in from a test of its own: one traced run serves both): through the view
# stack_frames the frames read as the old table's rows did — gather_rows the
# innermost native frame of its samples or under a frameless leaf, main
# right above it — every id of a stack's lists names a frame of that kind,
# the view has as many rows as the lists have ids, no frame is stored
# twice, and the file is smaller than the same trace with a row per frame
# of every stack (the old layout, rebuilt from the view).
check_eq "schema version $SCHEMA_VERSION" "$SCHEMA_VERSION" "$(q 'PRAGMA user_version')"
check_ge "stacks stored" "$(q 'SELECT count(*) FROM stacks')" 20
check_eq "kernel and native lists stored" 1 \
	"$(q "SELECT (SELECT count(*) FROM stacks WHERE kernel IS NOT NULL) > 0 AND
		(SELECT count(*) FROM stacks WHERE native IS NOT NULL) > 0")"
check_eq "no frame stored twice" "$(q 'SELECT count(*) FROM frames')" \
	"$(q 'SELECT count(*) FROM (SELECT DISTINCT kind, ip, symbol, module, offset, file, line FROM frames)')"
for k in kernel native python; do
	check_eq "every id of the $k lists names a $k frame" 0 \
		"$(q "SELECT count(*) FROM stacks s, json_each(s.$k) j LEFT JOIN frames f ON f.id = j.value
			WHERE f.kind IS NOT '$k'")"
done
check_eq "the view has a row per id of the lists" \
	"$(q "SELECT sum(coalesce(json_array_length(kernel), 0) + coalesce(json_array_length(native), 0) +
		coalesce(json_array_length(python), 0)) FROM stacks")" "$(q 'SELECT count(*) FROM stack_frames')"
check_ge "frames repeat across stacks" "$(q 'SELECT count(*) FROM stack_frames')" \
	"$(($(q 'SELECT count(*) FROM frames') * 2))"
gather=$(q "SELECT count(*) FROM stack_frames WHERE symbol = 'gather_rows'")
check_ge "samples in gather_rows" "$gather" 10
check_eq "gather_rows: native, innermost or under a frameless leaf" "$gather" \
	"$(q "SELECT count(*) FROM stack_frames WHERE symbol = 'gather_rows' AND kind = 'native' AND depth <= 1")"
check_eq "... with main right above it" "$gather" \
	"$(q "SELECT count(*) FROM stack_frames a JOIN stack_frames b ON b.stack_id = a.stack_id AND b.kind = 'native'
		AND b.depth = a.depth + 1 AND b.symbol = 'main' WHERE a.symbol = 'gather_rows'")"
check_eq "one row of stacks read for one stack's frames" 1 \
	"$(q "EXPLAIN QUERY PLAN SELECT * FROM stack_frames WHERE stack_id = 5" | grep -c 'SEARCH s USING INTEGER PRIMARY KEY')"

# the same trace with a row per frame of every stack, as version 7 stored it
cp "$DB" "$T/new.db"
cp "$DB" "$T/old.db"
sqlite3 -bail "$T/old.db" "CREATE TABLE rows(stack_id INTEGER NOT NULL, depth INTEGER NOT NULL, kind TEXT NOT NULL,
	ip INTEGER, symbol TEXT, module TEXT, offset INTEGER, file TEXT, line INTEGER,
	PRIMARY KEY(stack_id, kind, depth)) WITHOUT ROWID;
	INSERT INTO rows SELECT * FROM stack_frames;
	DROP VIEW stack_frames; DROP TABLE frames; ALTER TABLE rows RENAME TO stack_frames;
	CREATE TABLE ids AS SELECT id, pid FROM stacks; DROP TABLE stacks; ALTER TABLE ids RENAME TO stacks;" &&
	sqlite3 "$T/old.db" VACUUM && sqlite3 "$T/new.db" VACUUM
check_eq "the old layout rebuilt" 0 $?
old=$(wc -c <"$T/old.db"); new=$(wc -c <"$T/new.db")
check "the file is smaller with frames stored once ($new bytes, $old with a row per frame)" test "$new" -lt "$old"
finish
