/*
 * config.c — reads the preload library's environment variables once, in the
 * library constructor (getenv is not safe later, when other threads may
 * setenv).  Unset or malformed values fall back to documented defaults: a
 * tracing library must not refuse to run its host over a typo.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ingero/api.h"
#include "ingero/config.h"
#include "ingero/wire.h"
#include "lane.h"

struct ingero_preload_config ingero_cfg = {
	.python = true,
	.stack_classes = INGERO_DEFAULT_STACK_CLASSES,
	.stack_depth = INGERO_DEFAULT_STACK_DEPTH,
	.launch_sample = INGERO_DEFAULT_LAUNCH_SAMPLE,
	.stack_budget_ppm = INGERO_DEFAULT_STACK_BUDGET,
	.ring_events = INGERO_DEFAULT_RING_EVENTS,
	.lanes = INGERO_DEFAULT_LANES,
	.gpu_marks = true,
	.gpu_mark_us = INGERO_DEFAULT_GPU_MARK_US,
	.gpu_mark_steady = INGERO_DEFAULT_GPU_MARK_STEADY,
	.gpu_poll_us = INGERO_DEFAULT_GPU_POLL_US,
	.endpoint = INGERO_DEFAULT_ENDPOINT,
};

void ingero_debug(const char *fmt, ...)
{
	if (!ingero_cfg.debug)
		return;
	char buf[512];
	int n = snprintf(buf, sizeof buf, "ingero[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof buf)
		n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf - 1)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	/* one write(2), so lines of several processes do not interleave */
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}

static const struct {
	const char *word;
	uint32_t mask;
} class_words[] = {
	{ "copy", 1u << INGERO_CLASS_COPY },     { "sync", 1u << INGERO_CLASS_SYNC },
	{ "launch", 1u << INGERO_CLASS_LAUNCH }, { "alloc", 1u << INGERO_CLASS_ALLOC },
	{ "free", 1u << INGERO_CLASS_FREE },     { "memset", 1u << INGERO_CLASS_MEMSET },
	{ "wait", 1u << INGERO_CLASS_WAIT },     { "other", 1u << INGERO_CLASS_OTHER },
	{ "all", 0xffu },                        { "none", 0 },
};

int ingero_config_parse_classes(const char *s, uint32_t *mask)
{
	uint32_t m = 0;
	while (*s) {
		size_t n = strcspn(s, ", ");
		if (n > 0) {
			size_t i;
			for (i = 0; i < sizeof class_words / sizeof class_words[0]; i++)
				if (strlen(class_words[i].word) == n &&
				    strncasecmp(s, class_words[i].word, n) == 0)
					break;
			if (i == sizeof class_words / sizeof class_words[0])
				return -1;
			m |= class_words[i].mask;
		}
		s += n;
		s += strspn(s, ", ");
	}
	*mask = m;
	return 0;
}

static int env_u64(const char *name, uint64_t *out, uint64_t lo, uint64_t hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || x < lo || x > hi) {
		ingero_debug("%s=%s ignored (want %llu..%llu)", name, v, (unsigned long long)lo,
			     (unsigned long long)hi);
		return 0;
	}
	*out = x;
	return 1;
}

static bool env_flag(const char *name, bool dflt)
{
	return ingero_env_flag_value(getenv(name), dflt);
}

void ingero_config_load(void)
{
	ingero_cfg.debug = env_flag(INGERO_ENV_DEBUG, false);
	ingero_cfg.disabled = env_flag(INGERO_ENV_DISABLE, false);
	ingero_cfg.python = env_flag(INGERO_ENV_PYTHON, true);
	ingero_cfg.gpu_marks = env_flag(INGERO_ENV_GPU_MARKS, true);
	ingero_cfg.self_time = env_flag(INGERO_ENV_SELF_TIME, false);
	ingero_cfg.tracer_batch = env_flag(INGERO_ENV_TRACER_BATCH, true);
	ingero_cfg.clock_tsc = env_flag(INGERO_ENV_CLOCK_TSC, false);

	const char *cap = getenv(INGERO_ENV_CAPTURE);
	if (cap && *cap && strcasecmp(cap, "all") != 0) {
		if (ingero_capture_profiler(cap))
			ingero_cfg.capture_profiler = true;
		else
			ingero_debug("%s=%s ignored (all, cudaProfilerApi)", INGERO_ENV_CAPTURE, cap);
	}

	const char *ep = getenv(INGERO_ENV_ENDPOINT);
	if (ep && *ep) {
		if (strlen(ep) < sizeof ingero_cfg.endpoint)
			strcpy(ingero_cfg.endpoint, ep);
		else
			ingero_debug("%s too long, using %s", INGERO_ENV_ENDPOINT, ingero_cfg.endpoint);
	}

	const char *st = getenv(INGERO_ENV_STACKS);
	if (st) {
		uint32_t m;
		if (ingero_config_parse_classes(st, &m) == 0)
			ingero_cfg.stack_classes = m;
		else
			ingero_debug("%s=%s ignored (words: copy sync launch alloc free memset wait all none)",
				     INGERO_ENV_STACKS, st);
	}

	uint64_t v;
	if (env_u64(INGERO_ENV_STACK_DEPTH, &v, 0, INGERO_WIRE_MAX_NATIVE))
		ingero_cfg.stack_depth = (uint32_t)v;
	if (env_u64(INGERO_ENV_LAUNCH_SAMPLE, &v, 0, 1u << 30))
		ingero_cfg.launch_sample = (uint32_t)v;
	if (env_u64(INGERO_ENV_STACK_BUDGET, &v, 0, 1000000))
		ingero_cfg.stack_budget_ppm = (uint32_t)v;
	if (env_u64(INGERO_ENV_GPU_MARK_US, &v, 0, 1000000))
		ingero_cfg.gpu_mark_us = (uint32_t)v;
	if (env_u64(INGERO_ENV_GPU_MARK_STEADY, &v, 0, 1u << 30))
		ingero_cfg.gpu_mark_steady = (uint32_t)v;
	if (env_u64(INGERO_ENV_GPU_POLL_US, &v, 50, 100000))
		ingero_cfg.gpu_poll_us = (uint32_t)v;
	if (env_u64(INGERO_ENV_LANES, &v, 0, INGERO_LANES_MAX))
		ingero_cfg.lanes = (uint32_t)v;
	if (env_u64(INGERO_ENV_RING_EVENTS, &v, 1024, 1u << 24)) {
		if (v & (v - 1))
			ingero_debug("%s=%llu is not a power of two, ignored", INGERO_ENV_RING_EVENTS,
				     (unsigned long long)v);
		else
			ingero_cfg.ring_events = v;
	}
}
