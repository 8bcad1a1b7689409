/*
 * table.h - column-aligned text tables laid out the way kubectl prints them.
 *
 * kubectl writes its tables through Go's text/tabwriter with minwidth 10, padding 3 and ' ' as the
 * pad character (k8s.io/cli-runtime: pkg/printers/tabwriter.go GetNewTabWriter). Every column but
 * the last is as wide as its widest cell plus 3, and at least 10; the last column is printed as
 * is, so no line ends in spaces. Widths count UTF-8 code points, as tabwriter does.
 *
 * Cells are copied escaped with text_escape(TEXT_ESCAPE_TERMINAL) (util/escape.h): C0 (tabs,
 * newlines, ESC), DEL, the C1 controls and bytes that are not UTF-8 become "\x09", "\x1b",
 * "\u009b", "\xff", ..., so that one row stays one line and no cell sends a terminal a control
 * sequence; widths count the escaped text. An empty cell is printed as is (kubectl prints
 * "<none>" itself; callers choose their own placeholder).
 */
#ifndef GPUTRI_CLI_TABLE_H
#define GPUTRI_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"

#define TABLE_MIN_WIDTH 10
#define TABLE_PADDING 3
#define TABLE_MAX_COLS 16 /* for table_addf() */

struct table {
    size_t ncols;
    size_t nrows; /* rows added, the header included */
    size_t cap;   /* rows allocated */
    char **cells; /* nrows * ncols strings, owned */
};

/* table_init() - an empty table of `ncols` (>= 1) columns. Always succeeds. */
void table_init(struct table *t, size_t ncols);

/*
 * table_add_row() - append one row of t->ncols cells (NULL cells count as ""). The first row
 * added is the header. Returns K_OK or K_ENOMEM (the table is then unchanged).
 */
int table_add_row(struct table *t, const char *const *cells);

/*
 * table_addf() - append one row given as t->ncols NUL-terminated strings in the variadic
 * arguments. Same results as table_add_row(), and K_EINVAL for a table of more than
 * TABLE_MAX_COLS columns.
 */
int table_addf(struct table *t, ...);

/* table_text_width() - the display width of `s` in tabwriter's terms: UTF-8 code points. */
size_t table_text_width(const char *s);

/*
 * table_render() - append the whole table to `out`, one '\n'-terminated line per row, indented
 * by `indent` spaces. Returns K_OK, K_ENOMEM or K_ETOOBIG (the buffer's limit).
 */
int table_render(const struct table *t, size_t indent, struct buf *out);

/* table_print() - table_render() to a stream. Returns K_OK, K_ENOMEM or K_EIO. */
int table_print(const struct table *t, size_t indent, FILE *out);

/* table_cleanup() - free every cell; the table may be reused after table_init(). */
void table_cleanup(struct table *t);

#endif
