/*
 * table.h — a text table fitted to a width.
 *
 * Columns are sized to their widest cell.  When the table is wider than
 * the terminal, the columns a reader can spare go first (each column has a
 * rank: 0 always stays, higher ranks go before lower ones), then the first
 * left-aligned column (a name) is cut with "…" down to 12 characters.  What
 * is left out is said under the table by the caller when it matters
 * (--json has every column).
 */
#ifndef IA_TABLE_H
#define IA_TABLE_H

#include <stdio.h>

struct ia_table;

/* A table of ncols columns; NULL out of memory. */
struct ia_table *ia_table_new(int ncols);
/* Column i: its title, left-aligned or right, its rank (0 = always shown,
 * -1 = never: a column with nothing to say in this table). */
void ia_table_col(struct ia_table *t, int i, const char *title, int left, int rank);
/* A row of ncols cells (copied); -1 out of memory. */
int ia_table_row(struct ia_table *t, const char *const *cells);
/* Prints the title line and the rows, each line starting with indent. */
void ia_table_print(struct ia_table *t, FILE *f, int width, const char *indent);
/* How many columns the last ia_table_print left out. */
int ia_table_dropped(const struct ia_table *t);
void ia_table_free(struct ia_table *t);

#endif
