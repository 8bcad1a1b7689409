/*
 * deadline.h - absolute times for pthread_cond_timedwait(), and waiting on a condition variable
 * until a deadline on a (possibly injected) clock.
 */
#ifndef GPUTRI_DEADLINE_H
#define GPUTRI_DEADLINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/clock.h"

/*
 * deadline_after() - the time `ms` milliseconds (>= 0) from now on clock `clk` (the clock the
 * condition variable waits on: CLOCK_REALTIME by default, CLOCK_MONOTONIC when set with
 * pthread_condattr_setclock). Thread-safe.
 */
struct timespec deadline_after(clockid_t clk, int64_t ms);

/*
 * deadline_wait() - one wait on `cv`, whose mutex `mu` the caller holds (released while waiting
 * and held again on return, as pthread_cond_timedwait does), until `until_ms` on clock `c`
 * (clock_mono_ms() milliseconds; NULL: the system clock), a signal or a spurious wakeup.
 * `cv_clk` is the clock cv was initialised with (CLOCK_REALTIME by default, CLOCK_MONOTONIC when
 * set with pthread_condattr_setclock). On an injected clock (one whose mono_ns is not the
 * system's) the wait lasts at most `poll_ms` (> 0; <= 0: no limit) of real time, so that a clock
 * moved by hand is seen soon. Returns true when until_ms has come on c - at once, without
 * waiting, when it already has - and false otherwise: the caller re-checks its own condition
 * (a stop flag, work to do) and calls again. Thread-safe as pthread_cond_timedwait.
 */
bool deadline_wait(pthread_cond_t *cv, pthread_mutex_t *mu, clockid_t cv_clk, const struct clock *c,
                   int64_t until_ms, int64_t poll_ms);

#endif
