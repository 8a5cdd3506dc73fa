/*
 * aten_ops.h — which PyTorch operation a native stack was in, and what a
 * sync inside it reads on the host.
 *
 * Every ATen operation is entered through at::_ops::NAME::call (or
 * ::redispatch, on its way down the dispatcher); the library's call
 * stacks (libunwind, through libtorch's DWARF tables) keep those frames,
 * demangled or not ("_ZN2at4_ops7nonzero4callE…").  The innermost such
 * frame of a sync's stack is the operation that synchronised; the
 * outermost, the one the Python line called (aten::index_Tensor for
 * x[mask], whose nonzero synchronises).  Some operations must read the
 * GPU's data to go on — a scalar for Python, the size of a result that
 * depends on the data, a copy to the host — and each has its own way out.
 */
#ifndef IA_ATEN_OPS_H
#define IA_ATEN_OPS_H

#include <stddef.h>

/* The ATen operation a native symbol enters ("nonzero", "index_Tensor")
 * into buf; 0 when the symbol is no operation's entry. */
int ia_aten_op(const char *sym, char *buf, size_t n);

enum ia_aten_sync {
	IA_ATEN_SYNC_NONE,
	IA_ATEN_SYNC_SCALAR,   /* a value for Python: .item(), float(t), a tensor in an if */
	IA_ATEN_SYNC_SIZE,     /* a result sized by the data: boolean-mask indexing, nonzero, unique */
	IA_ATEN_SYNC_COPY,     /* a copy to the host: .cpu(), .numpy(), .tolist() */
};

/* Why a sync inside operation op (innermost) called as outer reads the
 * GPU: the innermost decides, the outer names the Python-level cause. */
enum ia_aten_sync ia_aten_sync_kind(const char *inner, const char *outer);
/* "boolean-mask indexing (x[mask])" for the outer op when it has a plain
 * name, else "aten::OUTER"; into buf. */
const char *ia_aten_describe(const char *inner, const char *outer, char *buf, size_t n);

#endif
