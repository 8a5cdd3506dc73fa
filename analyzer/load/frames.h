/*
 * frames.h — the frames of one stack, whichever layout the file has.
 *
 * Schema version 8 stores each distinct frame once (table frames) and a
 * stack's frames as JSON lists of frame ids, one list per kind (columns
 * stacks.kernel, stacks.native, stacks.python); versions 1 to 7 stored a
 * row per frame of every stack (table stack_frames).  Version 8's view
 * stack_frames shows the old rows, for people and their SQL; the analyzer
 * reads the lists through this reader, the one place that knows both
 * layouts (told apart by their tables, not by the version).
 */
#ifndef IA_FRAMES_H
#define IA_FRAMES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* In the order a stack's frames come: kernel, native, python. */
enum ia_frame_kind { IA_FRAME_KERNEL, IA_FRAME_NATIVE, IA_FRAME_PYTHON, IA_FRAME_OTHER };

struct ia_frame {
	enum ia_frame_kind kind;
	int depth;                            /* 0 = the innermost frame of its kind */
	const char *symbol, *module, *file;   /* NULL when not stored */
	int64_t ip, offset, line;             /* 0 when not stored */
	int has_line;                         /* line is stored (not NULL) */
	uint32_t key;                         /* frames of one key met by one reader have the same
						 columns (a list's frame); UINT32_MAX: no key (rows) */
};

struct ia_frames;

/* Whether the file has stack frames in either layout: 1, 0, or -1
 * (unreadable). */
int ia_frames_exist(sqlite3 *db);

/* A reader on db; NULL with a one-line reason in err (no frames in the
 * file, or its statements could not be prepared). */
struct ia_frames *ia_frames_new(sqlite3 *db, char *err, size_t errlen);
void ia_frames_free(struct ia_frames *r);

/* Reads the frames of stack_id from the start: kernel ones first, then
 * native, then python, each kind innermost first. */
void ia_frames_start(struct ia_frames *r, uint64_t stack_id);
/* 1 with *f the next frame (its strings valid until the next call), 0
 * after the last one, -1 with a one-line reason in err (a damaged page, a
 * list that is not JSON). */
int ia_frames_next(struct ia_frames *r, struct ia_frame *f, char *err, size_t errlen);

/* Whether a stack of process pid has a Python frame: 1 or 0 (0 too when
 * it cannot be read: evidence only). */
int ia_frames_pid_has_python(sqlite3 *db, int pid);

/* A frame's module by its file name alone ("libc.so.6" of
 * "/lib/x86_64-linux-gnu/libc.so.6"); NULL for NULL. */
const char *ia_module_base(const char *module);
/* Whether a module is the Python interpreter's own (libpython3.x, python3.x). */
int ia_module_is_cpython(const char *module);

#endif
