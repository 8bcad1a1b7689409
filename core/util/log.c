/* log.c - klog-style and JSON log lines on stderr, printf-style or structured (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"

/* The most bytes of a message or a text value before escaping, and of a whole line. */
#define LOG_TEXT_MAX 4096
#define LOG_LINE_MAX 16384

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

/* A line being built: bytes go in while they fit, the rest is refused. */
struct line {
    char data[LOG_LINE_MAX];
    size_t len;
};

/* Appends s[0..n) when it fits with `reserve` bytes to spare; false otherwise. */
static bool put(struct line *l, const char *s, size_t n, size_t reserve)
{
    if (l->len + n + reserve > sizeof(l->data))
        return false;
    memcpy(l->data + l->len, s, n);
    l->len += n;
    return true;
}

/* Room the line's end takes: "}\n" in JSON, "\n" in text. */
#define LINE_END_RESERVE 2

/* The header: klog's "Lmmdd hh:mm:ss.uuuuuu tid file:line] " or JSON's fixed fields, with the
 * message (quoted in text when `quote`) already escaped in esc. */
static void header(struct line *l, char sev, int v, const char *file, int lineno, const char *esc,
                   bool quote)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int n;
    if (format == LOG_FORMAT_JSON) {
        /* ts as k8s.io/component-base logs/json writes it: milliseconds since the epoch, with
         * a fraction */
        n = snprintf(l->data, sizeof(l->data),
                     "{\"ts\":%lld.%03ld,\"caller\":\"%s:%d\",\"msg\":\"%s\",\"v\":%d,"
                     "\"level\":\"%s\"",
                     (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000, (long)(tv.tv_usec % 1000),
                     base, lineno, esc, v,
                     sev == 'E'   ? "error"
                     : sev == 'W' ? "warning"
                                  : "info");
    } else {
        struct tm tm;
        gmtime_r(&tv.tv_sec, &tm);
        n = snprintf(l->data, sizeof(l->data), "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] %s%s%s",
                     sev, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (long)tv.tv_usec, (long)syscall(SYS_gettid), base, lineno, quote ? "\"" : "",
                     esc, quote ? "\"" : "");
    }
    l->len = n < 0 ? 0 : (size_t)n;
    if (l->len > sizeof(l->data) - LINE_END_RESERVE)
        l->len = sizeof(l->data) - LINE_END_RESERVE; /* never: the message is bounded */
}

/* Ends the line and writes it with one write(2). */
static void finish(struct line *l)
{
    if (format == LOG_FORMAT_JSON)
        l->data[l->len++] = '}';
    l->data[l->len++] = '\n';
    ssize_t w = write(STDERR_FILENO, l->data, l->len);
    (void)w;
}

/* The escape of a message or a text value, inside quotes (text) or a JSON string. */
static enum text_escape quoted_escape(void)
{
    return format == LOG_FORMAT_JSON ? TEXT_ESCAPE_JSON_STRING : TEXT_ESCAPE_QUOTED;
}

void log_write(char sev, int v, const char *file, int line, const char *fmt, ...)
{
    char msg[LOG_TEXT_MAX], esc[LOG_TEXT_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* Messages carry request data (object names, API answers): one line each, always, and
     * nothing a terminal acts on (escape.h). */
    text_escape(esc, sizeof(esc), msg, strlen(msg),
                format == LOG_FORMAT_JSON ? TEXT_ESCAPE_JSON_STRING : TEXT_ESCAPE_TERMINAL);
    struct line l;
    header(&l, sev, v, file, line, esc, false);
    finish(&l);
}

/* Appends one pair; false when it does not fit (nothing of it is then kept). */
static bool put_kv(struct line *l, const struct log_kv *kv)
{
    size_t start = l->len;
    bool json = format == LOG_FORMAT_JSON;
    char key[256], val[LOG_TEXT_MAX * 2];
    size_t kn = text_escape(key, sizeof(key), kv->key, strlen(kv->key), quoted_escape());
    bool ok = json ? put(l, ",\"", 2, LINE_END_RESERVE) && put(l, key, kn, LINE_END_RESERVE) &&
                         put(l, "\":", 2, LINE_END_RESERVE)
                   : put(l, " ", 1, LINE_END_RESERVE) && put(l, key, kn, LINE_END_RESERVE) &&
                         put(l, "=", 1, LINE_END_RESERVE);
    if (kv->type == LOG_KV_STR) {
        size_t n = text_escape(val, LOG_TEXT_MAX + 1, kv->s, strlen(kv->s), quoted_escape());
        ok = ok && put(l, "\"", 1, LINE_END_RESERVE) && put(l, val, n, LINE_END_RESERVE) &&
             put(l, "\"", 1, LINE_END_RESERVE);
    } else {
        int n = kv->type == LOG_KV_BOOL ? snprintf(val, sizeof(val), "%s", kv->i ? "true" : "false")
                                        : snprintf(val, sizeof(val), "%lld", kv->i);
        ok = ok && n > 0 && put(l, val, (size_t)n, LINE_END_RESERVE);
    }
    if (!ok)
        l->len = start;
    return ok;
}

void log_write_kv(char sev, int v, const char *file, int line, const char *msg,
                  const struct log_kv *kvs)
{
    char esc[LOG_TEXT_MAX * 2];
    text_escape(esc, LOG_TEXT_MAX + 1, msg, strlen(msg), quoted_escape());
    struct line l;
    header(&l, sev, v, file, line, esc, true);
    for (const struct log_kv *kv = kvs; kv->type != LOG_KV_END; kv++) {
        if (!kv->key || (kv->type == LOG_KV_STR && !kv->s))
            continue;
        if (!put_kv(&l, kv))
            break;
    }
    finish(&l);
}
