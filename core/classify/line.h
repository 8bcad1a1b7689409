/*
 * line.h - the one-line detail text the classifier writes: bounded printf into caller storage,
 * truncation that keeps UTF-8 whole, control characters replaced. Internal to core/classify.
 * Pure; a line is used by one thread.
 */
#ifndef GPUTRI_CLASSIFY_LINE_H
#define GPUTRI_CLASSIFY_LINE_H

#include <stdbool.h>
#include <stddef.h>

struct line {
    char *buf;
    size_t cap;
    size_t len;
    bool truncated;
};

/* line_printf() - append; once the buffer is full further output is dropped (truncated). */
void line_printf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* line_finish() - terminate; control characters become spaces; a UTF-8 sequence cut by
 * truncation is dropped. */
void line_finish(struct line *l);

#endif
