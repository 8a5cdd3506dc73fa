/*
 * fake_aten.c — two ATen operation entries as libtorch has them, for
 * tests/e2e/analyzer_syncs.sh: boolean-mask indexing,
 * at::_ops::index_Tensor::call, calls at::_ops::nonzero::call, which must
 * read its result's size on the host and so waits for the stream (in
 * PyTorch: a copy of the count, then a stream sync).  The functions carry
 * the C++ names mangled, as libtorch's symbol table does, so that a sync's
 * stack holds the frames a real trace's holds (analyzer/load/aten_ops.c).
 * Loaded by tests/helpers/python_mask.py.
 */
#include <dlfcn.h>

typedef int (*sync_fn)(void *);

__attribute__((noinline, visibility("default"))) int _ZN2at4_ops7nonzero4callERKNS_6TensorE(void *stream)
{
	sync_fn sync = (sync_fn)dlsym(RTLD_DEFAULT, "cudaStreamSynchronize");
	int rc = sync ? sync(stream) : -1;
	__asm__ volatile("" ::: "memory");   /* (not a tail call: this frame stays on the stack) */
	return rc;
}

__attribute__((noinline, visibility("default"))) int _ZN2at4_ops12index_Tensor4callERKNS_6TensorE(void *stream)
{
	int rc = _ZN2at4_ops7nonzero4callERKNS_6TensorE(stream);
	__asm__ volatile("" ::: "memory");
	return rc;
}
