/*
 * event_verify.h - Events for admission reviews whose caller is not known to be the API server
 * (events.h WH_EVENT_LOOKUP): the review is remembered, the object it names read back from the
 * API, and Events are posted only if that object has the identity the review gave it, saying
 * what the admission checks find on the object as stored (never what the review said).
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
 * parallel, before it stores the object). The object read back is the review's object when
 *   - its metadata.uid is the review's object's,
 *   - its metadata.creationTimestamp is the review's object's, when the review carried one,
 *   - it was created at most WH_VERIFY_MAX_AGE_MS before the lookup by this process's wall
 *     clock (a forger who copied a live object's uid can only name an object that is minutes
 *     old), and
 *   - no review of that uid was verified before (an object is created once; the last
 *     WH_VERIFY_SEEN uids verified are remembered).
 * Anything else ends the review without an Event. Then the object read back, not the review, is
 * checked: the same admission checks the webhook runs on a review (admission.h
 * admission_check_object, ADMISSION_CHECK_STORED: those of a CREATE but the quota left, as
 * status.used by then counts the object itself), against the snapshot the options give at that
 * moment.
 * Its Events are exactly the warnings that check finds on the stored object, posted to the
 * recorder's queue (kube/event_recorder.h, which folds repeats and applies its token buckets); none
 * when the stored object draws no warning. So the review decides only that an object is looked up,
 * never what an Event says: someone who can reach the webhook port and knows a live object's uid
 * and creationTimestamp can make it read that object once and write what the webhook would have
 * written for its real CREATE, nothing else.
 *
 * What is verified and what is not: the Event names the object the API server stored under the
 * review's uid (namespace, name, kind at the review's group/version, uid) and its text is the
 * check of that stored object; the cluster state it is checked against (nodes, RuntimeClasses,
 * quotas, DRA objects) is the webhook's cache at the lookup, 1 s or more after the review, not
 * at the review (a node added in between can turn a warning off). The stored object may also
 * have changed since its CREATE (kube-scheduler's binding, a controller's update): the Event
 * says what it draws as read.
 *
 * Reviews of kinds other than those the webhook
 * warns for, or naming a namespace or name that is not a valid Kubernetes name, are refused at
 * once (wh_verify_queue returns false).
 *
 * Bounds: at most `capacity` reviews wait (default WH_VERIFY_CAPACITY, each a copy of its
 * struct admission_result, about 3 KiB); a review arriving at a full queue drops the oldest
 * waiting one (counted). A review costs at most 5 GETs (at 1, 3, 7, 15 and 31 s with the defaults),
 * made one at a time by one thread, each answer bounded by kube_get (KUBE_MAX_OBJECT bytes, the
 * tree by kube/read_budget.h; an object over them ends the review, failed), and at most one run
 * of the admission checks (admission.h's CPU bounds), with the snapshot held for that run only.
 *
 * Time comes from the options' clock (util/clock.h): monotonic for delays, wall for the age.
 * Thread-safety: wh_verify_queue, wh_verify_stats and wh_verify_run_due may be called from any
 * thread (one lock); new/start/stop/free from one thread. The API and the checks (with the
 * snapshot) are called without the lock.
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
    /* The snapshot the object read back is checked against (required): snapshot_read fills
     * *snap, valid until snapshot_release (webhook/cache.h wh_cache_read and wh_cache_release);
     * called in pairs by the thread running wh_verify_run_due, without the verifier's lock. */
    void (*snapshot_read)(void *ctx, struct wh_snapshot *snap);
    void (*snapshot_release)(void *ctx);
    void *snapshot_ctx;
};

/* What became of the reviews queued; each ends in exactly one of the result counters. */
struct wh_verify_stats {
    uint64_t queued;   /* taken by wh_verify_queue */
    uint64_t verified; /* found with the review's identity, draws warnings: Events posted */
    uint64_t unwarned; /* found with the review's identity, draws no warning as stored: none */
    uint64_t absent;   /* not found until the give-up time */
    uint64_t mismatch; /* found with another uid or creation time, too old, or seen before */
    uint64_t failed;   /* the lookups failed (not 404) until the give-up time */
    uint64_t dropped;  /* the oldest, at a full queue; or still waiting at stop */
    size_t pending;    /* waiting now */
};

struct wh_verify;

/*
 * wh_verify_new() - a verifier posting to `rec` (borrowed; must outlive it). Returns NULL on
 * allocation failure, a capacity above WH_VERIFY_MAX_CAPACITY or no snapshot callbacks.
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
 * wh_verify_queue() - copy review r (the object's identity; the response is not copied, the
 * warnings are replaced by the stored object's at the lookup) to be looked up. Returns false,
 * counting nothing, when r has no warnings, no uid, or no path (wh_verify_path); true when
 * queued (a full queue drops its oldest review).
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
