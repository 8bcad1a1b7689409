/*
 * deadline.h - absolute times for pthread_cond_timedwait().
 */
#ifndef GPUTRI_DEADLINE_H
#define GPUTRI_DEADLINE_H

#include <stdint.h>
#include <time.h>

/*
 * deadline_after() - the time `ms` milliseconds (>= 0) from now on clock `clk` (the clock the
 * condition variable waits on: CLOCK_REALTIME by default, CLOCK_MONOTONIC when set with
 * pthread_condattr_setclock). Thread-safe.
 */
struct timespec deadline_after(clockid_t clk, int64_t ms);

#endif
