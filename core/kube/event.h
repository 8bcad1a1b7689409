/*
 * event.h - record a core/v1 Event about an object, so that `kubectl describe` and
 * `kubectl get events` show it (kubernetes/api: core/v1/types.go Event; the legacy event shape
 * that client-go's EventRecorder writes, kubernetes/client-go: tools/record/event.go).
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
 * kube_event_create() - POST the Event (name generated from the object's name). All strings are
 * borrowed. Returns a K_* value; err gets the details.
 */
int kube_event_create(struct kube_client *c, const struct kube_event_spec *e,
                      struct kube_error *err);

#endif
