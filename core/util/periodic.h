/*
 * periodic.h - a thread that runs one function now and then: every interval, and sooner when
 * poked (but never sooner than a minimum gap after the last run), until stopped. For the
 * daemons' discovery checks (webhook/autoscaler.c, core/cache/discovery_loop.c).
 *
 * Times are clock_mono_ms(NULL) milliseconds (util/clock.h). `fn` runs on the thread only, one
 * run at a time; a run is never interrupted by stop: periodic_stop() waits for it (a long
 * request inside it should watch periodic_stop_flag()).
 *
 * Thread-safety: periodic_poke() and periodic_stop_flag() from any thread; init/start/stop/
 * destroy from the owner's thread.
 */
#ifndef GPUTRI_UTIL_PERIODIC_H
#define GPUTRI_UTIL_PERIODIC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct periodic {
    void (*fn)(void *ctx);
    void *ctx;
    int64_t interval_ms, min_gap_ms;
    int64_t last_ms; /* when fn last started (the thread's) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int stop, poke;
    pthread_t thread;
    bool started;
};

/*
 * periodic_init() - `fn(ctx)` every interval_ms (> 0), and min_gap_ms (>= 0) after its last run
 * when poked. Nothing runs until periodic_start().
 */
void periodic_init(struct periodic *p, int64_t interval_ms, int64_t min_gap_ms,
                   void (*fn)(void *ctx), void *ctx);

/*
 * periodic_start() - start the thread: fn at once when `now`, else one interval from now (the
 * caller has just run it). Returns 0, or -1 when no thread could be made. Call once.
 */
int periodic_start(struct periodic *p, bool now);

/* periodic_poke() - run fn soon: at the latest min_gap_ms after its last run. */
void periodic_poke(struct periodic *p);

/* periodic_stop_flag() - non-zero once periodic_stop() was called (kube_client_set_cancel). */
const atomic_int *periodic_stop_flag(struct periodic *p);

/* periodic_stop() - stop the thread and join it (a run of fn ends first). Idempotent. */
void periodic_stop(struct periodic *p);

/* periodic_destroy() - stop, and free what init made. Once. */
void periodic_destroy(struct periodic *p);

#endif
