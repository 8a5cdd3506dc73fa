/*
 * fuzz_analyzer_gate.c — libFuzzer target for what the CI gate reads from
 * files a repository may carry: the thresholds (gate.conf) and saved
 * baselines (baseline.json).  The first byte picks which; the rest is the
 * file.  A baseline that parses is then compared with itself (every check
 * must pass: a run never regresses against itself) and rendered as the
 * table, Markdown and JUnit.  Nothing may crash, leak or loop.
 * Seeds: tests/fuzz/corpus/fuzz_analyzer_gate/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/gate/gate_compare.h"
#include "../../analyzer/gate/gate_config.h"
#include "../../analyzer/gate/gate_report.h"
#include "../../analyzer/gate/gate_summary.h"

static void config_case(const uint8_t *data, size_t size)
{
	struct ia_gate_config cfg;
	char err[512];
	ia_gate_config_defaults(&cfg);
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return;
	if (ia_gate_config_read(&cfg, f, "fuzz.conf", err, sizeof err) < 0 && !err[0])
		abort();   /* a refusal always says why */
	fclose(f);
	(void)ia_gate_limits_for(&cfg, "cudaStreamSynchronize");
	ia_gate_config_free(&cfg);
}

static void baseline_case(const uint8_t *data, size_t size)
{
	struct ia_gate_summary s;
	struct ia_gate_config cfg;
	struct ia_gate_result r;
	char err[512] = "";
	if (ia_gate_summary_parse(&s, "fuzz.json", (const char *)data, size, 1000, err, sizeof err) < 0) {
		if (!err[0] || strchr(err, '\n'))
			abort();   /* one line, always */
		ia_gate_summary_free(&s);
		return;
	}
	ia_gate_config_defaults(&cfg);
	cfg.resamples = 100;
	if (ia_gate_compare(&cfg, &s, &s, &r) == 0) {
		if (r.fails)
			abort();   /* a run never regresses against itself */
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		if (out) {
			struct ia_gate_names n = { "a", "b" };
			ia_gate_report_text(out, &r, &n, 1);
			ia_gate_report_markdown(out, &r, &n);
			ia_gate_report_junit(out, &r, &n);
			fclose(out);
		}
		free(buf);
		ia_gate_result_free(&r);
	}
	ia_gate_config_free(&cfg);
	ia_gate_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		config_case(data + 1, size - 1);
	else
		baseline_case(data + 1, size - 1);
	return 0;
}
