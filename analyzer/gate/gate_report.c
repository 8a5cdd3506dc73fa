/*
 * gate_report.c — text table, Markdown and JUnit XML of a gate result.
 *
 * The text table hides passing checks, and skips of APIs called only a few
 * times, unless asked (verbose), because a CI log is read when something
 * is red: failures, warnings, improvements and skips that matter are always
 * shown, then one line per reason.
 * Markdown and JUnit always carry every check.  JUnit has no "warning":
 * a warned check is a passing testcase with the reason in system-out.
 * All three say which runs made the baseline, and list what changed
 * between the runs (the chain diff and the facts: gate_compare.h).
 */
#include "gate/gate_report.h"

#include <stddef.h>
#include <string.h>

struct col {
	const char *title;
	size_t off;        /* offset of the field in struct ia_gate_check */
};

#define COL(t, f) { t, offsetof(struct ia_gate_check, f) }
static const struct col cols[] = {
	COL("CHECK", name), COL("BASELINE", baseline), COL("CURRENT", current),
	COL("CHANGE", change), COL("LIMIT", limit), COL("EVIDENCE", evidence),
};
#define NCOLS (sizeof cols / sizeof cols[0])

static const char *field(const struct ia_gate_check *c, size_t i)
{
	return (const char *)c + cols[i].off;
}

static const char *headline(const struct ia_gate_result *r)
{
	return r->fails ? "FAIL" : "PASS";
}

/* "a.db" or "5 runs: a.db, b.db, …" into buf. */
static const char *runs_text(char *buf, size_t len, const struct ia_gate_result *r)
{
	buf[0] = 0;
	if (r->nbase_runs <= 1)
		return buf;
	size_t l = (size_t)snprintf(buf, len, "%zu runs: ", r->nbase_runs);
	for (size_t i = 0; i < r->nbase_runs && l < len; i++)
		l += (size_t)snprintf(buf + l, len - l, "%s%s", i ? ", " : "", r->base_runs[i]);
	return buf;
}

static int shown(const struct ia_gate_check *c, int verbose)
{
	return verbose || (c->verdict != IA_GATE_PASS && !c->minor);
}

void ia_gate_report_text(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n,
			 int verbose)
{
	size_t w[NCOLS];
	size_t nshown = 0;
	for (size_t i = 0; i < NCOLS; i++)
		w[i] = strlen(cols[i].title);
	for (size_t k = 0; k < r->n; k++) {
		if (!shown(&r->checks[k], verbose))
			continue;
		nshown++;
		for (size_t i = 0; i < NCOLS; i++) {
			size_t l = strlen(field(&r->checks[k], i));
			if (l > w[i])
				w[i] = l;
		}
	}
	if (w[NCOLS - 1] > 48)
		w[NCOLS - 1] = 48;
	fprintf(out, "ingero-gate: %s: %zu regression%s, %zu warning%s, %zu check%s\n", headline(r),
		r->fails, r->fails == 1 ? "" : "s", r->warns, r->warns == 1 ? "" : "s", r->n,
		r->n == 1 ? "" : "s");
	char runs[2048];
	runs_text(runs, sizeof runs, r);
	fprintf(out, "  baseline %s%s%s%s\n  current  %s\n", n->baseline, runs[0] ? " (median of " : "", runs,
		runs[0] ? ")" : "", n->current);
	if (nshown) {
		fputc('\n', out);
		for (size_t i = 0; i < NCOLS; i++)
			fprintf(out, "  %-*s", (int)w[i], cols[i].title);
		fprintf(out, "  VERDICT\n");
		for (size_t k = 0; k < r->n; k++) {
			const struct ia_gate_check *c = &r->checks[k];
			if (!shown(c, verbose))
				continue;
			for (size_t i = 0; i < NCOLS; i++)
				fprintf(out, "  %-*.*s", (int)w[i], (int)w[i], field(c, i));
			fprintf(out, "  %s\n", ia_gate_verdict_name(c->verdict));
		}
	}
	if (!verbose && nshown < r->n)
		fprintf(out, "  (%zu passing or unjudged check%s not shown; --verbose lists them)\n",
			r->n - nshown, r->n - nshown == 1 ? "" : "s");
	int any = 0;
	for (size_t k = 0; k < r->n; k++) {
		const struct ia_gate_check *c = &r->checks[k];
		if (c->verdict != IA_GATE_FAIL && c->verdict != IA_GATE_WARN)
			continue;
		if (!any++)
			fprintf(out, "\n");
		fprintf(out, "%s: %s\n", c->verdict == IA_GATE_FAIL ? "regression" : "warning", c->why);
	}
	/* --verbose: why a check that could have failed did not (a sync with
	 * slack, a change too small to cost time, a severity crossing its line) */
	for (size_t k = 0; verbose && k < r->n; k++) {
		const struct ia_gate_check *c = &r->checks[k];
		if ((c->verdict == IA_GATE_PASS || c->verdict == IA_GATE_IMPROVED) && c->why[0])
			fprintf(out, "%snote: %s\n", any++ ? "" : "\n", c->why);
	}
	if (r->nchanges && (verbose || r->fails || r->warns)) {
		fprintf(out, "\nwhat changed:\n");
		for (size_t i = 0; i < r->nchanges; i++)
			fprintf(out, "  %s\n", r->changes[i].text);
	}
}

/* Markdown table cell: pipes escaped, newlines flattened. */
static void md_cell(FILE *out, const char *s)
{
	fputs("| ", out);
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
	fputc(' ', out);
}

int ia_gate_report_markdown(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n)
{
	fprintf(out, "## Ingero GPU perf gate: %s\n\n", r->fails ? "**FAIL**" : "**PASS**");
	char runs[2048];
	runs_text(runs, sizeof runs, r);
	fprintf(out, "%zu regression%s, %zu warning%s, %zu check%s. Baseline `%s`%s%s%s, current `%s`.\n\n",
		r->fails, r->fails == 1 ? "" : "s", r->warns, r->warns == 1 ? "" : "s", r->n,
		r->n == 1 ? "" : "s", n->baseline, runs[0] ? " (median of " : "", runs, runs[0] ? ")" : "",
		n->current);
	fputs("| Check | Baseline | Current | Change | Limit | Evidence | Verdict |\n", out);
	fputs("|---|---:|---:|---:|---|---|---|\n", out);
	for (size_t k = 0; k < r->n; k++) {
		const struct ia_gate_check *c = &r->checks[k];
		for (size_t i = 0; i < NCOLS; i++)
			md_cell(out, field(c, i));
		fprintf(out, "| %s |\n", c->verdict == IA_GATE_FAIL ? "**FAIL**" : ia_gate_verdict_name(c->verdict));
	}
	int any = 0;
	for (size_t k = 0; k < r->n; k++) {
		const struct ia_gate_check *c = &r->checks[k];
		if (c->verdict != IA_GATE_FAIL && c->verdict != IA_GATE_WARN)
			continue;
		if (!any++)
			fputs("\n### Why\n\n", out);
		fprintf(out, "- %s%s\n", c->verdict == IA_GATE_WARN ? "(warning) " : "", c->why);
	}
	if (r->nchanges) {
		fputs("\n### What changed\n\n", out);
		for (size_t i = 0; i < r->nchanges; i++)
			fprintf(out, "- %s\n", r->changes[i].text);
	}
	fputs("\nThe steady state is judged (start-up, compilation and autotuning apart). Latency checks need "
	      "both a significant difference (Mann-Whitney U for p50, bootstrap CI of the ratio for p99) and "
	      "growth above the limit; GPU idle, throughput and a new chain's cost must also move beyond their "
	      "noise.\n", out);
	return ferror(out) ? -1 : 0;
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		switch (ch) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* control characters other than tab/newline are not allowed in XML 1.0 */
			if (ch < 0x20 && ch != '\t' && ch != '\n')
				fputc(' ', out);
			else
				fputc(ch, out);
		}
	}
}

int ia_gate_report_junit(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n)
{
	size_t skipped = 0;
	for (size_t k = 0; k < r->n; k++)
		skipped += r->checks[k].verdict == IA_GATE_SKIP;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"ingero-gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
		r->n, r->fails, skipped);
	fprintf(out, "  <testsuite name=\"ingero-gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
		r->n, r->fails, skipped);
	fputs("    <properties>\n      <property name=\"baseline\" value=\"", out);
	xml_text(out, n->baseline);
	fputs("\"/>\n      <property name=\"current\" value=\"", out);
	xml_text(out, n->current);
	fputs("\"/>\n      <property name=\"baseline_runs\" value=\"", out);
	for (size_t i = 0; i < r->nbase_runs; i++) {
		if (i)
			fputs(", ", out);
		xml_text(out, r->base_runs[i]);
	}
	fputs("\"/>\n", out);
	for (size_t i = 0; i < r->nchanges; i++) {
		fputs("      <property name=\"changed\" value=\"", out);
		xml_text(out, r->changes[i].text);
		fputs("\"/>\n", out);
	}
	fputs("    </properties>\n", out);
	for (size_t k = 0; k < r->n; k++) {
		const struct ia_gate_check *c = &r->checks[k];
		fputs("    <testcase classname=\"ingero-gate.", out);
		xml_text(out, c->group);
		fputs("\" name=\"", out);
		xml_text(out, c->name);
		fputs("\" time=\"0\">\n", out);
		if (c->verdict == IA_GATE_FAIL) {
			fputs("      <failure type=\"regression\" message=\"", out);
			xml_text(out, c->why);
			fputs("\"/>\n", out);
		} else if (c->verdict == IA_GATE_SKIP) {
			fputs("      <skipped message=\"", out);
			xml_text(out, c->why);
			fputs("\"/>\n", out);
		}
		fputs("      <system-out>", out);
		fprintf(out, "baseline=");
		xml_text(out, c->baseline);
		fprintf(out, " current=");
		xml_text(out, c->current);
		fprintf(out, " change=");
		xml_text(out, c->change);
		fprintf(out, " limit=");
		xml_text(out, c->limit);
		fprintf(out, " evidence=");
		xml_text(out, c->evidence);
		fprintf(out, " verdict=%s", ia_gate_verdict_name(c->verdict));
		if (c->verdict == IA_GATE_WARN) {
			fputs(" warning=", out);
			xml_text(out, c->why);
		}
		fputs("</system-out>\n    </testcase>\n", out);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
