/*
 * proc_env.h — a traced process's place in a distributed job, from its
 * environment: the variables launchers set for each rank (torchrun's RANK,
 * LOCAL_RANK, WORLD_SIZE, ..., MPI's, Slurm's), stored in process_env.
 */
#ifndef INGERO_COLLECTOR_PROC_ENV_H
#define INGERO_COLLECTOR_PROC_ENV_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* Reads /proc/PID/environ and stores the launcher variables it holds
 * (replacing what was stored for pid: an exec brings a new environment).
 * Nothing is stored when it holds none or cannot be read.  0, or -1 when
 * the process was gone (its environment unread). */
int proc_env_record(struct store *st, uint32_t pid);

/* The same from an environment block already read: `env` holds NUL-separated
 * NAME=VALUE strings, len bytes (what /proc/PID/environ reads).  Puts the
 * kept ones into kv as "NAME\0VALUE\0..." (at most cap bytes); returns how
 * many were kept.  Pure: unit-tested. */
size_t proc_env_filter(const char *env, size_t len, char *kv, size_t cap, size_t *kv_len);

#endif
