/*
 * requeue.h - which pending pods a change of the caches can give another word: the controller
 * re-checks only those instead of every pending GPU pod (the targeted re-check policy).
 *
 * kube-scheduler solves the same problem with queueing hints: each plugin registers the events
 * that can make a pod it rejected schedulable (EventsToRegister) and a QueueingHintFn that
 * compares the object before and after the event and answers Queue or QueueSkip
 * (kubernetes/kubernetes: pkg/scheduler/backend/queue/scheduling_queue.go isPodWorthRequeuing;
 * pkg/scheduler/framework/plugins/noderesources/fit.go isSchedulableAfterPodEvent (a pod
 * deleted or scaled down frees what the pod requests) and isSchedulableAfterNodeChange (the
 * modified node fits where the original did not); tainttoleration/taint_toleration.go,
 * nodeaffinity/node_affinity.go and nodeunschedulable/node_unschedulable.go
 * isSchedulableAfterNodeChange (the pod tolerates, selects, may use the modified node and did
 * not the original)). The scheduler only needs to know when a pod may become schedulable;
 * gputri's word must also follow a pod getting further from running (a GPU taken from the node
 * where it fitted turns gpu-fits into exhausted), so the rule here looks both ways.
 *
 * The rule. A pending pod's word on the per-node ladder (label-mismatch .. gpu-fits, classify.h)
 * is the step of its closest candidate, where closeness is node_verdict_cmp's key: first
 * whether the node lists every requested resource (full_capacity), then the step's rank. A store
 * change touches one node N (store.h struct store_delta), so only N's key for the pod moves.
 * From the pod, N before the change (the replaced node, or the usage sums before) and N after,
 * classify_node() gives both keys; with `lo` = (no full capacity, rank of the recorded word), a
 * lower bound of the closest node's key:
 *   - unchanged key: the word stands;
 *   - the key rose: the word changes only when N now beats the closest node with another step:
 *     new key > lo and the new step is not the word;
 *   - the key fell: the word changes only when N may have been the closest node: old key >= lo.
 * The words before node selection (no-request, ok, node-rejected, scheduling-gated, preempting,
 * binding-failed, binding, no-scheduler, dra-template-missing, dra-claim-missing,
 * dra-class-missing) read no node and no usage, so node and usage changes never touch them,
 * except a change on the nominated node of a pod that is preempting or binding (the pods
 * terminating there tell the two apart). A pod with claims (DRA) also has a DRA
 * step per node, which can only lower the key and depends on the node's labels (slices'
 * nodeSelectors, an allocated claim's nodeSelector): its keys from classify_node() are upper
 * bounds, so it is re-checked when either bound reaches lo, and whenever N's labels changed
 * and N is a candidate before or after.
 *
 * When in doubt the answer is to re-check: a missed re-check leaves a wrong annotation, which is
 * worse than the CPU of a classification. No record (never classified, or being classified
 * now), a record for another uid, an incomplete change description (overflow) or an unknown
 * word: re-check.
 *
 * The record must be the verdict of a classification that saw every change judged after it was
 * written; the controller keeps that true by invalidating the record before a classification
 * reads the caches and by judging each change, under one lock, right after it is applied
 * (controller/handlers.c).
 */
#ifndef GPUTRI_CORE_REQUEUE_H
#define GPUTRI_CORE_REQUEUE_H

#include <stdbool.h>

#include "cache/dra_store.h"
#include "cache/store.h"
#include "classify/classify.h"
#include "model/model.h"

/* What the last classification of a pod left for the policy. */
struct requeue_record {
    bool valid;      /* false: never classified, or a classification is running: re-check */
    enum cause word; /* the per-node ladder's verdict (classify_result.ladder_cause; not
                        necessarily what was written) */
    /* an autoscaler's word replaced it (scaling-up, scale-up-blocked): a node that joins or
     * changes can change that, so every node change re-checks the pod; usage cannot */
    bool autoscaler;
    char uid[64]; /* the uid of the pod classified */
};

/*
 * requeue_after_store_change() - whether pending pod `pod` must be classified again after the
 * store change `d` (store.h, filled by a *_delta writer), given its record `rec` (NULL: none).
 * `now_node` is d->node as the store holds it now (NULL: gone, or no node change); `usage` /
 * `usage_ctx` the store's sums now (store_node_usage); the sums before are d->usage[].before.
 * A change without usage or node bits (STORE_CHANGED_POD only) is never one for other pods:
 * false. Pure apart from calling `usage`; thread-safe on read-only input (the caller holds the
 * store's read lock). Cost: two classify_node() calls.
 */
bool requeue_after_store_change(const struct kpod *pod, const struct requeue_record *rec,
                                const struct store_delta *d, const struct knode *now_node,
                                node_usage_fn usage, void *usage_ctx);

/*
 * requeue_store_change_reaches() - false when store change `d` cannot reach pod `pod` whatever
 * its record: a change without usage or node bits, or a change of GPU usage alone (no node bits,
 * complete) that moves no resource step of the pod on that node: the pod requests none of the
 * resources whose sums moved (the ladder reads a node's usage only for the resources requested;
 * noderesources/fit.go isSchedulableAfterPodEvent likewise), or for each of them
 * node_resource_step() on `now_node` (d->node as the store holds it; NULL: gone, no candidate)
 * is the same with the sum before and after. A cheap filter before the record is looked up:
 * true means "ask requeue_after_store_change()". Pure; thread-safe.
 */
bool requeue_store_change_reaches(const struct kpod *pod, const struct store_delta *d,
                                  const struct knode *now_node);

/*
 * requeue_after_own_change() - whether the pod with uid `uid` (NULL: unknown) must be classified
 * again after a write of its own object described by `d` (a *_delta writer's STORE_CHANGED_POD),
 * given its record `rec` (NULL: none). Always, except when the only change is the PodScheduled
 * condition's message (STORE_DELTA_POD_SCHEDULED_MESSAGE) and the record is valid for this uid: no
 * word reads that message (only gpu-fits quotes it in its detail, which the controller writes with
 * the word and never alone), and kube-scheduler rewrites it on every retry, so every freed or
 * taken GPU would otherwise come back as one high-priority re-check per pending pod. A record
 * of binding or binding-failed always re-checks: binding-failed reads the scheduler's binding
 * error in that message (classify/binding.h). Pure; thread-safe.
 */
bool requeue_after_own_change(const char *uid, const struct requeue_record *rec,
                              const struct store_delta *d);

/*
 * A DRA event as the controller's handler sees it: the object's kind and namespace/name (NULL
 * when it has none), whether it is a ResourceClaim that holds devices in the cached or the new
 * version (status.allocation), and whether it could not be applied (the object was dropped
 * instead: anything may have changed).
 */
struct requeue_dra_change {
    enum dra_kind kind;
    const char *ns, *name;
    bool holds_devices;
    bool unreadable;
};

/*
 * requeue_after_dra_event() - whether pending pod `pod` must be classified again after DRA
 * event `ev`, given its record `rec` (NULL: none). A pod without claims and without extended
 * resources a DeviceClass serves (triage.h triage_ext_served, or its recorded word is a per-node
 * DRA word: one served them then): never. Otherwise, by
 * what the event can change (kubernetes/kubernetes: pkg/scheduler/framework/plugins/
 * dynamicresources/dynamicresources.go EventsToRegister and isSchedulableAfterClaimChange,
 * isSchedulableAfterResourceSliceChange, which likewise queue a pod for its own claims and for
 * new devices):
 *   - an event that could not be applied: always;
 *   - a ResourceClaim that holds no devices before or after: the pods that use it (by
 *     resourceClaimName or status.resourceClaimStatuses), as it takes and frees nothing (such
 *     claims are what kube-controller-manager creates for every pod made from a template);
 *   - a ResourceClaimTemplate: the pods that name it;
 *   - a DeviceClass (its selectors, or whether it exists): the pods whose claims may name it (a
 *     claim or template not cached counts as naming it);
 *   - a DeviceClass, for a pod asking extended resources: always (the class may start or stop
 *     serving them, KEP-5004);
 *   - a ResourceSlice, a DeviceTaintRule, or a claim that holds devices (devices appear,
 *     vanish, are tainted, taken or freed): the claim's users, and the pods whose recorded word
 *     reads devices (a step of the per-node ladder: requeue_word_reads_nodes()) or that have no
 *     record; the words before node selection (dra-*-missing, scheduling-gated, preempting,
 *     no-scheduler, no-request) read no device.
 * `dra` is the DRA store, its read lock held by the caller (lock order: the object store, then
 * the DRA store). Thread-safe on read-only input.
 */
bool requeue_after_dra_event(const struct kpod *pod, const struct requeue_record *rec,
                             const struct requeue_dra_change *ev, struct dra_store *dra);

/*
 * requeue_word_reads_nodes() - whether `word` is a step of the per-node ladder (label-mismatch,
 * taint, no-gpu-node, allocatable-zero, exhausted, dra-no-driver, dra-no-match, dra-tainted,
 * dra-exhausted, gpu-fits): what nodes, usage and devices can change. Pure.
 */
bool requeue_word_reads_nodes(enum cause word);

#endif
