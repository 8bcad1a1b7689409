/*
 * event_limit.h - token buckets that bound the Warning Events gputri-webhook writes: one bucket
 * per namespace and one for all namespaces, so that no caller - not even the API server sending
 * valid AdmissionReviews in a loop - turns the webhook into an Event flood.
 *
 * A bucket holds at most `burst` tokens, starts full and gains one token every `refill_ms`; an
 * Event takes one token from its namespace's bucket and one from the global bucket, and is
 * refused (no token taken from either) when either is empty. This is the shape of client-go's
 * Event spam filter (kubernetes/kubernetes:
 * staging/src/k8s.io/client-go/tools/record/events_cache.go, EventSourceObjectSpamFilter: a
 * token bucket per event source and object, defaultSpamBurst 25, defaultSpamQPS 1/300, an LRU of
 * maxLruCacheEntries 4096 keys), keyed by namespace instead of object.
 *
 * The defaults (EVENT_LIMIT_NS_BURST, EVENT_LIMIT_NS_REFILL_MS, EVENT_LIMIT_BURST,
 * EVENT_LIMIT_REFILL_MS): a namespace may get 25 Events at once, as client-go's filter allows per
 * object, then one every 10 s (360 an hour). A namespace holds many objects, so its refill is
 * faster than client-go's one per 5 minutes per object; identical Events within 10 minutes are
 * already folded by events.h, so the tokens go to distinct warnings. All namespaces together get
 * 100 at once and then one per second, well inside the API server's default
 * --max-requests-inflight (400) and what one client's default rate (client-go QPS 5, burst 10)
 * would send anyway.
 *
 * At most `max_namespaces` namespace buckets are kept (default 4096, client-go's LRU size); a new
 * namespace beyond that replaces a bucket that has refilled to full (indistinguishable from a
 * fresh one) or else the least recently used one. Lookups scan the table comparing 64-bit
 * hashes first: O(max_namespaces) per Event, a few microseconds at 4096.
 *
 * Time is read from the injected clock (util/clock.h). Not thread-safe: the caller serialises
 * calls (events.c calls it under its queue lock).
 */
#ifndef GPUTRI_WEBHOOK_EVENT_LIMIT_H
#define GPUTRI_WEBHOOK_EVENT_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

#define EVENT_LIMIT_NS_BURST 25
#define EVENT_LIMIT_NS_REFILL_MS 10000
#define EVENT_LIMIT_BURST 100
#define EVENT_LIMIT_REFILL_MS 1000
#define EVENT_LIMIT_MAX_NAMESPACES 4096

struct event_limit_options {
    unsigned ns_burst;     /* tokens per namespace bucket; 0: no per-namespace limit */
    int64_t ns_refill_ms;  /* one token back every this many ms (> 0 when ns_burst > 0) */
    unsigned burst;        /* tokens of the global bucket; 0: no global limit */
    int64_t refill_ms;     /* one token back every this many ms (> 0 when burst > 0) */
    size_t max_namespaces; /* namespace buckets kept; 0: EVENT_LIMIT_MAX_NAMESPACES */
};

struct event_limit;

/*
 * event_limit_new() - buckets as `o` says, reading monotonic time from `clock` (borrowed, must
 * outlive the limiter; NULL: the system clock). Returns NULL on ENOMEM or when a burst is set
 * with a refill interval <= 0.
 */
struct event_limit *event_limit_new(const struct event_limit_options *o, const struct clock *clock);

/*
 * event_limit_allow() - whether one more Event about an object in namespace `ns` (NULL or "":
 * cluster-scoped, one bucket of its own) may be written now; when true one token was taken
 * from the namespace's bucket and one from the global bucket. Bounded work (see above).
 */
bool event_limit_allow(struct event_limit *l, const char *ns);

/* event_limit_free() - free. NULL-safe. */
void event_limit_free(struct event_limit *l);

#endif
