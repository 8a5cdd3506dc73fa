/*
 * exit_hook.c — _exit and _Exit.
 *
 * exit() runs the library destructor, which flushes the sender.  But
 * multiprocessing workers (fork and forkserver) end with os._exit(), and so
 * do many forked workers: no destructor runs.  A worker that traces on a
 * ring of its own (it called CUDA before its parent did; fork.c) would lose
 * its last batch and its final COUNTS.  So _exit in a process whose sender
 * runs first gives it the same bounded final flush as exit() (it never
 * waits more than the sender's stop limit), and a worker writing into its
 * parent's ring leaves a BYE.  Everything else passes straight through.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
#include "hooks.h"
#include "record.h"
#include "sender.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INGERO_NO_EXIT_HOOK 1   /* the sanitizer runtime defines _exit itself */
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define INGERO_NO_EXIT_HOOK 1
#endif

#ifndef INGERO_NO_EXIT_HOOK
static _Atomic(void *) real__exit;

static void before_exit(void)
{
	/* A vfork child (posix_spawn, subprocess) shares our memory and ran no
	 * fork handler: it must not stop the parent's sender.  Its pid tells. */
	if (!ingero_hot.on || (uint32_t)getpid() != ingero_hot.pid)
		return;
	if (ingero_hot.owner)
		ingero_sender_stop();
	else
		ingero_emit_bye();
}

__attribute__((noreturn)) static void leave(int status)
{
	void (*fn)(int) = (void (*)(int))INGERO_REAL(real__exit, "_exit", NULL);
	if (fn)
		fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

INGERO_EXPORT __attribute__((noreturn)) void _exit(int status)
{
	before_exit();
	leave(status);
}

INGERO_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
	before_exit();
	leave(status);
}
#endif
