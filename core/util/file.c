/* file.c - bounded whole-file reads (see file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "result.h"

static int fail(struct buf *b, int rc, int err)
{
    if (b->data)
        explicit_bzero(b->data, b->len);
    buf_reset(b);
    errno = err;
    return rc;
}

int file_read(const char *path, struct buf *b, unsigned flags)
{
    int oflags = O_RDONLY | O_CLOEXEC | ((flags & FILE_REGULAR_ONLY) ? O_NONBLOCK : 0);
    int fd = open(path, oflags);
    if (fd < 0)
        return fail(b, errno == ENOENT || errno == ENOTDIR ? K_ENOTFOUND : K_EIO, errno);
    if (flags & FILE_REGULAR_ONLY) {
        struct stat st;
        int e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
        if (e) {
            close(fd);
            return fail(b, K_EIO, e);
        }
    }
    char tmp[8192];
    int rc = K_OK, e = 0;
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            rc = K_EIO;
            break;
        }
        if (n == 0)
            break;
        rc = buf_append(b, tmp, (size_t)n);
        if (rc) {
            e = rc == K_ETOOBIG ? EFBIG : ENOMEM;
            break;
        }
    }
    explicit_bzero(tmp, sizeof(tmp));
    close(fd);
    if (rc)
        return fail(b, rc, e);
    if (!b->data && (rc = buf_append(b, "", 0)) != K_OK) /* an empty file still yields "" */
        return fail(b, rc, ENOMEM);
    return K_OK;
}

int file_id_stat(const char *path, struct file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? K_ENOTFOUND : K_EIO;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return K_OK;
}

bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}
