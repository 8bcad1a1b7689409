/*
 * events.h - which admission reviews become Events: one Warning Event per admission warning,
 * about the object under review, handed to the recorder (core/kube/event_recorder.h), which
 * folds repeats, applies the token buckets and writes them from its own thread so that the
 * admission response never waits for the API.
 */
#ifndef GPUTRI_WEBHOOK_EVENTS_H
#define GPUTRI_WEBHOOK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "admission.h"
#include "kube/event_recorder.h"

/* source.component and reportingComponent of the webhook's Events */
#define WH_EVENT_COMPONENT "gputri-webhook"

/*
 * wh_events_post() - post a Warning Event for each of r's warnings (reason and text) about the
 * object r names, unless the review may not cause one: `may_record` false (the caller did not
 * prove to be the API server with a verified client certificate: the object an Event names
 * comes from the request body), a dry run (nothing is admitted, so nothing happened to the
 * object), or an object without a namespace or name (nothing for `kubectl describe` to show it
 * on). `instance` is the reportingInstance (borrowed; NULL: none). Returns the number of
 * warnings the recorder took (event_recorder_post). Thread-safe as the recorder is.
 */
size_t wh_events_post(struct event_recorder *rec, const struct admission_result *r, bool may_record,
                      const char *instance);

/*
 * Which reviews may cause Events (--event-verification). An Event names the object the request
 * body names, so only a review that truly admitted something may cause one:
 *   WH_EVENT_VERIFY_AUTO         a caller whose client certificate verified against
 *                                --client-ca-file is the API server: its Events are posted at
 *                                once; any other caller's CREATE is looked up first (LOOKUP);
 *                                the default, which works where the API server cannot be given
 *                                a client certificate (EKS, GKE, AKS);
 *   WH_EVENT_VERIFY_CLIENT_CERT  only a verified client certificate (needs --client-ca-file);
 *   WH_EVENT_VERIFY_LOOKUP       every CREATE is looked up, whoever the caller;
 *   WH_EVENT_VERIFY_OFF          no Events.
 */
enum wh_event_verification {
    WH_EVENT_VERIFY_AUTO,
    WH_EVENT_VERIFY_CLIENT_CERT,
    WH_EVENT_VERIFY_LOOKUP,
    WH_EVENT_VERIFY_OFF,
};

/* What becomes of one review's warnings. */
enum wh_event_path {
    WH_EVENT_NONE,   /* no Event */
    WH_EVENT_DIRECT, /* posted now (wh_events_post) */
    WH_EVENT_LOOKUP, /* posted once the object is found with the review's uid (event_verify.h) */
};

/*
 * wh_events_path() - the path of review r under `mode`: NONE for a review without warnings, a
 * dry run, an object without a namespace or name, and, where a lookup is needed, for anything
 * but a CREATE carrying request.object.metadata.uid (the API server assigns it before validating
 * admission, kubernetes/kubernetes: staging/src/k8s.io/apiserver/pkg/registry/rest/create.go
 * BeforeCreate, meta.go FillObjectMetaSystemFields; an UPDATE names an object that already
 * existed, and a lookup cannot tell whether this update happened). `client_checked`: the webhook
 * asks for client certificates (--client-ca-file); `client_verified`: this caller's verified.
 * Pure; thread-safe.
 */
enum wh_event_path wh_events_path(enum wh_event_verification mode, bool client_checked,
                                  bool client_verified, const struct admission_result *r);

/* wh_event_verification_name() - "auto", "client-cert", "lookup" or "off". */
const char *wh_event_verification_name(enum wh_event_verification mode);

/*
 * wh_event_verification_parse() - the mode named `s` (one of the names above) into *out.
 * Returns false, leaving *out alone, for anything else.
 */
bool wh_event_verification_parse(const char *s, enum wh_event_verification *out);

#endif
