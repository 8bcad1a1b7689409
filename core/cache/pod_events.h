/*
 * pod_events.h - the Events that speak about pods, kept per pod: for each (pod, writer, reason)
 * the newest Event only. What the controller and the CLI read of a pod's Events (an
 * autoscaler's word, core/classify/autoscaler.h; a quota refusal of its claim,
 * core/classify/quota.h; the kubelet's warnings, core/classify/placement.h) is here in raw,
 * compact form; core/triage parses it when it classifies the pod, so this layer knows nothing of
 * their writers.
 *
 * Why the newest per reason is enough: the writers repeat a verdict while it holds (the
 * client-go correlator folds repeats into one Event with count and lastTimestamp,
 * k8s.io/client-go: tools/record/events_cache.go), and a reader wants the latest of each kind of
 * verdict, never a history.
 *
 * Bounds (Events are written by anyone who may create Events in a namespace, and arrive in
 * storms): at most POD_EVENTS_PER_POD records per pod (a new reason replaces the oldest), a
 * message of at most POD_EVENTS_MESSAGE_MAX bytes (longer ones are cut at a UTF-8 boundary), and
 * at most `max_pods` pods (pod_events_new): an Event for a further pod is refused and counted.
 * The caller decides which Events and pods are worth keeping (one rule: core/triage/triage.h
 * triage_event_kind; the controller keeps them only for the pods its store holds as pending GPU
 * pods, or, for the kubelet's, as starting GPU pods).
 *
 * Locking: writers take the lock themselves. Readers hold pod_events_read_lock() around
 * pod_events_get() and for as long as they read the records it returns (borrowed). Lock order
 * when held with the object store (store.h): the object store first, then this one.
 */
#ifndef GPUTRI_CACHE_POD_EVENTS_H
#define GPUTRI_CACHE_POD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/key.h"
#include "model/event.h"

#define POD_EVENTS_PER_POD 8
#define POD_EVENTS_MESSAGE_MAX (KEVENT_MESSAGE_MAX - 1)

/*
 * One Event kept: what model/event.h's struct kevent says about the pod. The strings are one
 * heap block each, as long as they are (the fixed buffers of struct kevent would make a record
 * of about 1 KiB before its message, times POD_EVENTS_PER_POD per pending pod).
 */
struct pod_event {
    char *event_ns, *event_name; /* the Event's own namespace and name: a DELETE of it, or a
                                    relist without it, removes the record */
    char *pod_uid;               /* involvedObject.uid */
    char *component;             /* source.component */
    char *reporting;             /* reportingComponent */
    char *reason;
    char *type;
    char *message; /* all owned; "" when absent */
    int32_t count;
    int64_t first_timestamp, last_timestamp, event_time, series_last;
    bool stale; /* not seen since the running relist began */
};

/* pod_event_time() - the newest of the record's times (seconds since the epoch; 0: none). */
int64_t pod_event_time(const struct pod_event *e);

/*
 * pod_event_to_kevent() - the record back as a model/event.h struct kevent about a Pod
 * (involvedObject kind "Pod", namespace and name from `pod_ns` / `pod_name`), for readers that
 * parse Events (core/classify/autoscaler.h autoscaler_parse). *out is zeroed first. Pure.
 */
void pod_event_to_kevent(const struct pod_event *e, const char *pod_ns, const char *pod_name,
                         struct kevent *out);

struct pod_events;

/* pod_events_new() - an empty cache of at most max_pods pods (0: 65,536). NULL on ENOMEM. */
struct pod_events *pod_events_new(size_t max_pods);
/* pod_events_free() - NULL-safe. */
void pod_events_free(struct pod_events *pe);

/*
 * pod_events_apply() - an Event was added or changed (deleted false), or deleted (true). An
 * Event that is not about a Pod (involvedObject.kind), has no involvedObject namespace, name or
 * uid, lives in another namespace than its involvedObject (the API server lets an Event that has
 * an eventTime name a pod of any namespace, kubernetes/kubernetes:
 * pkg/apis/core/validation/events.go legacyValidateEvent), or has a string not terminated within
 * its buffer is ignored (K_OK, *pod_key ""). Otherwise the record of the same (writer, reason)
 * on that pod is replaced when this Event is the same object, is not older, or the record is
 * stale (not seen yet by the writer's running relist); a new reason takes a free slot or the
 * oldest one's. "Older" compares the newest of each record's times that are not after
 * `not_after` (seconds since the epoch, the caller's clock plus its tolerated skew; <= 0: no
 * limit), so an Event dated far in the future neither keeps a newer one out nor stays when room
 * is made. A deletion removes the record only when it is that Event object. `pod_key`
 * (STORE_KEY_MAX bytes, may be NULL) receives "namespace/name" of the pod whose records changed,
 * "" when none did. Returns K_OK, K_ENOMEM, or K_ETOOBIG when the pod would pass max_pods
 * (counted in pod_events_stats()). Thread-safe.
 */
int pod_events_apply(struct pod_events *pe, const struct kevent *ev, bool deleted,
                     int64_t not_after, char *pod_key);

/*
 * pod_events_forget_pod() - drop every record of pod ns/name (the pod is gone, or no longer one
 * the caller keeps Events for). Thread-safe.
 */
void pod_events_forget_pod(struct pod_events *pe, const char *ns, const char *name);

/* pod_events_forget_pod_key() - the same for a pod by its "namespace/name" key. */
void pod_events_forget_pod_key(struct pod_events *pe, const char *key);

/*
 * pod_events_retain() - drop every record of each pod for which `keep(ctx, "namespace/name")`
 * is false (after a relist of the pods: those gone, or no longer ones the caller keeps Events
 * for, while the pods' watch was down). `keep` runs with the write lock held and must not call
 * into `pe`; the caller may hold the object store's lock (store.h) to answer it. Thread-safe.
 */
void pod_events_retain(struct pod_events *pe, bool (*keep)(void *ctx, const char *pod_key),
                       void *ctx);

/*
 * A relist (informer sync_begin / sync_end) of the Events of one writer (source.component ==
 * `component`: one informer per writer, each listing with fieldSelector=source=<component>):
 * that writer's records are marked stale at the beginning, an apply during the LIST clears the
 * mark, and the end removes what is still stale, calling `changed(ctx, "namespace/name")` for
 * each pod that lost records (without the lock held). Thread-safe.
 */
void pod_events_sync_begin(struct pod_events *pe, const char *component);
void pod_events_sync_end(struct pod_events *pe, const char *component,
                         void (*changed)(void *ctx, const char *pod_key), void *ctx);

void pod_events_read_lock(struct pod_events *pe);
void pod_events_read_unlock(struct pod_events *pe);

/*
 * pod_events_get() - the records of pod ns/name whose pod_uid is `uid` (NULL: any), at most
 * `max` borrowed pointers into out[]; returns how many. Read lock held.
 */
size_t pod_events_get(struct pod_events *pe, const char *ns, const char *name, const char *uid,
                      const struct pod_event **out, size_t max);

struct pod_events_stats {
    size_t pods, events; /* held now */
    uint64_t refused;    /* Events refused because max_pods was reached */
    size_t bytes;        /* the heap the records hold, estimated */
};
/* pod_events_stats() - counts into *out. Thread-safe. */
void pod_events_stats(struct pod_events *pe, struct pod_events_stats *out);

#endif
