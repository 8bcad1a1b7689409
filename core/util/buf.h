/*
 * buf.h - a growable byte buffer with a hard size limit, for everything filled from the network
 * or from files (the curl dynbuf model).
 *
 * The content is always NUL-terminated (the terminator is not counted in len). A buffer is
 * initialised with buf_init() and released with buf_cleanup(); it is not thread-safe.
 */
#ifndef GPUTRI_BUF_H
#define GPUTRI_BUF_H

#include <stddef.h>

struct buf {
    char *data;   /* owned; NULL until the first append */
    size_t len;   /* bytes used, without the terminator */
    size_t cap;   /* bytes allocated */
    size_t limit; /* len never exceeds this */
};

/* buf_init() - an empty buffer that refuses to grow past `limit` bytes. */
void buf_init(struct buf *b, size_t limit);

/*
 * buf_append() - append n bytes. Returns K_OK, K_ETOOBIG when len + n would pass the limit (the
 * buffer is left unchanged), or K_ENOMEM.
 */
int buf_append(struct buf *b, const void *data, size_t n);

/* buf_append_str() - buf_append() of a NUL-terminated string. */
int buf_append_str(struct buf *b, const char *s);

/* buf_printf() - append formatted text; same results as buf_append(). */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* buf_reset() - drop the content, keep the allocation. */
void buf_reset(struct buf *b);

/* buf_cstr() - the content as a string, borrowed; "" for an empty buffer. */
const char *buf_cstr(const struct buf *b);

/* buf_take() - hand the content to the caller (free() it) and leave the buffer empty. */
char *buf_take(struct buf *b);

/* buf_cleanup() - free the content. The buffer may be reused after buf_init(). */
void buf_cleanup(struct buf *b);

#endif
