/*
 * file.h - read a whole file into a bounded buffer: every file gputri reads (kubeconfig, tokens,
 * certificates and keys, the service account's namespace) goes through file_read(), so each
 * read has a size cap.
 */
#ifndef GPUTRI_FILE_H
#define GPUTRI_FILE_H

#include "util/buf.h"

/*
 * Refuse anything but a regular file, and never block on opening it (O_NONBLOCK): for reads on a
 * server's hot path, where a FIFO or device put at the path must not hang a thread.
 */
#define FILE_REGULAR_ONLY 1u

/*
 * file_read() - append the whole of `path` to `b` (initialised by the caller with buf_init();
 * its limit is the size cap). On K_OK the content is NUL-terminated in b ("" for an empty file).
 * Returns K_OK, K_ENOTFOUND (no such file or directory), K_ETOOBIG (larger than the limit),
 * K_EIO (a read error, or not a regular file with FILE_REGULAR_ONLY), or K_ENOMEM. On failure
 * errno is that of the failing call (for strerror in messages) and b is empty; what was read
 * is wiped first, as is the stack copy, since keys and tokens pass through here. Thread-safe.
 */
int file_read(const char *path, struct buf *b, unsigned flags);

#endif
