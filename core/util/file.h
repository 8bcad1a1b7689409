/*
 * file.h - read a whole file into a bounded buffer: every file gputri reads (kubeconfig, tokens,
 * certificates and keys, the service account's namespace) goes through file_read(), so each
 * read has a size cap.
 */
#ifndef GPUTRI_FILE_H
#define GPUTRI_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/*
 * A file's identity as a reloader compares it: device, inode, size and modification time in ns.
 * A file replaced by rename (how Kubernetes updates a mounted Secret) or rewritten in place
 * changes it.
 */
struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
};

/* file_id_stat() - the identity of `path` (stat(2), following links). Returns K_OK, K_ENOTFOUND
 * or K_EIO with errno set. Thread-safe. */
int file_id_stat(const char *path, struct file_id *id);

/* file_id_equal() - whether two identities are the same. Pure. */
bool file_id_equal(const struct file_id *a, const struct file_id *b);

#endif
