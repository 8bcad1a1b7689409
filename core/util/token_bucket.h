/*
 * token_bucket.h - a token bucket that hands out reservations, the rate limiter client-go puts
 * in front of an API client (kubernetes/client-go: util/flowcontrol/throttle.go,
 * NewTokenBucketRateLimiter, over golang.org/x/time/rate's Limiter): `qps` tokens a second up to
 * `burst` held, full at the start. Every caller takes one token; when none is left the token is
 * lent against the refill and the caller is told how long to wait for it, so callers that come
 * at once are served in the order they came, qps a second, and nobody is refused.
 */
#ifndef GPUTRI_TOKEN_BUCKET_H
#define GPUTRI_TOKEN_BUCKET_H

#include <pthread.h>
#include <stdint.h>

#include "clock.h"

struct token_bucket {
    pthread_mutex_t mu;
    const struct clock *clock; /* borrowed; NULL: the system clock */
    double qps;
    double burst;
    double tokens;   /* may be negative: tokens lent to callers still waiting */
    int64_t last_ns; /* monotonic time `tokens` was brought up to */
};

/*
 * token_bucket_init() - a full bucket of `burst` tokens (>= 1) refilled at `qps` (> 0) tokens a
 * second, timed by `clock` (borrowed, must outlive the bucket; NULL: the system clock). Returns
 * K_OK, or K_EINVAL for qps <= 0 or burst < 1. Not thread-safe with other calls on `b`.
 */
int token_bucket_init(struct token_bucket *b, double qps, int burst, const struct clock *clock);

/*
 * token_bucket_reserve() - take one token: returns how many nanoseconds (>= 0) the caller must
 * wait before it acts; 0 when a token was there. The token is taken either way (the caller
 * waits, it does not ask again). Thread-safe.
 */
int64_t token_bucket_reserve(struct token_bucket *b);

/* token_bucket_destroy() - release the mutex. No call may be running on `b`. */
void token_bucket_destroy(struct token_bucket *b);

#endif
