/*
 * test_analyzer_layout.c — the layout_conversions rule (chain_layout.c) from
 * hand-set GPU-time figures: kernels named for both layouts are summed, others
 * (one layout only, copies) are not; no finding under 10 % of the GPU's work
 * or without measured GPU time; severity weighs the share by how busy the
 * steady state kept the GPU; and the verdict lists the conversions' share
 * without taking them for why the GPU idles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/chain_build.h"
#include "../../analyzer/rules/verdict.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

static struct ia_trace tr;
static struct ia_analysis an;
static struct ia_kernel_time kt[4];

static void kernel(size_t i, const char *name, enum ia_work_kind kind, uint64_t ms)
{
	kt[i] = (struct ia_kernel_time){ .name = (char *)name, .kind = kind, .ns = ms * MS, .launches = 100,
					 .timed = 5, .func = (uint32_t)i + 1 };
	snprintf(kt[i].short_name, sizeof kt[i].short_name, "%s", name);
}

/* 1 s of steady state with the GPU idle idle_ms of it; 1 s of GPU work:
 * conv_ms of it cuDNN's two conversions, the rest a GEMM and a copy */
static void setup(uint64_t conv_ms, uint64_t idle_ms)
{
	memset(&tr, 0, sizeof tr);
	memset(&an, 0, sizeof an);
	an.t = &tr;
	an.idle.measured = 1;
	an.idle.steady_ns = an.idle.window_ns = 1000 * MS;
	an.idle.steady_low_ns = an.idle.steady_high_ns = idle_ms * MS;
	kernel(0, "cudnn::engines_precompiled::nhwcToNchwKernel", IA_WORK_KERNEL, conv_ms / 2);
	kernel(1, "cudnn::engines_precompiled::nchwToNhwcKernel", IA_WORK_KERNEL, conv_ms - conv_ms / 2);
	kernel(2, "sm90_xmma_fprop_implicit_gemm_nhwckrsc_nhwc", IA_WORK_KERNEL, (1000 - conv_ms) / 2);   /* one layout */
	kernel(3, "copies nchw to nhwc", IA_WORK_COPY, (1000 - conv_ms) - (1000 - conv_ms) / 2);   /* not a kernel */
	an.gaps.gpu = (struct ia_gpu_time){ .measured = 1, .kernels = kt, .nkernels = 4, .work_ns = 1000 * MS };
}

static const struct ia_chain *run(void)
{
	size_t cap = 0;
	assert_int_equal(ia_rule_layout(&an, &cap), 0);
	return an.nchains ? &an.chains[0] : NULL;
}

static void cleanup(void)
{
	for (size_t i = 0; i < an.nchains; i++)
		cJSON_Delete(an.chains[i].evidence);
	free(an.chains);
	an.chains = NULL;
	an.nchains = 0;
}

static void sums_the_conversions_alone(void **state)
{
	(void)state;
	setup(270, 110);
	const struct ia_chain *c = run();
	assert_non_null(c);
	assert_int_equal(c->kind, IA_KIND_LAYOUT_CONVERSIONS);
	/* what the steps wait for of its 270 ms: the 89 % the GPU was busy */
	assert_true(c->cost_ns > 240 * MS && c->cost_ns < 241 * MS);
	/* 27 % of the work at 89 % busy: 0.24 of the steps, MEDIUM */
	assert_int_equal(c->sev, IA_SEV_MEDIUM);
	assert_non_null(strstr(c->summary, "27%"));
	const cJSON *ks = cJSON_GetObjectItemCaseSensitive(c->evidence, "kernels");
	assert_int_equal(cJSON_GetArraySize(ks), 2);
	assert_non_null(strstr(c->fixes[0], "channels_last"));
	cleanup();
}

static void severity_by_how_busy(void **state)
{
	(void)state;
	setup(400, 0);   /* the GPU is what the steps wait for */
	assert_int_equal(run()->sev, IA_SEV_HIGH);
	cleanup();
	setup(270, 700);   /* 27 % of the work, busy 30 %: 0.08 of the steps */
	assert_int_equal(run()->sev, IA_SEV_LOW);
	cleanup();
	setup(400, 950);   /* 40 % of a GPU busy 5 %: 0.02, not worth a finding */
	assert_null(run());
	cleanup();
	/* the estimate holds little of the GPU's busy time (c03: synchronous
	 * copies it keeps short): 18 % of 100 ms of estimated work in a 10 s
	 * steady state the GPU was busy 37 % of is 0.07 % of it, no finding */
	setup(180, 0);
	an.idle.steady_ns = an.idle.window_ns = 10000 * MS;
	an.idle.steady_low_ns = an.idle.steady_high_ns = 6300 * MS;
	an.gaps.gpu.kernels_steady = 1;
	assert_null(run());
	cleanup();
}

static void nothing_below_a_tenth_or_unmeasured(void **state)
{
	(void)state;
	setup(90, 0);
	assert_null(run());
	cleanup();
	setup(270, 0);
	an.gaps.gpu.measured = 0;
	assert_null(run());
	cleanup();
}

/* the verdict names their share and does not take them for the cause */
static void verdict_lists_not_blames(void **state)
{
	(void)state;
	setup(270, 150);
	const struct ia_chain *c = run();
	assert_non_null(c);
	struct ia_verdict v;
	ia_verdict_compute(&an, &v);
	assert_null(v.cause);
	assert_int_equal(v.state, IA_VERDICT_PARTLY);
	assert_non_null(strstr(v.text, "NCHW and NHWC layouts are 27%"));
	/* the JSON says what the shares are of */
	an.gaps.gpu.kernels_steady = 1;
	cJSON *j = ia_verdict_json(&v);
	assert_string_equal(cJSON_GetObjectItem(j, "kernels_over")->valuestring, "steady_state");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "kernels")), 4);
	cJSON_Delete(j);
	cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sums_the_conversions_alone),
		cmocka_unit_test(severity_by_how_busy),
		cmocka_unit_test(nothing_below_a_tenth_or_unmeasured),
		cmocka_unit_test(verdict_lists_not_blames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
