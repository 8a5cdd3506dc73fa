/*
 * table.c — a text table fitted to a width (table.h).
 */
#include "base/table.h"

#include "base/util.h"
#include "base/wrap.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MIN 12

struct col {
	char *title;
	int left, rank;
};

struct ia_table {
	int ncols;
	struct col *cols;
	char **cells;     /* nrows * ncols */
	size_t nrows, cap;
	int dropped;      /* by the last print (set by print) */
};

struct ia_table *ia_table_new(int ncols)
{
	struct ia_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->ncols = ncols;
	t->cols = calloc((size_t)ncols, sizeof *t->cols);
	if (!t->cols) {
		free(t);
		return NULL;
	}
	return t;
}

void ia_table_col(struct ia_table *t, int i, const char *title, int left, int rank)
{
	if (!t || i < 0 || i >= t->ncols)
		return;
	free(t->cols[i].title);
	t->cols[i].title = strdup(title);
	t->cols[i].left = left;
	t->cols[i].rank = rank;
}

int ia_table_row(struct ia_table *t, const char *const *cells)
{
	if (!t)
		return -1;
	if (ia_grow((void **)&t->cells, &t->cap, (t->nrows + 1) * (size_t)t->ncols, sizeof *t->cells) < 0)
		return -1;
	char **r = t->cells + t->nrows * (size_t)t->ncols;
	for (int i = 0; i < t->ncols; i++) {
		r[i] = strdup(cells[i] ? cells[i] : "");
		if (!r[i]) {
			while (i-- > 0)
				free(r[i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

static size_t tw(const char *s)
{
	return s ? ia_text_width(s, strlen(s)) : 0;
}

/* s cut to w characters with "…" when longer. */
static void put_cell(FILE *f, const char *s, size_t w, int left)
{
	size_t n = tw(s);
	if (n > w) {   /* cut: the first w-1 characters and an ellipsis */
		size_t i = 0, c = 0;
		while (s[i] && c < w - 1) {
			i++;
			while ((s[i] & 0xc0) == 0x80)
				i++;
			c++;
		}
		fwrite(s, 1, i, f);
		fputs("…", f);
		return;
	}
	if (left)
		fprintf(f, "%s%*s", s, (int)(w - n), "");
	else
		fprintf(f, "%*s%s", (int)(w - n), "", s);
}

void ia_table_print(struct ia_table *t, FILE *f, int width, const char *indent)
{
	if (!t)
		return;
	int n = t->ncols;
	size_t *w = calloc((size_t)n, sizeof *w);
	int *show = calloc((size_t)n, sizeof *show);
	if (!w || !show) {
		free(w);
		free(show);
		return;
	}
	for (int i = 0; i < n; i++) {
		w[i] = tw(t->cols[i].title);
		show[i] = t->cols[i].rank >= 0;
		for (size_t r = 0; r < t->nrows; r++) {
			size_t x = tw(t->cells[r * (size_t)n + (size_t)i]);
			if (x > w[i])
				w[i] = x;
		}
	}
	size_t ind = tw(indent);
	int dropped = 0;
	for (;;) {
		size_t total = ind;
		int first = 1;
		for (int i = 0; i < n; i++)
			if (show[i]) {
				total += w[i] + (first ? 0 : 2);
				first = 0;
			}
		if (total <= (size_t)width)
			break;
		int worst = -1;   /* the highest rank shown, the rightmost of it */
		for (int i = 0; i < n; i++)
			if (show[i] && t->cols[i].rank > 0 && (worst < 0 || t->cols[i].rank >= t->cols[worst].rank))
				worst = i;
		if (worst >= 0) {
			show[worst] = 0;
			dropped++;
			continue;
		}
		for (int i = 0; i < n; i++)   /* then the name */
			if (show[i] && t->cols[i].left) {
				size_t over = total - (size_t)width;
				w[i] = w[i] > NAME_MIN + over ? w[i] - over : w[i] > NAME_MIN ? NAME_MIN : w[i];
				break;
			}
		break;
	}
	t->dropped = dropped;
	char *row = NULL;
	size_t rowlen = 0;
	FILE *out = f;
	for (size_t r = 0; r <= t->nrows; r++) {
		/* each line built apart, so that its trailing blanks (an empty
		 * last cell) can be left out */
		f = open_memstream(&row, &rowlen);
		if (!f) {
			f = out;
			break;
		}
		fputs(indent, f);
		int first = 1;
		/* trailing blanks of the last column are left out */
		int last = -1;
		for (int i = 0; i < n; i++)
			if (show[i])
				last = i;
		for (int i = 0; i < n; i++) {
			if (!show[i])
				continue;
			const char *s = r == 0 ? t->cols[i].title : t->cells[(r - 1) * (size_t)n + (size_t)i];
			if (!first)
				fputs("  ", f);
			if (i == last && t->cols[i].left)
				put_cell(f, s, tw(s) < w[i] ? tw(s) : w[i], 1);
			else
				put_cell(f, s, w[i], t->cols[i].left);
			first = 0;
		}
		fclose(f);
		while (rowlen && row[rowlen - 1] == ' ')
			rowlen--;
		fwrite(row, 1, rowlen, out);
		fputc('\n', out);
		free(row);
		row = NULL;
	}
	free(w);
	free(show);
}

int ia_table_dropped(const struct ia_table *t)
{
	return t ? t->dropped : 0;
}

void ia_table_free(struct ia_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	for (int i = 0; i < t->ncols; i++)
		free(t->cols[i].title);
	free(t->cells);
	free(t->cols);
	free(t);
}
