/*
 * dlsym_hook.c — interposing dlsym itself.
 *
 * The CUDA runtime takes the driver's entry points with
 * dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"), and ctypes
 * or Triton look CUDA functions up the same way; a look-up on a handle is
 * not redirected by LD_PRELOAD.  So our dlsym answers with our wrapper
 * for the names we trace (remembering the real pointer it found), and with
 * glibc's answer for everything else.
 *
 * dlsym(RTLD_NEXT, …) depends on who calls it: glibc searches after the
 * caller's object, found from the return address.  A C wrapper would make
 * every RTLD_NEXT look-up in the process relative to this library, which
 * breaks other interposers (sanitizers, allocators).  So dlsym is a small
 * assembly trampoline: RTLD_NEXT look-ups jump (not call) to glibc's dlsym
 * with the caller's return address untouched; all other handles go to C.
 *
 * The symbol is exported unversioned (exports.map leaves it out of every
 * node), so references to dlsym@GLIBC_2.2.5 and dlsym@GLIBC_2.34 both bind
 * to it.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "hooks.h"

void *ingero_real_dlsym_ptr(void);
void *ingero_dlsym_impl(void *handle, const char *name);

/* Sanitizer builds (the unit tests link these objects into an executable)
 * must not interpose dlsym: the sanitizer runtime calls it before its own
 * shadow memory exists, and instrumented code would fault.  There the
 * trampoline gets another name. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INGERO_NO_DLSYM_HOOK 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define INGERO_NO_DLSYM_HOOK 1
#endif
#ifdef INGERO_NO_DLSYM_HOOK
#define DLSYM_NAME "ingero_dlsym_trampoline"
#else
#define DLSYM_NAME "dlsym"
#endif

__asm__(".text\n"
	".globl " DLSYM_NAME "\n"
	".type " DLSYM_NAME ", @function\n"
	DLSYM_NAME ":\n"
	"	.cfi_startproc\n"
	"	cmpq $-1, %rdi\n"                 /* RTLD_NEXT == (void *)-1 */
	"	jne ingero_dlsym_impl\n"
	"	subq $24, %rsp\n"                 /* keep rdi, rsi; align the stack for the call */
	"	.cfi_adjust_cfa_offset 24\n"
	"	movq %rdi, (%rsp)\n"
	"	movq %rsi, 8(%rsp)\n"
	"	call ingero_real_dlsym_ptr\n"
	"	movq (%rsp), %rdi\n"
	"	movq 8(%rsp), %rsi\n"
	"	addq $24, %rsp\n"
	"	.cfi_adjust_cfa_offset -24\n"
	"	testq %rax, %rax\n"
	"	je 1f\n"
	"	jmp *%rax\n"                      /* glibc sees our caller's return address */
	"1:	ret\n"
	"	.cfi_endproc\n"
	".size " DLSYM_NAME ", .-" DLSYM_NAME "\n");

static int is_libcudart13(const void *p)
{
	Dl_info di;
	if (!dladdr(p, &di) || !di.dli_fname)
		return 0;
	const char *base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return strncmp(base, INGERO_LIBCUDART, sizeof INGERO_LIBCUDART - 1) == 0;
}

void *ingero_dlsym_impl(void *handle, const char *name)
{
	void *r = ingero_real_dlsym(handle, name);
	if (!r || !name || !ingero_hot.on || (name[0] != 'c' && name[0] != '_'))
		return r;
	if (name[0] == 'c' && name[1] == 'u' && name[2] != 'd')
		return ingero_drv_wrap(name, r, 0, -1);
	const struct ingero_hook *h = ingero_rt_hook(name);
	if (!h || r == h->wrapper)
		return r;
	/* Only the CUDA 13 runtime: another runtime (libcudart.so.12 bundled by
	 * some package) has functions of the same names that we must not
	 * redirect to this one. */
	if (!is_libcudart13(r))
		return r;
	void *none = NULL;
	atomic_compare_exchange_strong(h->real, &none, r);
	return h->wrapper;
}
