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
#include "ingero/u64map.h"
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
	uint64_t code, instr;      /* what the entry names (its map key is a hash of them) */
	const char *file, *func;   /* NULL func: not a code frame */
	int line;
};

struct pyproc {
	uint32_t pid;
	int state;                 /* 0 unknown, 1 CPython found, -1 not found */
	int checks;
	uint64_t checked_ns;
	struct ingero_py_layout L;
	uint64_t code_type, str_type;
	size_t hdr_len;            /* bytes of a code object that hold the fields read */
	struct u64map lines;       /* (code, instr) key → struct line */
};

struct pythons {
	struct u64map procs;       /* pid → struct pyproc */
};

struct pythons *pythons_new(void)
{
	return calloc(1, sizeof(struct pythons));
}

static void line_free(struct line *e)
{
	free((char *)e->file);
	free((char *)e->func);
	free(e);
}

static void line_free_each(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	line_free(val);
}

static void lines_free(struct pyproc *p)
{
	ingero_map_each(&p->lines, line_free_each, NULL);
	ingero_map_free(&p->lines);
}

static void proc_free_each(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	lines_free(val);
	free(val);
}

/* Frames named while a process's cache was full: they live until the next sample. */
static struct line *uncached[INGERO_PY_DEPTH];
static int nuncached;

static void uncached_free(void)
{
	while (nuncached > 0)
		line_free(uncached[--nuncached]);
}

void pythons_free(struct pythons *ps)
{
	uncached_free();
	if (!ps)
		return;
	ingero_map_each(&ps->procs, proc_free_each, NULL);
	ingero_map_free(&ps->procs);
	free(ps);
}

static struct pyproc *proc_get(struct pythons *ps, uint32_t pid, int create)
{
	struct pyproc *p = ingero_map_get(&ps->procs, pid);

	if (p || !create)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	if (ingero_map_put(&ps->procs, pid, p) != 0) {
		free(p);
		return NULL;
	}
	return p;
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

/* The bytes of a frame its fields end within (samples.h fr_span), or 0
 * where one lies past what the sampler copies in one read. */
static uint32_t frame_span(const struct ingero_py_layout *L)
{
	uint32_t ends[] = { L->fr_code + 8, L->fr_prev + 8, L->fr_instr + (L->minor <= 10 ? 4 : 8),
			    L->fr_owner >= 0 ? (uint32_t)L->fr_owner + 1 : 0 }, span = 0;
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
		span = ends[i] > span ? ends[i] : span;
	return span <= INGERO_PY_FRAME_SPAN ? span : 0;
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
		.gc_collecting = p->L.gc_collecting,
		.gil_holder_rt = p->L.gil_holder_rt,
		.gil_holder_interp = p->L.gil_holder_interp,
		.fr_span = frame_span(&p->L),
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
	uint32_t ends[] = { INGERO_PY_OB_TYPE, p->L.co_filename, p->L.co_name, p->L.co_firstlineno,
			    p->L.co_linetable, p->L.co_firsttraceable >= 0 ? (uint32_t)p->L.co_firsttraceable : 0 };
	p->hdr_len = 0;
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
		if (ends[i] + 8 > p->hdr_len)
			p->hdr_len = ends[i] + 8;
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
	if (!pp || pp->state <= 0 || !(c = proc_get(t->py, child, 1)))
		return;
	*c = *pp;   /* the same image: layout and addresses; names are found again */
	c->pid = child;
	c->lines = (struct u64map){ 0 };
	c->str_type = pp->str_type;
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

static uint64_t line_key(uint64_t code, uint64_t instr)
{
	return ingero_mix64(code ^ ingero_mix64(instr));
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
	uint8_t hdr[256];   /* the code object's fields we read, in one read */

	out->file = out->func = NULL;
	out->line = -1;
	if (p->hdr_len > sizeof hdr || rd(ctx, code, hdr, p->hdr_len))
		return -1;
	memcpy(&type, hdr + INGERO_PY_OB_TYPE, sizeof type);
	if (type != p->code_type)
		return 0;   /* 3.13 shim frames: no code object */
	memcpy(&file, hdr + L->co_filename, sizeof file);
	memcpy(&func, hdr + L->co_name, sizeof func);
	memcpy(&first, hdr + L->co_firstlineno, sizeof first);
	memcpy(&table, hdr + L->co_linetable, sizeof table);
	if (L->co_firsttraceable >= 0)
		memcpy(&traceable, hdr + L->co_firsttraceable, sizeof traceable);
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
		if (off < 2 * traceable)
			return 0;   /* an entry frame that has not started yet */
	}
	if (table && !rd(ctx, table + INGERO_PY_OB_SIZE, &tlen, sizeof tlen) && tlen > 0 &&
	    tlen <= (int64_t)TABLE_MAX) {
		uint8_t *buf = malloc((size_t)tlen);
		if (buf && !rd(ctx, table + INGERO_PY_BYTES_DATA, buf, (size_t)tlen))
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

	uncached_free();
	if (!t->py || !(p = proc_get(t->py, pid, 0)) || p->state <= 0)
		return 0;
	for (int i = 0; i < n && i < INGERO_PY_DEPTH; i++) {
		uint64_t key = line_key(f[i].code, f[i].instr);
		struct line *e, named;

		if (!f[i].code)
			continue;
		e = ingero_map_get(&p->lines, key);
		if (!e || e->code != f[i].code || e->instr != f[i].instr) {   /* a miss, or a key collision */
			if (name_frame(p, f[i].code, f[i].instr, &named) < 0)
				continue;   /* unreadable now: not cached, tried again next time */
			named.code = f[i].code;
			named.instr = f[i].instr;
			struct line *fresh = malloc(sizeof(*fresh));
			if (!fresh) {
				free((char *)named.file);
				free((char *)named.func);
				continue;
			}
			*fresh = named;
			/* a collision hands the slot to the newer frame (the older one
			 * lives until the next sample: a row may point at it); a full
			 * cache (or no memory) names this one for this sample only.  One
			 * entry at most per frame: uncached[] holds them all. */
			if ((e || p->lines.len < LINES_MAX) && ingero_map_put(&p->lines, key, fresh) == 0) {
				if (e)
					uncached[nuncached++] = e;
			} else {
				uncached[nuncached++] = fresh;
			}
			e = fresh;
		}
		if (!e->func)
			continue;
		rows[k] = (struct frame_row){ .kind = "python", .depth = (uint32_t)k, .ip = 0,
					      .symbol = e->func, .file = e->file, .line = e->line };
		k++;
	}
	return k;
}
