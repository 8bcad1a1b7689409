/* deadline.c - absolute times for timed waits, and waits until a deadline (see deadline.h). */
#include "deadline.h"

struct timespec deadline_after(clockid_t clk, int64_t ms)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    if (ms < 0)
        ms = 0;
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

bool deadline_wait(pthread_cond_t *cv, pthread_mutex_t *mu, clockid_t cv_clk, const struct clock *c,
                   int64_t until_ms, int64_t poll_ms)
{
    int64_t now = clock_mono_ms(c);
    if (until_ms <= now)
        return true;
    int64_t left = until_ms - now;
    bool injected = c && c->mono_ns != clock_system()->mono_ns;
    if (injected && poll_ms > 0 && left > poll_ms)
        left = poll_ms;
    struct timespec ts = deadline_after(cv_clk, left);
    pthread_cond_timedwait(cv, mu, &ts);
    return clock_mono_ms(c) >= until_ms;
}
