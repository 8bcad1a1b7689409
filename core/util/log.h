/*
 * log.h - leveled logging to stderr in klog's text format, or one JSON object a line.
 *
 * klog format: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] message", L one of I W E F
 * (kubernetes/klog: klog.go, formatHeader). Info messages carry a verbosity: they are written
 * when it is <= the level set with log_set_verbosity() (the --v flag). Thread-safe: every line
 * is written with one write(2).
 *
 * Structured lines (log_info_kv() and its siblings) are klog's InfoS/ErrorS form: the message
 * quoted, then key=value pairs, strings quoted, numbers bare (kubernetes/klog:
 * internal/serialize/keyvalues.go, writeStringValue and KVFormat):
 *
 *   I1206 15:58:49.123456   12345 workers.c:184] "cause written" pod="ns/p" cause="no-capacity"
 *
 * and in JSON each key is a field after the fixed ones (k8s.io/component-base: logs/json/json.go,
 * the zap encoder with "ts" in milliseconds since the epoch, "caller", "msg", "v"):
 *
 *   {"ts":1765036729123.456,"caller":"workers.c:184","msg":"cause written","v":1,
 *    "level":"info","pod":"ns/p","cause":"no-capacity"}
 *
 * "level" (info, warning, error) is gputri's addition; klog's JSON has none. A quoted text value
 * escapes '"' and '' as Go's strconv.Quote does, so no value can close its quotes and forge a
 * key; the other escapes are text_escape()'s below.
 *
 * A message is always one line, whatever it holds: C0, DEL, the C1 controls and bytes that are
 * not UTF-8 are escaped with text_escape() (util/escape.h: "\x1b", "\u009b" in text format,
 * "\u001b", "\u009b", "\ufffd" in JSON), so data from requests (names, API messages) cannot
 * forge log lines or send terminal escapes. Other UTF-8 is kept. A message longer than about
 * 4 KiB is truncated, never inside an escape or a character.
 */
#ifndef GPUTRI_LOG_H
#define GPUTRI_LOG_H

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* log_set_verbosity() - set the --v level (0 = default). Call before starting threads. */
void log_set_verbosity(int v);
/* log_get_verbosity() - the current --v level. */
int log_get_verbosity(void);
/* log_set_format() - choose klog text (default) or JSON lines. Call before starting threads. */
void log_set_format(enum log_format f);

/* log_write() - write one line; use the macros below. sev is one of 'I', 'W', 'E'. */
void log_write(char sev, int v, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* One key=value pair of a structured line; make it with LOG_STR, LOG_INT or LOG_BOOL. */
enum log_kv_type { LOG_KV_END, LOG_KV_STR, LOG_KV_INT, LOG_KV_BOOL };
struct log_kv {
    const char *key; /* a constant lowerCamelCase name (Kubernetes' logging convention) */
    enum log_kv_type type;
    const char *s; /* LOG_KV_STR: borrowed; NULL: the pair is left out */
    long long i;   /* LOG_KV_INT, LOG_KV_BOOL (0 / non-zero) */
};
#define LOG_STR(k, v) ((struct log_kv){.key = (k), .type = LOG_KV_STR, .s = (v)})
#define LOG_INT(k, v) ((struct log_kv){.key = (k), .type = LOG_KV_INT, .i = (long long)(v)})
#define LOG_BOOL(k, v) ((struct log_kv){.key = (k), .type = LOG_KV_BOOL, .i = (v) ? 1 : 0})
#define LOG_KV_END_ ((struct log_kv){.key = NULL, .type = LOG_KV_END})

/*
 * log_write_kv() - write one structured line: `msg` (a constant; escaped all the same) and the
 * pairs of kvs[] up to the one whose type is LOG_KV_END; use the macros below. sev is one of 'I',
 * 'W', 'E'. Each text value is escaped and cut to at most 4 KiB; a pair that no longer fits in
 * the line (16 KiB) is left out with those after it, never cut. Thread-safe (one write(2)).
 */
void log_write_kv(char sev, int v, const char *file, int line, const char *msg,
                  const struct log_kv *kvs);

#define LOG_KV_(sev, v, msg, ...)                                                                  \
    log_write_kv((sev), (v), __FILE__, __LINE__, (msg), (const struct log_kv[]){__VA_ARGS__})
/*
 * log_info_kv(v, msg, pairs...) / log_warn_kv(msg, pairs...) / log_error_kv(msg, pairs...) -
 * structured lines, e.g. log_info_kv(1, "cause written", LOG_STR("pod", key),
 * LOG_STR("cause", word)). Info lines are written when v <= the --v level, as log_info.
 */
#define log_info_kv(v, ...)                                                                        \
    do {                                                                                           \
        if ((v) <= log_get_verbosity())                                                            \
            LOG_KV_('I', (v), __VA_ARGS__, LOG_KV_END_);                                           \
    } while (0)
#define log_warn_kv(...) LOG_KV_('W', 0, __VA_ARGS__, LOG_KV_END_)
#define log_error_kv(...) LOG_KV_('E', 0, __VA_ARGS__, LOG_KV_END_)

/* printf-style lines (klog's Infof): the message unquoted, no pairs. */
#define log_info(v, ...)                                                                           \
    do {                                                                                           \
        if ((v) <= log_get_verbosity())                                                            \
            log_write('I', (v), __FILE__, __LINE__, __VA_ARGS__);                                  \
    } while (0)
#define log_warn(...) log_write('W', 0, __FILE__, __LINE__, __VA_ARGS__)
#define log_error(...) log_write('E', 0, __FILE__, __LINE__, __VA_ARGS__)

#endif
