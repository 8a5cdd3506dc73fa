/*
 * stacks.c — cached names of stacks (see stacks.h).  A lookup that meets a
 * damaged page answers NULL and remembers the error: the names are asked
 * for deep inside the analysis, so the caller checks once, at the end,
 * with ia_stack_names_error(), and fails rather than print a changed name.
 */
#include "load/stacks.h"

#include "load/aten_ops.h"
#include "load/db.h"
#include "load/frames.h"
#include "load/mechanisms.h"
#include "load/phase_rules.h"
#include "base/util.h"

#include <ingero/fnv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *python, *func, *leaf, *native, *user;
	char *op_inner, *op_outer;   /* the innermost and outermost ATen operation entered (aten_ops.h), or NULL */
	char *module;            /* outermost library module being imported at top level, or NULL */
	int runs_python, compiling;
	/* a DataLoader worker's: a frame of its fetch (the Dataset's code runs
	 * under it), a frame of its loop, and the innermost frame of the user's
	 * own code (user) inside the fetch (the __getitem__ line) */
	int fetching, worker_loop, user_in_fetch;
	int why;                 /* enum ia_phase_why: the highest-ranked reason among its frames */
	unsigned phases;         /* 1 << enum ia_phase of each native or Python frame's reason */
	int torch_data;          /* a Python frame of torch.utils.data */
	int mech;                /* enum ia_mech (see the end of lookup) */
	unsigned hints;          /* enum ia_frame_hint of its frames, OR-ed */
	int instrument;          /* enum ia_instrument of its innermost frame that names one */
	int user_compiled;       /* its user frame runs under torch.compile's wrapper (eval_frame.py outside it) */
	int in_alloc;            /* a native frame is PyTorch's caching allocator's malloc */
	int in_conv;             /* a native frame is ATen's cuDNN convolution (forward or backward) */
	int hf_generate;         /* a Python frame is Transformers' generation (model.generate) */
	int py_whole;            /* its outermost Python frame begins a thread: a module's or threading's
	                          * bootstrap (the library cuts a launch's Python stack at its innermost
	                          * frames: a deep model's hides what called it) */
};

/* What one frame says by itself, whatever stack it is in: its kind and
 * strings decide it (not its line or depth). */
struct facts {
	char *symbol, *module, *file;   /* with kind, the key */
	char *aten;                     /* the ATen operation a native frame enters, or NULL */
	int kind;
	int why;                        /* enum ia_phase_why */
	int mech;                       /* enum ia_mech of its kind's classifier */
	int instrument;                 /* enum ia_instrument */
	unsigned hints;                 /* enum ia_frame_hint */
	unsigned compile : 1, fetch : 1, worker : 1, gc : 1, library : 1, import : 1, torch_data : 1;
	unsigned dynamo_run : 1;        /* torch.compile's runtime wrapper (not compile-time code) */
	unsigned compile_call : 1;      /* torch.compile() (torch/__init__.py's compile) */
	unsigned alloc_malloc : 1;      /* PyTorch's caching allocator allocating a block */
	unsigned conv_op : 1;           /* ATen's cuDNN convolution, forward or backward */
	unsigned hf_generate : 1;       /* Hugging Face Transformers' generation loop */
};

struct ia_stack_names {
	sqlite3 *own;        /* its own connection, or NULL (the caller's) */
	struct ia_frames *q;
	struct ia_map map;   /* stack id -> entries index */
	struct entry *e;
	size_t n, cap;
	/* The string classifiers cost most of naming a stack, and stacks share
	 * their frames (c07 of the corpus: 533,704 frames of 5,332 stacks, 4,381
	 * distinct in kind and strings): each is classified once, found by an
	 * FNV-1a hash of its kind and strings, compared whole (a collision
	 * moves on to the next key). */
	struct ia_map fmap;  /* hash -> facts index */
	struct ia_map kmap;  /* a frame's key (frames.h) and kind -> facts index: not hashed again */
	struct facts *facts;
	size_t nfacts, facts_cap;
	uint64_t last_id;   /* one-entry memo: consecutive lookups mostly repeat */
	uint32_t last;
	int failed;         /* a lookup could not read a stack's frames: err says why */
	char err[320];
};

struct ia_stack_names *ia_stack_names_new(sqlite3 *db)
{
	struct ia_stack_names *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	char err[320];
	/* A connection of its own, without SQLite's mutex: the names are read
	 * a column at a time (every sqlite3_column_* takes the shared
	 * connection's mutex: a quarter of explain's CPU on c07), and the
	 * cache is one thread's (analysis.c); the shared one if it cannot. */
	const char *path = sqlite3_db_filename(db, "main");
	n->own = path && *path ? ia_db_reopen(path, err, sizeof err) : NULL;
	n->q = ia_frames_new(n->own ? n->own : db, err, sizeof err);   /* names are optional evidence: without them, NULLs */
	return n;
}

void ia_stack_names_free(struct ia_stack_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		free(n->e[i].python);
		free(n->e[i].func);
		free(n->e[i].leaf);
		free(n->e[i].native);
		free(n->e[i].user);
		free(n->e[i].module);
		free(n->e[i].op_inner);
		free(n->e[i].op_outer);
	}
	free(n->e);
	ia_map_free(&n->map);
	for (size_t i = 0; i < n->nfacts; i++) {
		free(n->facts[i].symbol);
		free(n->facts[i].module);
		free(n->facts[i].file);
		free(n->facts[i].aten);
	}
	free(n->facts);
	ia_map_free(&n->fmap);
	ia_map_free(&n->kmap);
	ia_frames_free(n->q);
	sqlite3_close(n->own);
	free(n);
}

static void classify(struct facts *x, const struct ia_frame *f)
{
	const char *sym = f->symbol, *file = f->file;
	memset(x, 0, sizeof *x);
	x->kind = f->kind;
	if (f->kind == IA_FRAME_PYTHON) {
		x->compile = file && ia_is_compile_file(file);
		/* torch.compile() itself: its first call imports Dynamo and Inductor */
		x->compile_call = file && sym && !strcmp(sym, "compile") && strstr(file, "torch/__init__.py");
		x->dynamo_run = file && strstr(file, "torch/_dynamo/eval_frame.py");
		x->fetch = file && strstr(file, "torch/utils/data/_utils/fetch.py");
		x->worker = file && strstr(file, "torch/utils/data/_utils/worker.py");
		x->torch_data = file && strstr(file, "torch/utils/data/");
		x->hf_generate = file && strstr(file, "transformers/generation/");
		x->why = ia_python_frame_why(file, sym);
		x->mech = ia_python_frame_mech(file, sym);
		x->hints = ia_python_frame_hints(file, sym);
		x->library = ia_is_library_file(file);
		x->import = file && sym && !strcmp(sym, "<module>") && file[0] != '<' && x->library;
		x->gc = ia_is_gc_frame(file, sym);
		x->instrument = ia_frame_instrument(1, sym, NULL, file);
	} else if (f->kind == IA_FRAME_NATIVE) {
		char op[100];
		if (ia_aten_op(sym, op, sizeof op))
			x->aten = strdup(op);   /* (out of memory: no name) */
		x->why = ia_native_frame_why(sym);
		x->mech = ia_native_frame_mech(sym, f->module);
		x->hints = ia_native_frame_hints(sym);
		x->instrument = ia_frame_instrument(0, sym, f->module, NULL);
		/* the allocator's malloc, or a tensor's allocation above it (where
		 * libc10_cuda's own frames have no symbols: c70), demangled or not */
		x->alloc_malloc = sym && (strstr(sym, "CachingAllocator::Native::DeviceCachingAllocator::malloc(") ||
					  strstr(sym, "22DeviceCachingAllocator6mallocE") ||
					  strstr(sym, "at::detail::empty_generic(") ||
					  strstr(sym, "at::detail::empty_strided_generic(") ||
					  strstr(sym, "_ZN2at6detail13empty_genericE") ||
					  strstr(sym, "_ZN2at6detail21empty_strided_genericE"));
		/* (mangled: _ZN2at6native17cudnn_convolution..., 20convolution_backward) */
		x->conv_op = sym && (strstr(sym, "cudnn_convolution") || strstr(sym, "convolution_backward"));
	} else if (f->kind == IA_FRAME_KERNEL) {
		x->mech = ia_kernel_frame_mech(sym);
	}
}

/* NULL and "" hash apart: the classifiers tell them apart */
static uint64_t hash_str(uint64_t h, const char *s)
{
	return s ? ingero_fnv(h, s, strlen(s) + 1) : ingero_fnv(h, "\377", 1);
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int dup_str(char **d, const char *s)
{
	*d = s ? strdup(s) : NULL;
	return !s || *d;
}

/* f's facts from the memo by its strings, else classified into *tmp and
 * kept (tmp itself when memory runs out: the same answers, not kept).
 * Valid until the next call. */
static const struct facts *facts_by_strings(struct ia_stack_names *n, const struct ia_frame *f, struct facts *tmp)
{
	unsigned char kind = (unsigned char)f->kind;
	uint64_t h = hash_str(hash_str(hash_str(ingero_fnv(INGERO_FNV_SEED, &kind, 1), f->symbol), f->module), f->file);
	uint32_t i;
	for (; (i = ia_map_get(&n->fmap, h)) != UINT32_MAX; h++) {
		const struct facts *x = &n->facts[i];
		if (x->kind == (int)f->kind && same_str(x->symbol, f->symbol) && same_str(x->module, f->module) &&
		    same_str(x->file, f->file))
			return x;
	}
	classify(tmp, f);
	if (ia_grow((void **)&n->facts, &n->facts_cap, n->nfacts + 1, sizeof *n->facts) < 0) {
		free(tmp->aten);   /* (tmp's answers without the operation's name) */
		tmp->aten = NULL;
		return tmp;
	}
	struct facts *x = &n->facts[n->nfacts];
	*x = *tmp;
	if (!dup_str(&x->symbol, f->symbol) || !dup_str(&x->module, f->module) || !dup_str(&x->file, f->file) ||
	    ia_map_put(&n->fmap, h, (uint32_t)n->nfacts) < 0) {
		free(x->symbol);
		free(x->module);
		free(x->file);
		free(tmp->aten);
		tmp->aten = NULL;
		return tmp;
	}
	n->nfacts++;
	return x;
}

/* The same, first by the frame's key (a list's frame met again: no hash of
 * its strings). */
/* The file name of a library an unnamed native frame is in, where it says
 * the sample ran that library's code: not the interpreter's (a stripped
 * python3.12 is Python running), not the C library's helpers (memcpy's
 * variants under a named caller), not an unknown mapping. */
static const char *unnamed_library(const char *module)
{
	static const char *const skip[] = { "libc.so", "libc-", "libm.so", "libpthread", "ld-linux", "libstdc++",
					     "libgcc_s", "libdl", NULL };
	if (!module || !*module || ia_module_is_cpython(module))
		return NULL;
	const char *base = ia_module_base(module);
	for (const char *const *k = skip; *k; k++)
		if (!strncmp(base, *k, strlen(*k)))
			return NULL;
	return base;
}

static const struct facts *facts_of(struct ia_stack_names *n, const struct ia_frame *f, struct facts *tmp)
{
	if (f->key == UINT32_MAX)
		return facts_by_strings(n, f, tmp);
	uint64_t key = (uint64_t)f->key << 2 | ((unsigned)f->kind & 3);
	uint32_t i = ia_map_get(&n->kmap, key);
	if (i != UINT32_MAX)
		return &n->facts[i];
	const struct facts *x = facts_by_strings(n, f, tmp);
	if (x != tmp)
		(void)ia_map_put(&n->kmap, key, (uint32_t)(x - n->facts));   /* (out of memory: hashed next time) */
	return x;
}

static const struct entry *lookup(struct ia_stack_names *n, uint64_t id)
{
	static const struct entry none;
	if (!id || !n || !n->q)
		return &none;
	if (n->n && id == n->last_id)
		return &n->e[n->last];
	uint32_t i = ia_map_get(&n->map, id);
	if (i != UINT32_MAX) {
		n->last_id = id;
		n->last = i;
		return &n->e[i];
	}
	if (ia_grow((void **)&n->e, &n->cap, n->n + 1, sizeof *n->e) < 0)
		return &none;
	struct entry *e = &n->e[n->n];
	memset(e, 0, sizeof *e);
	char native[512] = "";
	const char *op_inner = NULL, *op_outer = NULL;   /* (the facts' strings: they outlive the walk) */
	int py_whole = 0;   /* (frames innermost first: the last Python frame's answer stands) */
	int nn = 0, leaf_in_cpython = 0, gc = 0;
	/* the innermost unnamed frame's library, before any named one: copied,
	 * a row's strings last only until the next row is read */
	char leaf_unnamed[160] = "";
	enum ia_mech kmech = IA_MECH_NONE, nmech = IA_MECH_NONE, pmech = IA_MECH_NONE;
	struct ia_frame f;
	char err[sizeof n->err];
	int import_seen = 0, import_in_compile = 0;
	ia_frames_start(n->q, id);
	int rc;
	while ((rc = ia_frames_next(n->q, &f, err, sizeof err)) > 0) {
		int py = f.kind == IA_FRAME_PYTHON, nat = f.kind == IA_FRAME_NATIVE;
		const char *sym = f.symbol, *file = f.file;
		struct facts tmp;
		const struct facts *x = facts_of(n, &f, &tmp);
		if (py)
			py_whole = sym && file && (!strcmp(sym, "<module>") || strstr(file, "/threading.py") ||
						   strstr(file, "/multiprocessing/"));
		if (x->compile)
			e->compiling = 1;
		if (x->instrument && !e->instrument)
			e->instrument = x->instrument;
		if (x->dynamo_run && e->user)   /* (Python frames innermost first: outside the user's) */
			e->user_compiled = 1;
		if (x->alloc_malloc)
			e->in_alloc = 1;
		if (x->conv_op)
			e->in_conv = 1;
		if (x->hf_generate)
			e->hf_generate = 1;
		if (x->fetch)
			e->fetching = 1;
		if (x->worker)
			e->worker_loop = 1;
		/* (Python frames innermost first: an import seen, then a
		 * compile function running outside every import — torch.compile
		 * importing Dynamo, Inductor, Triton as it compiles: c18, c07.
		 * Not a Dynamo module's top-level code: the optimizer's first
		 * step imports torch._dynamo, whose modules import each other) */
		if (py && x->why == IA_WHY_IMPORT) {
			import_seen = 1;
			import_in_compile = 0;
		} else if (py && import_seen && (x->compile || x->compile_call) && !(sym && !strcmp(sym, "<module>"))) {
			import_in_compile = 1;
		}
		if (x->why > e->why)
			e->why = x->why;
		if (py || nat)
			e->phases |= 1u << ia_why_phase((enum ia_phase_why)x->why);
		e->torch_data |= x->torch_data;
		/* frames: kernel, native, python, each innermost first: the
		 * innermost frame of each kind that names a mechanism */
		if (f.kind == IA_FRAME_KERNEL && !kmech)
			kmech = x->mech;
		else if (nat && !nmech)
			nmech = x->mech;
		else if (py && !pmech)
			pmech = x->mech;
		e->hints |= x->hints;
		/* frames come innermost first: the last library <module> frame is
		 * the outermost import, the one the program asked for */
		if (x->import) {
			free(e->module);
			e->module = strdup(file);
		}
		if (x->gc) {
			gc = 1;   /* not a line: the lines are the frames under it */
			continue;
		}
		if (py && file && (!e->python || !e->user)) {
			char buf[600];
			snprintf(buf, sizeof buf, "%s:%d", file, (int)f.line);
			if (!e->python) {
				e->python = strdup(buf);
				if (sym)
					e->func = strdup(sym);
			}
			if (!e->user && !x->library) {
				e->user = strdup(buf);
				e->user_in_fetch = !e->fetching;   /* (innermost first: inside one, if one comes) */
			}
		} else if (nat && (!sym || !*sym) && !e->leaf && !*leaf_unnamed) {
			/* a library without symbols (Pillow's bundled libjpeg):
			 * native code all the same, not the interpreter's */
			const char *lib = unnamed_library(f.module);
			if (lib)
				snprintf(leaf_unnamed, sizeof leaf_unnamed, "%s", lib);
		} else if (nat && sym && *sym) {
			if (x->aten) {   /* innermost first: the first is the innermost, the last the outermost */
				if (!op_inner)
					op_inner = x->aten;
				op_outer = x->aten;
			}
			if (!e->leaf) {
				leaf_in_cpython = ia_module_is_cpython(f.module);
				e->leaf = strdup(sym);
			}
			if (nn < 3) {
				size_t l = strlen(native);
				snprintf(native + l, sizeof native - l, "%s%s", nn ? " < " : "", sym);
				nn++;
			}
		}
	}
	if (rc < 0) {
		/* a damaged page: no name rather than a wrong one, and the
		 * caller learns it from ia_stack_names_error() */
		if (!n->failed)
			snprintf(n->err, sizeof n->err, "%s", err);
		n->failed = 1;
		free(e->python);
		free(e->func);
		free(e->leaf);
		free(e->user);
		free(e->module);
		return &none;
	}
	e->py_whole = py_whole;
	e->op_inner = op_inner ? strdup(op_inner) : NULL;   /* (out of memory: no name) */
	e->op_outer = op_outer ? strdup(op_outer) : NULL;
	if ((int)ia_hints_why(e->hints) > e->why)   /* what two frames say together */
		e->why = ia_hints_why(e->hints);
	/* an import torch.compile makes is its compiling, not the program's
	 * start-up (the phases: compilation, and its repeats) */
	if (e->why == IA_WHY_IMPORT && import_in_compile) {
		e->why = IA_WHY_TORCH_COMPILE;
		e->phases |= 1u << ia_why_phase(IA_WHY_TORCH_COMPILE);
	}
	/* the sampler's "<gc>" frame first (the interpreter said this thread
	 * collects: a free or a fault under it is the collection's); then the
	 * kernel's (a fault inside a memset is the fault); a Python
	 * frame that says pickling or importing names the memcpy and malloc
	 * under it; else the native frames', else Python's */
	e->mech = gc ? IA_MECH_GC : kmech ? kmech
		: (pmech == IA_MECH_PICKLE || pmech == IA_MECH_IMPORT) && nmech != IA_MECH_GC ? pmech
		: nmech ? nmech : pmech;
	if (nn)
		e->native = strdup(native);
	if (*leaf_unnamed && !e->leaf) {
		char buf[200];
		snprintf(buf, sizeof buf, "code in %s", leaf_unnamed);
		e->leaf = strdup(buf);
	}
	e->runs_python = e->python && (!e->leaf || leaf_in_cpython);
	if (ia_map_put(&n->map, id, (uint32_t)n->n) < 0)
		return &none;
	n->last_id = id;
	n->last = (uint32_t)n->n;
	return &n->e[n->n++];
}

int ia_stack_names_error(const struct ia_stack_names *n, char *err, size_t errlen)
{
	if (!n || !n->failed)
		return 0;
	snprintf(err, errlen, "%s", n->err);
	return -1;
}

const char *ia_stack_python(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->python; }
const char *ia_stack_python_func(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->func; }
const char *ia_stack_leaf(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->leaf; }
const char *ia_stack_native(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->native; }
int ia_stack_runs_python(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->runs_python; }
int ia_stack_compiling(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->compiling; }
int ia_stack_loading(struct ia_stack_names *n, uint64_t id)
{
	const struct entry *e = lookup(n, id);
	return e->fetching || (!e->worker_loop && e->user);
}

const char *ia_stack_loading_line(struct ia_stack_names *n, uint64_t id)
{
	const struct entry *e = lookup(n, id);
	if (e->fetching)
		return e->user_in_fetch ? e->user : e->python;
	return e->user ? e->user : e->python;
}
int ia_stack_phase_why(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->why; }
int ia_stack_has_phase(struct ia_stack_names *n, uint64_t id, int phase)
{
	return (lookup(n, id)->phases >> phase) & 1;
}
int ia_stack_torch_data(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->torch_data; }
unsigned ia_stack_phase_hints(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->hints; }
const char *ia_stack_import_module(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->module; }
const char *ia_stack_user_python(struct ia_stack_names *n, uint64_t id) { return lookup(n, id)->user; }
const char *ia_stack_aten(struct ia_stack_names *n, uint64_t id, int outermost)
{
	const struct entry *e = lookup(n, id);
	return outermost ? e->op_outer : e->op_inner;
}

const char *ia_stack_source(struct ia_stack_names *n, uint64_t id)
{
	const struct entry *e = lookup(n, id);
	return e->user ? e->user : e->python;
}

int ia_stack_mech(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->mech;
}

int ia_stack_instrument(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->instrument;
}

int ia_stack_user_compiled(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->user_compiled;
}

int ia_stack_in_alloc(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->in_alloc;
}

int ia_stack_in_conv(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->in_conv;
}

int ia_stack_hf_generate(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->hf_generate;
}

int ia_stack_py_whole(struct ia_stack_names *n, uint64_t stack_id)
{
	return lookup(n, stack_id)->py_whole;
}
