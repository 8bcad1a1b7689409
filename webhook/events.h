/*
 * events.h - a bounded queue and one worker thread that turn admission warnings into core/v1
 * Warning Events (core/kube/event.h), so the admission response never waits for the API.
 *
 * event_queue_push() copies the strings and returns at once; when the queue is full the event is
 * dropped with a log line. The worker hands each event to a sink (in gputri-webhook:
 * kube_event_create through its own kube_client; tests use a recording sink). Sink failures are
 * logged and not retried.
 *
 * Thread-safety: push, dropped and sent may be called from any thread; start/stop/free from one.
 */
#ifndef GPUTRI_WEBHOOK_EVENTS_H
#define GPUTRI_WEBHOOK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "event_limit.h"
#include "kube/event.h"
#include "util/clock.h"

/* Delivers one event; returns a K_* value. Called from the worker thread only. */
typedef int (*event_sink_fn)(void *ctx, const struct kube_event_spec *e);

struct event_queue;

/*
 * event_queue_new() - a queue of `capacity` events (1..65536) delivered to sink(ctx, ...).
 * `component` and `instance` (may be NULL) are copied into every event's source. NULL on ENOMEM.
 */
struct event_queue *event_queue_new(size_t capacity, event_sink_fn sink, void *ctx,
                                    const char *component, const char *instance);

/*
 * event_queue_set_clock() - the monotonic clock for the 10-minute repeat window and the drain
 * deadline (copied, its ctx borrowed; NULL: the system clock). Call before start.
 */
void event_queue_set_clock(struct event_queue *q, const struct clock *clock);

/*
 * event_queue_set_limit() - bound the Events queued by `limit` (event_limit.h; borrowed, must
 * outlive the queue; NULL: no bound). A repeat folded within the 10-minute window takes no token.
 * Thread-safe.
 */
void event_queue_set_limit(struct event_queue *q, struct event_limit *limit);

/* event_queue_start() - start the worker. Returns K_OK or K_ENOMEM. */
int event_queue_start(struct event_queue *q);

/*
 * event_queue_push() - queue a Warning Event about the object (ns, kind, api_version, name, uid)
 * with `reason` and `message`; strings are copied (cut to the Event field limits); uid may be
 * NULL or "". The same Event (namespace, kind, name, reason, message) queued again within
 * 10 minutes is not repeated (re-applies and UPDATEs would otherwise make a storm); that counts
 * as success. Returns false when the rate limit (event_queue_set_limit) refuses it (counted in
 * event_queue_throttled, logged the first time and every 100th) or the queue is full or
 * stopping (dropped and logged).
 */
bool event_queue_push(struct event_queue *q, const char *ns, const char *kind,
                      const char *api_version, const char *name, const char *uid,
                      const char *reason, const char *message);

/* Counters for logs and tests. */
size_t event_queue_dropped(struct event_queue *q);
size_t event_queue_sent(struct event_queue *q);
size_t event_queue_throttled(struct event_queue *q); /* refused by the rate limit */

/*
 * event_queue_close() - refuse new events and let the worker deliver what is queued until
 * drain_ms from now; what is left then is dropped (and counted) when the worker ends. Does not
 * wait. Idempotent (the first deadline stays).
 */
void event_queue_close(struct event_queue *q, int drain_ms);

/*
 * event_queue_stop() - event_queue_close(q, drain_ms), then join the worker. Safe without start
 * (what is queued is dropped). Idempotent.
 */
void event_queue_stop(struct event_queue *q, int drain_ms);

/* event_queue_free() - stop (drain 0) and free. NULL-safe. */
void event_queue_free(struct event_queue *q);

#endif
