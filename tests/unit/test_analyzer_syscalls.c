/*
 * test_analyzer_syscalls.c — what a blocked thread waited in
 * (analyzer/load/syscalls.c): codes from off_cpu.syscall, their names and kinds
 * of wait, the thread-index bits they share with the flags (trace.h), and
 * the gaps' "what it blocked in" list (most first, each ≥ 5 %).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/gaps.h"
#include "../../analyzer/load/syscalls.h"
#include "../../analyzer/load/trace.h"

#include <string.h>

static void codes_names_waits(void **state)
{
	(void)state;
	assert_int_equal(ia_syscall_code(202, 0), IA_SYS_UNKNOWN);   /* NULL: not known */
	assert_int_equal(ia_syscall_code(-1, 1), IA_SYS_FAULT);
	assert_int_equal(ia_syscall_code(99999, 1), IA_SYS_OTHER);
	assert_int_equal(ia_syscall_wait(IA_SYS_UNKNOWN), IA_WAIT_UNKNOWN);
	assert_int_equal(ia_syscall_wait(IA_SYS_FAULT), IA_WAIT_FAULT);
	assert_int_equal(ia_syscall_wait(IA_SYS_OTHER), IA_WAIT_OTHER);
	assert_null(ia_syscall_name(IA_SYS_OTHER));
	static const struct { int nr; const char *name; enum ia_wait w; } want[] = {
		{ 0, "read", IA_WAIT_READ }, { 7, "poll", IA_WAIT_POLL }, { 35, "nanosleep", IA_WAIT_SLEEP },
		{ 61, "wait4", IA_WAIT_CHILD }, { 74, "fsync", IA_WAIT_SYNC }, { 202, "futex", IA_WAIT_FUTEX },
		{ 230, "clock_nanosleep", IA_WAIT_SLEEP }, { 232, "epoll_wait", IA_WAIT_POLL },
		{ 257, "openat", IA_WAIT_OPEN }, { 45, "recvfrom", IA_WAIT_READ }, { 44, "sendto", IA_WAIT_WRITE },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint8_t c = ia_syscall_code(want[i].nr, 1);
		assert_true(c > IA_SYS_FAULT && c < IA_SYS_OTHER);
		assert_string_equal(ia_syscall_name(c), want[i].name);
		assert_int_equal(ia_syscall_wait(c), want[i].w);
		assert_string_not_equal(ia_wait_name(want[i].w), "?");
	}
}

/* The code rides in an interval's th beside the flags; the index under it
 * (a tid < 2^22, then a thread index) is what ~IA_OFF_FLAGS leaves. */
static void code_beside_the_index(void **state)
{
	(void)state;
	struct ia_off o = { .th = 4194303u | IA_OFF_IOWAIT | (uint32_t)ia_syscall_code(230, 1) << IA_OFF_SYS_SHIFT };
	assert_int_equal(o.th & ~IA_OFF_FLAGS, 4194303u);
	assert_string_equal(ia_syscall_name(ia_off_sys(&o)), "clock_nanosleep");
	assert_true(o.th & IA_OFF_IOWAIT);
	assert_false(o.th & IA_OFF_PREEMPTED);
	o.th = 7 | (uint32_t)IA_SYS_OTHER << IA_OFF_SYS_SHIFT | IA_OFF_PREEMPTED;
	assert_int_equal(o.th & ~IA_OFF_FLAGS, 7);
	assert_int_equal(ia_off_sys(&o), IA_SYS_OTHER);
}

static void blocked_in_most_first(void **state)
{
	(void)state;
	struct ia_gaps g;
	memset(&g, 0, sizeof g);
	uint8_t futex = ia_syscall_code(202, 1), rd = ia_syscall_code(0, 1), poll = ia_syscall_code(7, 1);
	g.main_blocked_ns = 1000;
	g.main_sys_ns[IA_SYS_UNKNOWN] = 900;   /* never named */
	g.main_sys_ns[rd] = 80;
	g.main_sys_ns[futex] = 600;
	g.main_sys_ns[poll] = 49;              /* under 5 % of the blocked time */
	uint8_t codes[4];
	size_t n = ia_gaps_blocked_in(g.main_sys_ns, g.main_blocked_ns, codes, 4);
	assert_int_equal(n, 2);
	assert_int_equal(codes[0], futex);
	assert_int_equal(codes[1], rd);
	assert_int_equal(ia_gaps_blocked_in(g.main_sys_ns, g.main_blocked_ns, codes, 1), 1);
	assert_int_equal(codes[0], futex);
	memset(g.main_sys_ns, 0, sizeof g.main_sys_ns);
	g.main_sys_ns[IA_SYS_UNKNOWN] = 1000;   /* an older file: nothing known */
	assert_int_equal(ia_gaps_blocked_in(g.main_sys_ns, g.main_blocked_ns, codes, 4), 0);
	/* the kind of wait holding half the time, and its call */
	memset(g.main_sys_ns, 0, sizeof g.main_sys_ns);
	g.main_sys_ns[rd] = 300;
	g.main_sys_ns[poll] = 250;
	g.main_sys_ns[futex] = 450;
	uint64_t ns;
	const char *sys;
	assert_int_equal(ia_gaps_wait_kind(g.main_sys_ns, 1000, 0.5, &ns, &sys), IA_WAIT_UNKNOWN);
	assert_null(sys);
	g.main_sys_ns[rd] = 400;
	assert_int_equal(ia_gaps_wait_kind(g.main_sys_ns, 1100, 0.5, &ns, &sys), IA_WAIT_UNKNOWN);
	g.main_sys_ns[futex] = 600;
	assert_int_equal(ia_gaps_wait_kind(g.main_sys_ns, 1250, 0.45, &ns, &sys), IA_WAIT_FUTEX);
	assert_int_equal(ns, 600);
	assert_string_equal(sys, "futex");
	assert_string_equal(ia_sys_code_name(IA_SYS_FAULT), "a page fault");
	assert_string_equal(ia_sys_code_name(IA_SYS_OTHER), "another system call");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(codes_names_waits),
		cmocka_unit_test(code_beside_the_index),
		cmocka_unit_test(blocked_in_most_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
