/*
 * python_layout.h — where CPython 3.10-3.13 keep what a profiler reads from
 * outside the interpreter: the runtime's thread list, each thread's chain
 * of frames, and code objects (file, name, first line, line table), as
 * byte offsets per minor version; and the line tables' two formats (3.10's
 * pairs, and 3.11's location table), decoded.
 *
 * The offsets come from compiling scripts/python_layout_probe.c against
 * each version's own headers (scripts/python-layout).  From 3.13 on, the
 * runtime carries them itself (_Py_DebugOffsets at the start of
 * _PyRuntime); ingero_py_layout_debug() reads those, which follows a patch
 * release that moved a field.
 */
#ifndef INGERO_PYTHON_LAYOUT_H
#define INGERO_PYTHON_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct ingero_py_layout {
	int minor;                        /* 10..13 */
	uint32_t rt_interp_main;          /* _PyRuntime → the main interpreter (interpreters.main:
					   * .head is the newest, a subinterpreter once one exists) */
	uint32_t interp_threads_head;     /* interpreter → first thread state */
	uint32_t ts_next, ts_thread_id;   /* thread state → next; → pthread_self() */
	uint32_t ts_frame;                /* → frame (3.10, 3.13) or cframe (3.11, 3.12) */
	int32_t cf_current;               /* cframe → current frame; -1 without cframe */
	uint32_t fr_code, fr_prev;        /* frame → code object; → previous frame */
	uint32_t fr_instr;                /* 3.11+: → instruction pointer; 3.10: f_lasti (int) */
	int32_t fr_owner;                 /* 3.11+: → owner (char); -1 on 3.10 */
	int32_t co_firsttraceable;        /* 3.11+: code → _co_firsttraceable (int); -1 on 3.10 */
	int32_t co_bytecode;              /* 3.11+: code → co_code_adaptive; -1 on 3.10 */
	uint32_t co_filename, co_name;    /* str objects; co_name is co_qualname from 3.11 */
	uint32_t co_firstlineno, co_linetable;
	uint32_t str_ascii, str_compact;  /* character data of compact ASCII / other strings */
	uint32_t str_utf8, str_utf8_len;  /* a non-ASCII string's cached UTF-8, if any */
	/* Whether a thread is running the cyclic garbage collector: the
	 * interpreter's gc.collecting (int) is set, and the GIL's last holder
	 * (a thread state pointer) is that thread's state.  The GIL is in
	 * _PyRuntime up to 3.11 (gil_holder_rt), in each interpreter from
	 * 3.12 (gil_holder_interp: the main interpreter's own _gil).  -1: not
	 * known (then no sample is said to be in the collector). */
	int32_t gc_collecting;            /* interpreter → gc.collecting */
	int32_t gil_holder_rt;            /* _PyRuntime → ceval.gil.last_holder (3.10, 3.11) */
	int32_t gil_holder_interp;        /* interpreter → _gil.last_holder (3.12+) */
};

/* Fixed in 3.10-3.13: ob_type, a variable-size object's length
 * (ob_size), and a bytes object's data (PyBytesObject.ob_sval). */
#define INGERO_PY_OB_TYPE    8
#define INGERO_PY_OB_SIZE    16
#define INGERO_PY_BYTES_DATA 32

/* The frame owner that marks an entry shim, not Python code (3.12+). */
#define INGERO_PY_OWNED_BY_CSTACK 3

/* The Python frame a sample of a thread running the cyclic garbage
 * collector gets, innermost (stack_frames: kind 'python', no line). */
#define INGERO_PY_GC_FILE "<gc>"
#define INGERO_PY_GC_FUNC "garbage collection"

/* NULL for a version we do not know. */
const struct ingero_py_layout *ingero_py_layout(int minor);

/* 3.13+: `dbg` holds the first bytes of _PyRuntime (_Py_DebugOffsets);
 * fills *out from them (and from the table for what they do not carry).
 * 0 on success, -1 when the cookie or version does not match. */
#define INGERO_PY_DEBUG_BYTES 584   /* sizeof(_Py_DebugOffsets) in 3.13 */
int ingero_py_layout_debug(struct ingero_py_layout *out, const uint8_t *dbg, size_t len);

/* The line of the instruction at byte offset `off` of the bytecode, from a
 * code object's line table (co_linetable) and first line; -1 when the
 * table gives it none, or none a source file has (below 1), or is
 * malformed. */
int ingero_py_line(int minor, const uint8_t *table, size_t len, int firstlineno, int off);

/* Reads n bytes at addr of the process being read; 0 on success. */
typedef int (*ingero_py_read_fn)(void *ctx, uint64_t addr, void *out, size_t n);

/* A str object as UTF-8 into out (at most cap bytes, the end kept when
 * keep_tail and it is longer); its length, or -1 if it cannot be read as
 * a compact string.  str_type: the address of PyUnicode_Type there. */
long ingero_py_str(const struct ingero_py_layout *L, ingero_py_read_fn rd, void *ctx, uint64_t s,
		   uint64_t str_type, char *out, size_t cap, int keep_tail);

#endif
