/* periodic.c - a function run every interval, or sooner when poked, on a thread of its own. */
#include "util/periodic.h"

#include "util/clock.h"
#include "util/deadline.h"

void periodic_init(struct periodic *p, int64_t interval_ms, int64_t min_gap_ms,
                   void (*fn)(void *ctx), void *ctx)
{
    p->fn = fn;
    p->ctx = ctx;
    p->interval_ms = interval_ms;
    p->min_gap_ms = min_gap_ms > 0 ? min_gap_ms : 0;
    p->last_ms = 0;
    p->started = false;
    atomic_init(&p->stop, 0);
    atomic_init(&p->poke, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
}

static void *run(void *arg)
{
    struct periodic *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!atomic_load(&p->stop)) {
        int64_t until = p->last_ms + p->interval_ms;
        if (atomic_load(&p->poke) && p->last_ms + p->min_gap_ms < until)
            until = p->last_ms + p->min_gap_ms;
        if (clock_mono_ms(NULL) < until) {
            deadline_wait(&p->cv, &p->mu, CLOCK_REALTIME, NULL, until, 0);
            continue; /* re-read stop, poke and the time */
        }
        p->last_ms = clock_mono_ms(NULL);
        atomic_store(&p->poke, 0);
        pthread_mutex_unlock(&p->mu);
        p->fn(p->ctx);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int periodic_start(struct periodic *p, bool now)
{
    p->last_ms = now ? clock_mono_ms(NULL) - p->interval_ms : clock_mono_ms(NULL);
    if (pthread_create(&p->thread, NULL, run, p) != 0)
        return -1;
    p->started = true;
    return 0;
}

void periodic_poke(struct periodic *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->poke, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

const atomic_int *periodic_stop_flag(struct periodic *p)
{
    return &p->stop;
}

void periodic_stop(struct periodic *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->started) {
        pthread_join(p->thread, NULL);
        p->started = false;
    }
}

void periodic_destroy(struct periodic *p)
{
    periodic_stop(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}
