/*
 * gap_waits.c — what a thread blocked in during the gaps, by system call
 * (syscalls.h): the calls that held most of its blocked time, and the kind
 * of wait they add up to (see gaps.h).
 */
#include "measure/gaps.h"

#include "base/json_out.h"
#include "load/syscalls.h"

#include <stdio.h>
#include <string.h>

size_t ia_gaps_blocked_in(const uint64_t *sys_ns, uint64_t blocked_ns, uint8_t *codes, size_t n)
{
	size_t k = 0;
	uint64_t floor = blocked_ns / 20;
	while (k < n) {
		int best = -1;
		for (int c = 1; c < 256; c++) {   /* (0: not known) */
			int taken = 0;
			for (size_t i = 0; i < k; i++)
				taken |= codes[i] == c;
			if (!taken && sys_ns[c] && sys_ns[c] >= floor && (best < 0 || sys_ns[c] > sys_ns[best]))
				best = c;
		}
		if (best < 0)
			break;
		codes[k++] = (uint8_t)best;
	}
	return k;
}

void ia_gaps_blocked_in_json(cJSON *parent, const char *key, const uint64_t *sys_ns, uint64_t blocked_ns)
{
	uint8_t codes[8];
	size_t n = ia_gaps_blocked_in(sys_ns, blocked_ns, codes, 8);
	if (!n)
		return;
	cJSON *a = cJSON_AddArrayToObject(parent, key);
	for (size_t i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o))
			break;
		ia_json_str(o, "syscall", ia_sys_code_name(codes[i]));
		ia_json_str(o, "wait", ia_wait_name(ia_syscall_wait(codes[i])));
		ia_json_u64(o, "ns", sys_ns[codes[i]]);
	}
}

uint64_t ia_gaps_wait_ns(const uint64_t *sys_ns, enum ia_wait kind)
{
	uint64_t n = 0;
	for (int code = 1; code < 256; code++)
		if (ia_syscall_wait((uint8_t)code) == kind)
			n += sys_ns[code];
	return n;
}

enum ia_wait ia_gaps_wait_kind(const uint64_t *sys_ns, uint64_t blocked_ns, double share, uint64_t *ns,
			       const char **sys)
{
	enum ia_wait kind = IA_WAIT_UNKNOWN;
	*ns = 0;
	*sys = NULL;
	for (int w = IA_WAIT_FAULT; w < IA_WAIT_N; w++) {
		uint64_t by_wait = ia_gaps_wait_ns(sys_ns, (enum ia_wait)w);
		if (blocked_ns && (double)by_wait >= share * (double)blocked_ns) {
			kind = (enum ia_wait)w;
			*ns = by_wait;
		}
	}
	uint64_t most = 0;
	for (int code = 1; kind != IA_WAIT_UNKNOWN && code < 256; code++)
		if (ia_syscall_wait((uint8_t)code) == kind && sys_ns[code] > most) {
			most = sys_ns[code];
			*sys = ia_sys_code_name((uint8_t)code);
		}
	return kind;
}
