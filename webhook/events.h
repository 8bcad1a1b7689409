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

#endif
