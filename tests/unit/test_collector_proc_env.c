/*
 * test_collector_proc_env.c — which variables of a process's environment
 * the collector keeps (collector/proc_env.c): the launcher's (RANK,
 * WORLD_SIZE, ...), nothing else (secrets stay out of the trace), values
 * cut at 255 bytes, malformed entries (no '=', empty name, no final NUL)
 * skipped or read safely, and a full output buffer stops cleanly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../collector/proc_env.h"

static void keeps_launcher_variables_only(void **state)
{
	(void)state;
	static const char env[] = "PATH=/usr/bin\0RANK=3\0HF_TOKEN=secret\0LOCAL_RANK=1\0=x\0NOEQUALS\0"
				  "RANKS=9\0WORLD_SIZE=4\0TORCHELASTIC_RUN_ID=abc";   /* no final NUL */
	char kv[256];
	size_t len;
	assert_int_equal(proc_env_filter(env, sizeof env - 1, kv, sizeof kv, &len), 4);
	static const char want[] = "RANK\0003\0LOCAL_RANK\0001\0WORLD_SIZE\0004\0TORCHELASTIC_RUN_ID\0abc";
	assert_int_equal(len, sizeof want);
	assert_memory_equal(kv, want, sizeof want);
}

static void long_value_cut(void **state)
{
	(void)state;
	char env[600], kv[600];
	size_t len;
	memcpy(env, "MASTER_ADDR=", 12);
	memset(env + 12, 'h', 400);
	env[412] = 0;
	assert_int_equal(proc_env_filter(env, 413, kv, sizeof kv, &len), 1);
	assert_int_equal(len, 12 + 255 + 1);
	assert_int_equal(strlen(kv + 12), 255);
}

static void full_buffer_stops(void **state)
{
	(void)state;
	static const char env[] = "RANK=3\0WORLD_SIZE=4\0";
	char kv[12];
	size_t len;
	/* "RANK\03\0" is 7 bytes; "WORLD_SIZE\04\0" would not fit after it */
	assert_int_equal(proc_env_filter(env, sizeof env - 1, kv, sizeof kv, &len), 1);
	assert_int_equal(len, 7);
	assert_int_equal(proc_env_filter("", 0, kv, sizeof kv, &len), 0);
	assert_int_equal(len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_launcher_variables_only),
		cmocka_unit_test(long_value_cut),
		cmocka_unit_test(full_buffer_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
