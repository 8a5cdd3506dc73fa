/*
 * test_preload_tables.c — the small tables of the preload library: pinned
 * ranges (pinned.c), the interning sets and maps (intern.c), the sender's
 * map (u64map.c), the INGERO_STACKS parser (config.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ingero/api.h"
#include "../../preload/config.h"
#include "../../preload/intern.h"
#include "../../preload/pinned.h"
#include "ingero/u64map.h"

static char area[1 << 16];

static void pinned_ranges(void **state)
{
	(void)state;
	ingero_pinned_reset();
	assert_int_equal(ingero_pinned_lookup(area), 0);
	ingero_pinned_add(area + 4096, 4096);
	ingero_pinned_add(area + 16384, 100);
	ingero_pinned_add(area, 10);
	assert_int_equal(ingero_pinned_lookup(area + 4096), 1);
	assert_int_equal(ingero_pinned_lookup(area + 8191), 1);
	assert_int_equal(ingero_pinned_lookup(area + 8192), 0);
	assert_int_equal(ingero_pinned_lookup(area + 4095), 0);
	assert_int_equal(ingero_pinned_lookup(area + 16384 + 99), 1);
	assert_int_equal(ingero_pinned_lookup(area + 9), 1);
	assert_int_equal(ingero_pinned_lookup(area + 10), 0);
	/* the same allocation twice (runtime call, then its driver call): one range */
	ingero_pinned_add(area + 4096, 8192);
	assert_int_equal(ingero_pinned_lookup(area + 12000), 1);
	ingero_pinned_remove(area + 4096);
	assert_int_equal(ingero_pinned_lookup(area + 4096), 0);
	ingero_pinned_remove(area + 4096);   /* twice: harmless */
	assert_int_equal(ingero_pinned_lookup(area + 16384), 1);
	ingero_pinned_remove(area + 16384);
	ingero_pinned_remove(area);
	assert_int_equal(ingero_pinned_lookup(area), 0);
}

static void pinned_overflow_is_unknown(void **state)
{
	(void)state;
	ingero_pinned_reset();
	for (uintptr_t i = 0; i < 9000; i++)
		ingero_pinned_add((void *)(0x100000 + i * 64), 16);
	assert_int_equal(ingero_pinned_lookup((void *)0x100000), 1);
	/* past the table's capacity nothing is known to be pageable */
	assert_int_equal(ingero_pinned_lookup((void *)(0x100000 + 8999 * 64)), -1);
	assert_int_equal(ingero_pinned_lookup(area), -1);
	ingero_pinned_reset();
}

static void pinned_survives_fork(void **state)
{
	(void)state;
	ingero_pinned_reset();
	ingero_pinned_add(area, 128);
	pid_t pid = fork();
	if (pid == 0) {
		ingero_pinned_after_fork();
		ingero_pinned_add(area + 1024, 128);
		_exit(ingero_pinned_lookup(area) == 1 && ingero_pinned_lookup(area + 1100) == 1 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(ingero_pinned_lookup(area + 1100), 0);   /* the child's range is its own */
	ingero_pinned_reset();
}

static void sets_and_maps(void **state)
{
	(void)state;
	static _Atomic uint64_t keys[64];
	struct ingero_set s = { 64, keys };
	assert_false(ingero_set_has(&s, 5));
	assert_int_equal(ingero_set_add(&s, 5), 1);
	assert_int_equal(ingero_set_add(&s, 5), 0);
	assert_true(ingero_set_has(&s, 5));
	assert_int_equal(ingero_set_add(&s, 0), 0);   /* 0 is "none" */
	assert_false(ingero_set_has(&s, 0));
	int full = 0;
	for (uint64_t k = 100; k < 200; k++)
		if (ingero_set_add(&s, k) < 0)
			full = 1;
	assert_true(full);   /* a full set says so instead of looping */
	ingero_set_clear(&s);
	assert_false(ingero_set_has(&s, 5));

	static _Atomic uint64_t kk[128], kv[128];
	struct ingero_kv m = { 128, kk, kv };
	assert_int_equal(ingero_kv_get(&m, 7), 0);
	assert_true(ingero_kv_put(&m, 7, 70));
	assert_true(ingero_kv_put(&m, 8, 80));
	assert_true(ingero_kv_put(&m, 7, 71));
	assert_int_equal(ingero_kv_get(&m, 7), 71);
	assert_int_equal(ingero_kv_get(&m, 8), 80);

	struct u64map u = { 0 };
	for (uint64_t k = 0; k < 5000; k++)
		assert_int_equal(ingero_map_put(&u, k, (void *)(uintptr_t)(k + 1)), 0);
	for (uint64_t k = 0; k < 5000; k++)
		assert_ptr_equal(ingero_map_get(&u, k), (void *)(uintptr_t)(k + 1));
	assert_null(ingero_map_get(&u, 5000));
	ingero_map_free(&u);
}

/* The sets hash keys with one multiply (ingero_set_slot): kernel handles
 * and host stubs are aligned pointers, and a table half full of them
 * (8,192 of 16,384 slots) still finds room for each within the probe
 * limit — taking the key's low bits would put keys 4 KiB apart into 4 of
 * the slots, and the adds would fail after 64 probes. */
static void sets_spread_aligned_pointers(void **state)
{
	(void)state;
	static _Atomic uint64_t keys[INGERO_SET_CAP];
	struct ingero_set s = { INGERO_SET_CAP, keys };
	const uint64_t strides[] = { 0x40, 0x1000, 0x10000 };
	int added = 0;
	for (int j = 0; j < 3; j++)
		for (uint64_t i = 0; i < 2731; i++)
			added += ingero_set_add(&s, 0x7f3a12340000ull + (uint64_t)j * 0x100000000ull + i * strides[j]) == 1;
	assert_int_equal(added, 3 * 2731);
	for (int j = 0; j < 3; j++)
		for (uint64_t i = 0; i < 2731; i++) {
			uint64_t k = 0x7f3a12340000ull + (uint64_t)j * 0x100000000ull + i * strides[j];
			assert_true(ingero_set_has_in(keys, INGERO_SET_CAP, k));
			assert_false(ingero_set_has_in(keys, INGERO_SET_CAP, k + 8));
		}
}

static void stack_classes(void **state)
{
	(void)state;
	uint32_t m;
	assert_int_equal(ingero_config_parse_classes("sync,copy", &m), 0);
	assert_int_equal(m, (1u << INGERO_CLASS_SYNC) | (1u << INGERO_CLASS_COPY));
	assert_int_equal(ingero_config_parse_classes("none", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(ingero_config_parse_classes("", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(ingero_config_parse_classes(" Launch , all", &m), 0);
	assert_int_equal(m, 0xffu);
	assert_int_equal(ingero_config_parse_classes("sync,bogus", &m), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pinned_ranges),
		cmocka_unit_test(pinned_overflow_is_unknown),
		cmocka_unit_test(pinned_survives_fork),
		cmocka_unit_test(sets_and_maps),
		cmocka_unit_test(sets_spread_aligned_pointers),
		cmocka_unit_test(stack_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
