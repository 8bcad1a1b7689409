/* log.c - klog-style and JSON log lines on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"

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
        text_escape(esc, sizeof(esc), msg, strlen(msg), TEXT_ESCAPE_JSON_STRING);
        n = snprintf(out, sizeof(out),
                     "{\"ts\":%lld.%06ld,\"level\":\"%s\",\"v\":%d,\"caller\":\"%s:%d\","
                     "\"msg\":\"%s\"}\n",
                     (long long)tv.tv_sec, (long)tv.tv_usec,
                     sev == 'E'   ? "error"
                     : sev == 'W' ? "warning"
                                  : "info",
                     v, base, line, esc);
    } else {
        /* Messages carry request data (object names, API answers): one line each, always, and
         * nothing a terminal acts on (escape.h). */
        char esc[7000];
        text_escape(esc, sizeof(esc), msg, strlen(msg), TEXT_ESCAPE_TERMINAL);
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
