/*
 * gate.c — the command line of the CI gate: read the thresholds, summarise
 * both runs, compare, print the table, write the Markdown and JUnit files,
 * and turn the verdict into the exit status (see gate.h).
 *
 * Every problem is one line on stderr and an exit status of its own
 * (include/ingero/exit.h): bad usage 2, an input that cannot be read (a
 * file, a config key or value in --config, a baseline of another version)
 * 3, a failure while writing 4 — so a CI job can tell "the build got
 * slower" (1) from "the gate could not judge" (2 to 4).
 */
#include "gate/gate.h"
#include "gate/gate_compare.h"
#include "gate/gate_config.h"
#include "gate/gate_report.h"
#include "gate/gate_summary.h"
#include "base/json_out.h"

#include <ingero/version.h>

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char gate_usage[] =
"Usage: ingero-gate [OPTIONS] BASELINE CURRENT\n"
"       ingero-gate --save-baseline REPORT.db [REPORT.db...] -o BASELINE.json\n"
"       (the same as: ingero-analyze gate ...)\n"
"\n"
"Compares the GPU behaviour of a current run with a baseline and fails on a\n"
"regression of its steady state (the run less start-up, compilation and\n"
"autotuning, which are compared apart and only warned about): per-API latency\n"
"(p50 by Mann-Whitney U, p99 by a bootstrap confidence interval, each also\n"
"above a growth limit), GPU idle, steps per second, and HIGH causal chains the\n"
"baseline did not have whose cost rose. A steady figure fails only beyond its\n"
"noise too; a failure names the changes behind it (chains new or grown, and\n"
"facts such as worker processes, pageable copies, syncs per step).\n"
"BASELINE is a report.db or a file written by --save-baseline (from one run or\n"
"several: then each limit is also a multiple of the runs' spread); CURRENT is\n"
"a report.db (or a saved baseline).\n"
"\n"
"Options:\n"
"  -c, --config FILE       thresholds, `key = value` lines (docs/gate-config.md)\n"
"  -s, --set KEY=VALUE     one threshold, applied after --config; repeatable\n"
"      --markdown FILE     also write a Markdown summary to FILE ('-' = stdout)\n"
"      --junit FILE        also write JUnit XML to FILE ('-' = stdout)\n"
"      --json              print the result as JSON instead of the table\n"
"  -v, --verbose           list passing checks in the table too\n"
"      --save-baseline DB  summarise DB, and the DBs (or baselines) after it,\n"
"                          into one baseline file (needs -o)\n"
"  -o, --output FILE       where --save-baseline writes\n"
"  -h, --help              this text\n"
"  -V, --version           the version\n"
"\n"
"Exit status: 0 pass; 1 regression; 2 bad usage (an unknown option, a bad --set);\n"
"3 bad input: a report.db, baseline or --config file that is missing, not one, of\n"
"another version, truncated or corrupted; 4 a failure while running (a report\n"
"file or standard output cannot be written).\n";

static void gate_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gate_err(const char *fmt, ...)
{
	va_list ap;
	fputs("ingero-gate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static FILE *open_out(const char *path)
{
	if (!strcmp(path, "-"))
		return stdout;
	FILE *f = fopen(path, "w");
	if (!f)
		gate_err("%s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) == 0 ? 0 : -1;
	if (fclose(f) != 0) {
		gate_err("%s: write error", path);
		return -1;
	}
	return 0;
}

static cJSON *result_json(const struct ia_gate_result *r, const struct ia_gate_names *n)
{
	cJSON *root = cJSON_CreateObject();
	ia_json_str(root, "verdict", r->fails ? "fail" : "pass");
	ia_json_u64(root, "regressions", r->fails);
	ia_json_u64(root, "warnings", r->warns);
	ia_json_str(root, "baseline", n->baseline);
	ia_json_str(root, "current", n->current);
	cJSON *runs = cJSON_AddArrayToObject(root, "baseline_runs");
	for (size_t i = 0; runs && i < r->nbase_runs; i++)
		cJSON_AddItemToArray(runs, cJSON_CreateString(r->base_runs[i]));
	cJSON *changes = cJSON_AddArrayToObject(root, "changes");
	for (size_t i = 0; changes && i < r->nchanges; i++)
		cJSON_AddItemToArray(changes, cJSON_CreateString(r->changes[i].text));
	cJSON *checks = cJSON_AddArrayToObject(root, "checks");
	for (size_t i = 0; checks && i < r->n; i++) {
		const struct ia_gate_check *c = &r->checks[i];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(checks, o))
			break;
		ia_json_str(o, "group", c->group);
		ia_json_str(o, "check", c->name);
		ia_json_str(o, "baseline", c->baseline);
		ia_json_str(o, "current", c->current);
		ia_json_str(o, "change", c->change);
		ia_json_str(o, "limit", c->limit);
		ia_json_str(o, "evidence", c->evidence);
		ia_json_str(o, "verdict", ia_gate_verdict_name(c->verdict));
		ia_json_str(o, "why", c->why[0] ? c->why : NULL);
	}
	return root;
}

static int write_side(const char *path, int junit, const struct ia_gate_result *r,
		      const struct ia_gate_names *n)
{
	FILE *f = open_out(path);
	if (!f)
		return -1;
	int rc = junit ? ia_gate_report_junit(f, r, n) : ia_gate_report_markdown(f, r, n);
	if (close_out(f, path) < 0 || rc < 0)
		return -1;
	return 0;
}

/* gate's command line: its options; the positional arguments from optind */
struct gate_args {
	const char *config, *markdown, *junit, *save, *output;
	int json, verbose;
	char **sets;
	size_t nsets;
};

/* Parses the options into a.  -1 to go on; else the exit status (--help,
 * --version: pass; a bad option: usage, said). */
static int parse_gate_args(int argc, char **argv, struct gate_args *a)
{
	enum { O_MD = 256, O_JUNIT, O_JSON, O_SAVE };
	static const struct option opts[] = {
		{ "config", required_argument, 0, 'c' },
		{ "set", required_argument, 0, 's' },
		{ "markdown", required_argument, 0, O_MD },
		{ "junit", required_argument, 0, O_JUNIT },
		{ "json", no_argument, 0, O_JSON },
		{ "verbose", no_argument, 0, 'v' },
		{ "save-baseline", required_argument, 0, O_SAVE },
		{ "output", required_argument, 0, 'o' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	int o;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:s:vo:hV", opts, NULL)) != -1) {
		switch (o) {
		case 'c': a->config = optarg; break;
		case 's': a->sets[a->nsets++] = optarg; break;
		case O_MD: a->markdown = optarg; break;
		case O_JUNIT: a->junit = optarg; break;
		case O_JSON: a->json = 1; break;
		case 'v': a->verbose = 1; break;
		case O_SAVE: a->save = optarg; break;
		case 'o': a->output = optarg; break;
		case 'h':
			fputs(gate_usage, stdout);
			return IA_GATE_EXIT_PASS;
		case 'V':
			printf("ingero-gate %s\n", INGERO_VERSION);
			return IA_GATE_EXIT_PASS;
		case ':':
			gate_err("option %s needs a value (see --help)", argv[optind - 1]);
			return IA_GATE_EXIT_USAGE;
		default:
			gate_err("unknown option %s (see --help)", argv[optind - 1]);
			return IA_GATE_EXIT_USAGE;
		}
	}
	return -1;
}

/* --config FILE, then each --set KEY=VALUE over it.  -1 to go on; else the
 * exit status, said. */
static int configure(struct ia_gate_config *cfg, const struct gate_args *a)
{
	char err[1024];
	if (a->config && ia_gate_config_load(cfg, a->config, err, sizeof err) < 0) {
		gate_err("%s", err);
		return IA_GATE_EXIT_INPUT;
	}
	for (size_t i = 0; i < a->nsets; i++) {
		char *eq = strchr(a->sets[i], '=');
		if (!eq || eq == a->sets[i]) {
			gate_err("--set %s: expected KEY=VALUE", a->sets[i]);
			return IA_GATE_EXIT_USAGE;
		}
		*eq = 0;
		int bad = ia_gate_config_set(cfg, a->sets[i], eq + 1, err, sizeof err) < 0;
		*eq = '=';
		if (bad) {
			gate_err("--set %s: %s", a->sets[i], err);
			return IA_GATE_EXIT_USAGE;
		}
	}
	return -1;
}

/* --save-baseline RUN [RUN...] -o FILE: the runs' summary written for later
 * gates; several runs make a baseline that knows their spread. */
static int save_baseline(const struct ia_gate_config *cfg, const struct gate_args *a, char **more, size_t nmore)
{
	char err[1024];
	size_t n = 1 + nmore;
	struct ia_gate_summary *in = calloc(n, sizeof *in), merged;
	memset(&merged, 0, sizeof merged);
	int rc = IA_GATE_EXIT_USAGE;
	if (!in) {
		gate_err("out of memory");
		return IA_GATE_EXIT_RUNTIME;
	}
	if (!a->output) {
		gate_err("--save-baseline needs -o FILE");
		goto out;
	}
	rc = IA_GATE_EXIT_INPUT;
	for (size_t i = 0; i < n; i++)
		if (ia_gate_summary_load(&in[i], i ? more[i - 1] : a->save, cfg->max_samples, err, sizeof err) < 0) {
			gate_err("%s", err);
			goto out;
		}
	rc = IA_GATE_EXIT_RUNTIME;
	const struct ia_gate_summary *base = &in[0];
	if (n > 1 || in[0].nruns > 1) {
		if (ia_gate_summary_merge(&merged, in, n, cfg->max_samples, err, sizeof err) < 0) {
			gate_err("%s", err);
			goto out;
		}
		base = &merged;
	}
	if (ia_gate_summary_save(base, a->output, err, sizeof err) < 0) {
		gate_err("%s", err);
		goto out;
	}
	fprintf(stderr, "ingero-gate: baseline of %zu run%s (%zu APIs, %zu chains) written to %s\n", base->nruns,
		base->nruns == 1 ? "" : "s", base->napis, base->nchains, a->output);
	rc = IA_GATE_EXIT_PASS;
out:
	for (size_t i = 0; i < n; i++)
		ia_gate_summary_free(&in[i]);
	free(in);
	ia_gate_summary_free(&merged);
	return rc;
}

int ia_gate_baseline_of(const struct ia_analysis *an, const char *source, const char *path, char *err,
			size_t errlen)
{
	struct ia_gate_config cfg;
	struct ia_gate_summary s;
	ia_gate_config_defaults(&cfg);
	memset(&s, 0, sizeof s);
	err[0] = 0;
	int rc = ia_gate_summary_of(&s, source, an, cfg.max_samples, err, errlen) < 0 ||
		 ia_gate_summary_save(&s, path, err, errlen) < 0 ? -1 : 0;
	ia_gate_summary_free(&s);
	ia_gate_config_free(&cfg);
	return rc;
}

/* BASELINE against CURRENT: the verdicts on standard output (text or
 * JSON), and the Markdown and JUnit reports asked for. */
static int compare_runs(const struct ia_gate_config *cfg, const struct gate_args *a, const char *bpath,
			const char *cpath)
{
	char err[1024];
	struct ia_gate_summary base, cur;
	struct ia_gate_result res;
	memset(&base, 0, sizeof base);
	memset(&cur, 0, sizeof cur);
	memset(&res, 0, sizeof res);
	int rc = IA_GATE_EXIT_INPUT;
	if (ia_gate_summary_load(&base, bpath, cfg->max_samples, err, sizeof err) < 0 ||
	    ia_gate_summary_load(&cur, cpath, cfg->max_samples, err, sizeof err) < 0) {
		gate_err("%s", err);
		goto out;
	}
	rc = IA_GATE_EXIT_RUNTIME;   /* from here on, a failure is not the input's */
	if (ia_gate_compare(cfg, &base, &cur, &res) < 0) {
		gate_err("out of memory comparing the runs");
		goto out;
	}
	struct ia_gate_names names = { bpath, cpath };
	if (a->json) {
		cJSON *j = result_json(&res, &names);
		int bad = !j || ia_json_print(j, stdout, 1) < 0;
		cJSON_Delete(j);
		if (bad) {
			gate_err("cannot print the JSON result");
			goto out;
		}
	} else {
		ia_gate_report_text(stdout, &res, &names, a->verbose);
	}
	if ((a->markdown && write_side(a->markdown, 0, &res, &names) < 0) ||
	    (a->junit && write_side(a->junit, 1, &res, &names) < 0))
		goto out;
	if (fflush(stdout) != 0) {
		gate_err("write error on standard output");
		goto out;
	}
	rc = res.fails ? IA_GATE_EXIT_REGRESSION : IA_GATE_EXIT_PASS;
out:
	ia_gate_result_free(&res);
	ia_gate_summary_free(&base);
	ia_gate_summary_free(&cur);
	return rc;
}

int ia_cmd_gate(int argc, char **argv)
{
	struct ia_gate_config cfg;
	ia_gate_config_defaults(&cfg);
	struct gate_args a = { .sets = calloc(argc > 0 ? (size_t)argc : 1, sizeof *a.sets) };
	int rc;
	if (!a.sets) {
		gate_err("out of memory");
		rc = IA_GATE_EXIT_RUNTIME;
	} else if ((rc = parse_gate_args(argc, argv, &a)) >= 0 || (rc = configure(&cfg, &a)) >= 0) {
		/* (said, or --help) */
	} else if (a.save) {
		rc = save_baseline(&cfg, &a, argv + optind, (size_t)(argc - optind));
	} else if (a.output) {
		gate_err("-o is for --save-baseline; use --markdown/--junit for reports");
		rc = IA_GATE_EXIT_USAGE;
	} else if (argc - optind != 2) {
		gate_err(argc - optind < 2 ? "needs BASELINE and CURRENT (see --help)"
			 : "too many arguments: BASELINE and CURRENT only (see --help)");
		rc = IA_GATE_EXIT_USAGE;
	} else {
		rc = compare_runs(&cfg, &a, argv[optind], argv[optind + 1]);
	}
	ia_gate_config_free(&cfg);
	free(a.sets);
	return rc;
}
