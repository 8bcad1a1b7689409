/* process_metrics.c - process_* metrics from procfs (see process_metrics.h). */
#include "process_metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "file.h"
#include "result.h"

/* statfs(2) f_type of procfs (linux/magic.h PROC_SUPER_MAGIC). */
#define PROC_MAGIC 0x9fa0
/* /proc/stat lists every CPU and interrupt: large on big machines, bounded all the same. */
#define PROC_FILE_MAX (4u << 20)

/* An unsigned decimal at *p (after blanks); advances *p past it. False when there is none or it
 * overflows. */
static bool take_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return true;
}

/* A signed decimal (rss is %ld in proc(5)); a negative value reads as 0. */
static bool take_i64_clamped(const char **p, uint64_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    bool neg = *s == '-';
    if (neg)
        s++;
    if (!take_u64(&s, out))
        return false;
    if (neg)
        *out = 0;
    *p = s;
    return true;
}

/* Skip one blank-separated field. */
static bool skip_field(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || *s == '\n')
        return false;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n')
        s++;
    *p = s;
    return true;
}

bool process_stats_parse_stat(const char *text, uint64_t btime, long ticks_per_second,
                              long page_size, struct process_stats *s)
{
    const char *r = text ? strrchr(text, ')') : NULL;
    if (!r || !strchr(text, '(') || ticks_per_second <= 0 || page_size <= 0)
        return false;
    /* proc(5) fields after the command: state (3) ... utime (14), stime (15), ..., starttime (22),
     * vsize (23), rss (24) */
    const char *p = r + 1;
    uint64_t utime, stime, starttime, vsize, rss;
    for (int field = 3; field < 14; field++)
        if (!skip_field(&p))
            return false;
    if (!take_u64(&p, &utime) || !take_u64(&p, &stime))
        return false;
    for (int field = 16; field < 22; field++)
        if (!skip_field(&p))
            return false;
    if (!take_u64(&p, &starttime) || !take_u64(&p, &vsize) || !take_i64_clamped(&p, &rss))
        return false;
    s->have_stat = true;
    s->cpu_seconds = (double)(utime + stime) / (double)ticks_per_second;
    s->virtual_memory_bytes = vsize;
    s->resident_memory_bytes = rss * (uint64_t)page_size;
    if (btime) {
        s->have_start_time = true;
        s->start_time_seconds = (double)btime + (double)starttime / (double)ticks_per_second;
    }
    return true;
}

/* The line after `line`, or NULL. */
static const char *next_line(const char *line)
{
    const char *nl = strchr(line, '\n');
    return nl ? nl + 1 : NULL;
}

/* The soft limit of the line of /proc/<pid>/limits that starts with `name`: the first column
 * after the name ("unlimited" or a decimal). */
static bool limit_of(const char *text, const char *name, uint64_t *out)
{
    size_t n = strlen(name);
    for (const char *line = text; line && *line; line = next_line(line)) {
        if (strncmp(line, name, n) != 0 || (line[n] != ' ' && line[n] != '\t'))
            continue;
        const char *p = line + n;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "unlimited", 9) == 0 &&
            (p[9] == ' ' || p[9] == '\t' || p[9] == '\n' || !p[9])) {
            *out = PROCESS_UNLIMITED;
            return true;
        }
        return take_u64(&p, out);
    }
    return false;
}

bool process_stats_parse_limits(const char *text, struct process_stats *s)
{
    uint64_t fds, as;
    if (!text || !limit_of(text, "Max open files", &fds) ||
        !limit_of(text, "Max address space", &as))
        return false;
    s->have_limits = true;
    s->max_fds = fds;
    s->max_virtual_memory_bytes = as;
    return true;
}

uint64_t process_stats_parse_btime(const char *text)
{
    uint64_t v;
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line + 5;
        if (strncmp(line, "btime", 5) == 0 && (*p == ' ' || *p == '\t') && take_u64(&p, &v))
            return v;
    }
    return 0;
}

/* The descriptors open in <dir>: its st_size on a real procfs that reports it (Linux 6.2+), else
 * its entries but "." and "..". */
static bool count_fds(const char *dir, uint64_t *out)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct statfs fs;
    struct stat st;
    if (fstatfs(fd, &fs) == 0 && fs.f_type == PROC_MAGIC && fstat(fd, &st) == 0 && st.st_size > 0) {
        close(fd);
        *out = (uint64_t)st.st_size;
        return true;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    uint64_t n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    bool ok = errno == 0;
    closedir(d);
    if (ok)
        *out = n;
    return ok;
}

/* file_read() of <root>/<rel> into b (reset first). */
static bool read_proc(const char *root, const char *rel, struct buf *b)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
        return false;
    buf_reset(b);
    return file_read(path, b, 0) == K_OK;
}

void process_stats_read(const char *proc_root, struct process_stats *s)
{
    const char *root = proc_root ? proc_root : "/proc";
    memset(s, 0, sizeof(*s));
    struct buf b;
    buf_init(&b, PROC_FILE_MAX);
    uint64_t btime = read_proc(root, "stat", &b) ? process_stats_parse_btime(buf_cstr(&b)) : 0;
    long hz = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    if (read_proc(root, "self/stat", &b))
        process_stats_parse_stat(buf_cstr(&b), btime, hz > 0 ? hz : 100, page > 0 ? page : 4096, s);
    if (read_proc(root, "self/limits", &b))
        process_stats_parse_limits(buf_cstr(&b), s);
    buf_cleanup(&b);
    char dir[4096];
    if ((size_t)snprintf(dir, sizeof(dir), "%s/self/fd", root) < sizeof(dir))
        s->have_open_fds = count_fds(dir, &s->open_fds);
}

static int family(struct buf *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int gauge_u64(struct buf *out, const char *name, const char *help, uint64_t v)
{
    int rc = family(out, name, "gauge", help);
    return rc ? rc : buf_printf(out, "%s %llu\n", name, (unsigned long long)v);
}

int process_metrics_render(const struct process_stats *s, struct buf *out)
{
    int rc = K_OK;
    if (s->have_stat) {
        rc = family(out, "process_cpu_seconds_total", "counter",
                    "Total user and system CPU time spent in seconds.");
        if (!rc)
            rc = buf_printf(out, "process_cpu_seconds_total %.2f\n", s->cpu_seconds);
    }
    if (!rc && s->have_open_fds)
        rc = gauge_u64(out, "process_open_fds", "Number of open file descriptors.", s->open_fds);
    if (!rc && s->have_limits)
        rc = gauge_u64(out, "process_max_fds", "Maximum number of open file descriptors.",
                       s->max_fds);
    if (!rc && s->have_stat)
        rc = gauge_u64(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
                       s->virtual_memory_bytes);
    if (!rc && s->have_limits)
        rc = gauge_u64(out, "process_virtual_memory_max_bytes",
                       "Maximum amount of virtual memory available in bytes.",
                       s->max_virtual_memory_bytes);
    if (!rc && s->have_stat)
        rc = gauge_u64(out, "process_resident_memory_bytes", "Resident memory size in bytes.",
                       s->resident_memory_bytes);
    if (!rc && s->have_start_time) {
        rc = family(out, "process_start_time_seconds", "gauge",
                    "Start time of the process since unix epoch in seconds.");
        if (!rc)
            rc = buf_printf(out, "process_start_time_seconds %.2f\n", s->start_time_seconds);
    }
    return rc;
}

int process_metrics_append(struct buf *out)
{
    struct process_stats s;
    process_stats_read(NULL, &s);
    return process_metrics_render(&s, out);
}
