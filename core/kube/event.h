/*
 * event.h - a core/v1 Event about an object, as `kubectl describe` and
 * `kubectl get events` show it (kubernetes/api: core/v1/types.go Event; the legacy event shape
 * that client-go's EventRecorder writes, kubernetes/client-go: tools/record/event.go). Events
 * are written by kube/event_recorder.h.
 */
#ifndef GPUTRI_KUBE_EVENT_H
#define GPUTRI_KUBE_EVENT_H

#include "kube/client.h"

struct kube_event_spec {
    const char *ns;          /* the object's namespace; the Event is created there */
    const char *kind;        /* "Pod", "Deployment", ... */
    const char *api_version; /* "v1", "apps/v1", ... */
    const char *name;
    const char *uid;       /* may be NULL (e.g. an object not created yet) */
    const char *type;      /* "Normal" or "Warning" */
    const char *reason;    /* CamelCase, e.g. "GPUExhausted" */
    const char *message;   /* at most 1024 bytes are kept (the API's note limit) */
    const char *component; /* source.component and reportingComponent, e.g. "gputri" */
    const char *instance;  /* reportingInstance, e.g. the host name; may be NULL */
};

/*
 * kube_event_body() - the Event object for `e` as client-go's recorder writes it (legacy core/v1
 * shape: involvedObject, source and reportingComponent, first/lastTimestamp, count 1). `name`
 * sets metadata.name; NULL sets metadata.generateName to "<object name>." instead. `now` is an
 * RFC 3339 time ("2026-11-30T14:00:00Z"). The message is cut at 1024 bytes. Returns a new object
 * owned by the caller, or NULL on allocation failure. All arguments are borrowed.
 */
json_object *kube_event_body(const struct kube_event_spec *e, const char *name, const char *now);

#endif
