/*
 * chain_phases.c — the one-time phases as findings of their own:
 * startup, compilation, recompilation, autotuning (phases.h says how the
 * run is cut into them; docs/chains.md lists the rules).
 *
 * Each is judged by what it cost the whole window W (its time in W), with
 * the gaps' thresholds.  Start-up and a single compilation or autotuning
 * are paid once per process: at most MEDIUM, since a longer run amortises
 * them.  Compiling or autotuning again after steps ran (new shapes, failed
 * guards) recurs with the data: that may be HIGH.  chains.c then keeps any
 * of them from outranking a steady-state cause that costs at least as much.
 * The per-epoch phase (epoch boundaries) is chain_epochs.c's, with the
 * helpers shared here (chain_build.h).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Time in [a, b) of the episodes of phase p that are (repeat = 1) or are
 * not (repeat = 0) repeats. */
static uint64_t episodes_ns(const struct ia_phases *ph, enum ia_phase p, int repeat, uint64_t a, uint64_t b,
			    size_t *n)
{
	uint64_t ns = 0;
	*n = 0;
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase != p || (e->repeat != 0) != repeat)
			continue;
		uint64_t in = ia_overlap(e->start, e->end, a, b);
		if (!in)
			continue;
		ns += in;
		(*n)++;
	}
	return ns;
}

/* "importing Python modules 96%, loading CUDA libraries' kernels 3%" */
void ia_phase_reasons(char *buf, size_t len, const struct ia_phase_detail *d)
{
	uint64_t left[IA_WHY_N];
	memcpy(left, d->why, sizeof left);
	left[IA_WHY_NONE] = 0;
	buf[0] = 0;
	for (int k = 0; k < 3; k++) {
		int best = IA_WHY_NONE;
		for (int w = 1; w < IA_WHY_N; w++)
			if (left[w] > left[best])
				best = w;
		if (best == IA_WHY_NONE)
			break;
		ia_addf(buf, len, "%s%s %.0f%%", k ? ", " : "", ia_why_name((enum ia_phase_why)best),
			ia_pct(left[best], d->samples));
		left[best] = 0;
	}
}

static void lines_text(char *buf, size_t len, const struct ia_gap_line *l, size_t n, uint64_t total, size_t max)
{
	buf[0] = 0;
	for (size_t i = 0; i < n && i < max; i++)
		ia_addf(buf, len, "%s%s %.0f%%", i ? ", " : "", l[i].line, ia_pct(l[i].count, total));
}

static void lines_json(cJSON *ev, const char *key, const struct ia_gap_line *l, size_t n, size_t max)
{
	cJSON *arr = cJSON_AddArrayToObject(ev, key);
	for (size_t i = 0; i < n && i < max; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", l[i].line);
		ia_json_u64(o, "samples", l[i].count);
		cJSON_AddItemToArray(arr, o);
	}
}

/* What the samples of a phase finding show: the recompilation finding's
 * are its repeats' own. */
static const struct ia_phase_detail *detail_of(const struct ia_analysis *a, enum ia_kind kind, enum ia_phase p)
{
	return kind == IA_KIND_RECOMPILATION ? &a->ph.recompile : &a->ph.d[p];
}

void ia_phase_evidence(struct ia_chain *c, const struct ia_analysis *a, enum ia_phase p, uint64_t ns,
		       size_t episodes, size_t repeats)
{
	const struct ia_phase_detail *d = detail_of(a, c->kind, p);
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "window_ns", a->idle.window_ns);
	ia_json_u64(ev, "phase_ns", ns);
	ia_json_round(ev, "share_of_window", ia_idle_impact(&a->idle, ns), 4);
	ia_json_u64(ev, "episodes", episodes);
	ia_json_u64(ev, "repeats", repeats);
	ia_json_u64(ev, "samples", d->samples);
	cJSON *r = cJSON_AddObjectToObject(ev, "reasons");   /* samples by reason */
	for (int w = 1; w < IA_WHY_N; w++)
		if (d->why[w])
			ia_json_u64(r, ia_why_name((enum ia_phase_why)w), d->why[w]);
	lines_json(ev, "user_lines", d->lines, d->nlines, 5);
	lines_json(ev, "frames", d->frames, d->nframes, 5);
	if (d->nmodules)
		lines_json(ev, "modules", d->modules, d->nmodules, 5);
}

int ia_phase_chain(struct ia_analysis *a, size_t *cap, enum ia_kind kind, enum ia_phase p, uint64_t ns,
		   int once, struct ia_chain **out)
{
	double impact = ia_idle_impact(&a->idle, ns);
	enum ia_severity sev = ia_by_share(impact, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	*out = NULL;
	if (sev == IA_SEV_NONE)
		return 0;
	int amortised = once && sev > IA_SEV_MEDIUM;
	if (amortised)   /* paid once per process: a longer run amortises it */
		sev = IA_SEV_MEDIUM;
	struct ia_chain *c = ia_chain_new(a, cap, kind);
	if (!c)
		return -1;
	c->sev = sev;
	c->amortised = amortised;
	c->impact = impact;
	c->cost_ns = ns;
	const struct ia_phase_detail *d = detail_of(a, kind, p);
	char buf[600];
	ia_phase_reasons(buf, sizeof buf, d);
	if (buf[0])
		ia_chain_line(c, "[HOST] what its samples show: %s (%s samples)", buf,
			      ia_fmt_count((char[32]){ 0 }, 32, d->samples));
	lines_text(buf, sizeof buf, d->frames, d->nframes, d->samples, 3);
	if (buf[0])
		ia_chain_line(c, "[HOST] the most sampled: %s", buf);
	lines_text(buf, sizeof buf, d->lines, d->nlines, d->samples, 3);
	if (buf[0])
		ia_chain_line(c, "[HOST] from the user's lines: %s", buf);
	if (d->nlines)
		snprintf(c->source, sizeof c->source, "%s", d->lines[0].line);
	*out = c;
	return 0;
}

/* What the main thread did over a phase's episodes inside [a, b): on a
 * CPU, waiting for one, off it otherwise (blocked).  0 when its thread or
 * its off-CPU intervals are not known, or out of memory (evidence only). */
static int main_state_in(const struct ia_analysis *a, enum ia_phase p, uint64_t w0, uint64_t w1, uint64_t *span,
			 uint64_t *oncpu, uint64_t *runq)
{
	uint32_t th = a->pp.main_thread;
	size_t n;
	*span = *oncpu = *runq = 0;
	if (th == UINT32_MAX || !a->t->threads[th].off_n)
		return 0;
	uint64_t *w = ia_phases_windows(&a->ph, p, w0, w1, &n);
	for (size_t i = 0; i < n; i++)
		*span += w[2 * i + 1] - w[2 * i];
	if (n)
		*oncpu = ia_thread_cpu_windows(a->t, th, w, n, runq);
	free(w);
	return *span > 0;
}

/* A phase is one-time work only where the main thread did it: waiting for
 * a CPU most of it (c10, c40: 74 % and 79 % of a start-up behind other
 * processes), the time is the contention's, which a warm-up step does not
 * take away.  The split is said either way; the percent of it spent
 * waiting for a CPU when that is most of it, else 0. */
static int phase_state(struct ia_chain *c, const struct ia_analysis *a, enum ia_phase p)
{
	uint64_t span, on, rq;
	if (!main_state_in(a, p, a->gaps.win_start, a->gaps.win_end, &span, &on, &rq))
		return 0;
	uint64_t blk = span > on + rq ? span - on - rq : 0;
	char d1[32], d2[32], d3[32];
	ia_chain_line(c, "[HOST] main thread in it: on a CPU %s (%.0f%%), waiting for a CPU %s (%.0f%%), blocked %s (%.0f%%)",
		      ia_fmt_dur(d1, sizeof d1, on), ia_pct(on, span), ia_fmt_dur(d2, sizeof d2, rq), ia_pct(rq, span),
		      ia_fmt_dur(d3, sizeof d3, blk), ia_pct(blk, span));
	cJSON *o = cJSON_AddObjectToObject(c->evidence, "main_thread");
	ia_json_u64(o, "oncpu_ns", on);
	ia_json_u64(o, "runq_ns", rq);
	ia_json_u64(o, "blocked_ns", blk);
	return 2 * rq >= span ? (int)(100 * rq / span + 0.5) : 0;
}

static int startup_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_idle *i = &a->idle;
	uint64_t ns = i->phase_ns[IA_PHASE_STARTUP];
	size_t n = ia_phases_episodes(&a->ph, IA_PHASE_STARTUP, a->gaps.win_start, a->gaps.win_end, NULL);
	struct ia_chain *c;
	if (ia_phase_chain(a, cap, IA_KIND_STARTUP, IA_PHASE_STARTUP, ns, 1, &c) < 0)
		return -1;
	if (!c)
		return 0;
	const struct ia_phase_detail *d = &a->ph.d[IA_PHASE_STARTUP];
	char d1[32], d2[32], d3[32], buf[600];
	snprintf(c->summary, sizeof c->summary,
		 "start-up inside the window: %s of %s (%.0f%%) went to one-time work (imports, CUDA and library "
		 "initialisation), not to steps", ia_fmt_dur(d1, sizeof d1, ns), ia_fmt_dur(d2, sizeof d2, i->window_ns),
		 100 * c->impact);
	if (d->nmodules) {
		lines_text(buf, sizeof buf, d->modules, d->nmodules, d->why[IA_WHY_IMPORT], 3);
		ia_chain_line(c, "[HOST] modules imported (by samples): %s", buf);
	}
	/* a module imported on first use (torch.optim's first step imports
	 * torch._dynamo): said, but no fix — importing it earlier moves the
	 * cost out of the window and saves the run nothing */
	if (d->why[IA_WHY_IMPORT] * 4 >= d->samples && d->nmodules) {
		char from[300] = "";
		if (d->nimport_lines)
			snprintf(from, sizeof from, " (the most from %s)", d->import_lines[0].line);
		ia_chain_line(c, "[HOST] %s was imported on first use, after the GPU work began%s: once per process; "
				 "importing it earlier would move that time, not save it", d->modules[0].line, from);
	}
	if (i->pre_window_startup_ns)
		ia_chain_line(c, "[HOST] before the first GPU work: %s more of start-up (not in the window)",
			      ia_fmt_dur(d3, sizeof d3, i->pre_window_startup_ns));
	int starved = phase_state(c, a, IA_PHASE_STARTUP);
	ia_chain_line(c, "[CUDA] %zu stretch%s of start-up after the first queued GPU work; no step's work could be "
		      "queued while the main thread did it", n, n == 1 ? "" : "es");
	ia_phase_reasons(buf, sizeof buf, d);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "One-time work ran after the GPU work had begun: %s.%s%s%s It is paid once per process, so it weighs "
		 "on a short run and fades in a long one; it is not what limits the steady state.",
		 buf[0] ? buf : "start-up", c->source[0] ? " The user's line that triggered the most of it: " : "",
		 c->source, c->source[0] ? " (the first call that needed a module or a library loads it then)." : "");
	if (starved)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" But the main thread waited for a CPU %d%% of its length: %s, and that made this work take so long.",
			starved, ia_cpu_quota_throttled(a) ? "the job's CPU quota held it back" : "other tasks held the CPUs");
	ia_chain_fix(c, "Measure throughput after a few warm-up steps: %s of this window is start-up",
		     ia_fmt_dur(d1, sizeof d1, ns));
	if (d->samples && d->why[IA_WHY_MEMPOOL] * 4 >= d->samples)   /* no samples: no reason shown */
		ia_chain_fix(c, "XLA preallocates most of the GPU's memory on the first transfer: "
				"XLA_PYTHON_CLIENT_PREALLOCATE=false (allocate on demand) or a smaller "
				"XLA_PYTHON_CLIENT_MEM_FRACTION shortens it");
	/* DataLoader workers were started (in the iterator's start: its one epoch boundary is start-up) */
	if (d->samples && (d->why[IA_WHY_WORKER_START] + d->why[IA_WHY_LOADER_WORKERS]) * 4 >= d->samples && a->pp.nworkers)
		ia_chain_fix(c, "DataLoader(..., persistent_workers=True) starts the workers once, not at every epoch");
	ia_phase_evidence(c, a, IA_PHASE_STARTUP, ns, n, 0);
	ia_json_u64(c->evidence, "before_window_ns", i->pre_window_startup_ns);
	return 0;
}

/* torch.compile / Triton or JAX/XLA, for the fixes */
static int is_jax(const struct ia_phase_detail *d)
{
	return d->why[IA_WHY_XLA] > d->why[IA_WHY_TORCH_COMPILE] + d->why[IA_WHY_TRITON];
}

static int compile_chains(struct ia_analysis *a, size_t *cap)
{
	const struct ia_phases *ph = &a->ph;
	const struct ia_phase_detail *d = &ph->d[IA_PHASE_COMPILE];
	uint64_t w0 = a->gaps.win_start, w1 = a->gaps.win_end;
	size_t nfirst, nrep;
	uint64_t first = episodes_ns(ph, IA_PHASE_COMPILE, 0, w0, w1, &nfirst);
	uint64_t again = episodes_ns(ph, IA_PHASE_COMPILE, 1, w0, w1, &nrep);
	int jax = is_jax(d) || is_jax(&ph->recompile);   /* (a window may hold repeats only) */
	char d1[32], d2[32], d3[32], buf[600];
	struct ia_chain *c, *r;
	if (ia_phase_chain(a, cap, IA_KIND_COMPILATION, IA_PHASE_COMPILE, first, 1, &c) < 0)
		return -1;
	if (c) {
		/* (the recompiling is a finding of its own only above its threshold) */
		int rchain = nrep && ia_by_share(ia_idle_impact(&a->idle, again), SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW) !=
				     IA_SEV_NONE;
		char later[96] = "";
		if (nrep && rchain)
			snprintf(later, sizeof later, "; more compiling later: see recompilation");
		else if (nrep && again >= 10000000ull)   /* (a sliver at a slice's edge is no compile to speak of) */
			snprintf(later, sizeof later, "; compiled again %zu time%s later (%s)", nrep, nrep == 1 ? "" : "s",
				 ia_fmt_dur(d3, sizeof d3, again));
		snprintf(c->summary, sizeof c->summary,
			 "compilation: %s of %s (%.0f%%) compiling before the steps could run%s",
			 ia_fmt_dur(d1, sizeof d1, first), ia_fmt_dur(d2, sizeof d2, a->idle.window_ns), 100 * c->impact,
			 later);
		if (ph->ncompilers)
			ia_chain_line(c, "[HOST] %zu compiler process%s (ptxas, nvlink, cc1, compile workers) used %s of CPU",
				      ph->ncompilers, ph->ncompilers == 1 ? "" : "es",
				      ia_fmt_dur(d3, sizeof d3, ph->compiler_cpu_ns));
		ia_phase_reasons(buf, sizeof buf, d);
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The program compiled GPU code after its first GPU work: %s. Compiling happens once per "
			 "program shape and process; the steps wait for it.%s%s",
			 buf[0] ? buf : "compiling",
			 ph->ncompilers ? " The compiler child processes (ptxas, nvlink, cc1, compile workers) are part of "
					  "this compiling." : "", "");
		ia_chain_fix(c, "Measure the steady state after warm-up steps: this window's compiling is paid once");
		if (jax)
			ia_chain_fix(c, "Keep compiled programs between runs: JAX's persistent compilation cache "
					"(jax.config.update(\"jax_compilation_cache_dir\", \"/path\"))");
		else if (d->why[IA_WHY_NVRTC] * 2 >= d->samples)
			ia_chain_fix(c, "Kernels compiled at run time (NVRTC) are cached on disk by CuPy "
					"(CUPY_CACHE_DIR, ~/.cupy/kernel_cache): keep that cache between runs");
		else
			ia_chain_fix(c, "Keep compiled artifacts between runs: Inductor's on-disk caches "
					"(TORCHINDUCTOR_FX_GRAPH_CACHE=1, TORCHINDUCTOR_AUTOGRAD_CACHE=1) or "
					"torch.compiler.save_cache_artifacts() and load_cache_artifacts() on the next start; "
					"mode=\"max-autotune\" compiles far longer than the default mode");
		ia_phase_evidence(c, a, IA_PHASE_COMPILE, first, nfirst, 0);
		ia_json_u64(c->evidence, "compiler_processes", ph->ncompilers);
		ia_json_u64(c->evidence, "compiler_cpu_ns", ph->compiler_cpu_ns);
	}
	if (ia_phase_chain(a, cap, IA_KIND_RECOMPILATION, IA_PHASE_COMPILE, again, 0, &r) < 0)
		return -1;
	if (!r)
		return 0;
	snprintf(r->summary, sizeof r->summary,
		 "recompilation: compiled again %zu time%s after steps had run, %s of %s (%.0f%%)", nrep,
		 nrep == 1 ? "" : "s", ia_fmt_dur(d1, sizeof d1, again), ia_fmt_dur(d2, sizeof d2, a->idle.window_ns),
		 100 * r->impact);
	ia_chain_line(r, "[CUDA] %zu compile episode%s each after at least %d launches of steps since the previous one "
		      "(%zu first compile%s: %s)", nrep, nrep == 1 ? "" : "s", (int)a->ph.again_launches, nfirst,
		      nfirst == 1 ? "" : "s", ia_fmt_dur(d3, sizeof d3, first));
	snprintf(r->root_cause, sizeof r->root_cause,
		 "The program compiled again %zu time%s in the middle of the run: steps ran, then something they were "
		 "compiled for changed — an input shape (a sequence length, a last smaller batch), a Python value "
		 "the compiled code depends on — and the compiled code had to be made anew. Each time the steps wait.",
		 nrep, nrep == 1 ? "" : "s");
	if (jax) {
		ia_chain_fix(r, "jax.jit compiles once per input shape and dtype: pad inputs to a few fixed sizes "
				"(bucketing), and mark Python values that change as traced arguments, not static_argnums");
	} else {
		ia_chain_fix(r, "Find what makes it recompile: TORCH_LOGS=recompiles prints the guard that failed each time");
		ia_chain_fix(r, "For shapes that change (variable sequence lengths, a smaller last batch): "
				"torch._dynamo.mark_dynamic(x, dim) or torch.compile(..., dynamic=True), drop_last=True, "
				"or pad to a few fixed sizes; for a Python number that changes (a step counter, a learning "
				"rate), pass it as a tensor");
	}
	ia_phase_evidence(r, a, IA_PHASE_COMPILE, again, nrep, nrep);
	return 0;
}

static int autotune_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_phases *ph = &a->ph;
	const struct ia_phase_detail *d = &ph->d[IA_PHASE_AUTOTUNE];
	uint64_t ns = a->idle.phase_ns[IA_PHASE_AUTOTUNE];
	size_t repeats;
	size_t n = ia_phases_episodes(ph, IA_PHASE_AUTOTUNE, a->gaps.win_start, a->gaps.win_end, &repeats);
	struct ia_chain *c;
	if (ia_phase_chain(a, cap, IA_KIND_AUTOTUNING, IA_PHASE_AUTOTUNE, ns, repeats == 0, &c) < 0)
		return -1;
	if (!c)
		return 0;
	uint64_t cudnn = d->why[IA_WHY_CUDNN_BENCHMARK] + d->why[IA_WHY_CUDNN_PLANS];
	int benchmark = d->why[IA_WHY_CUDNN_BENCHMARK] > 0;
	char d1[32], d2[32], buf[600];
	snprintf(c->summary, sizeof c->summary, "autotuning: %s of %s (%.0f%%) in %zu episode%s%s%s",
		 ia_fmt_dur(d1, sizeof d1, ns), ia_fmt_dur(d2, sizeof d2, a->idle.window_ns), 100 * c->impact, n,
		 n == 1 ? "" : "s", repeats ? ", again after steps had run: " : "",
		 repeats ? (cudnn * 2 >= d->samples ? "cuDNN tuned each new input shape" : "new shapes tuned again") : "");
	ia_chain_line(c, "[CUDA] %zu autotuning episode%s, %zu of them after at least %d launches of steps since the "
		      "previous one", n, n == 1 ? "" : "s", repeats, (int)a->ph.again_launches);
	if (a->tuning_frees)   /* (counted by sync_frees, which leaves them to this finding) */
		ia_chain_line(c, "[CUDA] %s cudaFree inside cuDNN's convolutions waited %s for the GPU: a candidate plan's "
			      "workspace did not fit, so PyTorch's caching allocator gave its cached blocks back to the "
			      "driver before giving up on it (each free drains the GPU; the memory is allocated again)",
			      ia_fmt_count(d1, sizeof d1, a->tuning_frees), ia_fmt_dur(d2, sizeof d2, a->tuning_free_ns));
	ia_phase_reasons(buf, sizeof buf, d);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Kernels were being chosen by trying candidates: %s.%s", buf,
		 cudnn * 2 >= d->samples
			 ? " cuDNN does this for every new input shape when torch.backends.cudnn.benchmark is True: it "
			   "builds the candidate plans and times each on the GPU before the step can run."
			 : " Each new configuration is benchmarked before the step can run.");
	if (repeats && cudnn * 2 >= d->samples)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" It happened again %zu time%s after steps had run: the input shapes keep changing, so the "
			"tuning never settles.", repeats, repeats == 1 ? "" : "s");
	if (cudnn * 2 >= d->samples) {
		if (repeats)
			ia_chain_fix(c, "Shapes change during the run: torch.backends.cudnn.benchmark=False (cuDNN's "
					"heuristics pick a plan at once), or pad/bucket inputs to a few fixed sizes so each "
					"is tuned once");
		ia_chain_fix(c, "With fixed shapes keep cudnn.benchmark=True and measure after warm-up: it tunes each "
				"shape once%s", benchmark ? "" : " (the samples show plan building, not the timing "
								    "loop: benchmark may already be off)");
	} else {
		ia_chain_fix(c, "Keep autotuning results between runs (Inductor's caches, TRITON_CACHE_DIR) and "
				"measure after warm-up; mode=\"max-autotune\" autotunes far longer than the default mode");
	}
	ia_phase_evidence(c, a, IA_PHASE_AUTOTUNE, ns, n, repeats);
	cJSON_AddBoolToObject(c->evidence, "cudnn_benchmark_timing", benchmark);
	ia_json_u64(c->evidence, "frees_in_cudnn_convolutions", a->tuning_frees);
	ia_json_u64(c->evidence, "free_ns_in_cudnn_convolutions", a->tuning_free_ns);
	return 0;
}

int ia_rule_phases(struct ia_analysis *a, size_t *cap)
{
	if (!a->idle.window_ns)
		return 0;
	if (startup_chain(a, cap) < 0 || compile_chains(a, cap) < 0 || autotune_chain(a, cap) < 0)
		return -1;
	return 0;
}
