/*
 * frame_rows.h — test fixtures write a stack's frames as rows, as schema
 * versions 1 to 7 stored them (INSERT INTO stack_frames ...), into a
 * version 8 file, which stores each distinct frame once (frames) and a
 * stack's frames as lists of their ids (stacks.kernel, .native, .python;
 * docs/schema.md).  TEST_FRAME_ROWS_SQL makes the view stack_frames take
 * such INSERTs on one connection: a temporary trigger (nothing of it is
 * stored in the file) adds the frame to frames when it is new and appends
 * its id to the stack's list of its kind, creating the stack's row when
 * there is none.  A stack's rows of a kind must come in depth order from
 * 0, as fixtures write them; any other row is refused (RAISE).
 */
#ifndef INGERO_TEST_FRAME_ROWS_H
#define INGERO_TEST_FRAME_ROWS_H

#define TFR_SAME_FRAME \
	"kind IS NEW.kind AND ip IS NEW.ip AND symbol IS NEW.symbol AND module IS NEW.module " \
	"AND offset IS NEW.offset AND file IS NEW.file AND line IS NEW.line"
#define TFR_LIST "CASE NEW.kind WHEN 'kernel' THEN kernel WHEN 'native' THEN native ELSE python END"
#define TFR_APPEND(kind) \
	kind " = CASE NEW.kind WHEN '" kind "' THEN json_insert(coalesce(" kind ", '[]'), '$[#]', " \
	"(SELECT id FROM frames WHERE " TFR_SAME_FRAME " LIMIT 1)) ELSE " kind " END"

#define TEST_FRAME_ROWS_SQL \
	"CREATE TEMP TRIGGER test_frame_rows INSTEAD OF INSERT ON main.stack_frames BEGIN\n" \
	"  SELECT RAISE(ABORT, 'a fixture''s frame rows: kernel, native or python, each kind in depth order from 0')\n" \
	"    WHERE NEW.kind NOT IN ('kernel', 'native', 'python') OR NEW.depth IS NOT\n" \
	"      coalesce((SELECT json_array_length(" TFR_LIST ") FROM stacks WHERE id = NEW.stack_id), 0);\n" \
	"  INSERT INTO frames(kind, ip, symbol, module, offset, file, line)\n" \
	"    SELECT NEW.kind, NEW.ip, NEW.symbol, NEW.module, NEW.offset, NEW.file, NEW.line\n" \
	"    WHERE NOT EXISTS (SELECT 1 FROM frames WHERE " TFR_SAME_FRAME ");\n" \
	"  INSERT OR IGNORE INTO stacks(id) VALUES(NEW.stack_id);\n" \
	"  UPDATE stacks SET " TFR_APPEND("kernel") ", " TFR_APPEND("native") ", " TFR_APPEND("python") "\n" \
	"    WHERE id = NEW.stack_id;\n" \
	"END;\n"

#endif
