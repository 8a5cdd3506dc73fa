/*
 * check_cache.h — files whose pages were found sound, remembered by what
 * stat says of them, so that the same unchanged file is not checked again
 * by the next command (check.c).
 *
 * Checking every page of a large trace is most of a command's reading
 * (the 10 M + 10 M bench: ~2.5 CPU-s of 7): explain, stats, the report and
 * the MCP server read the same file one after another.  A file is known
 * by its device, inode, size and modification and change times; any write
 * moves the change time, so a file changed since — in place, copied over,
 * or renamed onto — is checked again.  Only files quiet for a while before
 * the check (file times are coarse: a write in the same tick as the last
 * one would keep them) and without a WAL (its frames are the file's too)
 * are remembered.  The list is $INGERO_CHECK_CACHE ("off": none), else
 * $XDG_CACHE_HOME/ingero/checked, else ~/.cache/ingero/checked; the
 * latest IA_CHECK_CACHE_MAX files, one line each.
 */
#ifndef IA_CHECK_CACHE_H
#define IA_CHECK_CACHE_H

#include <stdint.h>

#define IA_CHECK_CACHE_MAX 256

struct ia_check_key {
	char line[160];   /* "" when the file cannot be remembered */
};

/* The key of the file at path as it is now ("" when it has a WAL, was
 * written too recently, or cannot be read). */
void ia_check_key_of(const char *path, struct ia_check_key *k);
/* Whether the list holds k (a file found sound before, unchanged since). */
int ia_check_cache_has(const struct ia_check_key *k);
/* k found sound, and path still as k says: into the list (errors ignored:
 * the next command checks again). */
void ia_check_cache_add(const char *path, const struct ia_check_key *k);

#endif
