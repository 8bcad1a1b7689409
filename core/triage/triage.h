/*
 * triage.h - one pod's classification from the caches: the classifier's input built from the
 * object store (cache/store.h) and the DRA store (cache/dra_store.h), and the rules of which
 * pods the classification is for. The controller, `gputri triage|explain`, `kubectl gputri
 * pods|explain`, the CLI's usage reader and the benchmarks classify through triage_pod(); a new
 * input of the ladder read from the caches is added here once.
 *
 * Layer: above cache and classify (core/CMakeLists.txt); the caches know nothing of the
 * classifier.
 *
 * Locking: the caller holds the object store's read lock (store_read_lock) around every call
 * that takes a store and for as long as it reads what the result borrows; triage_pod() takes the
 * DRA store's and the workload store's read locks itself around classify(), so the caller must
 * hold neither (lock order: the object store, then the DRA store, then the workload store, as
 * dra_store.h and workload_store.h say).
 */
#ifndef GPUTRI_CORE_TRIAGE_H
#define GPUTRI_CORE_TRIAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/dra_store.h"
#include "cache/gang_store.h"
#include "cache/pod_events.h"
#include "cache/store.h"
#include "cache/workload_store.h"
#include "classify/autoscaler.h"
#include "classify/classify.h"
#include "classify/placement.h"
#include "classify/quota.h"
#include "kube/client.h"
#include "model/gpu.h"
#include "model/model.h"

/* Preemption victims named per pod in classify_input.victims (the rest only counted). */
#define TRIAGE_MAX_VICTIMS 8

/* Autoscaler records per pod handed to classify() (cache/pod_events.h keeps as many Events). */
#define TRIAGE_MAX_EVIDENCE POD_EVENTS_PER_POD

/* Storage for what triage_pod() hands to classify() beyond the caches' records: the victims'
 * names (triage_fill_facts) and the autoscalers' records (triage_autoscaler_evidence). */
struct triage_facts {
    char names[TRIAGE_MAX_VICTIMS][STORE_KEY_MAX];
    const char *ptrs[TRIAGE_MAX_VICTIMS];
    struct autoscaler_evidence evidence[TRIAGE_MAX_EVIDENCE];
    struct quota_refusal quota; /* classify_input.quota (triage_quota_refusal) */
    struct gang_facts gang;     /* classify_input.gang (triage_gang_facts) */
};

/*
 * triage_quota_refusal() - the newest refusal of one of `pod`'s claims by a ResourceQuota among
 * its Events in `events` (NULL: none) whose involvedObject.uid is the pod's
 * (classify/quota.h quota_claim_event), into *out. Returns false when there is none. Takes and
 * releases the cache's read lock (lock order: the object store, then the Events). Thread-safe.
 */
bool triage_quota_refusal(struct pod_events *events, const struct kpod *pod,
                          struct quota_refusal *out);

/*
 * triage_autoscaler_evidence() - what node autoscalers said about `pod`: its Events in `events`
 * (NULL: none) whose involvedObject.uid is the pod's, parsed by classify/autoscaler.h
 * autoscaler_parse(); those that are no autoscaler's verdict are left out. Writes at most `max`
 * records to out[] and returns how many. Takes and releases the cache's read lock (lock order:
 * the object store, then the Events). Thread-safe.
 */
size_t triage_autoscaler_evidence(struct pod_events *events, const struct kpod *pod,
                                  struct autoscaler_evidence *out, size_t max);

/* Storage for the kubelet's Events of one bound pod handed to classify() (classify/placement.h),
 * copied out of the Event cache so that its lock is not held while classifying. */
struct triage_placement {
    struct placement_event events[PLACEMENT_MAX_EVENTS];
    char reasons[PLACEMENT_MAX_EVENTS][KEVENT_WORD_MAX];
    char messages[PLACEMENT_MAX_EVENTS][KEVENT_MESSAGE_MAX];
    struct placement_facts facts; /* points into the above */
};

/*
 * triage_placement_events() - the kubelet's Events about `pod` in `events` (NULL: none) whose
 * involvedObject.uid is the pod's and that classify/placement.h placement_event_kept() keeps,
 * copied into *out (at most PLACEMENT_MAX_EVENTS; out->facts set to them). Returns how many.
 * Takes and releases the cache's read lock (lock order: the object store, then the Events).
 * Thread-safe with distinct `out`.
 */
size_t triage_placement_events(struct pod_events *events, const struct kpod *pod,
                               struct triage_placement *out);

/*
 * triage_fill_facts() - what classify() needs beyond the pod and the nodes, from the store:
 * in->now = now (seconds since the epoch; 0 unknown); for a pod its kubelet rejected
 * (pod_rejected_by_kubelet) with a controller owner, the other pods of that owner (owner_uid)
 * rejected and created in the last hour, or at any time when now is 0 (in->rejected_siblings);
 * for an unbound pod with status.nominatedNodeName, the non-terminal pods being deleted on that
 * node (in->victims: "namespace/name" written into *f, which must outlive the classify() call;
 * at most TRIAGE_MAX_VICTIMS named, in->victims_total counts all). The pod itself (by pointer or
 * uid) is never its own sibling or victim. Both are what the scheduler and the kubelet leave
 * behind: kubernetes/kubernetes pkg/scheduler/framework/preemption (victims deleted, the
 * preemptor nominated) and pkg/kubelet/kubelet.go (a rejected pod stays Failed). Read lock of
 * `s` held; `pod` may be borrowed from it or not. Cost: all pods, for those two kinds of pod
 * only (they exclude each other: one is bound, the other not); nothing for the rest.
 */
void triage_fill_facts(struct store *s, const struct kpod *pod, int64_t now, struct triage_facts *f,
                       struct classify_input *in);

/*
 * triage_dra_view() - a classify.h struct dra_view over the DRA store's lookups (ctx = dra),
 * with `gpu_classes` (borrowed; must outlive the view) as the GPU DeviceClass / driver patterns.
 * Use it with dra_store_read_lock() held (triage_pod() takes it). Pure.
 */
struct dra_view triage_dra_view(struct dra_store *dra, const struct gpu_set *gpu_classes);

/*
 * Where a pod is classified from. `store` is required; everything else may be zero:
 *   dra, dra_classes  the DRA store and its GPU DeviceClass patterns; claims are looked at only
 *                     when both are set and the pod has spec.resourceClaims;
 *   events, provision_window  the autoscalers' Events per pod, and their window; the same
 *                     cache holds the kubelet's Events of bound GPU pods that have not started
 *                     (classify_input.placement, triage_placement_events);
 *   now               seconds since the epoch (0: unknown; no-scheduler is never decided, and
 *                     no autoscaler record goes stale by age);
 *   no_scheduler_grace seconds (0: CLASSIFY_NO_SCHEDULER_GRACE);
 *   usage, usage_ctx  classify()'s usage callback; NULL: the store's sums (store_node_usage).
 *                     The CLI's dry run passes a recorder (cli/usage.h).
 * All borrowed.
 */
struct triage_source {
    struct store *store;
    struct dra_store *dra;
    const struct gpu_set *dra_classes;
    /* the autoscalers' Events per pod (NULL: none) and how long their word holds (seconds; 0:
     * CLASSIFY_PROVISION_WINDOW): classify_input.autoscaler / provision_window */
    struct pod_events *events;
    int64_t provision_window;
    int64_t now;
    int64_t no_scheduler_grace;
    node_usage_fn usage;
    void *usage_ctx;
    /* Kueue's Workloads (NULL: none; cache/workload_store.h): the pod's Workload, owned by the
     * pod or by its controller owner, is classify_input.workload (queue-waiting) */
    struct workload_store *workloads;
    /* the gang objects and their Events (cache/gang_store.h); NULL: gangs are not looked at.
     * A pod with a gang link (kpod.gang) gets classify_input.gang: its group and Event from
     * here, its members counted in `store` (store_for_each_pod_of_gang). */
    struct gang_store *gangs;
};

/* What the ladder reads a pod's Event record for (triage_event_kind). */
enum triage_event_kind {
    TRIAGE_EVENT_NONE,       /* nothing: the Event is not kept */
    TRIAGE_EVENT_AUTOSCALER, /* an autoscaler's verdict on a pending pod (autoscaler_parse) */
    TRIAGE_EVENT_QUOTA, /* a pending pod's claim refused by a ResourceQuota (quota_claim_event) */
    TRIAGE_EVENT_PLACEMENT, /* the kubelet's warning about a bound pod (placement_event_kept) */
};

/*
 * triage_event_kind() - the one rule of which Events the Event cache (cache/pod_events.h) keeps
 * about a pod, in the controller (controller/handlers.c: AUTOSCALER and QUOTA for a pending GPU
 * pod, PLACEMENT for a bound GPU pod not started) and in the one-shot tools
 * (triage_read_pod_events): an autoscaler's verdict (classify/autoscaler.h autoscaler_parse), a
 * claim refused by quota (classify/quota.h quota_claim_event), a kubelet warning the
 * after-placement steps read (classify/placement.h placement_event_kept); else
 * TRIAGE_EVENT_NONE. Pure.
 */
enum triage_event_kind triage_event_kind(const struct kevent *ev);

/*
 * triage_read_pod_events() - for one-shot tools: LIST the Events of namespace `ns` (NULL: every
 * namespace) about the pod with uid `pod_uid` (fieldSelector=involvedObject.uid=...), or, with
 * pod_uid NULL, those of every autoscaler (fieldSelector=source=cluster-autoscaler, then
 * source=karpenter), the quota refusals of claims (type=Warning,reason=
 * FailedResourceClaimCreation) and the kubelets' warnings (source=kubelet,type=Warning, reason
 * FailedCreatePodSandBox, then Failed), and keep in `pe` those triage_event_kind() keeps.
 * Returns K_OK or the LIST's error (err filled): K_EFORBIDDEN where the caller may not list
 * Events, which a caller can take as "no evidence". The records kept before an error stay.
 */
int triage_read_pod_events(struct kube_client *c, struct pod_events *pe, const char *ns,
                           const char *pod_uid, struct kube_error *err);

/* The label Kueue puts on every Workload: the uid of the job object it was made for (the Pod
 * with the pod integration, the Job with batch/v1; kubernetes-sigs/kueue:
 * pkg/controller/constants/constants.go JobUIDLabel, set in jobframework/reconciler.go). */
#define TRIAGE_JOB_UID_LABEL "kueue.x-k8s.io%2Fjob-uid"

/*
 * triage_read_workloads() - for one-shot tools: whether Kueue's API is served (one discovery GET,
 * kube/kueue_api.h; not served: K_OK, nothing read), then LIST its Workloads in namespace `ns`
 * (NULL: every namespace) into `ws`: with `job_uids` (n_uids entries, NULL / empty ones skipped)
 * only those labelled kueue.x-k8s.io/job-uid=<uid> for each (the pod's own Workload: its uid, its
 * controller owner's), else all. Returns K_OK or the error of the GET or LIST (err filled):
 * K_EFORBIDDEN where the caller may not list Workloads, which a caller can take as "no Workload
 * known". Workloads that cannot be read are skipped.
 */
int triage_read_workloads(struct kube_client *c, struct workload_store *ws, const char *ns,
                          const char *const *job_uids, size_t n_uids, struct kube_error *err);

/*
 * triage_gang_facts() - what classify() knows of `pod`'s gang (model/gang.h struct gang_facts):
 * from `gangs` whether its kind is read, its group and the group's newest Event; from `s` (read
 * lock held) the member pods (same namespace and link, this one included) that are not
 * terminal and not being deleted, and of those the gated ones. False (f untouched) when the pod
 * has no link or gangs is NULL. Cost: all pods of `s`, for gang members only.
 */
bool triage_gang_facts(struct store *s, struct gang_store *gangs, const struct kpod *pod,
                       struct gang_facts *f);

/*
 * triage_read_gang() - for one-shot tools (the CLI): what triage_gang_facts() needs for `pod` (a
 * pod with a gang link, kpod.gang; nothing to do without one), read through `c` into `gangs` and
 * `s`: whether the group's kind is served (cache/gang_informers.h gang_api_probe, once per kind:
 * the answer becomes the kind's read flag), the group (GET; 404: absent), the Events about a
 * PodGroup (LIST in its namespace with fieldSelector involvedObject.kind=PodGroup,
 * involvedObject.name=<name>: gang_event_apply; failures are no error, as for the autoscalers'),
 * and with `members` every pod of the namespace into `s` (LIST: the members are counted from the
 * store). A 403 on discovery or the group leaves the kind not read (the ladder then says nothing
 * of the gang) and is no error. `pod` may be borrowed from `s`: it must not be used after the
 * call when `members` is set (the LIST replaces the records); no store lock may be held.
 * Returns K_OK, K_ENOMEM, or the error of the group's GET or the pods' LIST (err filled).
 */
int triage_read_gang(struct kube_client *c, struct store *s, struct gang_store *gangs,
                     const struct kpod *pod, bool members, struct kube_error *err);

/*
 * triage_pod() - run the ladder (classify.h classify) for `pod` over every node of src->store
 * (name order), with the facts of triage_fill_facts() and the DRA view of triage_dra_view() as
 * the source says. out->verdicts as classify(): caller storage for store_node_count() entries,
 * or NULL. Takes and releases the DRA store's read lock around classify(); the object store's
 * read lock must be held, and kept while reading out->closest and the verdicts (they borrow the
 * store's nodes; their DRA fields borrow DRA records, valid only until a DRA writer runs, since
 * the DRA lock is released on return: copy out->detail, as the callers do). Returns
 * K_OK, K_EINVAL for a NULL pod or store, K_ENOMEM. Thread-safe with distinct `out`.
 */
int triage_pod(const struct triage_source *src, const struct kpod *pod,
               struct classify_result *out);

/*
 * triage_is_ours() - whether a classification of `pod` that found `cause` is the controller's
 * and the CLI's to report: every cause but no-request of a pod that requests no GPU resource
 * (kpod.gpu_requests empty), which is pending only for claims that ask for no GPU (not a GPU pod
 * at all). Pure; thread-safe.
 */
bool triage_is_ours(const struct kpod *pod, enum cause cause);

/*
 * triage_claims_ask_gpu() - whether a pod's ResourceClaims ask for a GPU, as far as the pod
 * itself tells without the DRA objects: it has spec.resourceClaims (or, with no GPU resource,
 * extended resources a DeviceClass may serve: model.h pod_has_ext_requests) and carries a
 * gputri/cause annotation (kpod.cause) naming a cause other than no-request, since the controller
 * writes one only for the pods triage_is_ours() accepts. For the metrics of pending GPU pods. Pure.
 */
bool triage_claims_ask_gpu(const struct kpod *pod);

/*
 * triage_ext_served() - whether the pod asks an extended resource that a DeviceClass of `dra`
 * serves now (KEP-5004; dra_store_extended_class), so that DRA objects may change its word.
 * False for a NULL store. `dra` read-locked by the caller. Cost: one lookup per resource.
 */
bool triage_ext_served(const struct kpod *pod, struct dra_store *dra);

/*
 * triage_is_gpu_pod() - a pod that requests a GPU resource, or whose claims ask for one
 * (triage_claims_ask_gpu). Pure; thread-safe.
 */
bool triage_is_gpu_pod(const struct kpod *pod);

#endif
