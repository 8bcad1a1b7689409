/*
 * workqueue.h - a queue of string keys with client-go's guarantees
 * (kubernetes/client-go: util/workqueue/queue.go, delaying_queue.go,
 *  default_rate_limiters.go):
 *   - a key is never processed by two workers at once;
 *   - a key added while queued is queued once; a key added while being processed is queued
 *     again when workqueue_done() is called;
 *   - workqueue_add_after() delays an add; workqueue_add_rate_limited() delays it by a per-key
 *     exponential backoff (base_delay * 2^failures, capped at max_delay) until
 *     workqueue_forget().
 * Two priorities, so that a backlog of re-checks does not starve new work (as kube-scheduler
 * keeps a pod whose own object changed ahead of pods moved back by someone else's change,
 * kubernetes/kubernetes: pkg/scheduler/backend/queue/scheduling_queue.go):
 *   - WORKQUEUE_HIGH (workqueue_add, add_after, add_rate_limited): the key's own object changed,
 *     or its own timer fired; WORKQUEUE_LOW (workqueue_add_low): something else changed that
 *     may change its answer;
 *   - workqueue_get() hands out every ready high key before any low one, each level FIFO;
 *   - a key is queued once over both levels: added high while queued low it moves to the end of
 *     the high level (keeping its ready time), added low while queued high it stays high; added
 *     while being processed it is requeued at done() at the higher of the priorities asked;
 *   - re-checks are coalesced: a low add of a key that a worker took less than the recheck
 *     interval ago (workqueue_set_recheck_interval) becomes a delayed low add at that time plus
 *     the interval, so a key is processed because of others' changes at most once per interval,
 *     and never misses a change: it is taken again after the add (a take of the key cancels a
 *     delayed low add, as it sees the change). High adds are never delayed by coalescing.
 * Times are milliseconds on the monotonic clock passed in (util/clock.h; NULL for the system
 * clock, tests inject a fake one).
 * All functions are thread-safe.
 */
#ifndef GPUTRI_WORKQUEUE_H
#define GPUTRI_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

struct workqueue;

enum workqueue_priority { WORKQUEUE_LOW = 0, WORKQUEUE_HIGH = 1 };
#define WORKQUEUE_PRIORITIES 2

/*
 * workqueue_new() - an empty queue. base_delay_ms/max_delay_ms: the rate limiter's bounds
 * (client-go uses 5 ms and 1000 s). `clock` (copied; its ctx borrowed, must outlive the queue) is
 * read for delays and latencies; NULL selects the system clock. Returns NULL on allocation failure.
 */
struct workqueue *workqueue_new(int64_t base_delay_ms, int64_t max_delay_ms,
                                const struct clock *clock);
/* workqueue_free() - free a queue no thread uses any more. */
void workqueue_free(struct workqueue *q);

/*
 * workqueue_set_recheck_interval() - the shortest time between two takes of a key that low adds
 * may cause (ms; 0, the default, coalesces nothing). Applies to later low adds.
 */
void workqueue_set_recheck_interval(struct workqueue *q, int64_t interval_ms);

/* workqueue_add() - queue `key` (copied) at high priority. Returns K_OK or K_ENOMEM. No-op after
 * shutdown. */
int workqueue_add(struct workqueue *q, const char *key);
/*
 * workqueue_add_low() - queue `key` (copied) at low priority: a re-check because something other
 * than the key's own object changed. Nothing happens when the key is already queued (at either
 * level) or to be requeued at done(); when a worker took it less than the recheck interval ago,
 * the add is delayed until that take plus the interval (a delayed add already waiting keeps the
 * earlier time). Returns K_OK or K_ENOMEM. No-op after shutdown.
 */
int workqueue_add_low(struct workqueue *q, const char *key);
/* workqueue_add_after() - queue `key` at high priority once delay_ms have passed (0 = now). A key
 * already waiting keeps the earlier time and the higher priority of the two. */
int workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms);
/*
 * workqueue_add_rate_limited() - queue after the key's backoff and count a failure; when
 * min_delay_ms (e.g. from Retry-After) is larger, that is used. Returns the delay chosen (ms),
 * or -1 on allocation failure.
 */
int64_t workqueue_add_rate_limited(struct workqueue *q, const char *key, int64_t min_delay_ms);
/* workqueue_forget() - reset the key's failure count (after a success). */
void workqueue_forget(struct workqueue *q, const char *key);
/* workqueue_failures() - how many failures the key has had since the last forget. */
int workqueue_failures(struct workqueue *q, const char *key);

/*
 * workqueue_get() - block until a key is ready, then hand it out: the caller owns the returned
 * string (free() it) and must call workqueue_done() with it. Returns NULL at once after
 * workqueue_shutdown(), even while keys are still queued: those are dropped, not drained (the key
 * a worker is processing finishes; its workqueue_done() is still required). queued_ms, if not NULL,
 * receives how long the key waited since it became ready.
 */
char *workqueue_get(struct workqueue *q, int64_t *queued_ms);
/* What workqueue_get_info() says about the key it hands out. */
struct workqueue_got {
    int64_t queued_ms;                /* how long it waited since it became ready */
    enum workqueue_priority priority; /* the level it was taken from */
    int64_t high_since_ms;            /* queue clock (ms) of the high add it answers; -1: low */
};
/* workqueue_get_info() - workqueue_get() that fills *got (not NULL) about the key. */
char *workqueue_get_info(struct workqueue *q, struct workqueue_got *got);
/* workqueue_try_get() - like workqueue_get() but never blocks; NULL when nothing is ready or
 * after shutdown. */
char *workqueue_try_get(struct workqueue *q, int64_t *queued_ms);
/* workqueue_done() - processing of `key` finished. */
void workqueue_done(struct workqueue *q, const char *key);
/*
 * workqueue_drop() - remove `key` if it is queued or waiting for a delay (its work no longer
 * matters, e.g. the pod left Pending), cancel the requeue of a key being processed, and forget
 * its failures and its last take (its next low add is not delayed).
 */
void workqueue_drop(struct workqueue *q, const char *key);

/* workqueue_len() - keys ready now; workqueue_delayed_len() - keys waiting for a delay. */
size_t workqueue_len(struct workqueue *q);
/* workqueue_len_priority() - keys ready now at priority `p`. */
size_t workqueue_len_priority(struct workqueue *q, enum workqueue_priority p);
size_t workqueue_delayed_len(struct workqueue *q);

/* workqueue_shutdown() - wake every waiting workqueue_get() (which then returns NULL); queued
 * keys are no longer handed out and later adds are ignored. */
void workqueue_shutdown(struct workqueue *q);

#endif
