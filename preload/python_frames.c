/*
 * python_frames.c — the innermost Python frames of the calling thread,
 * read without the GIL, without allocating, without touching a reference
 * count, on CPython 3.10, 3.11, 3.12 and 3.13.
 *
 * Why not the public API.  PyTorch releases the GIL around nearly every
 * operator (pybind11 gil_scoped_release), and ctypes releases it around
 * every foreign call: the CUDA call we are in usually runs *without* the
 * GIL.  PyThreadState_GetFrame / PyFrame_GetBack / PyFrame_GetCode return
 * new references (non-atomic increments of shared objects) and, from 3.11,
 * may allocate a frame object: both need the GIL, and taking it could
 * deadlock the program.  PyObject_GetAttrString + PyUnicode_AsUTF8 may
 * allocate too.
 *
 * What is safe.  While this thread is inside a C call, its own frame chain
 * cannot change: only this thread pushes and pops its frames, and the code
 * objects those frames execute are kept alive by them.  So we read that
 * chain with plain loads:
 *   - the thread state is PyGILState_GetThisThreadState() (a thread-local
 *     look-up; no GIL needed);
 *   - its current frame is at a per-version offset (3.10 tstate->frame,
 *     3.11/3.12 tstate->cframe->current_frame, 3.13 tstate->current_frame),
 *     and frames link through a per-version offset: the table the collector
 *     uses too (include/ingero/python_layout.h, from each version's headers);
 *   - code object fields (co_filename, co_qualname/co_name) are found at
 *     run time from PyCode_Type's member table, the start of the bytecode
 *     from PyCode_Type.tp_basicsize;
 *   - the line is PyCode_Addr2Line(code, byte offset), which only reads the
 *     code object's line table;
 *   - strings are read from the str object's own storage (compact ASCII,
 *     its cached UTF-8, or latin-1/UCS-2/UCS-4 transcoded: ingero_py_str),
 *     never through PyUnicode_AsUTF8, which may allocate.
 * Every object is type-checked (ob_type == &PyCode_Type / &PyUnicode_Type)
 * before its fields are used; a frame that fails a check ends the walk.
 * The first walk of a process goes through process_vm_readv, which fails
 * instead of faulting, to validate the layout before plain loads are
 * trusted.  Unknown versions and free-threaded builds get no Python frames.
 */
#include "python_frames.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "config.h"
#include "ingero/python_layout.h"
#include "real.h"

#define RTLD_DEFAULT_ ((void *)0)

struct layout {
	int minor;                 /* 10..13 */
	struct ingero_py_layout T; /* thread state, frame and str offsets */
	/* code object fields, found in this interpreter's PyCode_Type */
	size_t co_filename, co_name, co_bytecode;
	long co_linetable;         /* code → its line table (bytes), -1 if not found */
	long co_firstlineno;       /* code → first line (int), -1 if not found */
	const void *code_type, *str_type, *bytes_type;
	int (*addr2line)(void *code, int byte_offset);
	void *(*this_tstate)(void);
	int (*is_initialized)(void);
};

static struct layout L;
static _Atomic int state;          /* 0 unknown, 1 ready, -1 unavailable */
static _Atomic int validated;      /* the first walk went through safe reads */
static _Atomic unsigned retry;

/* --- memory reads ------------------------------------------------------------- */
static __thread bool safe_mode __attribute__((tls_model("initial-exec")));   /* this walk reads through process_vm_readv */

static bool rd(const void *addr, void *out, size_t n)
{
	if ((uintptr_t)addr < 4096)
		return false;
	if (!safe_mode) {
		memcpy(out, addr, n);
		return true;
	}
	struct iovec local = { out, n }, remote = { (void *)addr, n };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static bool rd_ptr(const void *base, size_t off, const void **out)
{
	return rd((const char *)base + off, out, sizeof *out);
}

/* --- finding CPython -------------------------------------------------------------- */
struct member_def {   /* PyMemberDef, a stable part of the C API */
	const char *name;
	int type;
	intptr_t offset;
	int flags;
	const char *doc;
};

static long member_offset(const void *type, const char *name)
{
	const struct member_def *m;
	memcpy(&m, (const char *)type + 240, sizeof m);   /* PyTypeObject.tp_members */
	for (; m && m->name; m++)
		if (strcmp(m->name, name) == 0)
			return (long)m->offset;
	return -1;
}

static int setup(void)
{
	const char *(*version)(void) = (const char *(*)(void))ingero_real_dlsym(RTLD_DEFAULT_, "Py_GetVersion");
	if (!version)
		return 0;   /* not (yet) a Python process */
	L.this_tstate = (void *(*)(void))ingero_real_dlsym(RTLD_DEFAULT_, "PyGILState_GetThisThreadState");
	L.is_initialized = (int (*)(void))ingero_real_dlsym(RTLD_DEFAULT_, "Py_IsInitialized");
	L.addr2line = (int (*)(void *, int))ingero_real_dlsym(RTLD_DEFAULT_, "PyCode_Addr2Line");
	L.code_type = ingero_real_dlsym(RTLD_DEFAULT_, "PyCode_Type");
	L.str_type = ingero_real_dlsym(RTLD_DEFAULT_, "PyUnicode_Type");
	L.bytes_type = ingero_real_dlsym(RTLD_DEFAULT_, "PyBytes_Type");
	if (!L.this_tstate || !L.is_initialized || !L.addr2line || !L.code_type || !L.str_type)
		return -1;
	const char *v = version();
	if (strncmp(v, "3.", 2) != 0 || strstr(v, "free-threading"))
		return -1;
	L.minor = atoi(v + 2);
	const struct ingero_py_layout *T = ingero_py_layout(L.minor);
	if (!T) {
		ingero_debug("Python %d.%d: no Python frames (versions 3.10-3.13 are known)", 3, L.minor);
		return -1;
	}
	L.T = *T;
	if (L.minor >= 13) {
		/* the runtime's own offsets follow a patch release that moved a field */
		const uint8_t *rt = ingero_real_dlsym(RTLD_DEFAULT_, "_PyRuntime");
		struct ingero_py_layout d;
		if (rt && ingero_py_layout_debug(&d, rt, INGERO_PY_DEBUG_BYTES) == 0)
			L.T = d;
	}
	long fn = member_offset(L.code_type, "co_filename");
	long nm = member_offset(L.code_type, L.minor >= 11 ? "co_qualname" : "co_name");
	if (fn < 0 || nm < 0)
		return -1;
	L.co_filename = (size_t)fn;
	L.co_name = (size_t)nm;
	L.co_linetable = member_offset(L.code_type, "co_linetable");
	L.co_firstlineno = member_offset(L.code_type, "co_firstlineno");
	memcpy(&L.co_bytecode, (const char *)L.code_type + 32, sizeof L.co_bytecode); /* tp_basicsize */
	return 1;
}

/* --- strings ------------------------------------------------------------------------ */
static int rd_cb(void *ctx, uint64_t addr, void *out, size_t n)
{
	(void)ctx;
	return rd((const void *)(uintptr_t)addr, out, n) ? 0 : -1;
}

static long read_str(const void *s, char *out, size_t cap, bool keep_tail)
{
	return ingero_py_str(&L.T, rd_cb, NULL, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)L.str_type, out,
			     cap, keep_tail);
}

/* --- line numbers ------------------------------------------------------------------------ */
/* PyCode_Addr2Line decodes the code object's line table from its start:
 * in the long functions of PyTorch (an optimizer step, Module._call_impl)
 * 16 frames took ~60-80 µs, 99 % of a stack's cost (perf: 78 % of a
 * Python loop's time in _PyCode_CheckLineNumber), paid again at every stack
 * of the same call site.  So each thread keeps the lines it found, keyed by
 * code object, bytecode offset, line table, the first line, and the
 * table's length and first and last 8 bytes.  Code generated again and
 * again (exec, torch.fx) can get a freed code object's and table's
 * addresses back; with the same first line and table content the lines
 * are the same, and another content almost always shows in length or
 * ends.  What is left costs a wrong line in one sampled stack, never a bad
 * read. */
#define LINE_SLOTS 256   /* 8 KiB per thread */
struct line_slot {
	const void *code, *table;
	uint64_t print;
	int offset, line;
};
static __thread struct line_slot line_cache[LINE_SLOTS] __attribute__((tls_model("initial-exec")));

static bool table_print(const void *code, const void **table, uint64_t *print)
{
	const void *type;
	int64_t len;
	uint64_t head = 0, tail = 0;
	int first = 0;
	if (L.co_linetable < 0 || L.co_firstlineno < 0 || !L.bytes_type ||
	    !rd((const char *)code + L.co_firstlineno, &first, sizeof first) ||
	    !rd_ptr(code, (size_t)L.co_linetable, table) ||
	    !*table || !rd_ptr(*table, 8, &type) || type != L.bytes_type ||
	    !rd((const char *)*table + INGERO_PY_OB_SIZE, &len, sizeof len) || len < 0)
		return false;
	size_t n = len < 8 ? (size_t)len : 8;
	if (n && (!rd((const char *)*table + INGERO_PY_BYTES_DATA, &head, n) ||
		  !rd((const char *)*table + INGERO_PY_BYTES_DATA + (size_t)len - n, &tail, n)))
		return false;
	/* lines are deltas from the first line: the same body at another line
	 * has the same table */
	*print = (uint64_t)len ^ head * 0x9e3779b97f4a7c15ull ^ (tail << 1 | tail >> 63) ^
		 (uint64_t)(uint32_t)first << 40;
	return true;
}

static int line_of(const void *code, int offset)
{
	const void *table;
	uint64_t print;
	if (!table_print(code, &table, &print))
		return L.addr2line((void *)code, offset);
	uintptr_t h = ((uintptr_t)code >> 4) ^ ((uintptr_t)offset * 0x9e3779b1u);
	struct line_slot *e = &line_cache[(h ^ h >> 8) & (LINE_SLOTS - 1)];
	if (e->code == code && e->table == table && e->print == print && e->offset == offset)
		return e->line;
	int line = L.addr2line((void *)code, offset);
	*e = (struct line_slot){ code, table, print, offset, line };
	return line;
}

/* --- the walk ------------------------------------------------------------------------- */
/* One frame of the chain: its code object, byte offset and the frame it
 * was called from; *report false for a frame that runs no code of its own
 * (an entry shim, a frame not started yet).  False: the chain cannot be
 * read on (the walk ends). */
static bool frame_at(const void *fr, const void **code, int *offset, const void **prev, bool *report)
{
	if (((uintptr_t)fr & 7) || !rd_ptr(fr, L.T.fr_code, code) || !rd_ptr(fr, L.T.fr_prev, prev))
		return false;
	const void *ctype;
	if (!*code || !rd_ptr(*code, 8, &ctype))
		return false;
	bool skip = ctype != L.code_type;   /* 3.13 shim frames run no code object */
	*offset = -1;
	if (!skip && L.T.fr_owner >= 0) {
		char owner;
		const char *instr;
		int first = 0;
		if (!rd((const char *)fr + L.T.fr_owner, &owner, 1) ||
		    !rd_ptr(fr, L.T.fr_instr, (const void **)&instr) ||
		    !rd((const char *)*code + L.T.co_firsttraceable, &first, sizeof first))
			return false;
		const char *bytecode = (const char *)*code + L.co_bytecode;
		if (owner == 3 /* FRAME_OWNED_BY_CSTACK, 3.12+ */ ||
		    (owner != 1 /* generator */ && instr < bytecode + 2 * (long)first))
			skip = true;   /* an entry shim, or a frame not started yet */
		*offset = (int)(instr - bytecode);
	} else if (!skip) {
		int lasti;
		if (!rd((const char *)fr + L.T.fr_instr, &lasti, sizeof lasti))
			return false;
		*offset = lasti < 0 ? -1 : lasti * 2;
	}
	*report = !skip;
	return true;
}

/* The calling thread's innermost frame, NULL when it runs no Python. */
static const void *top_frame(void)
{
	const void *ts = L.this_tstate();
	if (!ts)
		return NULL;
	const void *fr;
	if (!rd_ptr(ts, L.T.ts_frame, &fr))
		return NULL;
	if (L.T.cf_current >= 0 && fr && !rd_ptr(fr, (size_t)L.T.cf_current, &fr))
		return NULL;
	return fr;
}

static int walk(struct ingero_pyframe *out, int max, char *buf, size_t cap)
{
	const void *fr = top_frame();
	int n = 0;
	size_t used = 0;
	for (int guard = 0; fr && n < max && guard < 4096; guard++) {
		const void *code, *prev;
		int offset;
		bool report;
		if (!frame_at(fr, &code, &offset, &prev, &report))
			return n;
		if (report) {
			const void *file, *func;
			if (!rd_ptr(code, L.co_filename, &file) || !rd_ptr(code, L.co_name, &func))
				return n;
			long fl = read_str(file, buf + used, cap - used < INGERO_PY_FILE_MAX ? cap - used
											  : INGERO_PY_FILE_MAX, true);
			if (fl < 0)
				return n;
			out[n].file = buf + used;
			out[n].file_len = (uint16_t)fl;
			used += (size_t)fl;
			long gl = read_str(func, buf + used, cap - used < INGERO_PY_FUNC_MAX ? cap - used
											  : INGERO_PY_FUNC_MAX, false);
			if (gl < 0)
				return n;
			out[n].func = buf + used;
			out[n].func_len = (uint16_t)gl;
			used += (size_t)gl;
			int line = line_of(code, offset);
			out[n].line = line > 0 ? (uint32_t)line : 0;
			n++;
		}
		fr = prev;
	}
	return n;
}

/* A Python process whose first walk proved the layout: plain loads are
 * trusted from here on. */
static bool layout_proved(void)
{
	return atomic_load_explicit(&state, memory_order_acquire) == 1 &&
	       atomic_load_explicit(&validated, memory_order_acquire) && L.is_initialized();
}

uint64_t ingero_python_site(uint64_t h, int max)
{
	if (!layout_proved())
		return 0;
	const void *fr = top_frame();
	int n = 0;
	for (int guard = 0; fr && n < max && guard < 4096; guard++) {
		const void *code, *prev, *file, *func;
		int offset;
		bool report;
		if (!frame_at(fr, &code, &offset, &prev, &report))
			return 0;
		if (report) {
			/* code compiled again and again (exec, torch.fx) gets a
			 * freed code object's address back, and its interned name
			 * and file: its line table tells it apart, as for the
			 * line cache (same print: same lines) */
			const void *table = NULL;
			uint64_t print = 0;
			if (!rd_ptr(code, L.co_filename, &file) || !rd_ptr(code, L.co_name, &func) ||
			    !table_print(code, &table, &print))
				return 0;
			uint64_t v[6] = { (uintptr_t)code, (uintptr_t)file, (uintptr_t)func, (uint64_t)(uint32_t)offset,
					  (uintptr_t)table, print };
			for (int i = 0; i < 6; i++)
				h = (h ^ v[i]) * 0x9e3779b97f4a7c15ull, h ^= h >> 29;
			n++;
		}
		fr = prev;
	}
	return n ? (h ? h : 1) : 0;
}

int ingero_python_thread(void)
{
	return layout_proved() ? top_frame() != NULL : -1;
}

int ingero_python_frames(struct ingero_pyframe *out, int max, char *buf, size_t cap)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (s < 0)
		return 0;
	if (s == 0) {
		/* Not a Python process yet (or never): look again now and then, in
		 * case libpython is loaded later. */
		if ((atomic_fetch_add(&retry, 1) & 1023) != 0)
			return 0;
		int r = setup();
		if (r == 0)
			return 0;
		atomic_store_explicit(&state, r > 0 ? 1 : -1, memory_order_release);
		if (r < 0)
			return 0;
	}
	if (!L.is_initialized())
		return 0;
	if (!atomic_load_explicit(&validated, memory_order_acquire)) {
		/* First walk: through reads that fail instead of faulting.  A
		 * frame chain that reads cleanly and type-checks proves the
		 * layout; then plain loads are used. */
		safe_mode = true;
		int n = walk(out, max, buf, cap);
		safe_mode = false;
		if (n > 0)
			atomic_store_explicit(&validated, 1, memory_order_release);
		return n;
	}
	return walk(out, max, buf, cap);
}
