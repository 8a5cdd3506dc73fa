/*
 * wrap.h — text for a terminal: every line fitted to a width.
 *
 * The views print one fact a line, as long as the fact needs; this module
 * fits them to the reader's terminal afterwards, so no printer counts
 * columns.  A line longer than the width is cut at spaces, and each
 * continuation is indented under the line's text: past its leading spaces,
 * and past a leading tag ("[HIGH] ", "[HOST] ") or number ("2. ") when it
 * has one, else two more.  A word longer than the room left (a C++ symbol,
 * a long path) is cut where the line ends and goes on in the next.
 * Widths count characters (UTF-8 sequences), not bytes.
 *
 * The width: --width N when given; else the terminal's, when standard
 * output is one; else IA_WIDTH_DEFAULT (a file or a pipe).
 */
#ifndef IA_WRAP_H
#define IA_WRAP_H

#include <stddef.h>
#include <stdio.h>

#define IA_WIDTH_DEFAULT 80
#define IA_WIDTH_MIN 40

/* The width for output f: the one set (ia_width_set), else f's terminal's, else 80. */
int ia_width_for(FILE *f);
/* --width N (0: none given). */
void ia_width_set(int width);
/* Whether --width was given. */
int ia_width_given(void);

/* Writes text (len bytes, lines ending in '\n') to f, each line fitted to width. */
void ia_wrap_write(FILE *f, const char *text, size_t len, int width);

/* A FILE that collects what is printed, then ia_wrap_end writes it to out
 * wrapped to width and frees it.  NULL out of memory (print to out then). */
struct ia_wrap;
struct ia_wrap *ia_wrap_begin(void);
FILE *ia_wrap_file(struct ia_wrap *w);
/* 0, or -1 when writing to out failed. */
int ia_wrap_end(struct ia_wrap *w, FILE *out, int width);
/* Ends w without writing: what was printed, malloc'd (*len bytes), for a
 * caller that rewrites it before ia_wrap_write; NULL out of memory. */
char *ia_wrap_take(struct ia_wrap *w, size_t *len);

/* Display width of a UTF-8 string (characters). */
size_t ia_text_width(const char *s, size_t len);

#endif
