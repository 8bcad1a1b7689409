/* table.c - kubectl-style aligned tables (text/tabwriter with minwidth 10, padding 3). */
#include "table.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/result.h"

void table_init(struct table *t, size_t ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols ? ncols : 1;
}

/* A copy of s escaped for a terminal (util/escape.h): one row stays one line, and no cell sends a
 * control sequence. */
static char *clean_copy(const char *s)
{
    struct buf b;
    buf_init(&b, SIZE_MAX / 2);
    s = s ? s : "";
    if (text_escape_buf(&b, s, strlen(s), TEXT_ESCAPE_TERMINAL) != K_OK) {
        buf_cleanup(&b);
        return NULL;
    }
    return buf_take(&b);
}

int table_add_row(struct table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **grown = realloc(t->cells, cap * t->ncols * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        t->cells = grown;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        row[i] = clean_copy(cells[i]);
        if (!row[i]) {
            for (size_t j = 0; j < i; j++)
                free(row[j]);
            return K_ENOMEM;
        }
    }
    t->nrows++;
    return K_OK;
}

int table_addf(struct table *t, ...)
{
    const char *cells[TABLE_MAX_COLS] = {0};
    if (t->ncols > TABLE_MAX_COLS)
        return K_EINVAL;
    va_list ap;
    va_start(ap, t);
    for (size_t i = 0; i < t->ncols; i++)
        cells[i] = va_arg(ap, const char *);
    va_end(ap);
    return table_add_row(t, cells);
}

size_t table_text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80) /* not a continuation byte */
            w++;
    return w;
}

int table_render(const struct table *t, size_t indent, struct buf *out)
{
    size_t *width = calloc(t->ncols, sizeof(*width));
    if (!width)
        return K_ENOMEM;
    for (size_t c = 0; c + 1 < t->ncols; c++) {
        width[c] = TABLE_MIN_WIDTH;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t w = table_text_width(t->cells[r * t->ncols + c]) + TABLE_PADDING;
            if (w > width[c])
                width[c] = w;
        }
    }
    int rc = K_OK;
    for (size_t r = 0; r < t->nrows && rc == K_OK; r++) {
        rc = buf_printf(out, "%*s", (int)indent, "");
        for (size_t c = 0; c < t->ncols && rc == K_OK; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            rc = buf_append_str(out, cell);
            if (rc == K_OK && c + 1 < t->ncols)
                rc = buf_printf(out, "%*s", (int)(width[c] - table_text_width(cell)), "");
        }
        if (rc == K_OK)
            rc = buf_append(out, "\n", 1);
    }
    free(width);
    return rc;
}

int table_print(const struct table *t, size_t indent, FILE *out)
{
    struct buf b;
    buf_init(&b, SIZE_MAX / 2);
    int rc = table_render(t, indent, &b);
    if (rc == K_OK && b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = K_EIO;
    buf_cleanup(&b);
    return rc;
}

void table_cleanup(struct table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    size_t ncols = t->ncols;
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
}
