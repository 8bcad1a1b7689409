/*
 * event_recorder.h - record Events about pods, aggregating repeats the way client-go's
 * EventCorrelator does (kubernetes/client-go: tools/record/events_cache.go,
 * eventLogger.eventObserve).
 *
 * The first Event for a (pod uid, type, reason) is created with a client-go style name
 * "<pod>.<hex nanoseconds>" and remembered. While it is remembered (ttl), the same (uid, type,
 * reason) again does not create a new Event: the remembered one is patched (merge patch) with
 * count + 1, a new lastTimestamp and the new message. If that Event is gone (404: the API
 * server's event TTL, or someone deleted it), a new one is created. At most max_entries Events
 * are remembered; the least recently used is forgotten first.
 *
 * Writes go through a struct event_sink (the Kubernetes client in production, a recorder in
 * tests). All functions are thread-safe; the sink is called without the recorder's lock held.
 */
#ifndef GPUTRI_EVENT_RECORDER_H
#define GPUTRI_EVENT_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/event.h"
#include "util/clock.h"

/* Where Events are written. `conn` is the per-call connection passed to event_recorder_record. */
struct event_sink {
    /* POST `body` (borrowed) to namespace `ns`'s events */
    int (*create)(void *conn, const char *ns, json_object *body, struct kube_error *err);
    /* merge-patch Event `ns`/`name` with `body` (borrowed) */
    int (*patch)(void *conn, const char *ns, const char *name, json_object *body,
                 struct kube_error *err);
};

/* event_sink_kube() - the sink over the Kubernetes API; `conn` is a struct kube_client *. */
const struct event_sink *event_sink_kube(void);

struct event_recorder;

/*
 * event_recorder_new() - a recorder writing through `sink` (borrowed, must outlive it).
 * ttl_ms: how long a created Event is remembered for aggregation (client-go keeps its cache
 * without expiry; the API server drops Events after an hour, so 10 minutes is a sane default).
 * clock: its wall time stamps Events and runs the ttl (copied, ctx borrowed; NULL: the system
 * clock).
 * Returns NULL on allocation failure.
 */
struct event_recorder *event_recorder_new(const struct event_sink *sink, int64_t ttl_ms,
                                          size_t max_entries, const struct clock *clock);
void event_recorder_free(struct event_recorder *r);

/*
 * event_recorder_record() - write the Event `e` (all strings borrowed) through the sink with
 * `conn`: create it, or update the remembered one (see above). *aggregated (may be NULL) is set
 * to 1 when an existing Event was updated. Returns K_OK or the sink's K_* error (err filled).
 * An Event without a uid is never aggregated.
 */
int event_recorder_record(struct event_recorder *r, void *conn, const struct kube_event_spec *e,
                          int *aggregated, struct kube_error *err);

/* event_recorder_size() - Events currently remembered. */
size_t event_recorder_size(struct event_recorder *r);

#endif
