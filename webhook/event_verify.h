/*
 * event_verify.h - Events for admission reviews whose caller is not known to be the API server
 * (events.h WH_EVENT_LOOKUP): the review is remembered, and its Events are posted only once the
 * object it names has been read back from the API with the identity the review gave it.
 *
 * Why this proves something: the API server assigns metadata.uid (a random UUID) and
 * metadata.creationTimestamp before validating admission (kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/registry/rest/create.go BeforeCreate, meta.go
 * FillObjectMetaSystemFields) and stores the object as validated once every validating webhook
 * and plugin has admitted it (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/
 * store.go Create). So the object exists with the review's uid only when that CREATE happened;
 * a review the API server never sent names an object that is absent, or present with another
 * uid. A CREATE refused after this webhook (another webhook, the ResourceQuota plugin) or a dry
 * run leaves no object either: no Event.
 *
 * Each queued review is looked up with GET of the object (by namespace and name, at the group
 * and version of request.kind), first WH_VERIFY_FIRST_DELAY_MS after the review, then after 2,
 * 4, 8, ... times that while the object is absent or the API fails, until WH_VERIFY_GIVE_UP_MS
 * after the review (the API server waits at most 30 s for its validating webhooks, which run in
 * parallel, before it stores the object). The Events are posted (to the recorder's queue,
 * kube/event_recorder.h, which folds repeats and applies its token buckets) when the object is
 * found and
 *   - its metadata.uid is the review's object's,
 *   - its metadata.creationTimestamp is the review's object's, when the review carried one,
 *   - it was created at most WH_VERIFY_MAX_AGE_MS before the lookup by this process's wall
 *     clock (a forger who copied a live object's uid can only name an object that is minutes
 *     old), and
 *   - no review of that uid was verified before (an object is created once; the last
 *     WH_VERIFY_SEEN uids verified are remembered).
 * Anything else ends the review without an Event. Reviews of kinds other than those the webhook
 * warns for, or naming a namespace or name that is not a valid Kubernetes name, are refused at
 * once (wh_verify_queue returns false).
 *
 * Bounds: at most `capacity` reviews wait (default WH_VERIFY_CAPACITY, each a copy of its
 * struct admission_result, about 3 KiB); a review arriving at a full queue drops the oldest
 * waiting one (counted). A review costs at most 5 GETs (at 1, 3, 7, 15 and 31 s with the defaults),
 * made one at a time by one thread.
 *
 * Time comes from the options' clock (util/clock.h): monotonic for delays, wall for the age.
 * Thread-safety: wh_verify_queue, wh_verify_stats and wh_verify_run_due may be called from any
 * thread (one lock); new/start/stop/free from one thread. The API is called without the lock.
 */
#ifndef GPUTRI_WEBHOOK_EVENT_VERIFY_H
#define GPUTRI_WEBHOOK_EVENT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "util/clock.h"

#define WH_VERIFY_CAPACITY 1024
#define WH_VERIFY_MAX_CAPACITY 65536
#define WH_VERIFY_FIRST_DELAY_MS 1000
#define WH_VERIFY_GIVE_UP_MS 32000
#define WH_VERIFY_MAX_AGE_MS (5 * 60 * 1000)
#define WH_VERIFY_SEEN 4096

struct wh_verify_options {
    size_t capacity;           /* reviews waiting at most; 0: WH_VERIFY_CAPACITY */
    int64_t first_delay_ms;    /* 0: WH_VERIFY_FIRST_DELAY_MS */
    int64_t give_up_ms;        /* 0: WH_VERIFY_GIVE_UP_MS */
    int64_t max_age_ms;        /* 0: WH_VERIFY_MAX_AGE_MS */
    const char *instance;      /* reportingInstance of the Events (borrowed); NULL: none */
    const struct clock *clock; /* borrowed; NULL: the system clocks */
};

/* What became of the reviews queued; each ends in exactly one of the result counters. */
struct wh_verify_stats {
    uint64_t queued;   /* taken by wh_verify_queue */
    uint64_t verified; /* found with the review's identity: Events posted */
    uint64_t absent;   /* not found until the give-up time */
    uint64_t mismatch; /* found with another uid or creation time, too old, or seen before */
    uint64_t failed;   /* the lookups failed (not 404) until the give-up time */
    uint64_t dropped;  /* the oldest, at a full queue; or still waiting at stop */
    size_t pending;    /* waiting now */
};

struct wh_verify;

/*
 * wh_verify_new() - a verifier posting to `rec` (borrowed; must outlive it). Returns NULL on
 * allocation failure or a capacity above WH_VERIFY_MAX_CAPACITY.
 */
struct wh_verify *wh_verify_new(const struct wh_verify_options *o, struct event_recorder *rec);

/*
 * wh_verify_path() - the API path of the object r names ("/api/v1/namespaces/NS/pods/NAME",
 * "/apis/apps/v1/namespaces/NS/deployments/NAME", ...) into out (len bytes). Returns false for
 * a kind the webhook does not warn for, an api_version that is not group/version of lowercase
 * letters, digits, dots and dashes, a namespace that is not a DNS label or a name that is not a
 * DNS subdomain (kubernetes/apimachinery: pkg/util/validation/validation.go), or no room. Pure.
 */
bool wh_verify_path(const struct admission_result *r, char *out, size_t len);

/*
 * wh_verify_queue() - copy review r (its warnings and the object's identity; the response is
 * not copied) to be looked up. Returns false, counting nothing, when r has no warnings, no uid,
 * or no path (wh_verify_path); true when queued (a full queue drops its oldest review).
 */
bool wh_verify_queue(struct wh_verify *v, const struct admission_result *r);

/*
 * wh_verify_run_due() - look up, through `c` (one thread's client), every review whose time has
 * come by the clock, and finish or reschedule each. Returns how many lookups were made. The
 * worker calls it; tests call it with a fake clock instead of starting one.
 */
size_t wh_verify_run_due(struct wh_verify *v, struct kube_client *c);

/*
 * wh_verify_start() - start the worker thread, which runs wh_verify_run_due through `c`
 * (borrowed; used by that thread alone until wh_verify_stop) whenever a review is due. Returns
 * K_OK or K_ENOMEM.
 */
int wh_verify_start(struct wh_verify *v, struct kube_client *c);

/* wh_verify_stop() - stop the worker (a lookup in flight finishes); what still waits is dropped
 * and counted. Idempotent. */
void wh_verify_stop(struct wh_verify *v);

/* wh_verify_stats() - the counters so far into *out. */
void wh_verify_stats(struct wh_verify *v, struct wh_verify_stats *out);

/* wh_verify_free() - stop and free. NULL-safe. */
void wh_verify_free(struct wh_verify *v);

#endif
