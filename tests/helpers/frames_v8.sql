-- tests/helpers/frames_v8.sql — a trace of schema version 7 or older with
-- its frames stored as version 8 stores them (docs/schema.md, stacks):
-- each distinct frame once in `frames`, each stack's frames as JSON lists
-- of frame ids per kind, `stack_frames` a view.  Only the frames change
-- (the version stays), so the analyzer must give the same output on both
-- files (tests/e2e/analyzer_frames.sh), and the two sizes compare the
-- layouts on real traces (docs/benchmarks.md).  Run on a copy:
--   sqlite3 copy.db <tests/helpers/frames_v8.sql
-- Depths are taken as they are stored: 0, 1, ... per stack and kind.
PRAGMA journal_mode = DELETE;
BEGIN;
CREATE TEMP TABLE ranked AS SELECT stack_id, depth, kind, ip, symbol, module, offset, file, line,
	dense_rank() OVER (ORDER BY kind, ip, symbol, module, offset, file, line) AS frame FROM stack_frames;
CREATE INDEX temp.ranked_by_stack ON ranked(stack_id, kind, depth);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, ip INTEGER, symbol TEXT, module TEXT,
	offset INTEGER, file TEXT, line INTEGER);
INSERT INTO frames SELECT DISTINCT frame, kind, ip, symbol, module, offset, file, line FROM ranked ORDER BY frame;
CREATE TABLE stacks_v8(id INTEGER PRIMARY KEY, pid INTEGER, kernel TEXT, native TEXT, python TEXT);
INSERT INTO stacks_v8 SELECT s.id, s.pid,
	(SELECT '[' || group_concat(frame, ',') || ']' FROM (SELECT frame FROM ranked r
		WHERE r.stack_id = s.id AND r.kind = 'kernel' ORDER BY depth)),
	(SELECT '[' || group_concat(frame, ',') || ']' FROM (SELECT frame FROM ranked r
		WHERE r.stack_id = s.id AND r.kind = 'native' ORDER BY depth)),
	(SELECT '[' || group_concat(frame, ',') || ']' FROM (SELECT frame FROM ranked r
		WHERE r.stack_id = s.id AND r.kind = 'python' ORDER BY depth))
	FROM stacks s;
DROP TABLE stack_frames;
DROP TABLE stacks;
ALTER TABLE stacks_v8 RENAME TO stacks;
-- the view as INGERO_STACK_FRAMES_VIEW_SQL (include/ingero/schema.h) has it, byte for byte
CREATE VIEW stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line) AS
  SELECT s.id, j.key, k.value, f.ip, f.symbol, f.module, f.offset, f.file, f.line
  FROM stacks s CROSS JOIN json_each('["kernel","native","python"]') k
  CROSS JOIN json_each(CASE k.key WHEN 0 THEN s.kernel WHEN 1 THEN s.native ELSE s.python END) j
  CROSS JOIN frames f WHERE f.id = j.value;
DROP TABLE ranked;
COMMIT;
VACUUM;
