/*
 * util.c — formatting, duration parsing, selection-based percentiles and
 * the u64 -> index map.  See util.h for the conventions.
 */
#include "base/util.h"

#include <ingero/u64map.h>   /* ingero_mix64 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static char *fmt3(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 100 || v == floor(v))
		snprintf(buf, len, "%.0f%s", v, unit);
	else if (v >= 10)
		snprintf(buf, len, "%.1f%s", v, unit);
	else
		snprintf(buf, len, "%.2f%s", v, unit);
	return buf;
}

char *ia_fmt_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		return fmt3(buf, len, (double)ns, "ns");
	if (ns < 1000000)
		return fmt3(buf, len, ns / 1e3, "us");
	if (ns < 1000000000)
		return fmt3(buf, len, ns / 1e6, "ms");
	return fmt3(buf, len, ns / 1e9, "s");
}

char *ia_fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	int l = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)n);
	size_t o = 0;
	for (int i = 0; i < l && o + 1 < len; i++) {
		if (i > 0 && (l - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

char *ia_fmt_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int i = 0;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, len, v >= 100 ? "%.0f %s" : "%.1f %s", v, u[i]);
	return buf;
}

char *ia_fmt_ratio(char *buf, size_t len, double r)
{
	if (r >= 100) {
		char c[32];
		snprintf(buf, len, "%sx", ia_fmt_count(c, sizeof c, (uint64_t)llround(r)));
	} else {
		snprintf(buf, len, "%.1fx", r);
	}
	return buf;
}

char *ia_fmt_pct_range(char *buf, size_t len, double low, double high)
{
	if (llround(low) == llround(high))
		snprintf(buf, len, "%.0f%%", low);
	else
		snprintf(buf, len, "%.0f-%.0f%%", low, high);
	return buf;
}

/* Strict on purpose: strtod() also takes hex ("0x10" was 16 s), "inf",
 * "nan", exponents and leading space, none of which a user means by a
 * time.  Digits with an optional fraction, then an optional unit, nothing
 * else; computed in integers, so "0.3s" is exactly 300000000 ns (digits
 * past the unit's nanosecond rounded half up). */
int ia_parse_dur(const char *s, uint64_t *ns)
{
	if (!s)
		return -1;
	const char *p = s;
	uint64_t whole = 0;
	size_t nwhole = 0;
	for (; *p >= '0' && *p <= '9'; p++, nwhole++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	/* the fraction as num / den, its first 19 digits (the rest is far
	 * below a nanosecond at every unit) */
	uint64_t num = 0, den = 1;
	size_t nfrac = 0;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++)
			if (nfrac < 19) {
				num = num * 10 + (uint64_t)(*p - '0');
				den *= 10;
			}
	if (nwhole + nfrac == 0)
		return -1;
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1000000000ull }, { "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull },
		{ "ns", 1ull }, { "m", 60000000000ull }, { "min", 60000000000ull }, { "h", 3600000000000ull },
	};
	uint64_t mul = 0;
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(p, units[i].unit))
			mul = units[i].ns;
	if (!mul)
		return -1;
	const uint64_t max = 9200000000000000000ull;   /* within int64 */
	if (whole > max / mul)
		return -1;
	uint64_t frac = (uint64_t)(((unsigned __int128)num * mul + den / 2) / den);
	if (whole * mul > max - frac)
		return -1;
	*ns = whole * mul + frac;
	return 0;
}

/* Wirth's selection (Hoare partitioning): afterwards v[k] holds the k-th
 * smallest value, with nothing larger before it and nothing smaller after. */
static void select_k(uint64_t *v, size_t lo_, size_t hi_, size_t k_)
{
	ptrdiff_t l = (ptrdiff_t)lo_, r = (ptrdiff_t)hi_, k = (ptrdiff_t)k_;
	while (l < r) {
		/* median of three: keeps sorted and reverse-sorted input linear */
		ptrdiff_t m = l + (r - l) / 2;
		uint64_t a = v[l], b = v[m], c = v[r];
		uint64_t x = (a < b) ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		ptrdiff_t i = l, j = r;
		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				uint64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < k)
			l = i;
		if (k < i)
			r = j;
	}
}

static size_t rank_of(size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n);
	if (r < 1)
		r = 1;
	if (r > (double)n)
		r = (double)n;
	return (size_t)r - 1;
}

void ia_percentiles(uint64_t *v, size_t n, const double *pcts, uint64_t *out, size_t k)
{
	if (n == 0) {
		for (size_t i = 0; i < k; i++)
			out[i] = 0;
		return;
	}
	/* Select in increasing rank order, each on the part above the previous
	 * rank, so the total cost stays close to one pass per distinct rank. */
	size_t lo = 0;
	size_t done_rank = (size_t)-1;
	size_t order[16];
	size_t m = k < 16 ? k : 16;
	for (size_t i = 0; i < m; i++)
		order[i] = i;
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && pcts[order[j]] < pcts[order[j - 1]]; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < m; i++) {
		size_t r = rank_of(n, pcts[order[i]]);
		if (r != done_rank) {
			select_k(v, lo, n - 1, r);
			done_rank = r;
			lo = r;
		}
		out[order[i]] = v[r];
	}
}

int ia_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int ia_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

uint64_t ia_percentile(uint64_t *v, size_t n, double p)
{
	uint64_t out;
	ia_percentiles(v, n, &p, &out, 1);
	return out;
}

void ia_map_free(struct ia_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

uint32_t ia_map_get(const struct ia_map *m, uint64_t key)
{
	if (!m->cap)
		return UINT32_MAX;
	size_t i = (size_t)ingero_mix64(key) & (m->cap - 1);
	while (m->vals[i]) {
		if (m->keys[i] == key)
			return m->vals[i] - 1;
		i = (i + 1) & (m->cap - 1);
	}
	return UINT32_MAX;
}

static int map_rehash(struct ia_map *m, size_t cap)
{
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *vals = calloc(cap, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		size_t j = (size_t)ingero_mix64(m->keys[i]) & (cap - 1);
		while (vals[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int ia_map_put(struct ia_map *m, uint64_t key, uint32_t val)
{
	if ((m->len + 1) * 2 > m->cap && map_rehash(m, m->cap ? m->cap * 2 : 64) < 0)
		return -1;
	size_t i = (size_t)ingero_mix64(key) & (m->cap - 1);
	while (m->vals[i]) {
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return 0;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[i] = key;
	m->vals[i] = val + 1;
	m->len++;
	return 0;
}

int ia_grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	if (c > SIZE_MAX / sz)
		return -1;
	void *n = realloc(*p, c * sz);
	if (!n)
		return -1;
	ia_hint_huge(n, c * sz);
	*p = n;
	*cap = c;
	return 0;
}

void ia_phase(const char *name)
{
	static int on = -1;
	static struct timespec last, last_cpu;
	struct timespec now, cpu;
	if (on < 0) {
		const char *e = getenv("INGERO_ANALYZE_TIMING");
		on = e && *e == '1';
	}
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* the CPU of all threads too: on a shared machine the wall time of a
	 * phase is mostly the other jobs' */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (last.tv_sec)
		fprintf(stderr, "phase %s %.3f cpu %.3f peak_mb %ld\n", name,
			(double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9,
			(double)(cpu.tv_sec - last_cpu.tv_sec) + (double)(cpu.tv_nsec - last_cpu.tv_nsec) / 1e9,
			ru.ru_maxrss / 1024);
	last = now;
	last_cpu = cpu;
}

void ia_hint_huge(void *p, size_t len)
{
	const uintptr_t pg = 4096;
	uintptr_t a = (uintptr_t)p & ~(pg - 1), b = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);
	/* On unless INGERO_ANALYZE_THP=0 (as the man page says): the arrays are
	 * walked by thread, out of storage order, and a 4 KiB page each is a
	 * TLB miss and a first-touch fault — explain on the 10M + 10M bench
	 * used ~24 % less CPU with the hint (2026-12-04, dev VM: 255,000 faults
	 * instead of 45,000, docs/benchmarks.md; an earlier VM had shown no
	 * gain).  A huge page may need compaction where memory is fragmented;
	 * the kernel falls back to small pages when it finds none.  The whole
	 * pages the block touches: rounded inwards, the hint split a mapped
	 * block's mapping in two, and glibc's mremap of it on the next
	 * realloc failed (a copy, every page faulted again). */
	const char *e = getenv("INGERO_ANALYZE_THP");
	if (!(e && !strcmp(e, "0")) && len >= IA_HUGE_MIN && b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
}

int ia_is_library_file(const char *file)
{
	return !file || file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, "/lib/python3") || strstr(file, "/lib64/python3") || !strncmp(file, "torch/", 6) ||
	       strstr(file, "/torch/") || strstr(file, "/torchinductor_");   /* Inductor's generated code */
}

int ia_is_torch_model_file(const char *file)
{
	return file && (strstr(file, "torch/autograd/") || strstr(file, "torch/optim/") || strstr(file, "torch/nn/"));
}

int ia_is_compile_file(const char *file)
{
	static const char *const parts[] = {
		/* not aot_autograd.py, _aot_autograd runtime wrappers, codecache.py
		 * (CompiledFxGraph.__call__), guards.py: their code also runs at
		 * every call of a compiled function */
		"torch/_dynamo/convert_frame.py", "torch/_dynamo/symbolic_convert.py",
		"torch/_dynamo/output_graph.py", "torch/_dynamo/variables/",
		"torch/_dynamo/bytecode_transformation.py",
		"torch/_functorch/_aot_autograd/collect_metadata_analysis.py",
		"torch/_functorch/partitioners.py", "torch/_inductor/compile_fx.py", "torch/_inductor/graph.py",
		"torch/_inductor/lowering.py", "torch/_inductor/scheduler.py", "torch/_inductor/ir.py",
		"torch/_inductor/codegen/", "torch/_inductor/select_algorithm.py",
		"torch/_inductor/async_compile.py", "torch/_inductor/compile_worker/", "torch/_inductor/fx_passes/",
		"torch/_inductor/autotune_process.py", "triton/compiler/",
	};
	if (!file)
		return 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (strstr(file, parts[i]))
			return 1;
	return 0;
}

char *ia_short_symbol(char *buf, size_t len, const char *sym)
{
	size_t o = 0;
	int depth = 0, cut = 0;

	if (!len)
		return buf;
	for (const char *p = sym; *p && o + 1 < len; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		/* the parameter list: the first '(' outside template arguments, except
		 * "operator()", "(anonymous namespace)" and a name that is all in
		 * parentheses, such as "(unnamed frames)" */
		if (*p == '(' && depth == 0 && p > sym && strncmp(p, "()", 2) && strncmp(p, "(anonymous", 10) &&
		    !(p - sym >= 8 && !strncmp(p - 8, "operator", 8))) {
			if (o + 3 <= len) {
				buf[o++] = '(';
				buf[o++] = ')';
			}
			cut = 1;
			break;
		}
		buf[o++] = *p;
	}
	buf[o] = 0;
	if (!cut && strlen(sym) >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}
