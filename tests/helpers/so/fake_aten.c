/*
 * fake_aten.c — two ATen operation entries as libtorch has them, for
 * tests/e2e/analyzer_syncs.sh: boolean-mask indexing,
 * at::_ops::index_Tensor::call, calls at::_ops::nonzero::call, which must
 * read its result's size on the host and so waits for the stream (in
 * PyTorch: a copy of the count, then a stream sync).  The functions carry
 * the C++ names mangled, as libtorch's symbol table does, so that a sync's
 * stack holds the frames a real trace's holds (analyzer/load/aten_ops.c).
 * Loaded by tests/helpers/python_mask.py.
 *
 * And the backward pass as PyTorch runs it on CUDA: the caller's thread
 * waits (pthread_join, as Engine::execute waits for its device thread)
 * while a thread named pt_autograd_0, with no Python frame, runs indexing's
 * backward (at::_ops::_index_put_impl_::call -> nonzero -> the sync).
 * Loaded by tests/helpers/python_backward.py through the stand-in
 * torch/autograd/graph.py.
 *
 * And cuDNN's convolution freeing device memory, as it does when a
 * workspace did not fit and PyTorch's caching allocator gives its cache
 * back (at::native::cudnn_convolution -> ... -> cudaFree: c12 of the
 * corpus), for tests/e2e/analyzer_frees.sh through python_frees.py.
 */
#include <dlfcn.h>
#include <pthread.h>

typedef int (*sync_fn)(void *);
typedef int (*free_fn)(void *);

__attribute__((noinline, visibility("default"))) int
_ZN2at6native17cudnn_convolutionERKNS_6TensorES3_N3c108ArrayRefIlEES6_S6_lbbb(void *ptr)
{
	free_fn f = (free_fn)dlsym(RTLD_DEFAULT, "cudaFree");
	int rc = f ? f(ptr) : -1;
	__asm__ volatile("" ::: "memory");
	return rc;
}

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

__attribute__((noinline, visibility("default"))) int
_ZN2at4_ops16_index_put_impl_4callERNS_6TensorERKN3c104ListISt8optionalIS2_EEERKS2_bb(void *stream)
{
	int rc = _ZN2at4_ops7nonzero4callERKNS_6TensorE(stream);
	__asm__ volatile("" ::: "memory");
	return rc;
}

static void *autograd_thread(void *stream)
{
	_ZN2at4_ops16_index_put_impl_4callERNS_6TensorERKN3c104ListISt8optionalIS2_EEERKS2_bb(stream);
	return NULL;
}

/* One backward pass: a fresh pt_autograd_0 thread runs it, the caller waits. */
__attribute__((visibility("default"))) int fake_autograd_backward(void *stream)
{
	pthread_t th;
	if (pthread_create(&th, NULL, autograd_thread, stream))
		return -1;
	pthread_setname_np(th, "pt_autograd_0");
	return pthread_join(th, NULL);
}
