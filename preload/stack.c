/*
 * stack.c — taking and interning the stack of one call.
 *
 * Native frames come from libunwind's unw_backtrace (local-only, with its
 * per-thread trace cache: no malloc, no locks of its own on the fast path),
 * minus the leading frames that are this library's own code.  Python frames
 * come from python_frames.c.  The id is FNV-1a over the instruction pointers
 * and the Python (file, function, line) text, so the same call site gets the
 * same id in every process that shares the image — and the sender, which
 * keeps a copy of every stack it defined, can deduplicate across processes.
 *
 * Symbolising native frames costs dladdr and file reads; it is the sender
 * thread's job, not the hot path's (sender.c).
 *
 * In a Python thread most stacks repeat: the same line of a training loop
 * calls the same operator every step.  libunwind's walk through libtorch
 * and the interpreter costs 20-35 us a stack there (docs/gpu-runs.md,
 * section 9); reading the Python frames' code objects and offsets, well
 * under a microsecond.  So each thread remembers, per key of its Python
 * frames (python_frames.h) and of what the call was (API, kernel), the id
 * of the stack it took there, and gives it again without unwinding.  What
 * that assumes: one bytecode instruction reaches one CUDA API (and kernel)
 * through one native path — true of an operator call; a C++ extension that
 * makes the same call from two places under one Python call gets the first
 * one's native frames for both.  Threads without Python frames (autograd's
 * backward threads, C++ programs) always unwind — so in a Python process
 * such a thread takes a launch's sample only 1 in INGERO_NOPY_SAMPLE_EVERY
 * times it is due: each is a ~60 us walk through libtorch (section 11 of
 * docs/gpu-runs.md: the 86 unwinds of a 100-chunk run were all autograd's)
 * that names no Python line, which is what a launch's sample is for; its
 * syncs and copies (not sampled) keep their stacks, and so does a program
 * without Python.
 */
#define UNW_LOCAL_ONLY
#include "stack.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <string.h>

#include "config.h"
#include "intern.h"
#include "python_frames.h"
#include "record.h"
#include "ring.h"
#include "ingero/wire.h"

static uintptr_t self_lo, self_hi;   /* our executable segment */

_Atomic uint64_t ingero_stacks_unwound, ingero_stacks_remembered, ingero_stacks_thinned, ingero_stacks_ns;

/* launch samples due on this thread while it ran no Python (a Python process's) */
static __thread uint32_t nopy_samples __attribute__((tls_model("initial-exec")));

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (me >= lo && me < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void ingero_stack_init(void)
{
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&ingero_stack_init);
}

/* Per-thread scratch (14 KiB: too much for the stacks of some threads).
 * Only the outermost interposed call of a thread takes a stack, so a signal
 * handler's CUDA call never reuses it while it is in use. */
static __thread struct scratch {
	struct ingero_pyframe pf[INGERO_PY_FRAMES_MAX];
	char sbuf[INGERO_PY_FRAMES_MAX * (INGERO_PY_FILE_MAX + INGERO_PY_FUNC_MAX)];
	union {   /* last: the record ends in a flexible array */
		struct rrec_stack s;
		unsigned char bytes[INGERO_RING_MAX_REC];
	} u;
} scratch __attribute__((tls_model("initial-exec")));

/* Stacks a thread remembers by the key of its Python frames (4 KiB). */
#define MEMO_SLOTS 256
static __thread struct memo_slot {
	uint64_t site, id;
} memo[MEMO_SLOTS] __attribute__((tls_model("initial-exec")));

static int python_max(uint32_t depth)
{
	int maxpy = (int)(depth ? depth : INGERO_PY_FRAMES_MAX);
	return maxpy > INGERO_PY_FRAMES_MAX ? INGERO_PY_FRAMES_MAX : maxpy;
}

uint64_t ingero_stack_take(uint32_t pid, uint64_t what, bool sampled)
{
	/* The record is built in place: header, ips, then Python frames. */
	struct scratch *sc = &scratch;
	struct rrec_stack *st = &sc->u.s;
	uint32_t depth = ingero_cfg.stack_depth;
	void *ips[INGERO_WIRE_MAX_NATIVE + 8];
	int n = 0;

	struct memo_slot *m = NULL;
	uint64_t site = ingero_cfg.python ? ingero_python_site(what, python_max(depth)) : 0;
	if (site) {
		m = &memo[(site >> 32) & (MEMO_SLOTS - 1)];
		/* (a fork child, or a new ring, defines its stacks again) */
		if (m->site == site && ingero_set_has(&ingero_stacks_put, m->id)) {
			atomic_fetch_add_explicit(&ingero_stacks_remembered, 1, memory_order_relaxed);
			return m->id;
		}
	} else if (sampled && ingero_python_thread() == 0 && nopy_samples++ % INGERO_NOPY_SAMPLE_EVERY != 0) {
		atomic_fetch_add_explicit(&ingero_stacks_thinned, 1, memory_order_relaxed);
		return 0;
	}
	atomic_fetch_add_explicit(&ingero_stacks_unwound, 1, memory_order_relaxed);

	if (depth) {
		int want = (int)depth + 8;
		if (want > (int)(sizeof ips / sizeof ips[0]))
			want = (int)(sizeof ips / sizeof ips[0]);
		n = unw_backtrace(ips, want);
	}
	int skip = 0;
	while (skip < n && (uintptr_t)ips[skip] >= self_lo && (uintptr_t)ips[skip] < self_hi)
		skip++;
	int nn = n - skip;
	if (nn > (int)depth)
		nn = (int)depth;
	if (nn < 0)
		nn = 0;

	uint64_t h = INGERO_FNV_SEED;
	for (int i = 0; i < nn; i++) {
		st->ips[i] = (uint64_t)(uintptr_t)ips[skip + i];
		h = ingero_fnv(h, &st->ips[i], sizeof st->ips[i]);
	}
	size_t off = sizeof *st + (size_t)nn * sizeof(uint64_t);

	int np = 0;
	if (ingero_cfg.python) {
		struct ingero_pyframe *pf = sc->pf;
		int got = ingero_python_frames(pf, python_max(depth), sc->sbuf, sizeof sc->sbuf);
		for (int i = 0; i < got; i++) {
			size_t need = sizeof(struct rrec_pyframe) + pf[i].file_len + pf[i].func_len;
			if (off + need > sizeof sc->u.bytes)
				break;
			struct rrec_pyframe fr = { pf[i].line, pf[i].file_len, pf[i].func_len };
			memcpy(sc->u.bytes + off, &fr, sizeof fr);
			memcpy(sc->u.bytes + off + sizeof fr, pf[i].file, pf[i].file_len);
			memcpy(sc->u.bytes + off + sizeof fr + pf[i].file_len, pf[i].func, pf[i].func_len);
			off += need;
			h = ingero_fnv(h, &fr, sizeof fr);
			h = ingero_fnv(h, pf[i].file, pf[i].file_len);
			h = ingero_fnv(h, pf[i].func, pf[i].func_len);
			np++;
		}
	}
	if (nn == 0 && np == 0)
		return 0;
	if (h == 0)
		h = 1;
	if (m)
		*m = (struct memo_slot){ site, h };
	if (ingero_set_has(&ingero_stacks_put, h))
		return h;

	st->h.type = INGERO_RREC_STACK;
	st->h.flags = 0;
	st->h.pad = 0;
	st->h.pid = pid;
	st->id = h;
	st->n_native = (uint16_t)nn;
	st->n_python = (uint16_t)np;
	st->pad = 0;
	if (!ingero_put(sc->u.bytes, (uint32_t)off, false))
		return 0;   /* no definition in the ring: do not refer to it (nor will the memo) */
	ingero_set_add(&ingero_stacks_put, h);
	return h;
}
