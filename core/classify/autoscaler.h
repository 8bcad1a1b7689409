/*
 * autoscaler.h - what a node autoscaler said about one pod, from one core/v1 Event (model/event.h),
 * as a compact fixed-size record: capacity is coming (a scale-up was triggered, a node claim was
 * nominated) or no node will come (the scale-up was refused or failed), and why, sorted into what
 * to do about it. The ladder (classify.h) turns the newest fresh record into `scaling-up` or
 * `scale-up-blocked`.
 *
 * Pure: no I/O, no clock (callers pass `now`), no globals, no allocation. A record is a plain
 * value (copy it with `=`; nothing to free). Functions are safe to call from several threads on
 * distinct outputs and shared read-only inputs.
 *
 * The writers and the Events read:
 *   Cluster Autoscaler (source.component "cluster-autoscaler", kubernetes/autoscaler:
 *   cluster-autoscaler/utils/kubernetes/factory.go CreateEventRecorder), on the pod:
 *     TriggeredScaleUp   "pod triggered scale-up: [{<group> <cur>-><new> (max: <max>)} ...]"
 *                        (processors/status/eventing_scale_up_processor.go, the list printed by
 *                        processors/nodegroupset ScaleUpInfo.String); before 1.x:
 *                        "pod triggered scale-up, group: <group>, sizes (current/new): <c>/<n>"
 *     NotTriggerScaleUp  "pod didn't trigger scale-up: <n> <reason>, <n> <reason>, ..." with the
 *                        reasons of core/scaleup/orchestrator skippedreasons.go and
 *                        rejectedreasons.go and the scheduler's filter reasons on each group's
 *                        template node, joined in the random order of a Go map; or "... scale-up:
 *                        max total nodes in cluster reached"; before: "pod didn't trigger
 *                        scale-up (it wouldn't fit if a new node is added)[: <reasons>]"
 *   GKE's Cluster Autoscaler (same source), on the pod:
 *     FailedScaleUp      "Node scale up in zones <z, ...> associated with this pod failed:
 *                        <r, ...>. Pod is at risk of not being scheduled." cut at 250 bytes
 *                        (GoogleCloudPlatform/cluster-autoscaler:
 *                        pkg/visibility/events/failed_scale_up_event_logger.go)
 *   Karpenter (source.component "karpenter", sigs.k8s.io/karpenter: pkg/operator/operator.go),
 *   on the pod (pkg/controllers/provisioning/scheduling/events.go):
 *     Nominated          "Pod should schedule on: nodeclaim/<nc>[, node/<node>]" (or node/ alone)
 *     FailedScheduling   "Failed to schedule pod, <error>" (one error per NodePool joined with
 *                        "; "; before v1.5 each prefixed `incompatible with nodepool "<np>",
 *                        daemonset overhead={...}, `; EKS Auto Mode appends " (NodePool=<np>)")
 *     InsufficientCapacityError (v1.15+) "NodeClaim <nc> nominated for this pod failed to launch:
 *                        <error>" (pkg/controllers/nodeclaim/lifecycle/events.go)
 * The client-go correlator may prefix any message with "(combined from similar events): "
 * (k8s.io/client-go: tools/record/events_cache.go); it is removed.
 *
 * Everything in an Event is untrusted: anyone who may create Events in the pod's namespace can
 * write one with these sources and reasons. Callers match an Event to a pod by namespace AND uid,
 * and keep only Events whose own namespace is the pod's (cache/pod_events.h: the API server lets
 * an Event with an eventTime name an object of another namespace). Parsing
 * reads at most the message's KEVENT_MESSAGE_MAX bytes, each loop is bounded by them, and every
 * text kept is a bounded, valid UTF-8 copy.
 */
#ifndef GPUTRI_CLASSIFY_AUTOSCALER_H
#define GPUTRI_CLASSIFY_AUTOSCALER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/line.h"
#include "model/event.h"

enum autoscaler_writer {
    AUTOSCALER_NONE = 0,
    AUTOSCALER_CA,       /* Cluster Autoscaler */
    AUTOSCALER_GKE,      /* GKE's Cluster Autoscaler: FailedScaleUp, or a group that is a MIG URL */
    AUTOSCALER_KARPENTER /* Karpenter */
};

enum autoscaler_kind {
    AUTOSCALER_KIND_NONE = 0,
    AUTOSCALER_TRIGGERED, /* CA TriggeredScaleUp: node groups are being grown for the pod */
    AUTOSCALER_NOMINATED, /* Karpenter Nominated: a NodeClaim (or a node) is meant for the pod */
    AUTOSCALER_REFUSED,   /* CA NotTriggerScaleUp, Karpenter FailedScheduling: no node will come */
    AUTOSCALER_FAILED,    /* GKE FailedScaleUp, Karpenter InsufficientCapacityError: a scale-up
                             for the pod was tried and the cloud failed it */
};

/*
 * The Events read, one entry each: the writer's source.component, the reason, the type the writer
 * gives it ("Normal" or "Warning"), and what it is evidence of. AUTOSCALER_EVENT_KINDS entries.
 */
struct autoscaler_event_kind {
    const char *component, *reason, *type;
    enum autoscaler_writer writer;
    enum autoscaler_kind kind;
};
#define AUTOSCALER_EVENT_KINDS 6
extern const struct autoscaler_event_kind autoscaler_event_kinds[AUTOSCALER_EVENT_KINDS];

/*
 * Reason categories, one bit each, by what the user does about them. The detail names the action.
 *   AT_MAX    a node group at its max size, the cluster at --max-nodes-total, the autoscaler's
 *             resource limits (--cores-total/--memory-total/--gpu-total, CA 1.35+ quotas), a
 *             NodePool's spec.limits: raise the max size or the limit
 *   QUOTA     the cloud's quota (GCE quota exceeded; a launch error naming a quota): request quota
 *   CAPACITY  the cloud has no capacity (GCE out of resources, a full reservation, Karpenter's
 *             insufficient capacity or no available offering): another zone, type or reservation
 *   TEMPLATE  no node group template / instance type offers the resource or fits the pod's
 *             selector, affinity or tolerations: fix the template's tags / the NodePool
 *   DRA       the pod has resource claims, which Karpenter does not provision for
 *             (--ignore-dra-requests, the default)
 *   BACKOFF   a node group is in backoff after a failed scale-up (the cause is in CA's status
 *             ConfigMap kube-system/cluster-autoscaler-status)
 *   OTHER     anything else, kept verbatim
 */
#define AUTOSCALER_CAT_AT_MAX 0x01u
#define AUTOSCALER_CAT_QUOTA 0x02u
#define AUTOSCALER_CAT_CAPACITY 0x04u
#define AUTOSCALER_CAT_TEMPLATE 0x08u
#define AUTOSCALER_CAT_DRA 0x10u
#define AUTOSCALER_CAT_BACKOFF 0x20u
#define AUTOSCALER_CAT_OTHER 0x40u
#define AUTOSCALER_CAT_ALL 0x7fu

/* Which known reason an item is; the detail words each (autoscaler.c). */
enum autoscaler_reason {
    AUTOSCALER_R_OTHER = 0,
    AUTOSCALER_R_GROUP_MAX,         /* "max node group size reached" */
    AUTOSCALER_R_CLUSTER_NODES_MAX, /* "max total nodes in cluster reached" */
    AUTOSCALER_R_RESOURCE_LIMIT,    /* "max cluster <res> limit reached", "exceeded quota: ..." */
    AUTOSCALER_R_BACKOFF,           /* "in backoff after failed scale-up" */
    AUTOSCALER_R_INSUFFICIENT,      /* "Insufficient <res>" on a group's template; text: <res> */
    AUTOSCALER_R_SELECTOR,          /* the template does not match the pod's node selection */
    AUTOSCALER_R_TAINT,             /* the template / NodePool has a taint the pod does not
                                       tolerate; text: the taint when given */
    AUTOSCALER_R_CLAIMS,            /* the template cannot allocate the pod's claims (DRA) */
    AUTOSCALER_R_WOULDNT_FIT,       /* old CA: "it wouldn't fit if a new node is added" */
    AUTOSCALER_R_CLOUD_QUOTA,       /* "GCE quota exceeded" */
    AUTOSCALER_R_STOCKOUT,          /* "GCE out of resources" */
    AUTOSCALER_R_NODEPOOL_LIMITS,   /* "all available instance types exceed limits for nodepool",
                                       "node limits have been exhausted for nodepool" */
    AUTOSCALER_R_NO_INSTANCE_TYPE,  /* "no instance type ...", "nodepool requirements filtered
                                       out all available instance types", "incompatible
                                       requirements, ..."; text: the error (its head when it
                                       lists requirements= and resources=) */
    AUTOSCALER_R_DRA_UNSUPPORTED,   /* "pod has Dynamic Resource Allocation requirements that are
                                       not yet supported by Karpenter" */
    AUTOSCALER_R_LAUNCH_FAILED,     /* Karpenter InsufficientCapacityError; text: the error */
};

/* Sizes of the record's fixed buffers, terminator included. */
#define AUTOSCALER_NAME_MAX 64
#define AUTOSCALER_TEXT_MAX 120
#define AUTOSCALER_GROUPS_MAX 3
#define AUTOSCALER_ITEMS_MAX 6
/* The most autoscaler_detail() writes for one record (it never writes more). */
#define AUTOSCALER_DETAIL_MAX 768

/* One node group of a triggered scale-up, as the message gives it. */
struct autoscaler_group {
    char id[AUTOSCALER_NAME_MAX]; /* NodeGroup.Id(); for a URL (GCE MIGs) its last segment */
    bool cut;                     /* id was longer than its buffer */
    int32_t current, target, max; /* sizes, -1 when the message does not give one */
};

/* One reason of a refusal or failure. */
struct autoscaler_item {
    uint8_t category;               /* one AUTOSCALER_CAT_* bit */
    uint8_t reason;                 /* enum autoscaler_reason */
    bool cut;                       /* text was longer than its buffer */
    uint16_t parts;                 /* how many reasons of the message this item stands for */
    uint32_t count;                 /* CA: the node groups that gave it (saturating); else parts */
    char text[AUTOSCALER_TEXT_MAX]; /* the autoscaler's words (see enum autoscaler_reason) */
};

struct autoscaler_evidence {
    enum autoscaler_writer writer;
    enum autoscaler_kind kind;
    /*
     * When the autoscaler said it last, in seconds since the epoch: lastTimestamp, else
     * series.lastObservedTime, else eventTime, else firstTimestamp (the legacy recorder sets
     * first/lastTimestamp and updates lastTimestamp on every repeat; events.k8s.io writers set
     * eventTime and series); 0 when the Event has none of them.
     */
    int64_t at;
    int32_t count; /* how many times (count, else series.count; at least 1) */
    /* AUTOSCALER_CAT_* of every reason of the message, kept in items[] or not */
    uint32_t categories;
    uint16_t n_groups;    /* TRIGGERED: groups kept in groups[] */
    uint16_t groups_seen; /* TRIGGERED: groups in the message */
    uint16_t n_items;     /* REFUSED, FAILED: items kept */
    uint16_t parts_seen;  /* REFUSED, FAILED: reasons in the message */
    /*
     * NOMINATED, Karpenter FAILED: the NodeClaim's name; Karpenter REFUSED: a NodePool when the
     * message names one (old and EKS formats); GKE FAILED: the zones; else "".
     */
    char name[AUTOSCALER_NAME_MAX];
    char node[AUTOSCALER_NAME_MAX]; /* NOMINATED: the node, when the message names one */
    bool name_cut, node_cut;
    struct autoscaler_group groups[AUTOSCALER_GROUPS_MAX];
    /*
     * Sorted by (category bit, reason, text): the record does not depend on the order the
     * message gives its reasons in; when there are more distinct reasons than fit, the first
     * AUTOSCALER_ITEMS_MAX in that order are kept, each with all its counts.
     */
    struct autoscaler_item items[AUTOSCALER_ITEMS_MAX];
};

/*
 * autoscaler_parse() - the evidence in one Event. Returns true and fills *out when `ev` is about
 * a Pod (involvedObject.kind "Pod") and its writer (source.component, else reportingComponent)
 * and reason are an entry of autoscaler_event_kinds (the type is not checked); else false with
 * *out zeroed (kind AUTOSCALER_KIND_NONE). The reason decides the kind; a
 * message of an unknown shape gives the kind with no groups, or one AUTOSCALER_CAT_OTHER item
 * holding the message. *out is fully written (zeroed first), so equal inputs give byte-equal
 * records. Reads ev's strings only up to their buffers' sizes.
 */
bool autoscaler_parse(const struct kevent *ev, struct autoscaler_evidence *out);

/* autoscaler_blocking() - whether a kind says no node will come (REFUSED or FAILED). */
bool autoscaler_blocking(enum autoscaler_kind kind);

/*
 * autoscaler_detail() - append to `l` one line for the record, such as
 *   "Cluster Autoscaler did not scale up (2m ago, 14 times): 1 node group at its max size (raise
 *   the max size or the autoscaler's limits); 2 node groups whose template lacks nvidia.com/gpu
 *   (give the node group template the resource ...)"
 *   "Cluster Autoscaler is adding nodes (40s ago): gpu-pool 0->1 (max: 4)"
 *   "Karpenter is launching nodeclaim gpu-x7k2p for the pod (30s ago)"
 * quoting the autoscaler's text where it helps. `now` (seconds since the epoch) gives the age;
 * now <= 0 or a record without a time leaves it out. Appends at most AUTOSCALER_DETAIL_MAX bytes
 * (fewer when `l` is fuller) through line_printf; the caller line_finish()es. A record of kind
 * NONE writes nothing.
 */
void autoscaler_detail(const struct autoscaler_evidence *e, int64_t now, struct line *l);

/*
 * autoscaler_cmp() - order two records of one pod by relevance: > 0 when `a` is the newer
 * evidence, < 0 when `b` is, 0 when neither. A record of kind NONE is older than any other;
 * then the later `at` wins; at the same second a blocking record (REFUSED, FAILED) beats a
 * TRIGGERED or NOMINATED one, because a report that a scale-up failed follows the trigger it is
 * about (GKE's FailedScaleUp after TriggeredScaleUp, Karpenter's InsufficientCapacityError after
 * Nominated), while a trigger after a refusal needs a second autoscaler loop (10 s apart by
 * default); between two blocking or two non-blocking records, the higher count wins.
 */
int autoscaler_cmp(const struct autoscaler_evidence *a, const struct autoscaler_evidence *b);

/* Clock skew tolerated between the autoscaler's clock and the caller's, in seconds. */
#define AUTOSCALER_CLOCK_SKEW 300

/*
 * autoscaler_stale() - whether a record is to be ignored. True for kind NONE or no time (at 0).
 * With now > 0 (seconds since the epoch) also when older than `window` seconds (the
 * autoscaler's provisioning window: Cluster Autoscaler's --max-node-provision-time, 15 minutes by
 * default; window <= 0: no limit) or more than AUTOSCALER_CLOCK_SKEW seconds in the future (a
 * wrong clock or a forged Event, which would else win autoscaler_cmp for ever). With
 * scheduled_at > 0 (the pod's PodScheduled lastTransitionTime) also when at < scheduled_at: the
 * evidence predates the pod's current scheduling state. The autoscalers repeat their verdict
 * while it holds (CA every loop, aggregated into lastTimestamp; Karpenter's FailedScheduling
 * every 5 minutes, Nominated every 2), so live evidence stays within the window.
 */
bool autoscaler_stale(const struct autoscaler_evidence *e, int64_t now, int64_t window,
                      int64_t scheduled_at);

/*
 * autoscaler_pick() - the index of the newest (autoscaler_cmp) record among ev[0..n) that is not
 * stale (autoscaler_stale with the same arguments), the first of equals; n when there is none.
 */
size_t autoscaler_pick(const struct autoscaler_evidence *ev, size_t n, int64_t now, int64_t window,
                       int64_t scheduled_at);

#endif
