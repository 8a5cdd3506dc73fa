/*
 * test_analyzer_gap_children.c — which subprocesses the main thread waited
 * for (analyzer/measure/gap_children.c), on a hand-built trace: a child counts when
 * the main process made no call while it lived and it ended inside a gap;
 * its time is its life inside the gaps; children that overlap count once in
 * the union; a child beside the loop, one ending between gaps and a worker
 * do not count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/gaps.h"
#include "../../analyzer/measure/per_process.h"
#include "../../analyzer/load/trace.h"

#include <string.h>

enum { A, B, B2, C, D, E, F, NPROC };

static struct ia_proc procs[NPROC];
static struct ia_call calls[4];
static uint32_t main_calls[4] = { 0, 1, 2, 3 };
static struct ia_gap gaps[3];
static struct ia_proc_stats stats[NPROC];

static void child(int i, const char *comm, uint64_t start, uint64_t exit_, enum ia_role role)
{
	procs[i].pid = 1000 + i;
	snprintf(procs[i].comm, sizeof procs[i].comm, "%s", comm);
	procs[i].start_ns = start;
	procs[i].exit_ns = exit_;
	stats[i].proc = (uint32_t)i;
	stats[i].role = role;
}

static void build(struct ia_trace *t, struct ia_per_process *pp, struct ia_gaps *g)
{
	memset(t, 0, sizeof *t);
	memset(pp, 0, sizeof *pp);
	memset(g, 0, sizeof *g);
	/* the main process's calls between the gaps [100,200) [300,400) [500,600) */
	const uint64_t at[4] = { 50, 250, 450, 650 };
	for (int i = 0; i < 4; i++)
		calls[i] = (struct ia_call){ .start = at[i], .dur = 5 };
	gaps[0] = (struct ia_gap){ .start = 100, .end = 200 };
	gaps[1] = (struct ia_gap){ .start = 300, .end = 400 };
	gaps[2] = (struct ia_gap){ .start = 500, .end = 600 };
	child(A, "nvidia-smi", 80, 180, IA_ROLE_CHILD);    /* waited for: 80 in the first gap */
	child(B, "nvidia-smi", 290, 390, IA_ROLE_CHILD);   /* waited for: 90 */
	child(B2, "nvidia-smi", 320, 350, IA_ROLE_CHILD);  /* inside B's life: 30, the union unchanged */
	child(C, "python3", 10, 700, IA_ROLE_CHILD);       /* beside the loop: calls made meanwhile */
	child(D, "sh", 420, 480, IA_ROLE_CHILD);           /* ended between gaps */
	child(E, "git", 510, 520, IA_ROLE_CHILD);          /* waited for: 10 */
	child(F, "python3", 510, 590, IA_ROLE_WORKER);     /* a DataLoader worker, not a subprocess */
	t->procs = procs;
	t->nprocs = NPROC;
	t->calls = calls;
	t->ncalls = 4;
	pp->p = stats;
	pp->n = NPROC;
	pp->nchildren = NPROC - 1;
	g->g = gaps;
	g->n = 3;
	g->main_calls = main_calls;
	g->nmain_calls = 4;
	g->total_ns = 300;
	g->win_start = 0;
	g->win_end = 700;
}

static void waited_for_children(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	build(&t, &pp, &g);
	assert_int_equal(ia_gap_children_compute(&t, &pp, &g), 0);
	assert_int_equal(g.children_alive_ns, 80 + 90 + 10);
	assert_int_equal(g.nchildren, 2);
	assert_string_equal(g.children[0].comm, "nvidia-smi");
	assert_int_equal(g.children[0].count, 3);
	assert_int_equal(g.children[0].alive_ns, 80 + 90 + 30);
	assert_int_equal(g.children[0].proc, A);
	assert_string_equal(g.children[1].comm, "git");
	assert_int_equal(g.children[1].count, 1);
	assert_int_equal(g.children[1].alive_ns, 10);
	char text[160];
	assert_string_equal(ia_gap_children_text(&g, text, sizeof text), "nvidia-smi (3 runs), git (1 run)");
	/* no threads in this trace: nothing on a CPU, no busiest child */
	assert_int_equal(g.children_oncpu_ns, 0);
	assert_int_equal(g.child_top, -1);
}

static void a_call_while_it_lives(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	build(&t, &pp, &g);
	calls[1].start = 150;   /* the main process queues work while A lives: A is beside the loop */
	calls[1].dur = 1;
	gaps[0].end = 150;
	assert_int_equal(ia_gap_children_compute(&t, &pp, &g), 0);
	assert_int_equal(g.children[0].count, 2);
	assert_int_equal(g.children_alive_ns, 90 + 10);
}

static void no_gaps_no_children(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	build(&t, &pp, &g);
	g.n = 0;
	assert_int_equal(ia_gap_children_compute(&t, &pp, &g), 0);
	assert_int_equal(g.nchildren, 0);
	assert_int_equal(g.children_alive_ns, 0);
	char text[16];
	assert_string_equal(ia_gap_children_text(&g, text, sizeof text), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(waited_for_children),
		cmocka_unit_test(a_call_while_it_lives),
		cmocka_unit_test(no_gaps_no_children),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
