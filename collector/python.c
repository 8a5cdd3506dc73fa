/*
 * python.c — Python frames of sampled threads (python.h).
 *
 * Finding CPython: in the process's mapped files, the first whose name
 * starts with "libpython3" or "python3" and defines _PyRuntime.  Its
 * version comes from Py_Version (3.11+) or the file name (3.10); the
 * layout from include/ingero/python_layout.h, or from the runtime's own
 * _Py_DebugOffsets on 3.13.  The BPF side then finds a sampled thread's
 * thread state and copies its frames' code objects and instructions.
 *
 * Naming a frame reads the code object from the live process
 * (process_vm_readv): its type (a code object, or not a frame to show),
 * file, qualified name, first line and line table, decoded here.  Results
 * are cached per process by (code object, instruction); a code object
 * freed and another made at its address in the same process within one
 * session could be named after the old one — a sample mislabelled, never
 * a bad read.
 */
#include "python.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/samples.skel.h"
#include "../bpf/samples.h"
#include "ingero/python_layout.h"
#include "symbolize.h"
#include "tracer.h"

/* A process not (yet) running CPython is looked at again after 10 ms, 20,
 * 40 ... up to 1.28 s, 20 times in all: libpython is mapped by the dynamic
 * loader after exec, and a sample can come first. */
#define RECHECK_NS 10000000ull
#define RECHECKS 20
#define LINES_MAX 65536            /* cached frames per process */
#define TABLE_MAX (1u << 20)       /* a line table larger than this is not read */

struct line {
	uint64_t code, instr;      /* key; code 0 = empty slot */
	const char *file, *func;   /* NULL func: not a code frame */
	int line;
};

struct pyproc {
	uint32_t pid;              /* 0 = free slot */
	int state;                 /* 0 unknown, 1 CPython found, -1 not found */
	int checks;
	uint64_t checked_ns;
	struct ingero_py_layout L;
	uint64_t code_type, str_type;
	struct line *lines;
	size_t cap, n;
};

struct pythons {
	struct pyproc *procs;
	size_t cap, n;
};

struct pythons *pythons_new(void)
{
	return calloc(1, sizeof(struct pythons));
}

static void lines_free(struct pyproc *p)
{
	for (size_t i = 0; i < p->cap; i++) {
		free((char *)p->lines[i].file);
		free((char *)p->lines[i].func);
	}
	free(p->lines);
	p->lines = NULL;
	p->cap = p->n = 0;
}

/* Frames named while a process's cache was full: they live until the next sample. */
static struct line uncached[INGERO_PY_DEPTH];
static int nuncached;

void pythons_free(struct pythons *ps)
{
	for (; nuncached > 0; nuncached--) {
		free((char *)uncached[nuncached - 1].file);
		free((char *)uncached[nuncached - 1].func);
	}
	if (!ps)
		return;
	for (size_t i = 0; i < ps->cap; i++)
		lines_free(&ps->procs[i]);
	free(ps->procs);
	free(ps);
}

static size_t pid_hash(uint32_t pid, size_t cap)
{
	return (pid * 2654435761u) & (cap - 1);
}

static struct pyproc *proc_get(struct pythons *ps, uint32_t pid, int create)
{
	if (create && (ps->n + 1) * 2 > ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 256;
		struct pyproc *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < ps->cap; i++) {
			if (!ps->procs[i].pid)
				continue;
			size_t j = pid_hash(ps->procs[i].pid, cap);
			while (n[j].pid)
				j = (j + 1) & (cap - 1);
			n[j] = ps->procs[i];
		}
		free(ps->procs);
		ps->procs = n;
		ps->cap = cap;
	}
	if (!ps->cap)
		return NULL;
	for (size_t i = pid_hash(pid, ps->cap);; i = (i + 1) & (ps->cap - 1)) {
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
		if (!ps->procs[i].pid) {
			if (!create)
				return NULL;
			memset(&ps->procs[i], 0, sizeof ps->procs[i]);
			ps->procs[i].pid = pid;
			ps->n++;
			return &ps->procs[i];
		}
	}
}

static int rd(void *ctx, uint64_t addr, void *out, size_t n)
{
	uint32_t pid = (uint32_t)(uintptr_t)ctx;
	struct iovec local = { out, n }, remote = { (void *)(uintptr_t)addr, n };

	if (!n)
		return 0;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* 3.x from a file name such as libpython3.10.so.1.0 or python3.12; -1 for
 * none or a free-threaded build ("3.13t"). */
static int minor_of_path(const char *path)
{
	const char *b = strrchr(path, '/'), *v;
	int minor = -1, used = 0;

	b = b ? b + 1 : path;
	v = strstr(b, "python3.");
	if (!v || sscanf(v + 8, "%d%n", &minor, &used) != 1)
		return -1;
	return v[8 + used] == 't' ? -1 : minor;
}

static void push_map(struct tracer *t, uint32_t pid, const struct pyproc *p, uint64_t runtime)
{
	struct py_proc v = {
		.runtime = runtime,
		.rt_interp_main = p->L.rt_interp_main,
		.interp_threads_head = p->L.interp_threads_head,
		.ts_next = p->L.ts_next,
		.ts_thread_id = p->L.ts_thread_id,
		.ts_frame = p->L.ts_frame,
		.cf_current = p->L.cf_current,
		.fr_code = p->L.fr_code,
		.fr_prev = p->L.fr_prev,
		.fr_instr = p->L.fr_instr,
		.fr_owner = p->L.fr_owner,
		.instr_is_int = p->L.minor <= 10,
		.skip_owner = p->L.minor >= 12 ? INGERO_PY_OWNED_BY_CSTACK : 256,
	};
	bpf_map__update_elem(t->samples->maps.py_procs, &pid, sizeof pid, &v, sizeof v, BPF_ANY);
}

/* The runtime's address and layout of pid's CPython; 0 when not found. */
static uint64_t find_cpython(struct tracer *t, uint32_t pid, struct pyproc *p)
{
	static const char *const prefixes[] = { "libpython3", "python3" };
	const char *module = NULL, *prefix = NULL;
	uint64_t runtime = 0;

	for (size_t i = 0; i < 2 && !runtime; i++) {
		prefix = prefixes[i];
		runtime = sym_find(t->sym, pid, prefix, "_PyRuntime", &module);
	}
	if (!runtime || !module)
		return 0;
	uint64_t ver_addr = sym_find(t->sym, pid, prefix, "Py_Version", NULL), ver = 0;
	int minor = -1;
	if (ver_addr && !rd((void *)(uintptr_t)pid, ver_addr, &ver, sizeof(uint32_t)) && (ver >> 24) == 3)
		minor = (int)((ver >> 16) & 0xff);
	else
		minor = minor_of_path(module);
	if (strstr(module, "python3.13t") || strstr(module, "python3.14t"))
		return 0;   /* free-threaded: other layouts */
	const struct ingero_py_layout *L = ingero_py_layout(minor);
	if (!L)
		return 0;
	p->L = *L;
	if (minor >= 13) {
		uint8_t dbg[INGERO_PY_DEBUG_BYTES];
		struct ingero_py_layout d;
		if (!rd((void *)(uintptr_t)pid, runtime, dbg, sizeof dbg) &&
		    ingero_py_layout_debug(&d, dbg, sizeof dbg) == 0)
			p->L = d;
	}
	p->code_type = sym_find(t->sym, pid, prefix, "PyCode_Type", NULL);
	p->str_type = sym_find(t->sym, pid, prefix, "PyUnicode_Type", NULL);
	return p->code_type ? runtime : 0;
}

void python_seen(struct tracer *t, uint32_t pid)
{
	struct pyproc *p;
	uint64_t now, runtime;

	if (!t->py || !t->samples || !t->sym)
		return;
	p = proc_get(t->py, pid, 1);
	if (!p || p->state > 0)
		return;
	now = mono_now_ns();
	if (p->state < 0 && (p->checks >= RECHECKS ||
			     now - p->checked_ns < RECHECK_NS << (p->checks < 8 ? p->checks - 1 : 7)))
		return;
	if (p->checks)
		sym_load_pid(t->sym, pid);   /* libpython may have been mapped since */
	p->checks++;
	p->checked_ns = now;
	runtime = find_cpython(t, pid, p);
	p->state = runtime ? 1 : -1;
	if (runtime)
		push_map(t, pid, p, runtime);
}

/* Forget what pid was: a reused pid starts unknown. */
static void forget(struct tracer *t, uint32_t pid)
{
	struct pyproc *p = proc_get(t->py, pid, 0);

	bpf_map__delete_elem(t->samples->maps.py_procs, &pid, sizeof pid, 0);
	if (p) {
		lines_free(p);
		p->state = 0;
		p->checks = 0;
	}
}

void python_exit(struct tracer *t, uint32_t pid)
{
	if (t->py && t->samples)
		forget(t, pid);
}

void python_fork(struct tracer *t, uint32_t child, uint32_t parent)
{
	struct pyproc *pp, *c;
	struct py_proc v;

	if (!t->py || !t->samples)
		return;
	forget(t, child);
	pp = proc_get(t->py, parent, 0);
	if (!pp || pp->state <= 0)
		return;
	struct pyproc copy = *pp;
	c = proc_get(t->py, child, 1);   /* may move the table: pp is stale */
	if (!c)
		return;
	*c = copy;
	c->pid = child;
	c->lines = NULL;
	c->cap = c->n = 0;
	/* same image, same addresses: the parent's map entry serves the child */
	if (bpf_map__lookup_elem(t->samples->maps.py_procs, &parent, sizeof parent, &v, sizeof v, 0) == 0)
		bpf_map__update_elem(t->samples->maps.py_procs, &child, sizeof child, &v, sizeof v, BPF_ANY);
}

void python_exec(struct tracer *t, uint32_t pid)
{
	if (t->py && t->samples)
		forget(t, pid);
}

/* --- naming frames --------------------------------------------------------------- */

/* The cache slot of (code, instr): its entry, or an empty slot to fill;
 * NULL when it is not there and the cache is full. */
static struct line *line_slot(struct pyproc *p, uint64_t code, uint64_t instr)
{
	if (!p->cap || (p->n + 1) * 2 > p->cap) {
		if (p->n >= LINES_MAX) {
			for (size_t i = (size_t)((code ^ instr * 0x9e3779b97f4a7c15ull) >> 4) & (p->cap - 1);;
			     i = (i + 1) & (p->cap - 1))
				if (!p->lines[i].code || (p->lines[i].code == code && p->lines[i].instr == instr))
					return p->lines[i].code ? &p->lines[i] : NULL;
		}
		size_t cap = p->cap ? p->cap * 2 : 1024;
		struct line *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < p->cap; i++) {
			if (!p->lines[i].code)
				continue;
			size_t j = (size_t)((p->lines[i].code ^ p->lines[i].instr * 0x9e3779b97f4a7c15ull) >> 4) & (cap - 1);
			while (n[j].code)
				j = (j + 1) & (cap - 1);
			n[j] = p->lines[i];
		}
		free(p->lines);
		p->lines = n;
		p->cap = cap;
	}
	for (size_t i = (size_t)((code ^ instr * 0x9e3779b97f4a7c15ull) >> 4) & (p->cap - 1);;
	     i = (i + 1) & (p->cap - 1))
		if (!p->lines[i].code || (p->lines[i].code == code && p->lines[i].instr == instr))
			return &p->lines[i];
}

/* Reads one frame's code object; 0 on success with file/func set (func
 * NULL for a frame that runs no code object). */
static int name_frame(const struct pyproc *p, uint64_t code, uint64_t instr, struct line *out)
{
	void *ctx = (void *)(uintptr_t)p->pid;
	const struct ingero_py_layout *L = &p->L;
	uint64_t type, file, func, table;
	int32_t first = 0, traceable = 0;
	int64_t tlen;
	char fbuf[256], nbuf[128];

	out->file = out->func = NULL;
	out->line = -1;
	if (rd(ctx, code + 8, &type, sizeof type))
		return -1;
	if (type != p->code_type)
		return 0;   /* 3.13 shim frames: no code object */
	if (rd(ctx, code + L->co_filename, &file, sizeof file) || rd(ctx, code + L->co_name, &func, sizeof func) ||
	    rd(ctx, code + L->co_firstlineno, &first, sizeof first) ||
	    rd(ctx, code + L->co_linetable, &table, sizeof table))
		return -1;
	long fl = ingero_py_str(L, rd, ctx, file, p->str_type, fbuf, sizeof fbuf, 1);
	long nl = ingero_py_str(L, rd, ctx, func, p->str_type, nbuf, sizeof nbuf, 0);
	if (fl < 0 || nl < 0)
		return -1;
	int off;
	if (L->minor <= 10) {
		off = (int64_t)instr < 0 ? -1 : (int)instr * 2;
	} else {
		uint64_t base = code + (uint64_t)L->co_bytecode;
		if (instr < base || instr - base > (1u << 30))
			return 0;   /* not started, or not this code's instruction */
		off = (int)(instr - base);
		if (L->co_firsttraceable >= 0 &&
		    !rd(ctx, code + (uint64_t)L->co_firsttraceable, &traceable, sizeof traceable) &&
		    off < 2 * traceable)
			return 0;   /* an entry frame that has not started yet */
	}
	if (table && !rd(ctx, table + 16, &tlen, sizeof tlen) && tlen > 0 && tlen <= (int64_t)TABLE_MAX) {
		uint8_t *buf = malloc((size_t)tlen);
		if (buf && !rd(ctx, table + 32, buf, (size_t)tlen))
			out->line = ingero_py_line(L->minor, buf, (size_t)tlen, first, off);
		free(buf);
	}
	out->file = strndup(fbuf, (size_t)fl);
	out->func = strndup(nbuf, (size_t)nl);
	if (!out->file || !out->func) {
		free((char *)out->file);
		free((char *)out->func);
		out->file = out->func = NULL;
		return -1;
	}
	return 0;
}

int python_rows(struct tracer *t, uint32_t pid, const struct py_frame *f, int n, struct frame_row *rows)
{
	struct pyproc *p;
	int k = 0;

	for (; nuncached > 0; nuncached--) {
		free((char *)uncached[nuncached - 1].file);
		free((char *)uncached[nuncached - 1].func);
	}
	if (!t->py || !(p = proc_get(t->py, pid, 0)) || p->state <= 0)
		return 0;
	for (int i = 0; i < n && i < INGERO_PY_DEPTH; i++) {
		struct line *e, named;

		if (!f[i].code)
			continue;
		e = line_slot(p, f[i].code, f[i].instr);
		if (!e || !e->code) {
			if (name_frame(p, f[i].code, f[i].instr, &named) < 0)
				continue;   /* unreadable now: not cached, tried again next time */
			named.code = f[i].code;
			named.instr = f[i].instr;
			if (e) {
				*e = named;
				p->n++;
			} else {
				uncached[nuncached++] = named;   /* the cache is full */
				e = &uncached[nuncached - 1];
			}
		}
		if (!e->func)
			continue;
		rows[k] = (struct frame_row){ .kind = "python", .depth = (uint32_t)k, .ip = 0,
					      .symbol = e->func, .file = e->file, .line = e->line };
		k++;
	}
	return k;
}
