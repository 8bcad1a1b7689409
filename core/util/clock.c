/* clock.c - the system clocks and a fake one for tests (see clock.h). */
#include "clock.h"

#include <stddef.h>
#include <stdio.h>
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
