/*
 * finding.c — the one text renderer (through sinks) and the one JSON
 * renderer of a finding (see finding.h).
 */
#include "render/finding.h"

#include "base/json_out.h"

const char *ia_finding_part_title(enum ia_finding_part part)
{
	switch (part) {
	case IA_PART_TIMELINE: return "Timeline";
	case IA_PART_ROOT_CAUSE: return "Root cause";
	case IA_PART_FIXES: return "Fixes";
	default: return "Source";
	}
}

void ia_finding_render(const struct ia_chain *c, const struct ia_finding_sink *s, void *ctx)
{
	s->begin(ctx, ia_severity_name(c->sev), c->summary);
	if (c->ntimeline) {
		s->list_begin(ctx, IA_PART_TIMELINE, c->ntimeline);
		for (int k = 0; k < c->ntimeline; k++)
			s->list_item(ctx, IA_PART_TIMELINE, k + 1, c->timeline[k]);
		s->list_end(ctx, IA_PART_TIMELINE);
	}
	s->field(ctx, IA_PART_ROOT_CAUSE, c->root_cause);
	if (c->nfixes) {
		s->list_begin(ctx, IA_PART_FIXES, c->nfixes);
		for (int k = 0; k < c->nfixes; k++)
			s->list_item(ctx, IA_PART_FIXES, k + 1, c->fixes[k]);
		s->list_end(ctx, IA_PART_FIXES);
	}
	if (c->source[0])
		s->field(ctx, IA_PART_SOURCE, c->source);
	if (s->end)
		s->end(ctx);
}

/* ---- the text sink ---- */
static void t_begin(void *f, const char *sev, const char *summary)
{
	fprintf(f, "\n[%s] %s\n", sev, summary);
}

static void t_list_begin(void *f, enum ia_finding_part part, int n)
{
	(void)n;
	fprintf(f, "  %s:\n", ia_finding_part_title(part));
}

static void t_list_item(void *f, enum ia_finding_part part, int number, const char *text)
{
	if (part == IA_PART_FIXES)
		fprintf(f, "    %d. %s\n", number, text);
	else
		fprintf(f, "    %s\n", text);
}

static void t_list_end(void *f, enum ia_finding_part part)
{
	(void)f;
	(void)part;
}

static void t_field(void *f, enum ia_finding_part part, const char *text)
{
	fprintf(f, "  %s: %s\n", ia_finding_part_title(part), text);
}

void ia_finding_print(FILE *f, const struct ia_chain *c)
{
	static const struct ia_finding_sink text = { t_begin, t_list_begin, t_list_item, t_list_end, t_field, NULL };
	ia_finding_render(c, &text, f);
}

cJSON *ia_finding_json(const struct ia_analysis *a, const struct ia_chain *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "severity", ia_severity_name(c->sev));
	cJSON_AddStringToObject(o, "kind", ia_kind_name(c->kind));
	ia_json_str(o, "api", c->api ? ia_api_name(a->t, c->api) : NULL);
	cJSON_AddStringToObject(o, "summary", c->summary);
	cJSON_AddStringToObject(o, "root_cause", c->root_cause);
	cJSON *f = cJSON_AddArrayToObject(o, "fixes");
	for (int i = 0; i < c->nfixes; i++)
		cJSON_AddItemToArray(f, cJSON_CreateString(c->fixes[i]));
	cJSON *tl = cJSON_AddArrayToObject(o, "timeline");
	for (int i = 0; i < c->ntimeline; i++)
		cJSON_AddItemToArray(tl, cJSON_CreateString(c->timeline[i]));
	cJSON_AddItemToObject(o, "evidence", cJSON_Duplicate(c->evidence, 1));
	ia_json_str(o, "source", c->source[0] ? c->source : NULL);
	ia_json_round(o, "impact", c->impact, 4);
	ia_json_u64(o, "cost_ns", c->cost_ns);
	cJSON_AddStringToObject(o, "phase", c->kind == IA_KIND_EPOCH_BOUNDARIES ? "per-epoch"
					    : ia_kind_is_phase(c->kind) ? "one-time" : "steady");
	return o;
}
