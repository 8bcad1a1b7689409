/* clock.c - the system clocks and a fake one for tests (see clock.h). */
#include "clock.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t system_mono_ns(void *ctx)
{
    (void)ctx;
    return read_clock(CLOCK_MONOTONIC);
}

static int64_t system_wall_ns(void *ctx)
{
    (void)ctx;
    return read_clock(CLOCK_REALTIME);
}

static const struct clock system_clock = {NULL, system_mono_ns, system_wall_ns};

const struct clock *clock_system(void)
{
    return &system_clock;
}

int64_t clock_mono_ns(const struct clock *c)
{
    if (!c)
        c = &system_clock;
    return c->mono_ns(c->ctx);
}

int64_t clock_mono_ms(const struct clock *c)
{
    return clock_mono_ns(c) / 1000000;
}

int64_t clock_wall_ms(const struct clock *c)
{
    if (!c)
        c = &system_clock;
    return c->wall_ns(c->ctx) / 1000000;
}

int64_t clock_wall_s(const struct clock *c)
{
    return clock_wall_ms(c) / 1000;
}

void clock_format_rfc3339(int64_t wall_ms, bool micro, char *out, size_t len)
{
    int64_t secs = wall_ms / 1000, ms = wall_ms % 1000;
    if (ms < 0) { /* floor, for times before the epoch */
        secs--;
        ms += 1000;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    char date[CLOCK_RFC3339_MAX];
    if (!len)
        return;
    if (!gmtime_r(&t, &tm) || strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
        snprintf(out, len, "%lld", (long long)secs);
        return;
    }
    if (micro)
        snprintf(out, len, "%.20s.%06dZ", date, (int)ms * 1000);
    else
        snprintf(out, len, "%.20sZ", date);
}

static int64_t fake_mono_ns(void *ctx)
{
    struct clock_fake *f = ctx;
    return atomic_load(&f->mono_ns);
}

static int64_t fake_wall_ns(void *ctx)
{
    struct clock_fake *f = ctx;
    return atomic_load(&f->wall_ns);
}

void clock_fake_init(struct clock_fake *f, int64_t wall_ms)
{
    atomic_init(&f->mono_ns, 1000000000);
    atomic_init(&f->wall_ns, wall_ms * 1000000);
}

struct clock clock_fake_clock(struct clock_fake *f)
{
    return (struct clock){f, fake_mono_ns, fake_wall_ns};
}

void clock_fake_advance_ms(struct clock_fake *f, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    atomic_fetch_add(&f->mono_ns, ms * 1000000);
    atomic_fetch_add(&f->wall_ns, ms * 1000000);
}

/* n decimal digits at s into *v. */
static bool digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

bool clock_parse_rfc3339(const char *s, int64_t *out)
{
    int64_t ms;
    if (!clock_parse_rfc3339_ms(s, &ms))
        return false;
    *out = ms / 1000;
    return true;
}

bool clock_parse_rfc3339_ms(const char *s, int64_t *out_ms)
{
    int y, mo, d, h, mi, sec;
    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return false;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return false;
    const char *p = s + 19;
    int64_t frac_ms = 0;
    if (*p == '.') {
        p++;
        const char *f = p;
        for (int scale = 100; *p >= '0' && *p <= '9' && p - f < 9; p++, scale /= 10)
            frac_ms += (*p - '0') * scale;
        if (p == f)
            return false;
    }
    int off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        off = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return false;
    }
    if (*p)
        return false;
    /* days from civil (Howard Hinnant's algorithm), no time zone database involved */
    int yy = y - (mo <= 2);
    int era = yy / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    *out_ms = (days * 86400 + h * 3600 + mi * 60 + sec - off) * 1000 + frac_ms;
    return true;
}
