/* log.c - klog-style and JSON log lines on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int verbosity;
static enum log_format format = LOG_FORMAT_TEXT;

void log_set_verbosity(int v)
{
    verbosity = v;
}

int log_get_verbosity(void)
{
    return verbosity;
}

void log_set_format(enum log_format f)
{
    format = f;
}

/* Appends `s` to `out` as the inside of a JSON string; never writes past `cap`. */
static size_t json_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
    return n;
}

/*
 * Copies `s` into `out` with every control character written as "\xNN": C0 (newlines would
 * forge log lines), DEL, and the C1 controls U+0080..U+009F in their UTF-8 form (U+009B is
 * a terminal's CSI). Other bytes, UTF-8 included, are kept. Never writes past `cap`.
 */
static void escape_controls(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 9 < cap; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            n += (size_t)snprintf(out + n, cap - n, "\\xc2\\x%02x", p[1]);
            p++;
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
}

void log_write(char sev, int v, const char *file, int line, const char *fmt, ...)
{
    char msg[4096], out[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int n;
    if (format == LOG_FORMAT_JSON) {
        char esc[6000];
        json_escape(esc, sizeof(esc), msg);
        n = snprintf(out, sizeof(out),
                     "{\"ts\":%lld.%06ld,\"level\":\"%s\",\"v\":%d,\"caller\":\"%s:%d\","
                     "\"msg\":\"%s\"}\n",
                     (long long)tv.tv_sec, (long)tv.tv_usec,
                     sev == 'E'   ? "error"
                     : sev == 'W' ? "warning"
                                  : "info",
                     v, base, line, esc);
    } else {
        /* Messages carry request data (object names, API answers): one line each, always. */
        char esc[7000];
        escape_controls(esc, sizeof(esc), msg);
        n = snprintf(out, sizeof(out), "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] %s\n", sev,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
                     (long)syscall(SYS_gettid), base, line, esc);
    }
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(out)) {
        n = sizeof(out) - 1;
        out[n - 1] = '\n';
    }
    ssize_t w = write(STDERR_FILENO, out, (size_t)n);
    (void)w;
}
