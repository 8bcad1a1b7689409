/* line.c - the bounded detail line of line.h. */
#include "classify/line.h"

#include <stdarg.h>
#include <stdio.h>

void line_printf(struct line *l, const char *fmt, ...)
{
    if (l->truncated)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, l->cap - l->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        l->buf[l->len] = '\0';
        return;
    }
    if ((size_t)n >= l->cap - l->len) {
        l->len = l->cap - 1;
        l->truncated = true;
    } else {
        l->len += (size_t)n;
    }
}

/* Control characters become spaces; a multi-byte UTF-8 sequence cut by truncation is dropped. */
void line_finish(struct line *l)
{
    l->buf[l->len] = '\0';
    if (l->truncated && l->len > 0) {
        size_t i = l->len;
        while (i > 0 && ((unsigned char)l->buf[i - 1] & 0xC0) == 0x80)
            i--;
        if (i > 0 && (unsigned char)l->buf[i - 1] >= 0xC0) {
            unsigned char lead = (unsigned char)l->buf[i - 1];
            size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (l->len - (i - 1) < want) {
                l->len = i - 1;
                l->buf[l->len] = '\0';
            }
        }
    }
    for (size_t i = 0; i < l->len; i++) {
        unsigned char c = (unsigned char)l->buf[i];
        if (c < 0x20 || c == 0x7f)
            l->buf[i] = ' ';
    }
}
