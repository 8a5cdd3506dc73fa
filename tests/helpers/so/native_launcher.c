/*
 * native_launcher.c — a thread that runs no Python, in a Python process (as
 * autograd's backward threads do in PyTorch): native_launches(n) starts one
 * that makes n cudaLaunchKernel calls through whatever the process resolves
 * the name to (the preload library's wrapper, then the fake runtime), and
 * waits for it.  Loaded by tests/helpers/preload_ctypes.py ("nopy").
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef struct {
	unsigned x, y, z;
} dim3;
typedef int (*launch_fn)(const void *, dim3, dim3, void **, size_t, void *);

static void kernel_native(void)
{
}

static void *run(void *arg)
{
	long n = (long)arg, ok = 0;
	launch_fn launch = (launch_fn)dlsym(RTLD_DEFAULT, "cudaLaunchKernel");
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	for (long i = 0; launch && i < n; i++)
		ok += launch((const void *)kernel_native, g, b, NULL, 0, NULL) == 0;
	return (void *)ok;
}

/* The launches that returned success; -1 when no thread could be started. */
long native_launches(long n)
{
	pthread_t t;
	void *ok = NULL;
	if (pthread_create(&t, NULL, run, (void *)n) != 0)
		return -1;
	pthread_join(t, &ok);
	return (long)ok;
}
