/*
 * quota.h - quota-exceeded: a ResourceQuota refuses an object a GPU pod needs after the pod
 * itself was admitted (its ResourceClaim from a template), or refuses the GPU pods of a
 * ReplicaSet, StatefulSet or Job, which then have no pod at all. Pure: no I/O, no clock.
 *
 * What is read (kubernetes/kubernetes):
 *   - the quota admission's refusal, staging/src/k8s.io/apiserver/pkg/admission/plugin/
 *     resourcequota/controller.go: "exceeded quota: %s, requested: %s, used: %s, limited: %s",
 *     the quota's name, then the exceeded keys only as "key=quantity" joined by "," in key order
 *     (prettyPrint of quota.Mask(..., exceeded));
 *   - on the pod: kube-controller-manager's resourceclaim controller
 *     (pkg/controller/resourceclaim/controller.go handleClaim) writes a Warning Event
 *     FailedResourceClaimCreation "PodResourceClaim <pod claim>: create ResourceClaim : <err>"
 *     when it cannot create the claim of a resourceClaimTemplateName; it retries with backoff and
 *     writes status.resourceClaimStatuses once the claim exists;
 *   - on the owner: the workload controllers' Warning Event FailedCreate (pkg/controller/
 *     controller_utils.go "Error creating: <err>" for ReplicaSets and Jobs, pkg/controller/
 *     statefulset/stateful_pod_control.go "create Pod <p> in StatefulSet <s> failed error: <err>").
 * Quota keys (pkg/quota/v1/evaluator/core): requests.<resource> / limits.<resource> (for extended
 * resources only requests.<name> is enforced), <class>.deviceclass.resource.k8s.io/devices,
 * count/resourceclaims.resource.k8s.io, and for extended resources served by DRA (KEP-5004)
 * requests.deviceclass.resource.kubernetes.io/<class>.
 */
#ifndef GPUTRI_CLASSIFY_QUOTA_H
#define GPUTRI_CLASSIFY_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/line.h"
#include "model/event.h"
#include "model/gpu.h"
#include "model/dra.h"
#include "model/model.h"

/* Sizes of the parsed fields, terminator included; a longer field is cut. */
#define QUOTA_NAME_MAX 254    /* a ResourceQuota's name (DNS subdomain) */
#define QUOTA_KEY_MAX 254     /* a quota key, e.g. gpu.deviceclass.resource.k8s.io/devices */
#define QUOTA_VALUE_MAX 40    /* a quantity as written, e.g. 4 or 2Gi */
#define QUOTA_CLAIM_MAX 64    /* a pod claim name (DNS label) */
#define QUOTA_KEYS_SCANNED 64 /* keys of one list looked at; the rest only counted */

/* The Event reasons read. */
#define QUOTA_CLAIM_EVENT_REASON "FailedResourceClaimCreation"
#define QUOTA_OWNER_EVENT_REASON "FailedCreate"

/*
 * How long a refused owner stays refused without a newer FailedCreate (seconds): the ReplicaSet
 * controller's retries back off to 1000 s (client-go workqueue DefaultControllerRateLimiter), the
 * Job controller's to 60 s (pkg/controller/job MaxJobApiBackOff), and the Event recorder's spam
 * filter lets one Event per object through every 300 s (client-go tools/record/events_cache.go);
 * an owner still refused therefore shows a newer Event within about 17 minutes.
 */
#define QUOTA_OWNER_WINDOW 1200

/*
 * How far ahead of the controller's clock a refusal's newest time may be and still count
 * (seconds): clock skew between the workload controllers and gputri. Anyone who may write Events
 * in a namespace can date one in the year 9999, which would stay current for ever.
 */
#define QUOTA_OWNER_SKEW 300

/*
 * The share of a table of refused owners one namespace may hold: its size / QUOTA_OWNER_NS_SHARE
 * (the controller's table, controller/quota_owners.h; the rows of `kubectl gputri pods`,
 * cli/owner_rows.c). Anyone who may write Events in a namespace can forge FailedCreate Events
 * for thousands of owners: they fill that namespace's share, not the rows of the others.
 */
#define QUOTA_OWNER_NS_SHARE 8

/* One quota refusal as its message tells it. All strings NUL-terminated, "" when absent. */
struct quota_refusal {
    char quota[QUOTA_NAME_MAX]; /* the ResourceQuota's name */
    char key[QUOTA_KEY_MAX];    /* the exceeded key reported: the first GPU key, else the first */
    char requested[QUOTA_VALUE_MAX], used[QUOTA_VALUE_MAX], limited[QUOTA_VALUE_MAX];
    size_t n_keys;                   /* keys exceeded in all (requested list) */
    char pod_claim[QUOTA_CLAIM_MAX]; /* the pod claim (FailedResourceClaimCreation), or "" */
    int64_t at;                      /* the Event's newest time (seconds since the epoch; 0) */
    int32_t count;                   /* the Event's count (0: unknown) */
};

/*
 * quota_parse() - the quota admission's refusal in `msg` (NUL-terminated, read up to its first
 * QUOTA_MESSAGE_SCAN bytes): finds "exceeded quota: ", then the quota name, the requested, used
 * and limited lists. The key reported is the first for which `is_gpu(ctx, key)` holds (is_gpu may
 * be NULL: the first key). Fills *out (zeroed first; pod_claim, at and count stay empty). Returns
 * false when msg holds no such refusal. Bounded: one pass over at most QUOTA_MESSAGE_SCAN bytes,
 * at most QUOTA_KEYS_SCANNED keys per list. Thread-safe.
 */
#define QUOTA_MESSAGE_SCAN 4096
bool quota_parse(const char *msg, bool (*is_gpu)(void *ctx, const char *key), void *ctx,
                 struct quota_refusal *out);

/*
 * quota_key_is_gpu() - whether quota key `key` counts GPUs: requests.<r>, limits.<r> or <r> for a
 * resource r in `gpus`; <class>.deviceclass.resource.k8s.io/devices or
 * requests.deviceclass.resource.kubernetes.io/<class> for a class in `dra_classes` (the DRA GPU
 * DeviceClass patterns; NULL: no class counts). Pure.
 */
bool quota_key_is_gpu(const char *key, const struct gpu_set *gpus,
                      const struct gpu_set *dra_classes);

/*
 * quota_claim_event() - whether `ev` is the resourceclaim controller's refusal of a pod's claim
 * by quota: involvedObject kind Pod, type Warning, reason FailedResourceClaimCreation, message
 * "PodResourceClaim <pc>: ..." holding a quota refusal (quota_parse, first key). Fills *out with
 * pod_claim, at (the newest of the Event's times) and count. Pure.
 */
bool quota_claim_event(const struct kevent *ev, struct quota_refusal *out);

/*
 * quota_claim_current() - whether the refusal still stops `pod`: the pod is not bound, and the
 * pod claim it names is in spec.resourceClaims with a resourceClaimTemplateName and has no
 * generated claim in status.resourceClaimStatuses yet (the controller writes it once the claim
 * is created, so a claim created after a quota was raised ends the refusal). Pure.
 */
bool quota_claim_current(const struct kpod *pod, const struct quota_refusal *q);

/*
 * quota_put_claim() - the detail of a pod whose claim is refused: "ResourceQuota q refuses the
 * ResourceClaim of pod claim pc: key requested r, used u of limit l; ...what to do". Pure.
 */
void quota_put_claim(struct line *l, const struct quota_refusal *q);

/* The owners whose pods a quota refuses. */
enum quota_owner_kind {
    QUOTA_OWNER_REPLICASET,
    QUOTA_OWNER_STATEFULSET,
    QUOTA_OWNER_JOB,
    QUOTA_OWNER_KINDS
};

/* quota_owner_kind_name() - "ReplicaSet", "StatefulSet", "Job". */
const char *quota_owner_kind_name(enum quota_owner_kind k);
/* quota_owner_api_version() - "apps/v1" or "batch/v1". */
const char *quota_owner_api_version(enum quota_owner_kind k);
/* quota_owner_resource() - the API resource: "replicasets", "statefulsets", "jobs". */
const char *quota_owner_resource(enum quota_owner_kind k);

/* One owner whose GPU pods a quota refuses, from its FailedCreate Event. */
struct quota_owner {
    enum quota_owner_kind kind;
    char ns[KEVENT_NS_MAX];
    char name[KEVENT_NAME_MAX];
    char uid[KEVENT_WORD_MAX];
    char event_name[KEVENT_NAME_MAX]; /* the FailedCreate Event's own name */
    struct quota_refusal q;
};

/*
 * quota_owner_event() - whether `ev` is a workload controller's FailedCreate (Warning) on a
 * ReplicaSet, StatefulSet or Job whose message is a quota refusal naming a GPU key
 * (quota_key_is_gpu with `gpus` and `dra_classes`): the owner's pods are GPU pods as far as the
 * quota is concerned, read from the refusal itself rather than from the owner's pod template (no
 * read of the owner needed; a refusal for CPU or memory only is not gputri's). The Event's
 * namespace must be the owner's. Fills *out. Pure.
 */
bool quota_owner_event(const struct kevent *ev, const struct gpu_set *gpus,
                       const struct gpu_set *dra_classes, struct quota_owner *out);

/*
 * quota_owner_current() - whether the owner is still refused at `now` (seconds since the epoch;
 * 0: unknown, age not judged): its Event has a time, is not older than QUOTA_OWNER_WINDOW nor
 * dated more than QUOTA_OWNER_SKEW after `now` (a forged date), and no pod of the
 * owner was created after the Event's newest time (`newest_pod` the newest creationTimestamp of
 * the pods whose controller ownerReference is the owner's uid; 0: none known). Pure.
 */
bool quota_owner_current(const struct quota_owner *o, int64_t now, int64_t newest_pod);

/*
 * quota_put_owner() - the owner's detail: "ResourceQuota q refuses the GPU pods of ReplicaSet r:
 * key requested r, used u of limit l (N FailedCreate); ...what to do". Pure.
 */
void quota_put_owner(struct line *l, const struct quota_owner *o);

#endif
