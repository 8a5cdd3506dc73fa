/*
 * aten_ops.c — PyTorch operations in native stacks (aten_ops.h).
 */
#include "load/aten_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ia_aten_op(const char *sym, char *buf, size_t n)
{
	const char *p;
	if (!sym)
		return 0;
	if ((p = strstr(sym, "at::_ops::"))) {   /* demangled */
		p += 10;
		const char *e = strstr(p, "::");
		if (!e || (strncmp(e, "::call(", 7) && strncmp(e, "::redispatch(", 13)))
			return 0;
		snprintf(buf, n, "%.*s", (int)(e - p), p);
		return 1;
	}
	if ((p = strstr(sym, "_ZN2at4_ops"))) {   /* mangled: a length, the name, then 4call or 10redispatch */
		char *end;
		long len = strtol(p + 11, &end, 10);
		if (len <= 0 || len > 96 || strnlen(end, (size_t)len) < (size_t)len)
			return 0;
		if (strncmp(end + len, "4call", 5) && strncmp(end + len, "10redispatch", 12))
			return 0;
		snprintf(buf, n, "%.*s", (int)len, end);
		return 1;
	}
	return 0;
}

static int is(const char *op, const char *const *names)
{
	for (; op && *names; names++) {
		size_t l = strlen(*names);
		/* the name, or the name and an overload ("unique_dim", "index_Tensor") */
		if (!strncmp(op, *names, l) && (!op[l] || op[l] == '_'))
			return 1;
	}
	return 0;
}

/* results whose size is the data's: the host reads how many elements */
static const char *const sized[] = { "nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_consecutive",
				     "repeat_interleave", "bincount", "argwhere", "masked_scatter", NULL };
static const char *const scalar[] = { "_local_scalar_dense", "item", "is_nonzero", "equal", "allclose", NULL };
static const char *const copy[] = { "_to_copy", "copy_", "_copy_from", "_copy_from_and_resize", NULL };

enum ia_aten_sync ia_aten_sync_kind(const char *inner, const char *outer)
{
	if (inner && !strcmp(inner, "nonzero_static"))   /* (its size is given: no read) */
		return IA_ATEN_SYNC_NONE;
	if (is(inner, sized))
		return IA_ATEN_SYNC_SIZE;
	if (is(inner, scalar))
		return IA_ATEN_SYNC_SCALAR;
	if (is(inner, copy))
		return IA_ATEN_SYNC_COPY;
	(void)outer;
	return IA_ATEN_SYNC_NONE;
}

const char *ia_aten_describe(const char *inner, const char *outer, char *buf, size_t n)
{
	static const struct { const char *op, *what; } plain[] = {
		{ "index_Tensor", "boolean-mask indexing (x[mask])" },
		{ "_index_put_impl_", "a put through a boolean mask (x[mask] = v, or indexing's backward)" },
		{ "index_put_", "a put through a boolean mask (x[mask] = v)" },
		{ "nonzero", "nonzero" },
		{ "masked_select", "masked_select" },
		{ "is_nonzero", "a CUDA tensor used as a Python bool (if t:, while t:)" },
		{ "_local_scalar_dense", ".item() (or float(t), int(t))" },
		{ "item", ".item()" },
		{ "equal", "torch.equal" },
		{ "repeat_interleave_Tensor", "repeat_interleave without output_size" },
		{ "unique", "torch.unique" },
		{ "_unique2", "torch.unique" },
		{ "bincount", "torch.bincount" },
		{ "_to_copy", "a copy to the host (.cpu(), .to('cpu'), .numpy())" },
	};
	const char *op = outer && *outer ? outer : inner;
	for (size_t i = 0; op && i < sizeof plain / sizeof *plain; i++)
		if (!strcmp(op, plain[i].op)) {
			if (inner && strcmp(inner, op))
				snprintf(buf, n, "%s: aten::%s inside aten::%s", plain[i].what, inner, op);
			else
				snprintf(buf, n, "%s: aten::%s", plain[i].what, op);
			return buf;
		}
	if (inner && op && strcmp(inner, op))
		snprintf(buf, n, "aten::%s inside aten::%s", inner, op);
	else
		snprintf(buf, n, "aten::%s", op ? op : "?");
	return buf;
}
