/*
 * log.h - leveled logging to stderr in klog's text format, or one JSON object a line.
 *
 * klog format: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] message", L one of I W E F
 * (kubernetes/klog: klog.go, formatHeader). Info messages carry a verbosity: they are written
 * when it is <= the level set with log_set_verbosity() (the --v flag). Thread-safe: every line
 * is written with one write(2).
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

#define log_info(v, ...)                                                                           \
    do {                                                                                           \
        if ((v) <= log_get_verbosity())                                                            \
            log_write('I', (v), __FILE__, __LINE__, __VA_ARGS__);                                  \
    } while (0)
#define log_warn(...) log_write('W', 0, __FILE__, __LINE__, __VA_ARGS__)
#define log_error(...) log_write('E', 0, __FILE__, __LINE__, __VA_ARGS__)

#endif
