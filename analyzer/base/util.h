/*
 * util.h — small helpers every analyzer module uses: human formatting of
 * durations, counts and byte sizes, order statistics, and an open-addressing
 * map from 64-bit keys to dense indexes.
 *
 * Order statistics use the nearest-rank definition (the p-th percentile of n
 * sorted values is the value at rank ceil(p * n / 100)), computed by
 * selection, not by sorting, so that a 10M-value percentile costs O(n).
 */
#ifndef IA_UTIL_H
#define IA_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "25us", "42.1ms", "2.90s", "850ns" (3 significant digits). */
char *ia_fmt_dur(char *buf, size_t len, uint64_t ns);
/* "1,638" */
char *ia_fmt_count(char *buf, size_t len, uint64_t n);
/* "1.5 GiB", "340 KiB", "12 B" */
char *ia_fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* ratio like "1,638x" or "3.4x" */
char *ia_fmt_ratio(char *buf, size_t len, double r);

/* "74-89%" for bounds in percent, or "87%" when they round to the same value. */
char *ia_fmt_pct_range(char *buf, size_t len, double low, double high);

/* Parse "1.5s", "200ms", "30us", "10ns", "2m", "1h", plain number = seconds:
 * decimal digits with an optional fraction and an optional unit, nothing
 * else (no sign, space, hex, exponent, inf or nan).  -1 on error. */
int ia_parse_dur(const char *s, uint64_t *ns);
/* A demangled C++ function name for display: its parameter list dropped
 * ("at::native::stack(c10::ArrayRef<at::Tensor>, long)" -> "at::native::stack()"),
 * with a trailing " const"; other names copied.  Cut to len with "..." at the end. */
char *ia_short_symbol(char *buf, size_t len, const char *sym);
/* 1 for a Python file that is not the user's own: the standard library,
 * installed packages (site-packages, dist-packages), PyTorch's own files,
 * the code torch.compile generates (/tmp/torchinductor_USER/), frozen
 * modules ("<frozen ...>"). */
int ia_is_library_file(const char *file);
/* A "file:line" in PyTorch's own model code — autograd, the optimizers,
 * torch.nn's modules — where the tensors a model computes are allocated:
 * memory made there is the model's, not a buffer the user's line asked for
 * (numpy.ones, torch.empty are called from the user's line). */
int ia_is_torch_model_file(const char *file);
/* 1 when a Python file is torch.compile's compile-time code: TorchDynamo's
 * tracer, AOTAutograd's and Inductor's compilers, Triton's compiler —
 * files that run while a graph is being compiled, not when a compiled one
 * runs (Inductor's runtime/, Dynamo's eval_frame.py are left out). */
int ia_is_compile_file(const char *file);

/* qsort/bsearch orders of uint64_t and int64_t, ascending. */
int ia_cmp_u64(const void *a, const void *b);
int ia_cmp_i64(const void *a, const void *b);

/* Percentiles of v[0..n): fills out[k] for pcts[k] (0 < p <= 100); v is reordered. */
void ia_percentiles(uint64_t *v, size_t n, const double *pcts, uint64_t *out, size_t k);
/* One percentile (v reordered). 0 when n == 0. */
uint64_t ia_percentile(uint64_t *v, size_t n, double p);

/* u64 -> u32 map (open addressing, linear probing); key 0 is allowed. */
struct ia_map {
	uint64_t *keys;
	uint32_t *vals;   /* stored value + 1; 0 = empty slot */
	size_t cap, len;
};
void ia_map_free(struct ia_map *m);
/* Value for key, or UINT32_MAX when absent. */
uint32_t ia_map_get(const struct ia_map *m, uint64_t key);
/* Insert (or overwrite); -1 on out of memory. */
int ia_map_put(struct ia_map *m, uint64_t key, uint32_t val);

/* Growable array helper: ensures *cap >= need, elements of size sz (the
 * capacity doubles); from IA_HUGE_MIN bytes on the block is hinted
 * (ia_hint_huge), so that what it grows into is faulted in 2 MiB at a
 * time.  -1 on OOM. */
int ia_grow(void **p, size_t *cap, size_t need, size_t sz);

/* Overlap length of [a0,a1) and [b0,b1). */
static inline uint64_t ia_overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/* The first of n sorted, disjoint windows (pairs w[2i], w[2i+1]) ending
 * after ts: n when none. */
static inline size_t ia_window_after(const uint64_t *w, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w[2 * mid + 1] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}


/* With INGERO_ANALYZE_TIMING=1 in the environment, prints "phase NAME
 * SECONDS cpu SECONDS peak_mb MB" (wall and all threads' CPU time since the
 * previous mark, the peak resident set so far) on stderr; for profiling. */
void ia_phase(const char *name);

/* Asks for transparent huge pages over a large allocation (the big row
 * arrays), unless INGERO_ANALYZE_THP=0.  A hint only. */
#define IA_HUGE_MIN (8u << 20)
void ia_hint_huge(void *p, size_t len);

#endif
