/*
 * python_layout.c — CPython's layouts and line tables (python_layout.h).
 */
#include "ingero/python_layout.h"
#include "ingero/utf8.h"

#include <stdint.h>
#include <string.h>

/* scripts/python-layout on 3.10.13, 3.11.7, 3.12.1, 3.13.0 */
static const struct ingero_py_layout layouts[] = {
	{ .minor = 10, .rt_interp_main = 40, .interp_threads_head = 8, .ts_next = 8, .ts_thread_id = 176,
	  .ts_frame = 24, .cf_current = -1, .fr_code = 32, .fr_prev = 24, .fr_instr = 96, .fr_owner = -1,
	  .co_firsttraceable = -1, .co_bytecode = -1, .co_filename = 104, .co_name = 112,
	  .co_firstlineno = 40, .co_linetable = 120, .str_ascii = 48, .str_compact = 72, .str_utf8 = 56,
	  .str_utf8_len = 48,
	  .gc_collecting = 816, .gil_holder_rt = 360, .gil_holder_interp = -1 },
	{ .minor = 11, .rt_interp_main = 48, .interp_threads_head = 16, .ts_next = 8, .ts_thread_id = 152,
	  .ts_frame = 56, .cf_current = 8, .fr_code = 32, .fr_prev = 48, .fr_instr = 56, .fr_owner = 69,
	  .co_firsttraceable = 168, .co_bytecode = 184, .co_filename = 112, .co_name = 128,
	  .co_firstlineno = 72, .co_linetable = 136, .str_ascii = 48, .str_compact = 72, .str_utf8 = 56,
	  .str_utf8_len = 48,
	  .gc_collecting = 848, .gil_holder_rt = 368, .gil_holder_interp = -1 },
	{ .minor = 12, .rt_interp_main = 48, .interp_threads_head = 72, .ts_next = 8, .ts_thread_id = 136,
	  .ts_frame = 56, .cf_current = 0, .fr_code = 0, .fr_prev = 8, .fr_instr = 56, .fr_owner = 70,
	  .co_firsttraceable = 176, .co_bytecode = 192, .co_filename = 112, .co_name = 128,
	  .co_firstlineno = 68, .co_linetable = 136, .str_ascii = 40, .str_compact = 56, .str_utf8 = 48,
	  .str_utf8_len = 40,
	  .gc_collecting = 312, .gil_holder_rt = -1, .gil_holder_interp = 1048 },
	{ .minor = 13, .rt_interp_main = 640, .interp_threads_head = 7344, .ts_next = 8, .ts_thread_id = 152,
	  .ts_frame = 72, .cf_current = -1, .fr_code = 0, .fr_prev = 8, .fr_instr = 56, .fr_owner = 70,
	  .co_firsttraceable = 184, .co_bytecode = 200, .co_filename = 112, .co_name = 128,
	  .co_firstlineno = 68, .co_linetable = 136, .str_ascii = 40, .str_compact = 56, .str_utf8 = 48,
	  .str_utf8_len = 40,
	  .gc_collecting = 7600, .gil_holder_rt = -1, .gil_holder_interp = 7760 },
};

const struct ingero_py_layout *ingero_py_layout(int minor)
{
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* positions of the fields we need inside 3.13's _Py_DebugOffsets (scripts/python-layout
 * prints those of the garbage collector and the GIL: dbg_*) */
static uint64_t dbg_u64(const uint8_t *dbg, size_t at)
{
	uint64_t v;
	memcpy(&v, dbg + at, sizeof v);
	return v;
}

int ingero_py_layout_debug(struct ingero_py_layout *out, const uint8_t *dbg, size_t len)
{
	if (len < INGERO_PY_DEBUG_BYTES || memcmp(dbg, "xdebugpy", 8) != 0)
		return -1;
	uint64_t hex = dbg_u64(dbg, 8);   /* PY_VERSION_HEX */
	if ((hex >> 24) != 3 || ((hex >> 16) & 0xff) != 13)
		return -1;   /* 3.14 moved _Py_DebugOffsets' own fields */
	*out = *ingero_py_layout(13);
	static const struct { size_t at; size_t field; } map[] = {
		{ 40, offsetof(struct ingero_py_layout, rt_interp_main) },   /* .head; .main follows it */
		{ 72, offsetof(struct ingero_py_layout, interp_threads_head) },
		{ 168, offsetof(struct ingero_py_layout, ts_next) },
		{ 184, offsetof(struct ingero_py_layout, ts_frame) },
		{ 192, offsetof(struct ingero_py_layout, ts_thread_id) },
		{ 232, offsetof(struct ingero_py_layout, fr_prev) },
		{ 240, offsetof(struct ingero_py_layout, fr_code) },
		{ 248, offsetof(struct ingero_py_layout, fr_instr) },
		{ 264, offsetof(struct ingero_py_layout, fr_owner) },
		{ 280, offsetof(struct ingero_py_layout, co_filename) },
		{ 296, offsetof(struct ingero_py_layout, co_name) },
		{ 304, offsetof(struct ingero_py_layout, co_linetable) },
		{ 312, offsetof(struct ingero_py_layout, co_firstlineno) },
		{ 344, offsetof(struct ingero_py_layout, co_bytecode) },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		uint64_t v = dbg_u64(dbg, map[i].at);
		if (v > 65536)
			return -1;   /* not an offset into a struct */
		uint32_t v32 = (uint32_t)v;
		memcpy((char *)out + map[i].field, &v32, sizeof v32);
	}
	out->rt_interp_main += 8;   /* struct pyinterpreters { mutex; head; main; ... } in 3.10-3.13 */
	/* the collector's flag: interpreter → gc, gc → collecting; the GIL's
	 * holder: interpreter → _gil.last_holder.  Offsets that do not look
	 * like ones leave them unknown (no sample said to be collecting). */
	uint64_t gc = dbg_u64(dbg, 80), gc_size = dbg_u64(dbg, 568), coll = dbg_u64(dbg, 576);
	uint64_t holder = dbg_u64(dbg, 144);
	int sane = gc && gc < 65536 && gc_size && gc_size < 65536 && coll + 4 <= gc_size && holder && holder < 65536;
	out->gc_collecting = sane ? (int32_t)(gc + coll) : -1;
	out->gil_holder_rt = -1;
	out->gil_holder_interp = sane ? (int32_t)holder : -1;
	return 0;
}

/* --- line tables ----------------------------------------------------------------- */

/* A line as found: -1 for none, or one no source has (below 1, beyond int). */
static int line_or_none(int64_t line)
{
	return line >= 1 && line <= INT32_MAX ? (int)line : -1;
}

/* 3.10 (PEP 626): pairs (bytecode delta, signed line delta); -128 = no line. */
static int line_310(const uint8_t *t, size_t len, int64_t line, int off)
{
	int64_t end = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int64_t start = end;
		end += t[i];
		int8_t d = (int8_t)t[i + 1];
		int cur = -1;
		if (d != -128) {
			line += d;
			cur = line_or_none(line);
		}
		if (off >= start && off < end)
			return cur;
	}
	return -1;
}

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static unsigned next_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static uint32_t varint(struct cursor *c)
{
	unsigned b = next_byte(c);
	uint32_t v = b & 63;
	for (unsigned shift = 6; (b & 64) && !c->bad; shift += 6) {
		b = next_byte(c);
		if (shift < 32)
			v |= (uint32_t)(b & 63) << shift;
	}
	return v;
}

static int32_t svarint(struct cursor *c)
{
	uint32_t v = varint(c);
	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);   /* v >> 1 < 2^31: no overflow */
}

/* 3.11+: the location table (InternalDocs/locations.md), in 2-byte code units. */
static int line_311(const uint8_t *t, size_t len, int64_t line, int off)
{
	struct cursor c = { t, t + len, 0 };
	int64_t unit = off / 2, start = 0;
	while (c.p < c.end && !c.bad) {
		unsigned first = next_byte(&c);
		if (!(first & 0x80))
			return -1;   /* not at an entry's first byte */
		unsigned code = (first >> 3) & 15;
		int n = (int)(first & 7) + 1, cur;
		switch (code) {
		case 15:   /* no location */
			cur = -1;
			break;
		case 14:   /* long form: line delta, end line delta, columns */
			line += svarint(&c);
			cur = line_or_none(line);
			varint(&c), varint(&c), varint(&c);
			break;
		case 13:   /* no column */
			line += svarint(&c);
			cur = line_or_none(line);
			break;
		case 12: case 11: case 10:   /* one line, two column bytes */
			line += (int)code - 10;
			cur = line_or_none(line);
			next_byte(&c), next_byte(&c);
			break;
		default:   /* short forms: same line, one column byte */
			cur = line_or_none(line);
			next_byte(&c);
		}
		if (c.bad)
			return -1;
		if (unit >= start && unit < start + n)
			return cur;
		start += n;
	}
	return -1;
}

int ingero_py_line(int minor, const uint8_t *table, size_t len, int firstlineno, int off)
{
	if (!table || off < 0)
		return -1;
	return minor <= 10 ? line_310(table, len, firstlineno, off) : line_311(table, len, firstlineno, off);
}

/* --- strings ---------------------------------------------------------------------- */

long ingero_py_str(const struct ingero_py_layout *L, ingero_py_read_fn rd, void *ctx, uint64_t s,
		   uint64_t str_type, char *out, size_t cap, int keep_tail)
{
	uint64_t type;
	int64_t len;
	uint32_t st;
	if (s < 4096 || rd(ctx, s + INGERO_PY_OB_TYPE, &type, sizeof type) || (str_type && type != str_type) ||
	    rd(ctx, s + INGERO_PY_OB_SIZE, &len, sizeof len) || rd(ctx, s + 32, &st, sizeof st) || len < 0)
		return -1;
	unsigned kind = (st >> 2) & 7, compact = (st >> 5) & 1, ascii = (st >> 6) & 1;
	if (!compact)
		return -1;
	if (ascii) {
		size_t n = (size_t)len, skip = 0;
		if (n > cap) {
			skip = keep_tail ? n - cap : 0;
			n = cap;
		}
		return rd(ctx, s + L->str_ascii + skip, out, n) ? -1 : (long)n;
	}
	uint64_t utf8;
	int64_t ulen;
	if (!rd(ctx, s + L->str_utf8, &utf8, sizeof utf8) && utf8 &&
	    !rd(ctx, s + L->str_utf8_len, &ulen, sizeof ulen) && ulen >= 0) {
		size_t n = (size_t)ulen, skip = 0;
		if (n > cap) {
			skip = keep_tail ? n - cap : 0;
			n = cap;
		}
		if (rd(ctx, utf8 + skip, out, n))
			return -1;
		size_t k = 0;   /* a cut at the front may split a sequence */
		while (skip && k < n && ((unsigned char)out[k] & 0xc0) == 0x80)
			k++;
		memmove(out, out + k, n - k);
		return (long)(n - k);
	}
	if (kind != 1 && kind != 2 && kind != 4)
		return -1;
	int64_t first = 0;   /* keep the end of long strings by starting late */
	if (keep_tail && (uint64_t)len > cap / 2)
		first = len - (int64_t)(cap / 2);
	size_t n = 0;
	uint8_t chars[256];
	for (int64_t i = first; i < len;) {
		size_t batch = (size_t)(len - i) * kind > sizeof chars ? sizeof chars / kind : (size_t)(len - i);
		if (rd(ctx, s + L->str_compact + (uint64_t)i * kind, chars, batch * kind))
			return -1;
		for (size_t j = 0; j < batch; j++) {
			uint32_t c = 0;
			memcpy(&c, chars + j * kind, kind);
			size_t w = ingero_utf8_put(out + n, cap - n, c);
			if (!w)
				return (long)n;
			n += w;
		}
		i += (int64_t)batch;
	}
	return (long)n;
}
