/*
 * symbolize.h — addresses to names: user addresses through the process's
 * /proc/PID/maps and the ELF symbol tables of the mapped files, kernel
 * addresses through /proc/kallsyms.  Names are demangled when they are C++.
 */
#ifndef INGERO_COLLECTOR_SYMBOLIZE_H
#define INGERO_COLLECTOR_SYMBOLIZE_H

#include <stdint.h>

struct symbolizer;

struct sym_result {
	const char *symbol;   /* NULL when unknown; owned by the symbolizer */
	const char *module;   /* mapped file path, "[kernel]", or NULL */
	uint64_t offset;      /* ip - symbol start, or ip - module base when no symbol */
};

struct symbolizer *sym_new(void);
void sym_free(struct symbolizer *s);
/* Start reading /proc/kallsyms now (set-up time), on a thread of its own, rather
 * than at the first kernel frame; that frame waits for the reader if it must. */
void sym_preload_kernel(struct symbolizer *s);

/* Read pid's maps now (call while it is alive: at enrolment, exec, first sample). */
void sym_load_pid(struct symbolizer *s, uint32_t pid);
/* A forked child starts with its parent's mappings. */
void sym_fork(struct symbolizer *s, uint32_t child, uint32_t parent);
/* exec replaced the image: forget the old mappings. */
void sym_exec(struct symbolizer *s, uint32_t pid);
/* How many times a /proc/PID/maps was opened (or tried), all processes together. */
uint64_t sym_maps_reads(const struct symbolizer *s);
/* The clock the re-reads are rationed by (tests; mono_now_ns otherwise). */
void sym_set_clock(struct symbolizer *s, uint64_t (*clock)(void));

/* An address in no known mapping re-reads pid's maps (rationed: symbolize.c). */
void sym_user(struct symbolizer *s, uint32_t pid, uint64_t ip, struct sym_result *r);
/* The same for a sample's leaf, which is code for certain: found in a data
 * mapping too, the maps are re-read (at the shortest wait). */
void sym_user_leaf(struct symbolizer *s, uint32_t pid, uint64_t ip, struct sym_result *r);
/* 1 when addr, in pid's code, follows a call instruction. */
int sym_is_return_address(struct symbolizer *s, uint32_t pid, uint64_t addr);
void sym_kernel(struct symbolizer *s, uint64_t ip, struct sym_result *r);
/* The address in pid of the symbol `name` (data or code) defined by a file
 * mapped there whose base name starts with `prefix`; 0 when none.
 * *module (may be NULL) gets that file's path. */
uint64_t sym_find(struct symbolizer *s, uint32_t pid, const char *prefix, const char *name,
		  const char **module);

#endif
