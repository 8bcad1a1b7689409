/*
 * event.h - the compact projection of one core/v1 Event as gputri reads it: the fields an
 * autoscaler's verdict about a pod is made of (kubernetes/api: core/v1/types.go Event,
 * EventSource, EventSeries, ObjectReference). Filled by kube/project.h project_event() from API
 * JSON and by tests; read by classify/autoscaler.h.
 *
 * Unlike the other projections of model.h, an Event owns no heap memory: every string is a
 * bounded copy in a fixed buffer, so reading an Event storm allocates nothing per Event, and the
 * struct is a plain value (copy it with `=`, no cleanup). A string longer than its buffer is cut
 * at a UTF-8 character boundary and `cut` is set. Strings are NUL-terminated, "" when absent;
 * times are whole seconds since the epoch, 0 when absent or not an RFC 3339 time. Everything an
 * Event holds is untrusted: any user who may create Events in a namespace can write any of these
 * fields, and the API server checks that involvedObject's namespace is the Event's own only for
 * an Event without eventTime (kubernetes/kubernetes: pkg/apis/core/validation/events.go
 * legacyValidateEvent; core/v1 updates may change any field), so an Event may name an object of
 * any namespace: readers compare the two (cache/pod_events.h).
 * Not thread-safe; one writer.
 */
#ifndef GPUTRI_MODEL_EVENT_H
#define GPUTRI_MODEL_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* Buffer sizes, terminator included. */
#define KEVENT_NAME_MAX 254     /* a DNS subdomain (253 bytes): object and Event names */
#define KEVENT_NS_MAX 64        /* a DNS label (63 bytes): namespaces */
#define KEVENT_WORD_MAX 129     /* uid, kind, reason, type, component names: 128 bytes */
#define KEVENT_MESSAGE_MAX 1025 /* 1024 bytes, the API's limit on a note (NoteLengthLimit) */

struct kevent {
    char ns[KEVENT_NS_MAX];         /* metadata.namespace */
    char name[KEVENT_NAME_MAX];     /* metadata.name */
    char obj_kind[KEVENT_WORD_MAX]; /* involvedObject.kind, e.g. "Pod" */
    char obj_ns[KEVENT_NS_MAX];     /* involvedObject.namespace */
    char obj_name[KEVENT_NAME_MAX]; /* involvedObject.name */
    char obj_uid[KEVENT_WORD_MAX];  /* involvedObject.uid */
    char reason[KEVENT_WORD_MAX];
    char message[KEVENT_MESSAGE_MAX];
    char type[KEVENT_WORD_MAX];      /* "Normal" or "Warning" */
    char component[KEVENT_WORD_MAX]; /* source.component (the legacy recorder's writer) */
    char reporting[KEVENT_WORD_MAX]; /* reportingComponent (events.k8s.io writers set only this) */
    int32_t count;                   /* count, else series.count; 0 when neither is set */
    int64_t first_timestamp;         /* firstTimestamp */
    int64_t last_timestamp;          /* lastTimestamp */
    int64_t event_time;              /* eventTime (a MicroTime; the fraction dropped) */
    int64_t series_last;             /* series.lastObservedTime */
    bool cut;                        /* some string was longer than its buffer */
};

#endif
