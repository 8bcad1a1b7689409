/*
 * clock.h - the time source of everything that waits, backs off, expires or stamps: a monotonic
 * clock for intervals and deadlines and the wall clock for timestamps, both injectable so tests
 * drive time by hand instead of sleeping.
 *
 * Production code takes a `const struct clock *` and passes NULL for the system clocks
 * (CLOCK_MONOTONIC and CLOCK_REALTIME). Tests pass a clock_fake's clock and advance it.
 * Every function here is thread-safe.
 */
#ifndef GPUTRI_CLOCK_H
#define GPUTRI_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clock {
    void *ctx;
    /* monotonic nanoseconds from an arbitrary origin; never goes back */
    int64_t (*mono_ns)(void *ctx);
    /* wall-clock nanoseconds since the Unix epoch */
    int64_t (*wall_ns)(void *ctx);
};

/* clock_system() - the system clocks (CLOCK_MONOTONIC, CLOCK_REALTIME); a static object. */
const struct clock *clock_system(void);

/*
 * clock_mono_ms() / clock_mono_ns() - monotonic time of `c` (NULL: the system clock) in
 * milliseconds / nanoseconds; clock_wall_ms() / clock_wall_s() - wall time since the epoch.
 */
int64_t clock_mono_ns(const struct clock *c);
int64_t clock_mono_ms(const struct clock *c);
int64_t clock_wall_ms(const struct clock *c);
int64_t clock_wall_s(const struct clock *c);

/* Room for clock_format_rfc3339()'s text, with the terminator. */
#define CLOCK_RFC3339_MAX 32

/*
 * clock_format_rfc3339() - wall time `wall_ms` (ms since the epoch) in UTC as the API writes a
 * metav1.Time, "2006-01-02T15:04:05Z", or with `micro` a metav1.MicroTime,
 * "2006-01-02T15:04:05.000000Z" (kubernetes/apimachinery: pkg/apis/meta/v1/time.go and
 * micro_time.go), into out (len bytes, CLOCK_RFC3339_MAX is enough; always NUL-terminated). A time
 * gmtime_r cannot represent is written as its number of seconds.
 */
void clock_format_rfc3339(int64_t wall_ms, bool micro, char *out, size_t len);

/*
 * clock_parse_rfc3339_ms() - a time as Go's time.RFC3339 / metav1.Time / MicroTime write it
 * ("2006-01-02T15:04:05Z", an optional fraction of up to 9 digits, "Z" or a "+hh:mm"/"-hh:mm"
 * offset) as milliseconds since the epoch into *out_ms (the fraction truncated to ms). Returns
 * false, leaving *out_ms alone, for anything else (years 1970..9999 only). Pure; thread-safe.
 * clock_parse_rfc3339() - the same in whole seconds (the fraction dropped).
 */
bool clock_parse_rfc3339_ms(const char *s, int64_t *out_ms);
bool clock_parse_rfc3339(const char *s, int64_t *out);

/*
 * A clock for tests: both times stand still until clock_fake_advance_ms() moves them together.
 * Initialise with clock_fake_init(); the struct must outlive every clock made from it.
 */
struct clock_fake {
    _Atomic int64_t mono_ns;
    _Atomic int64_t wall_ns;
};

/* clock_fake_init() - monotonic time 1 s (never 0, which callers may use as "unset"), wall time
 * wall_ms since the epoch. */
void clock_fake_init(struct clock_fake *f, int64_t wall_ms);
/* clock_fake_clock() - the struct clock reading `f` (borrowed). */
struct clock clock_fake_clock(struct clock_fake *f);
/* clock_fake_advance_ms() - move both times forward by ms (>= 0). */
void clock_fake_advance_ms(struct clock_fake *f, int64_t ms);

#endif
