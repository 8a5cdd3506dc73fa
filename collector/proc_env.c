/*
 * proc_env.c — the launcher variables of a traced process (proc_env.h).
 *
 * Why the collector reads /proc/PID/environ rather than the preload library
 * reporting its own environment in its HELLO: the environment a launcher
 * gives a rank is fixed at its exec (torchrun, mpirun, srun and
 * multiprocessing's spawn all put RANK and the like into the new program's
 * environment block), and /proc/PID/environ shows exactly that block; the
 * collector sees every exec of the traced tree (the kernel's exec record,
 * or enrolment), so it records the agent, the ranks and helpers that never
 * load the library (a launcher script, a rank started with LD_PRELOAD
 * cleared, a process that makes no CUDA call and so sends no HELLO) the
 * same way, needs no change to the wire, and costs the traced program
 * nothing.  What it cannot see: a variable set with setenv() after the exec
 * (it lives on the heap, not in that block) — launchers do not do that to
 * ranks — and a process gone before its exec record was read (milliseconds;
 * a rank lives for the job).  A fork child (a DataLoader worker) has its
 * parent's block and is not read: the analyzer gives it its parent's rank.
 * In CUDA-only mode (no exec records) it is read when the process says
 * HELLO — a short process can be gone by the time its HELLO is handled
 * (a loaded machine: CI's fake ranks of 3 steps); with exec records a
 * process of a fraction of a second can be gone too, or a zombie whose
 * block is gone (CI: one of ranks_env's 0.2 s sleeps).  Either way the
 * loss process_env_unread of that process counts it.
 *
 * Only the names below are kept — an environment holds secrets (tokens,
 * passwords) that have no business in a trace file — and each value is cut
 * at 255 bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ingero/procfs.h>

#include "proc_env.h"
#include "store.h"

static const char *const kept[] = {
	/* torchrun / torch.distributed.elastic */
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
	"ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT",
	"TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
	/* Open MPI, MPICH / PMI, Slurm */
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	"OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID",
	"SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID",
	/* which GPU a rank sees */
	"CUDA_VISIBLE_DEVICES",
};

#define VALUE_MAX 255

static int is_kept(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
		if (strlen(kept[i]) == len && memcmp(kept[i], name, len) == 0)
			return 1;
	return 0;
}

size_t proc_env_filter(const char *env, size_t len, char *kv, size_t cap, size_t *kv_len)
{
	size_t n = 0, o = 0, i = 0;

	while (i < len) {
		const char *s = env + i;
		const char *end = memchr(s, 0, len - i);
		size_t slen = end ? (size_t)(end - s) : len - i;
		const char *eq = memchr(s, '=', slen);

		i += slen + 1;
		if (!eq || eq == s || !is_kept(s, (size_t)(eq - s)))
			continue;
		size_t nlen = (size_t)(eq - s), vlen = slen - nlen - 1;
		if (vlen > VALUE_MAX)
			vlen = VALUE_MAX;
		if (o + nlen + vlen + 2 > cap)
			break;
		memcpy(kv + o, s, nlen);
		kv[o + nlen] = 0;
		memcpy(kv + o + nlen + 1, eq + 1, vlen);
		kv[o + nlen + 1 + vlen] = 0;
		o += nlen + vlen + 2;
		n++;
	}
	*kv_len = o;
	return n;
}

/* Whether pid has exited (gone, or a zombie waiting for its parent). */
static int exited(uint32_t pid)
{
	char state;
	uint64_t ticks;
	return ingero_read_stat(pid, &state, &ticks) < 0 || state == 'Z' || state == 'X';
}

int proc_env_record(struct store *st, uint32_t pid)
{
	char path[64], env[65536], kv[4096];
	size_t len = 0, kv_len;
	ssize_t r;
	int fd;

	snprintf(path, sizeof path, "/proc/%u/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : 0;
	/* a block larger than this is cut: the variables kept sit anywhere in
	 * it, but 64 KiB holds a rank's environment with room to spare */
	while (len < sizeof env && (r = read(fd, env + len, sizeof env - len)) > 0)
		len += (size_t)r;
	close(fd);
	if (!len && exited(pid))   /* its memory, the block with it, is gone */
		return -1;
	if (proc_env_filter(env, len, kv, sizeof kv, &kv_len))
		store_process_env(st, pid, kv, kv_len);
	return 0;
}
