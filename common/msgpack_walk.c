/*
 * msgpack_walk.c — a bounds walk over raw msgpack bytes, before msgpack-c
 * sees them (msgpack_walk.h says why).
 */
#include "msgpack_walk.h"

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int ingero_msgpack_walk(const uint8_t *p, size_t len, int max_depth, uint64_t max_elems)
{
	uint64_t left[INGERO_WALK_MAX_DEPTH + 1];   /* values still to read at each depth */
	int d = 0;
	size_t i = 0;

	left[0] = 1;
	while (d >= 0) {
		uint64_t n = 0, skip = 0;
		int hdr = 0, is_array = 0;
		uint8_t b;

		if (left[d] == 0) {
			d--;
			continue;
		}
		left[d]--;
		if (i >= len)
			return -1;
		b = p[i++];
		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
			continue;                     /* fixint, nil, bool */
		if (b >= 0x90 && b <= 0x9f) {
			n = b & 0x0f;
			is_array = 1;
		} else if (b >= 0xa0 && b <= 0xbf) {
			skip = b & 0x1f;
		} else {
			switch (b) {
			case 0xcc: case 0xd0: skip = 1; break;
			case 0xcd: case 0xd1: skip = 2; break;
			case 0xce: case 0xd2: case 0xca: skip = 4; break;
			case 0xcf: case 0xd3: case 0xcb: skip = 8; break;
			case 0xc4: case 0xd9: hdr = 1; break;   /* bin8, str8 */
			case 0xc5: case 0xda: hdr = 2; break;
			case 0xc6: case 0xdb: hdr = 4; break;
			case 0xdc: hdr = 2; is_array = 1; break;
			case 0xdd: hdr = 4; is_array = 1; break;
			default: return -1;           /* maps, ext, 0xc1 */
			}
			if (hdr) {
				if (len - i < (size_t)hdr)
					return -1;
				if (is_array)
					n = be(p + i, hdr);
				else
					skip = be(p + i, hdr);
				i += hdr;
			}
		}
		if (skip) {
			if (len - i < skip)
				return -1;
			i += skip;
		}
		if (is_array) {
			if (n > len - i)              /* each element takes ≥ 1 byte */
				return -1;
			if (max_elems && n > max_elems)
				return -1;
			if (n) {
				if (d + 1 > max_depth || d + 1 > INGERO_WALK_MAX_DEPTH)
					return -1;
				left[++d] = n;
			}
		}
	}
	return i == len ? 0 : -1;
}

