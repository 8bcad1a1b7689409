/*
 * errbuf.h - one-line error messages into a caller's buffer.
 */
#ifndef GPUTRI_ERRBUF_H
#define GPUTRI_ERRBUF_H

#include <stddef.h>

/*
 * errbuf_printf() - format a message into err (errlen bytes, always NUL-terminated, cut when
 * longer). Control characters (newlines, tabs, escapes, DEL) become spaces, so text quoted from
 * a file cannot break the message over lines. Does nothing when err is NULL or errlen is 0.
 * Thread-safe for distinct buffers.
 */
void errbuf_printf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
