/*
 * test_collector_symbolize.c — naming this process's own addresses
 * (collector/symbolize.c) and how often its /proc/PID/maps is read for
 * them: code resolves to its function; heap, stack and static data are
 * placed without a re-read (frame-pointer walks through code without frame
 * pointers hand those over as frames, every sample); an address in no
 * mapping re-reads after 50 ms, each fruitless re-read doubling the wait up
 * to 2 s; a file mapped since is found by the next re-read, which resets
 * the wait; a process gone keeps its maps, and the tries are rationed too
 * (also for one never read); a sample's leaf found in a data mapping (a
 * library mapped where freed memory was) re-reads them.
 * Time is the test's own clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../collector/symbolize.h"

#define MS 1000000ull

static uint64_t now_ns;
static uint64_t test_clock(void) { return now_ns; }

static int static_word = 42;

__attribute__((noinline)) int symbolize_marker(int x)
{
	return x * 3 + static_word;
}

static struct symbolizer *own(void)
{
	struct symbolizer *s = sym_new();

	assert_non_null(s);
	sym_set_clock(s, test_clock);
	now_ns = 1000 * MS;
	sym_load_pid(s, (uint32_t)getpid());
	assert_int_equal(sym_maps_reads(s), 1);
	return s;
}

static void code_and_data(void **state)
{
	(void)state;
	struct symbolizer *s = own();
	uint32_t pid = (uint32_t)getpid();
	struct sym_result r;
	int on_stack = symbolize_marker(1);
	int *heap = malloc(sizeof *heap);

	now_ns += 1000 * MS;   /* long past any wait: only a placed address keeps from re-reading */
	sym_user(s, pid, (uint64_t)(uintptr_t)symbolize_marker + 4, &r);
	assert_non_null(r.symbol);
	assert_string_equal(r.symbol, "symbolize_marker");
	assert_int_equal(r.offset, 4);
	assert_non_null(r.module);
	assert_non_null(strstr(r.module, "test_collector_symbolize"));
	const uint64_t data[] = { (uint64_t)(uintptr_t)heap, (uint64_t)(uintptr_t)&on_stack,
				  (uint64_t)(uintptr_t)&static_word };
	for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) {
		sym_user(s, pid, data[i], &r);
		assert_null(r.symbol);
		assert_null(r.module);
		assert_int_equal(sym_is_return_address(s, pid, data[i]), 0);
	}
	assert_int_equal(sym_maps_reads(s), 1);
	free(heap);
	sym_free(s);
}

/* an address of the first page, never mapped */
#define NOWHERE 0x10ull

static void unplaced_waits_longer(void **state)
{
	(void)state;
	struct symbolizer *s = own();
	uint32_t pid = (uint32_t)getpid();
	struct sym_result r;

	now_ns += 10 * MS;
	sym_user(s, pid, NOWHERE, &r);
	assert_null(r.module);
	assert_int_equal(sym_maps_reads(s), 1);   /* read 10 ms ago */
	now_ns += 40 * MS;
	sym_user(s, pid, NOWHERE, &r);
	assert_int_equal(sym_maps_reads(s), 2);   /* 50 ms: re-read, in vain */
	/* then 100, 200, ... 1600 ms, 2 s at most */
	uint64_t waits[] = { 100, 200, 400, 800, 1600, 2000, 2000 };
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		now_ns += waits[i] * MS - 1;
		sym_user(s, pid, NOWHERE, &r);
		assert_int_equal(sym_maps_reads(s), 2 + i);
		now_ns += 1;
		sym_user(s, pid, NOWHERE, &r);
		assert_int_equal(sym_maps_reads(s), 3 + i);
	}
	sym_free(s);
}

static void mapped_since(void **state)
{
	(void)state;
	struct symbolizer *s = own();
	uint32_t pid = (uint32_t)getpid();
	struct sym_result r;
	uint64_t reads;

	for (int i = 0; i < 8; i++) {   /* the wait at its longest */
		now_ns += 2000 * MS;
		sym_user(s, pid, NOWHERE, &r);
	}
	reads = sym_maps_reads(s);
	int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(code != MAP_FAILED);
	now_ns += 1999 * MS;
	sym_user(s, pid, (uint64_t)(uintptr_t)code + 16, &r);
	assert_null(r.module);                        /* not yet: the wait holds */
	assert_int_equal(sym_maps_reads(s), reads);
	now_ns += 1 * MS;
	sym_user(s, pid, (uint64_t)(uintptr_t)code + 16, &r);
	assert_int_equal(sym_maps_reads(s), reads + 1);
	assert_non_null(r.module);
	assert_non_null(strstr(r.module, "test_collector_symbolize"));
	assert_int_equal(r.offset, 16);               /* file offset 16: the ELF header, no symbol */
	/* found: the wait is back to 50 ms */
	now_ns += 50 * MS;
	sym_user(s, pid, NOWHERE, &r);
	assert_int_equal(sym_maps_reads(s), reads + 2);
	munmap(code, 4096);
	sym_free(s);
}

/* A process gone (its samples still queued): its maps stay, and the tries to
 * re-read them are rationed as the fruitless reads are. */
static void process_gone(void **state)
{
	(void)state;
	struct symbolizer *s = sym_new();
	struct sym_result r;
	int ready[2];
	char c;

	assert_non_null(s);
	sym_set_clock(s, test_clock);
	now_ns = 1000 * MS;
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	sym_load_pid(s, (uint32_t)child);
	assert_int_equal(sym_maps_reads(s), 1);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* the child's code is still named from the maps read while it lived */
	sym_user(s, (uint32_t)child, (uint64_t)(uintptr_t)symbolize_marker + 4, &r);
	assert_non_null(r.symbol);
	assert_string_equal(r.symbol, "symbolize_marker");
	for (int i = 0; i < 100; i++) {   /* 100 misses over 1 s: tries at 50, 150, 350, 750 ms */
		now_ns += 10 * MS;
		sym_user(s, (uint32_t)child, NOWHERE, &r);
	}
	assert_int_equal(sym_maps_reads(s), 5);
	sym_user(s, (uint32_t)child, (uint64_t)(uintptr_t)symbolize_marker + 4, &r);
	assert_non_null(r.symbol);
	sym_free(s);
}

/* A library mapped where freed memory was: the address sits in a data
 * mapping as last read.  A deeper frame there stays unnamed without a
 * re-read (it could be a walk's garbage); a sample's leaf is code for
 * certain, so the maps are re-read for it. */
static void stale_data_mapping(void **state)
{
	(void)state;
	struct symbolizer *s = own();
	uint32_t pid = (uint32_t)getpid();
	struct sym_result r;
	char *at = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(at != MAP_FAILED);
	sym_free(s);
	s = own();   /* its maps hold the data mapping */
	munmap(at, 4096);
	int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	char *code = mmap(at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	assert_ptr_equal(code, at);
	now_ns += 1000 * MS;
	sym_user(s, pid, (uint64_t)(uintptr_t)code + 16, &r);
	assert_null(r.module);
	assert_int_equal(sym_maps_reads(s), 1);
	sym_user_leaf(s, pid, (uint64_t)(uintptr_t)code + 16, &r);
	assert_int_equal(sym_maps_reads(s), 2);
	assert_non_null(r.module);
	assert_non_null(strstr(r.module, "test_collector_symbolize"));
	/* and a leaf in no mapping at all re-reads at the shortest wait, always */
	for (int i = 0; i < 3; i++) {
		now_ns += 49 * MS;
		sym_user_leaf(s, pid, NOWHERE, &r);
		assert_int_equal(sym_maps_reads(s), 2 + i);
		now_ns += 1 * MS;
		sym_user_leaf(s, pid, NOWHERE, &r);
		assert_int_equal(sym_maps_reads(s), 3 + i);
	}
	munmap(code, 4096);
	sym_free(s);
}

/* A process gone before its maps were ever read: its tries are rationed
 * as a known one's. */
static void gone_unread(void **state)
{
	(void)state;
	struct symbolizer *s = sym_new();
	struct sym_result r;
	pid_t child = fork();

	assert_non_null(s);
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	sym_set_clock(s, test_clock);
	now_ns = 1000 * MS;
	for (int i = 0; i < 100; i++) {   /* tries at 1000, 1100, 1300, 1700 ms */
		sym_user(s, (uint32_t)child, NOWHERE, &r);
		assert_null(r.module);
		now_ns += 10 * MS;
	}
	assert_int_equal(sym_maps_reads(s), 4);
	sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(code_and_data),
		cmocka_unit_test(unplaced_waits_longer),
		cmocka_unit_test(mapped_since),
		cmocka_unit_test(process_gone),
		cmocka_unit_test(stale_data_mapping),
		cmocka_unit_test(gone_unread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
