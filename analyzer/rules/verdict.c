/*
 * verdict.c — is the GPU starving, in one line (verdict.h).
 */
#include "rules/verdict.h"

#include "rules/chain_build.h"
#include "base/json_out.h"
#include "base/util.h"

#include <ingero/event.h>

#include <stdio.h>
#include <string.h>

/* the gaps' thresholds (chain_build.h), in percent: below LOW no
 * starvation is reported; bounds reaching MEDIUM may hide some */
#define BUSY_BELOW_PCT (100 * SHARE_LOW)
#define STARVING_FROM_PCT (100 * SHARE_MEDIUM)
#define ONE_TIME_FROM SHARE_MEDIUM   /* a phase finding's share of the window worth naming */

/* What starves the GPU, by the kind of the finding that shows it. */
static const char *cause_words(enum ia_kind k)
{
	switch (k) {
	case IA_KIND_GAPS_HOST_BUSY: return "the main thread's own work between CUDA calls";
	case IA_KIND_GAPS_WAITING_WORKERS: return "the main thread waiting for DataLoader workers";
	case IA_KIND_GAPS_HOST_BLOCKED: return "the main thread blocked between CUDA calls";
	case IA_KIND_GAPS_HOST_PREEMPTED: return "the main thread waiting for a CPU between CUDA calls";
	case IA_KIND_SLOW_CALLS: return "slow CUDA calls";
	case IA_KIND_PAGEABLE_COPIES: return "copies from pageable host memory";
	case IA_KIND_SYNC_PER_STEP: return "a sync every step";
	case IA_KIND_SYNC_FREES: return "frees that wait for the GPU between launches";
	case IA_KIND_HOST_BOUND_LAUNCHES: return "the host's launch rate (each kernel is done before the next arrives)";
	case IA_KIND_CPU_CONTENTION: return "the loop thread waiting for CPUs other processes held";
	default: return ia_kind_name(k);
	}
}

/* The cause in words: its kind's, and for a blocked main thread what it
 * waited for, where the finding says (evidence "blocked_on"). */
const char *ia_verdict_cause(const struct ia_chain *c, char *buf, size_t n)
{
	const cJSON *on = cJSON_GetObjectItemCaseSensitive(c->evidence, "blocked_on");
	if ((c->kind != IA_KIND_GAPS_HOST_BLOCKED && c->kind != IA_KIND_GAPS_WAITING_WORKERS) || !cJSON_IsString(on))
		return cause_words(c->kind);
	snprintf(buf, n, "%s, %s", cause_words(c->kind), on->valuestring);
	return buf;
}

/* A phase finding's kind for people, and when it is paid. */
static void phase_words(enum ia_kind k, const char **what, const char **when)
{
	switch (k) {
	case IA_KIND_STARTUP: *what = "start-up", *when = "once per process"; break;
	case IA_KIND_COMPILATION: *what = "compilation", *when = "once per process and program shape"; break;
	case IA_KIND_RECOMPILATION: *what = "recompilation", *when = "again for each new shape or failed guard"; break;
	case IA_KIND_AUTOTUNING: *what = "autotuning", *when = "for each new input shape"; break;
	case IA_KIND_EPOCH_BOUNDARIES: *what = "epoch boundaries", *when = "at each epoch's start"; break;
	default: *what = ia_kind_name(k), *when = "apart from the steps"; break;
	}
}

static const char *state_name(enum ia_verdict_state s)
{
	switch (s) {
	case IA_VERDICT_BUSY: return "busy";
	case IA_VERDICT_PARTLY: return "partly_idle";
	case IA_VERDICT_STARVING: return "starving";
	case IA_VERDICT_SLOWED: return "slowed";
	case IA_VERDICT_UNKNOWN: return "unknown";
	default: return "none";
	}
}

/* A finding that names why the GPU waits in the steady state: not a
 * phase's, and not a slow call with no host cause (its tail is the GPU's
 * own work: what a busy GPU looks like). */
static int is_cause(const struct ia_chain *c)
{
	if (ia_kind_is_phase(c->kind) || ia_kind_is_gpu_work(c->kind))
		return 0;
	if (c->kind == IA_KIND_SLOW_CALLS)
		return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->evidence, "host_cause"));
	return 1;
}

#define KERNELS_SAID 3
#define KERNEL_NAME_SAID 60

/* A kernel's time stands on its launches timed alone (gpu_estimate.c);
 * with fewer, it is alike work's or the process's typical piece. */
#define KERNEL_TIMED_FEW 3

/* " Its kernels by estimated GPU time: A 41%, B 22%, C 9%." ("kernels and
 * copies" where one of those said is copies or memsets) and, where one of
 * them was timed alone fewer than KERNEL_TIMED_FEW times, how rough its
 * share is.  lead: "Its" or, where the GPU also idled, what they share
 * ("While busy, its"). */
static void gpu_kernels(const struct ia_gpu_time *g, const char *lead, char *text, size_t n)
{
	size_t said = g->nkernels < KERNELS_SAID ? g->nkernels : KERNELS_SAID, few = said;
	int copies = 0;
	for (size_t k = 0; k < said; k++)
		copies |= g->kernels[k].kind != IA_WORK_KERNEL;
	ia_addf(text, n, " %s kernels%s by estimated GPU time:", lead, copies ? " and copies" : "");
	int apart = 0;
	for (size_t k = 0; k < said; k++) {
		const char *name = g->kernels[k].short_name;
		int cut = strlen(name) > KERNEL_NAME_SAID;
		const char *where = ia_kernel_stream(g, &g->kernels[k]);
		ia_addf(text, n, "%s %.*s%s %.0f%%%s", k ? "," : "", KERNEL_NAME_SAID, name, cut ? "…" : "",
			ia_pct(g->kernels[k].ns, g->work_ns),
			!strcmp(where, "other") ? " (on another stream)" : !strcmp(where, "several") ? " (on several streams)" : "");
		apart |= strcmp(where, "main") != 0;
		if (few == said && g->kernels[k].timed < KERNEL_TIMED_FEW)
			few = k;
	}
	ia_addf(text, n, ".");
	if (apart)   /* the shares add the streams' times: overlapping work counts on each */
		ia_addf(text, n, " (Streams may run at once: each share is of the streams' summed time.)");
	if (few < said) {
		const struct ia_kernel_time *kt = &g->kernels[few];
		if (kt->timed)
			ia_addf(text, n, " (%.*s%s's share is rough: only %llu of its launches %s timed on the GPU by "
				"itself.)", KERNEL_NAME_SAID, kt->short_name, strlen(kt->short_name) > KERNEL_NAME_SAID ? "…" : "",
				(unsigned long long)kt->timed, kt->timed == 1 ? "was" : "were");
		else
			ia_addf(text, n, " (%.*s%s's share is rough: none of its launches was timed on the GPU by itself, "
				"its time is inferred.)", KERNEL_NAME_SAID, kt->short_name,
				strlen(kt->short_name) > KERNEL_NAME_SAID ? "…" : "");
	}
}

/* " (the first finding below)", or where the cause c is among them: after
 * phases only, "the first steady-state finding"; after another steady
 * finding (the GPU's own work), its place. */
static void where_below(const struct ia_analysis *a, const struct ia_chain *c, char *buf, size_t n)
{
	static const char *const nth[] = { "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth" };
	size_t at = (size_t)(c - a->chains);
	int steady_before = 0;
	for (size_t k = 0; k < at; k++)
		steady_before |= !ia_kind_is_phase(a->chains[k].kind);
	if (!at)
		snprintf(buf, n, " (the first finding below)");
	else if (!steady_before)
		snprintf(buf, n, " (the first steady-state finding below)");
	else if (at < sizeof nth / sizeof nth[0])
		snprintf(buf, n, " (the %s finding below)", nth[at]);
	else
		snprintf(buf, n, " (finding %zu below)", at + 1);
}

/* Where the list names layout conversions: the finding that says what to do about them. */
static void layout_said(const struct ia_analysis *a, char *text, size_t n)
{
	for (size_t k = 0; k < a->nchains; k++) {
		const cJSON *sh = cJSON_GetObjectItemCaseSensitive(a->chains[k].evidence, "share_of_gpu_work_pct");
		if (a->chains[k].kind == IA_KIND_LAYOUT_CONVERSIONS && cJSON_IsNumber(sh)) {
			ia_addf(text, n, " Conversions between the NCHW and NHWC layouts are %.0f%% of that work (the "
				"layout_conversions finding below).", sh->valuedouble);
			return;
		}
	}
}

/* Where copies from pageable host memory are much of the GPU's own work
 * and no finding already says to pin: the fix that fits that evidence —
 * unless that work is a sliver of the steady state: a GPU idle 99 % of it
 * is not slowed by how its copies of a loss or a small batch run (c44,
 * c55: pinning would be a distraction from why it starves). */
#define PAGEABLE_GPU_SHARE 30.0
#define GPU_WORK_SAID_SHARE 10.0   /* of the steady state (or the window): less, its make-up is not the story */

/* The share of the steady state (the window, where the kernels are the
 * window's) that GPU time ns is. */
static double of_steady(const struct ia_analysis *a, uint64_t ns)
{
	uint64_t span = a->gaps.gpu.kernels_steady && a->idle.steady_ns ? a->idle.steady_ns
			: a->gaps.win_end > a->gaps.win_start ? a->gaps.win_end - a->gaps.win_start : 0;
	return span ? ia_pct(ns, span) : 100;
}

/* A GEMM kernel that multiplies FP32 on the CUDA cores (SIMT), by its
 * name: cuBLAS/CUTLASS's sgemm kernels and xmma's f32f32_f32f32 ones (the
 * tensor-core forms say tf32, 1688/16816, tensorop, or a 16-bit type).
 * PyTorch's default for float32 matmuls since 1.12 (allow_tf32 off);
 * cuDNN's convolutions use TF32 by default, so this is about matmuls. */
static int fp32_simt_gemm(const char *name)
{
	if (strstr(name, "tf32") || strstr(name, "1688") || strstr(name, "16816") || strstr(name, "tensorop") ||
	    strstr(name, "bf16") || strstr(name, "f16"))
		return 0;
	return strstr(name, "sgemm") || strstr(name, "gemm_f32f32_f32f32");
}

#define FP32_GEMM_SHARE 20.0   /* of the GPU's work: the precision is worth a word */

/* Where FP32 GEMMs on the CUDA cores are much of the GPU's work: TF32 or
 * bf16 runs them on the tensor cores (c69, c70: ~49 TFLOP/s of FP32 GEMMs
 * on an H100, its CUDA cores' rate; an expert's first remark). */
static void fp32_gemm_said(const struct ia_analysis *a, char *text, size_t n)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	uint64_t ns = 0;
	for (size_t k = 0; k < g->nkernels; k++)
		if (g->kernels[k].kind == IA_WORK_KERNEL && fp32_simt_gemm(g->kernels[k].name))
			ns += g->kernels[k].ns;
	if (ia_pct(ns, g->work_ns) < FP32_GEMM_SHARE || of_steady(a, ns) < GPU_WORK_SAID_SHARE)
		return;
	ia_addf(text, n, " Matrix multiplies in FP32 on the CUDA cores (sgemm and f32 xmma kernels, not the tensor "
		"cores) are %.0f%% of that work: where TF32's precision is enough (it is for most training), "
		"torch.set_float32_matmul_precision('high') runs them on the tensor cores, several times faster; "
		"torch.autocast(device_type='cuda', dtype=torch.bfloat16) more so.", ia_pct(ns, g->work_ns));
}

static void pinned_said(const struct ia_analysis *a, char *text, size_t n)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	uint64_t ns = 0;
	for (size_t k = 0; k < g->nkernels; k++)
		if (g->kernels[k].kind == IA_WORK_COPY && strstr(g->kernels[k].name, "(pageable)"))
			ns += g->kernels[k].ns;
	if (ia_pct(ns, g->work_ns) < PAGEABLE_GPU_SHARE || of_steady(a, ns) < GPU_WORK_SAID_SHARE)
		return;
	for (size_t k = 0; k < a->nchains; k++)
		for (int f = 0; f < a->chains[k].nfixes; f++)
			if (strstr(a->chains[k].fixes[f], "pin_memory"))
				return;
	ia_addf(text, n, " Copies from pageable host memory are %.0f%% of that work: %s and .to('cuda', "
		"non_blocking=True) make them full-speed transfers that overlap the GPU's other work.", ia_pct(ns, g->work_ns),
		a->pp.nworkers ? "pin_memory=True in the DataLoader" : "pinned host tensors (tensor.pin_memory())");
}

/* Where pinned host-to-device copies are most of the GPU's own work: the
 * transfer bounds the steps (the copy engine busy, the SMs waiting), and
 * the fix is fewer bytes over the bus, not faster kernels or pinning. */
#define H2D_GPU_SHARE 50.0

/* The GPU time of pinned host-to-device copies (0 under H2D_GPU_SHARE of its work). */
static uint64_t h2d_bound_ns(const struct ia_gpu_time *g)
{
	uint64_t ns = 0;
	for (size_t k = 0; k < g->nkernels; k++)
		if (g->kernels[k].kind == IA_WORK_COPY && strstr(g->kernels[k].name, "host to device") &&
		    !strstr(g->kernels[k].name, "(pageable)"))
			ns += g->kernels[k].ns;
	return ns && ia_pct(ns, g->work_ns) >= H2D_GPU_SHARE ? ns : 0;
}

static void h2d_said(const struct ia_analysis *a, char *text, size_t n)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	uint64_t ns = h2d_bound_ns(g);
	if (!ns)
		return;
	/* the bytes those copies moved: the main process's, over the same time
	 * (the steady state where the kernels are the steady state's) */
	const struct ia_trace *t = a->t;
	uint64_t bytes = 0;
	size_t nix = a->gaps.nmain_calls;
	for (size_t k = 0; k < nix; k++) {
		const struct ia_call *c = &t->calls[a->gaps.main_calls[k]];
		if (c->dir != INGERO_DIR_HTOD || (c->flags & INGERO_FLAG_HOST_PAGEABLE) || c->start < a->gaps.win_start ||
		    c->start >= a->gaps.win_end)
			continue;
		if (g->kernels_steady && ia_phases_gap(&a->ph, c->start, c->start + c->dur) != IA_PHASE_STEADY)
			continue;
		bytes += c->bytes;
	}
	char b1[32];
	ia_addf(text, n, " Host-to-device copies are %.0f%% of that work", ia_pct(ns, g->work_ns));
	if (bytes)
		ia_addf(text, n, " (%s at %.1f GB/s on the GPU)", ia_fmt_bytes(b1, sizeof b1, bytes), ia_gbps(bytes, ns));
	ia_addf(text, n, ": the transfer bounds the steps, not the kernels — move fewer bytes over the bus: keep the "
		"data in GPU memory (load it once), send uint8 or bf16 and convert on the GPU, or select and crop before "
		"the copy.");
}

/* Other processes that queued GPU work all through the steady state
 * (gpu_sharing.h): on one GPU its time-slicing between them is why each
 * one's kernels take longer than alone, and the idle measured is this
 * process's own (c80: a sweep of three runs; c47-c52: two or four ranks
 * on one GPU).  With several GPUs, which one each process used is not in
 * the trace: nothing is said. */
static void sharing_said(const struct ia_analysis *a, struct ia_verdict *v)
{
	const struct ia_gpu_sharing *s = &a->sharing;
	if (!s->nprocs || s->gpus > 1 || a->pp.main < 0)
		return;
	v->sharing = s;
	v->main_pid = a->t->procs[a->pp.p[a->pp.main].proc].pid;
	size_t n = sizeof v->text;
	ia_addf(v->text, n, " %u processes queued work on the %s all through the steady state (this one, pid %d, "
		"and %s", s->nprocs + 1, s->gpus == 1 ? "one GPU" : "GPU", v->main_pid, s->nprocs == 1 ? "pid" : "pids");
	for (uint32_t k = 0; k < s->nprocs && k < IA_SHARING_PIDS; k++)
		ia_addf(v->text, n, "%s %d", k ? "," : "", s->pids[k]);
	if (s->nprocs > IA_SHARING_PIDS)
		ia_addf(v->text, n, ", …");
	if (s->gpus != 1) {
		ia_addf(v->text, n, "): where they share its GPU (the trace does not say how many the machine has), the "
			"GPU takes turns between them and each one's kernels wait for the others'.");
		return;
	}
	ia_addf(v->text, n, "): the GPU takes turns between them, so this process's kernels also wait for theirs and "
		"its figures are its share of the GPU");
	if (v->state == IA_VERDICT_BUSY || v->state == IA_VERDICT_SLOWED)
		ia_addf(v->text, n, "; each runs slower than it would alone — one after another, or on separate GPUs, "
			"where each one's time matters.");
	else
		ia_addf(v->text, n, "; the idle above is its own work's, and the others' work may have run in some of it.");
}

void ia_verdict_compute(const struct ia_analysis *a, struct ia_verdict *v)
{
	memset(v, 0, sizeof *v);
	const struct ia_idle *i = &a->idle;
	if (!i->steady_ns)
		return;
	for (size_t k = 0; k < a->nchains; k++) {
		const struct ia_chain *c = &a->chains[k];
		if (is_cause(c)) {
			if (!v->cause)
				v->cause = c;
		} else if (ia_kind_is_phase(c->kind) && c->kind != IA_KIND_AFTER_GPU_WORK && c->impact >= ONE_TIME_FROM &&
			   (!v->one_time || c->impact > v->one_time->impact)) {
			v->one_time = c;
		}
	}
	v->low = ia_pct(i->steady_low_ns, i->steady_ns);
	v->high = ia_pct(i->steady_high_ns, i->steady_ns);
	/* the estimate inside measured bounds, where there is one */
	double est = ia_idle_estimated(i) ? ia_pct(i->steady_est_ns[1], i->steady_ns) : -1;
	/* the findings' own severity says starving (their thresholds:
	 * docs/chains.md); the bounds say busy, or leave it open */
	int busy = v->high < BUSY_BELOW_PCT || (est >= 0 && est < BUSY_BELOW_PCT);
	/* a finding of MEDIUM or more where the GPU idles under 10 %: what it
	 * costs is not idle GPU time (a slow copy keeps the copy engine busy) */
	int mostly_busy = v->high < STARVING_FROM_PCT || (est >= 0 && est < STARVING_FROM_PCT);
	if (v->cause && v->cause->sev >= IA_SEV_MEDIUM)
		v->state = mostly_busy ? IA_VERDICT_SLOWED : IA_VERDICT_STARVING;
	else if (busy)
		v->state = IA_VERDICT_BUSY;
	else if (!i->measured && v->low < BUSY_BELOW_PCT && v->high >= STARVING_FROM_PCT && !v->cause)
		v->state = IA_VERDICT_UNKNOWN;
	else
		v->state = IA_VERDICT_PARTLY;

	char idle[96], below[64] = "", why[320];
	if (v->cause)
		where_below(a, v->cause, below, sizeof below);
	ia_idle_fmt_steady(i, idle, sizeof idle);
	if (!i->measured && v->high - v->low >= 20)   /* say how little host evidence pins down */
		ia_addf(idle, sizeof idle, " (host evidence only)");
	size_t n = sizeof v->text;
	switch (v->state) {
	case IA_VERDICT_BUSY:
		/* (a copy-bound GPU is not helped by a kernel profiler: said below) */
		snprintf(v->text, n, "Verdict: not starving. The GPU had work nearly all the steady state (idle %s): "
			 "its own work is what the run waits for; to go faster make that cheaper%s, not the host.", idle,
			 i->measured && a->gaps.gpu.work_ns && h2d_bound_ns(&a->gaps.gpu) ? ""
			 : " (a kernel profiler: nsys, torch.profiler)");
		if (a->gaps.gpu.nkernels && a->gaps.gpu.work_ns) {
			v->gpu = &a->gaps.gpu;
			gpu_kernels(v->gpu, "Its", v->text, n);
			layout_said(a, v->text, n);
			fp32_gemm_said(a, v->text, n);
			pinned_said(a, v->text, n);
			h2d_said(a, v->text, n);
		}
		break;
	case IA_VERDICT_STARVING:
	case IA_VERDICT_PARTLY: {
		/* mostly busy only where all of the range (or the estimate) is
		 * under the MEDIUM threshold */
		int much = est >= 0 ? est >= STARVING_FROM_PCT : v->high >= STARVING_FROM_PCT;
		snprintf(v->text, n, "Verdict: %s %s of the steady state. %s%s%s",
			 v->state == IA_VERDICT_STARVING ? "the GPU starves: idle"
			 : much ? "the GPU idles" : "mostly busy: the GPU idles", idle,
			 v->cause ? "The cause: " : "No cause passed its threshold for a finding",
			 v->cause ? ia_verdict_cause(v->cause, why, sizeof why) : " (where the main thread's time went is above)",
			 v->cause ? below : "");
		ia_addf(v->text, n, ".");
		/* partly idle: where the GPU time the steps do have goes
		 * (measured GPU time only).  A starving GPU's few kernels are
		 * not what to look at — unless copies are most of its time:
		 * then its "busy" is a transfer the steps wait for (a pageable
		 * copy keeps the copy engine busy while the SMs idle) */
		const struct ia_gpu_time *g = &a->gaps.gpu;
		int copies_first = g->nkernels && g->kernels[0].kind != IA_WORK_KERNEL &&
				   2 * g->kernels[0].ns >= g->work_ns && of_steady(a, g->kernels[0].ns) >= GPU_WORK_SAID_SHARE;
		if ((v->state == IA_VERDICT_PARTLY || copies_first) && i->measured && g->nkernels && g->work_ns) {
			v->gpu = &a->gaps.gpu;
			gpu_kernels(v->gpu, "While busy, its", v->text, n);
			layout_said(a, v->text, n);
			if (v->state == IA_VERDICT_PARTLY)   /* (a starving GPU's kernels are not the story) */
				fp32_gemm_said(a, v->text, n);
			pinned_said(a, v->text, n);
			if (v->state == IA_VERDICT_PARTLY && !much)   /* (mostly busy: what it is busy with) */
				h2d_said(a, v->text, n);
		}
		break;
	}
	case IA_VERDICT_SLOWED:
		snprintf(v->text, n, "Verdict: not starving, but slowed. The GPU had work most of the steady state "
			 "(idle %s), and the steps lose time to %s%s.", idle, ia_verdict_cause(v->cause, why, sizeof why), below);
		/* what that work was: a slow transfer is GPU work too */
		if (i->measured && a->gaps.gpu.nkernels && a->gaps.gpu.work_ns) {
			v->gpu = &a->gaps.gpu;
			gpu_kernels(v->gpu, "Its", v->text, n);
			pinned_said(a, v->text, n);
			h2d_said(a, v->text, n);
		}
		break;
	case IA_VERDICT_UNKNOWN:
		snprintf(v->text, n, "Verdict: not known. GPU idle %s of the steady state, from host evidence alone (no "
			 "GPU timestamps in this trace): too wide to tell; a trace with GPU marks (the default) "
			 "measures it.", idle);
		break;
	default:
		break;
	}
	if (v->state != IA_VERDICT_NONE)
		sharing_said(a, v);
	if (v->one_time) {
		char d[32];
		const char *what, *when;
		phase_words(v->one_time->kind, &what, &when);
		ia_addf(v->text, n, " Apart from the steps: %s took %.0f%% of the window (%s), paid %s%s.", what,
			100 * v->one_time->impact, ia_fmt_dur(d, sizeof d, v->one_time->cost_ns), when,
			v->one_time == &a->chains[0] ? " (the first finding below: it costs the run the most)" : "");
	}
}

cJSON *ia_verdict_json(const struct ia_verdict *v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "state", state_name(v->state));
	if (v->state == IA_VERDICT_NONE)
		return o;
	ia_json_round(o, "steady_idle_low_pct", v->low, 1);
	ia_json_round(o, "steady_idle_high_pct", v->high, 1);
	if (v->cause)
		cJSON_AddStringToObject(o, "cause_kind", ia_kind_name(v->cause->kind));
	else
		cJSON_AddNullToObject(o, "cause_kind");
	if (v->one_time)
		cJSON_AddStringToObject(o, "one_time_kind", ia_kind_name(v->one_time->kind));
	else
		cJSON_AddNullToObject(o, "one_time_kind");
	if (v->gpu) {   /* (mostly) busy: the kernels its time went to, estimated, most first */
		cJSON_AddStringToObject(o, "kernels_over", v->gpu->kernels_steady ? "steady_state" : "window");
		cJSON *ks = cJSON_AddArrayToObject(o, "kernels");
		for (size_t k = 0; k < v->gpu->nkernels; k++) {
			const struct ia_kernel_time *kt = &v->gpu->kernels[k];
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", kt->name);
			cJSON_AddStringToObject(e, "short_name", kt->short_name);
			ia_json_round(e, "gpu_share_pct", ia_pct(kt->ns, v->gpu->work_ns), 1);
			ia_json_round(e, "gpu_ms", (double)kt->ns / 1e6, 3);
			static const char *const kinds[] = { [IA_WORK_KERNEL] = "kernel", [IA_WORK_COPY] = "copy",
							     [IA_WORK_MEMSET] = "memset" };
			cJSON_AddStringToObject(e, "kind", kinds[kt->kind]);
			cJSON_AddNumberToObject(e, "launches", (double)kt->launches);
			cJSON_AddNumberToObject(e, "timed_alone", (double)kt->timed);
			cJSON_AddStringToObject(e, "stream", ia_kernel_stream(v->gpu, kt));
			cJSON_AddItemToArray(ks, e);
		}
	}
	if (v->sharing) {
		cJSON *sh = cJSON_AddObjectToObject(o, "gpu_shared");
		cJSON_AddNumberToObject(sh, "processes", v->sharing->nprocs + 1);
		cJSON *ps = cJSON_AddArrayToObject(sh, "pids");
		cJSON_AddItemToArray(ps, cJSON_CreateNumber(v->main_pid));
		for (uint32_t k = 0; k < v->sharing->nprocs && k < IA_SHARING_PIDS; k++)
			cJSON_AddItemToArray(ps, cJSON_CreateNumber(v->sharing->pids[k]));
		if (v->sharing->gpus)
			cJSON_AddNumberToObject(sh, "gpus", v->sharing->gpus);
		else
			cJSON_AddNullToObject(sh, "gpus");
	}
	cJSON_AddStringToObject(o, "text", v->text);
	return o;
}
