/* token_bucket.c - a token bucket with reservations (see token_bucket.h). */
#include "token_bucket.h"

#include "result.h"

int token_bucket_init(struct token_bucket *b, double qps, int burst, const struct clock *clock)
{
    if (!(qps > 0) || burst < 1)
        return K_EINVAL;
    b->clock = clock;
    b->qps = qps;
    b->burst = burst;
    b->tokens = burst;
    b->last_ns = clock_mono_ns(clock);
    pthread_mutex_init(&b->mu, NULL);
    return K_OK;
}

int64_t token_bucket_reserve(struct token_bucket *b)
{
    pthread_mutex_lock(&b->mu);
    int64_t now = clock_mono_ns(b->clock);
    if (now > b->last_ns) {
        b->tokens += (double)(now - b->last_ns) * b->qps / 1e9;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last_ns = now;
    }
    b->tokens -= 1;
    double wait_ns = b->tokens < 0 ? -b->tokens * 1e9 / b->qps : 0;
    pthread_mutex_unlock(&b->mu);
    return (int64_t)(wait_ns + 0.5);
}

void token_bucket_destroy(struct token_bucket *b)
{
    pthread_mutex_destroy(&b->mu);
}
