/*
 * launch.h — running `-- CMD`: fork it held at a gate, enrol it, let it exec.
 */
#ifndef INGERO_COLLECTOR_LAUNCH_H
#define INGERO_COLLECTOR_LAUNCH_H

#include <sys/types.h>

struct launch {
	pid_t pid;
	int gate;            /* write end: closing it lets the child exec */
	char preload[4096];  /* library put in LD_PRELOAD, "" when none found */
};

/* Call first thing in main(): remembers the fds the caller passed us. */
void launch_note_inherited_fds(void);
/* Fork CMD; the child waits until launch_release().  unbatch: the
 * collector made itself SCHED_BATCH (sched_batch.h), which CMD must not
 * inherit.  -1 on failure. */
int launch_prepare(char **cmd, const char *endpoint, int unbatch, struct launch *l);
void launch_release(struct launch *l);
/* Exit status as a shell reports it: code, or 128 + signal. */
int launch_exit_code(int wait_status);

#endif
