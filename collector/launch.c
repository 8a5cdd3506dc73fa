/*
 * launch.c — starting the traced command.
 *
 * The child is forked first and blocks on a pipe; the parent puts its pid
 * in the kernel's traced map, then closes the pipe and the child execs, so
 * the command is traced from its first instruction and every child it forks
 * is enrolled by the kernel.  The environment (LD_PRELOAD with our library
 * in front, INGERO_ENDPOINT) is built before fork: between fork and exec of
 * a threaded process only async-signal-safe calls are allowed.
 *
 * The preload library is looked for in $INGERO_PRELOAD, next to the
 * collector binary, then in ../lib (the installed layout).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/close_range.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingero/config.h"
#include "ingero/sched_batch.h"
#include "launch.h"

extern char **environ;

/* fds the collector itself inherited (a caller's 3>file): the command gets
 * those, and none of ours (BPF maps, the socket, the database) */
static int inherited[64];
static int n_inherited;

void launch_note_inherited_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && n_inherited < 64) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(d))
			inherited[n_inherited++] = fd;
	}
	closedir(d);
}

static int find_preload(char *out, size_t size)
{
	char self[4096], dir[2048];
	const char *env = getenv("INGERO_PRELOAD");
	ssize_t n;

	if (env && *env) {
		if (access(env, R_OK) == 0) {
			snprintf(out, size, "%s", env);
			return 0;
		}
		fprintf(stderr, "ingero-collector: INGERO_PRELOAD=%s: not readable\n", env);
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return -1;
	self[n] = 0;
	if (snprintf(dir, sizeof dir, "%s", dirname(self)) >= (int)sizeof dir)
		return -1;
	snprintf(out, size, "%s/libingero_preload.so", dir);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, size, "%s/../lib/libingero_preload.so", dir);
	if (access(out, R_OK) == 0)
		return 0;
	out[0] = 0;
	return -1;
}

/* environ without LD_PRELOAD/INGERO_ENDPOINT, plus ours: from *own on, the
 * entries are ours (allocated).  NVTX finds its tool in
 * NVTX_INJECTION64_PATH: our library (preload/nvtx_hooks.c), unless the
 * program's environment names another tool already (nsys does). */
static char **child_env(const char *preload, const char *endpoint, size_t *own)
{
	size_t n = 0, k = 0;
	char **env;
	const char *old = getenv("LD_PRELOAD");

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) == 0 ||
		    strncmp(environ[i], INGERO_ENV_ENDPOINT "=", sizeof(INGERO_ENV_ENDPOINT)) == 0)
			continue;
		env[k++] = environ[i];
	}
	*own = k;
	if (preload[0] && !getenv("NVTX_INJECTION64_PATH") &&
	    asprintf(&env[k++], "NVTX_INJECTION64_PATH=%s", preload) < 0)
		return NULL;
	if (preload[0]) {
		if (asprintf(&env[k], "LD_PRELOAD=%s%s%s", preload, old && *old ? ":" : "",
			     old ? old : "") < 0)
			return NULL;
		k++;
	} else if (old) {
		if (asprintf(&env[k++], "LD_PRELOAD=%s", old) < 0)
			return NULL;
	}
	if (asprintf(&env[k++], INGERO_ENV_ENDPOINT "=%s", endpoint) < 0)
		return NULL;
	env[k] = NULL;
	return env;
}

int launch_prepare(char **cmd, const char *endpoint, int unbatch, struct launch *l)
{
	int gate[2];
	char **env;
	sigset_t none;

	memset(l, 0, sizeof(*l));
	if (find_preload(l->preload, sizeof l->preload))
		fprintf(stderr, "ingero-collector: libingero_preload.so not found (set INGERO_PRELOAD): "
			"running %s without CUDA interception\n", cmd[0]);
	size_t own = 0;
	env = child_env(l->preload, endpoint, &own);
	if (!env || pipe2(gate, O_CLOEXEC) < 0) {
		fprintf(stderr, "ingero-collector: cannot start %s: %s\n", cmd[0], strerror(errno));
		return -1;
	}
	sigemptyset(&none);
	l->pid = fork();
	if (l->pid < 0) {
		fprintf(stderr, "ingero-collector: fork: %s\n", strerror(errno));
		return -1;
	}
	if (l->pid == 0) {
		char c;

		close(gate[1]);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		/* EOF with no byte: the collector gave up on us */
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		close(gate[0]);
		if (unbatch)
			ingero_sched_default();
		close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
		for (int i = 0; i < n_inherited; i++)
			fcntl(inherited[i], F_SETFD, 0);
		execvpe(cmd[0], cmd, env);
		dprintf(2, "ingero-collector: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(gate[0]);
	l->gate = gate[1];
	for (size_t i = own; env[i]; i++)
		free(env[i]);
	free(env);
	return 0;
}

void launch_release(struct launch *l)
{
	char go = 'g';

	if (write(l->gate, &go, 1) != 1)
		fprintf(stderr, "ingero-collector: cannot release the command: %s\n", strerror(errno));
	close(l->gate);
	l->gate = -1;
}

int launch_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
