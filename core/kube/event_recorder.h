/*
 * event_recorder.h - the one writer of core/v1 Events for both daemons: the controller records
 * an Event per classified pod, synchronously from its workers; the webhook posts one per
 * admission warning and a worker thread writes it, so that the admission response never waits
 * for the API.
 *
 * What an Event goes through, in order (each step is an option; all off gives a plain create):
 *
 * 1. Repeat suppression (repeat_window_ms): the same Event - namespace, kind, name, type, reason
 *    and message - seen again within the window is not written at all and counts as success.
 *    The webhook sees one warning on every re-apply and on every UPDATE of the object, which
 *    would otherwise make a storm. The last EVENT_RECORDER_RECENT Events are remembered.
 *
 * 2. Token buckets (limit): one bucket per namespace and one for all namespaces. A bucket holds
 *    at most `burst` tokens, starts full and gains one every `refill_ms`; an Event takes one
 *    token from both and is refused (none taken) when either is empty. This is the shape of
 *    client-go's Event spam filter (kubernetes/client-go: tools/record/events_cache.go,
 *    EventSourceObjectSpamFilter: a token bucket per source and object, defaultSpamBurst 25,
 *    defaultSpamQPS 1/300, an LRU of maxLruCacheEntries 4096 keys), keyed by namespace instead
 *    of object: no caller - not even the API server sending valid AdmissionReviews in a loop -
 *    turns the webhook into an Event flood. The defaults (EVENT_LIMIT_*): a namespace may get 25
 *    at once, as client-go allows per object, then one every 10 s; a namespace holds many
 *    objects, so it refills faster than client-go's one per 5 minutes per object, and identical
 *    Events are already folded by step 1. All namespaces together get 100 at once, then one per
 *    second, well inside the API server's --max-requests-inflight (400). At most max_namespaces
 *    buckets are kept (default 4096, client-go's LRU size); a new namespace beyond that replaces
 *    a bucket that has refilled to full (indistinguishable from a fresh one), else the least
 *    recently used. A suppressed repeat takes no token.
 *
 * 3. Aggregation by count (aggregate_ttl_ms), as client-go's EventCorrelator does
 *    (kubernetes/client-go: tools/record/events_cache.go, eventLogger.eventObserve; the patch and
 *    the create-again on 404 in tools/record/event.go, recordToSink/recordEvent): the first Event
 *    for an object uid, type and reason is created with a client-go style name
 *    "<object>.<hex nanoseconds>" and remembered; the same uid, type and reason again patches
 *    that Event (merge patch) with count + 1, a new lastTimestamp and the new message. Unlike
 *    client-go the message is not part of the key: the controller's message is the pod's
 *    current detail, and one Event per pod and reason that shows the latest is what a reader of
 *    `kubectl describe` wants (client-go would, after 10 distinct messages in 10 minutes, fold
 *    them into a "(combined from similar events)" Event instead, EventAggregator). If the Event
 *    is gone (404: the API server's event TTL, or someone deleted it) a new one is created. An
 *    Event is remembered for aggregate_ttl_ms from its creation (client-go keeps its LRU without
 *    expiry; the API server drops Events after an hour, so 10 minutes is a sane value), at most
 *    max_entries of them (default 4096), the least recently used forgotten first. An Event
 *    without a uid is never aggregated.
 *
 * Writes are POST /api/v1/namespaces/<ns>/events and merge PATCH .../events/<name> through the
 * struct kube_client handed in. Time comes from the injected clock (util/clock.h): monotonic
 * for windows, buckets and deadlines, wall time for timestamps and names.
 *
 * Thread-safety: every function may be called from any thread, except that new/start/stop/free
 * are called from one; the API is called without the recorder's lock held.
 */
#ifndef GPUTRI_KUBE_EVENT_RECORDER_H
#define GPUTRI_KUBE_EVENT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/event.h"
#include "util/clock.h"

/* The webhook's bucket defaults (see above). */
#define EVENT_LIMIT_NS_BURST 25
#define EVENT_LIMIT_NS_REFILL_MS 10000
#define EVENT_LIMIT_BURST 100
#define EVENT_LIMIT_REFILL_MS 1000
#define EVENT_LIMIT_MAX_NAMESPACES 4096

/* Events remembered for repeat suppression. */
#define EVENT_RECORDER_RECENT 1024

struct event_limit_options {
    unsigned ns_burst;     /* tokens per namespace bucket; 0: no per-namespace limit */
    int64_t ns_refill_ms;  /* one token back every this many ms (> 0 when ns_burst > 0) */
    unsigned burst;        /* tokens of the global bucket; 0: no global limit */
    int64_t refill_ms;     /* one token back every this many ms (> 0 when burst > 0) */
    size_t max_namespaces; /* namespace buckets kept; 0: EVENT_LIMIT_MAX_NAMESPACES */
};

struct event_recorder_options {
    int64_t repeat_window_ms;                /* step 1; 0: off */
    const struct event_limit_options *limit; /* step 2 (copied); NULL: no buckets */
    int64_t aggregate_ttl_ms;                /* step 3; 0: off, every Event is created */
    size_t max_entries;                      /* step 3's memory; 0: 4096 */
    /* > 0: event_recorder_post() queues up to this many Events (at most 65536) for the worker
     * that event_recorder_start() runs; 0: only event_recorder_record() */
    size_t queue_capacity;
    const struct clock *clock; /* copied, its ctx borrowed; NULL: the system clocks */
};

/* What became of the Events handed in; every Event lands in exactly one counter. */
struct event_recorder_stats {
    uint64_t created;   /* a new Event was written */
    uint64_t updated;   /* folded into an earlier Event by a count patch */
    uint64_t repeated;  /* step 1: not written, as a repeat within the window */
    uint64_t throttled; /* step 2: refused by a token bucket */
    uint64_t dropped;   /* queue full, or posted while stopping, or still queued at the end */
    uint64_t failed;    /* the API refused it or could not be reached */
};

struct event_recorder;

/*
 * event_recorder_new() - a recorder as `o` says. Returns NULL on allocation failure, a burst
 * without a refill interval > 0, or queue_capacity above 65536.
 */
struct event_recorder *event_recorder_new(const struct event_recorder_options *o);

/*
 * event_recorder_record() - write the Event `e` (all strings borrowed) through `c` now, after
 * steps 1-3. *updated (may be NULL) is set to true when an earlier Event was patched rather than
 * a new one created. Returns K_OK (also for a suppressed repeat), K_ETHROTTLED when a bucket
 * refused it, K_EINVAL when a string but uid, message or instance is NULL, K_ENOMEM, or the
 * API's K_* error (err filled). The message is cut at 1024 bytes.
 * `r` may be NULL: a plain create, nothing remembered or counted.
 */
int event_recorder_record(struct event_recorder *r, struct kube_client *c,
                          const struct kube_event_spec *e, bool *updated, struct kube_error *err);

/*
 * event_recorder_start() - start the worker thread that writes posted Events through `c`
 * (borrowed; used by that thread alone until event_recorder_stop). Needs queue_capacity > 0.
 * Returns K_OK, K_EINVAL, or K_ENOMEM.
 */
int event_recorder_start(struct event_recorder *r, struct kube_client *c);

/*
 * event_recorder_post() - copy `e` (strings cut to the API's field limits; uid may be NULL or
 * "") and queue it for the worker; returns at once. Steps 1 and 2 run here. Returns true when
 * queued or suppressed as a repeat; false when a bucket refused it (logged the first time and
 * every 100th), or the queue is full or stopping (logged): counted as throttled or dropped.
 * Failed writes are logged by the worker and not retried.
 */
bool event_recorder_post(struct event_recorder *r, const struct kube_event_spec *e);

/*
 * event_recorder_close() - refuse new posts and let the worker write what is queued until
 * drain_ms from now; what is left then is dropped (and counted) when the worker ends. Does not
 * wait. Idempotent (the first deadline stays).
 */
void event_recorder_close(struct event_recorder *r, int drain_ms);

/*
 * event_recorder_stop() - event_recorder_close(r, drain_ms), then join the worker. Without a
 * started worker what is queued is dropped. Idempotent.
 */
void event_recorder_stop(struct event_recorder *r, int drain_ms);

/* event_recorder_stats() - the counters so far into *out. */
void event_recorder_stats(struct event_recorder *r, struct event_recorder_stats *out);

/* event_recorder_size() - Events remembered for aggregation (step 3). */
size_t event_recorder_size(struct event_recorder *r);

/* event_recorder_free() - stop (drain 0) and free. NULL-safe. */
void event_recorder_free(struct event_recorder *r);

#endif
