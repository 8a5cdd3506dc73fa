/*
 * display.h — the long names in a finding's text made short for a
 * terminal, without losing what they say (explain --json keeps them whole):
 *   * an installed package's file from its package on:
 *     /opt/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py:548
 *     -> torch/nn/modules/conv.py:548
 *   * the standard library's from its folder: /usr/lib/python3.12/selectors.py
 *     -> python3.12/selectors.py
 *   * the user's own files from the script's folder (the folder of the
 *     trace's command's script, when a path names it):
 *     /work/project/train.py:22 -> train.py:22
 *   * C++ template arguments collapsed: c10::function_ref<void (char**,
 *     long const*, long, long)>::callback_fn<...> -> c10::function_ref<…>::callback_fn<…>
 *   * a mangled C++ name cut to its first 40 characters and "…"
 */
#ifndef IA_DISPLAY_H
#define IA_DISPLAY_H

#include "rules/chains.h"
#include "base/wrap.h"

#include <stddef.h>
#include <stdio.h>

/* The user's folder from the trace's command ("python3 train.py --x")
 * and a path that ends in its script: malloc'd, NULL when not found. */
char *ia_display_user_dir(const char *command, const char *const *paths, size_t npaths);

/* text (len bytes) with its names shortened: malloc'd (*out_len bytes,
 * NUL-terminated); NULL out of memory. user_dir may be NULL. */
char *ia_display_text(const char *text, size_t len, const char *user_dir, size_t *out_len);

/* The user's folder of an analysis: from its command and its findings'
 * source lines (malloc'd, NULL when not found). */
char *ia_display_user_dir_of(const struct ia_analysis *a);

/* Ends w (wrap.h): its text shortened (user_dir may be NULL), wrapped to
 * width, written to out.  0, or -1 when writing failed. */
int ia_display_write(FILE *out, struct ia_wrap *w, int width, const char *user_dir);

#endif
