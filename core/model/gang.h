/*
 * gang.h - gangs: the group a pod belongs to (KAI-Scheduler and Volcano PodGroups, upstream
 * gang scheduling's Workload / PodGroup), the group's projection, and the link between them.
 *
 * Links from pod to group (one per pod; the first found in this order):
 *   upstream 1.36+  spec.schedulingGroup.podGroupName -> PodGroup scheduling.k8s.io (v1alpha2 on
 *                   1.36, v1beta1 on 1.37) in the pod's namespace, spec.schedulingPolicy.gang.
 *                   minCount (kubernetes/kubernetes: staging/src/k8s.io/api/scheduling/)
 *   upstream 1.35   spec.workloadRef{name, podGroup} -> Workload scheduling.k8s.io/v1alpha1,
 *                   spec.podGroups[name = podGroup].policy.gang.minCount
 *   KAI             annotation pod-group-name -> PodGroup scheduling.run.ai/v2alpha2,
 * spec.minMember, spec.subGroups[]{name, minMember}, spec.queue, status.schedulingConditions
 *                   (kai-scheduler/KAI-Scheduler: pkg/apis/scheduling/v2alpha2/podgroup_types.go,
 *                   pkg/common/constants/constants.go)
 *   Volcano         annotation scheduling.k8s.io/group-name or scheduling.volcano.sh/group-name ->
 *                   PodGroup scheduling.volcano.sh/v1beta1, spec.minMember, spec.queue,
 *                   status.phase, status.conditions (volcano-sh/volcano: staging/src/volcano.sh/
 *                   apis/pkg/apis/scheduling/v1beta1/types.go)
 * The projections from JSON are kube/project_gang.h. Strings are bounded (GANG_NAME_MAX,
 * GANG_TEXT_MAX; longer ones cut), numbers clamped to [0, GANG_MAX_MIN], sub-groups counted but at
 * most GANG_MAX_SUBGROUPS kept: a hostile object costs a fixed size.
 */
#ifndef GPUTRI_MODEL_GANG_H
#define GPUTRI_MODEL_GANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gang_kind {
    GANG_NONE = 0,
    GANG_KAI,      /* scheduling.run.ai/v2alpha2 PodGroup */
    GANG_VOLCANO,  /* scheduling.volcano.sh/v1beta1 PodGroup */
    GANG_WORKLOAD, /* scheduling.k8s.io/v1alpha1 Workload (1.35) */
    GANG_PODGROUP, /* scheduling.k8s.io PodGroup (1.36 v1alpha2, 1.37 v1beta1) */
    GANG_KIND_COUNT,
};

#define GANG_NAME_MAX 254     /* a DNS subdomain name and its terminator */
#define GANG_TEXT_MAX 512     /* a reason's message, cut */
#define GANG_MAX_SUBGROUPS 16 /* sub-groups / Workload podGroups kept (the rest counted) */
#define GANG_MAX_MIN 1000000  /* a larger minMember is clamped */

/* The pod's link (struct kpod.gang); owned by the pod. */
struct pod_gang {
    enum gang_kind kind;
    char *name; /* the group: PodGroup or Workload name */
    char *sub;  /* 1.35 workloadRef.podGroup; NULL otherwise */
    /* 1.35 workloadRef.podGroupReplicaKey: the gang policy applies per replica; NULL none */
    char *replica;
};

/* One sub-group (KAI spec.subGroups[], or a 1.35 Workload's spec.podGroups[]). */
struct gang_sub {
    char name[GANG_NAME_MAX];
    int64_t min;
};

/* A group's projection: fixed size, copied by value. */
struct gang_group {
    enum gang_kind kind;
    char ns[GANG_NAME_MAX], name[GANG_NAME_MAX];
    char uid[128];
    int64_t min;               /* minMember / gang.minCount; 0: none */
    bool gang;                 /* upstream: the policy is a gang (not basic) */
    char queue[GANG_NAME_MAX]; /* spec.queue (KAI, Volcano), "" when none */
    char phase[32];            /* Volcano status.phase */
    size_t n_subs;             /* in the object; at most GANG_MAX_SUBGROUPS kept */
    struct gang_sub subs[GANG_MAX_SUBGROUPS];
    /* The queue's own word on the group, when it holds the group back for quota: KAI
     * schedulingConditions[].reasons[].reason NonPreemptibleOverQuota / OverLimit /
     * QueueDoesNotExist with its message; Volcano conditions are not about queues. "" none. */
    char queue_reason[64];
    char queue_message[GANG_TEXT_MAX];
};

/* What the ladder knows of a pod's gang (classify_input.gang; filled by core/triage). */
struct gang_facts {
    /* the kind of the pod's group is read (its API served, the objects listed / fetched): an
     * absent group is then absent; false: nothing is said about the gang */
    bool read;
    bool found; /* `group` holds the pod's group */
    struct gang_group group;
    /* member pods (same namespace, same link), this pod included: not terminal and not being
     * deleted; of those with spec.schedulingGates */
    size_t exist, gated;
    /* the newest Event on the group that is a queue's or a gang's word (gang_event_speaks);
     * "" when none */
    char event_reason[64];
    char event_message[GANG_TEXT_MAX];
};

/*
 * gang_event_speaks() - whether an Event on a group (reason, message) is one gang.h reads: a
 * queue's refusal (gang_event_is_queue) or KAI's NotReady / StaleJob gang message. Pure.
 */
bool gang_event_speaks(const char *reason, const char *message);

/* gang_event_is_queue() - whether the message is a queue's refusal for quota (header). Pure. */
bool gang_event_is_queue(const char *reason, const char *message);

/* gang_kind_name() - "KAI PodGroup", "Volcano PodGroup", "Workload", "PodGroup". Static. */
const char *gang_kind_name(enum gang_kind k);

/*
 * gang_kind_resource() - the kind's API group, version and resource as served, e.g.
 * ("scheduling.run.ai", "v2alpha2", "podgroups"); upstream PodGroup: the version given (one of
 * "v1alpha2", "v1beta1"). False for GANG_NONE. Static strings.
 */
bool gang_kind_api(enum gang_kind k, const char **group, const char **version,
                   const char **resource);

/* gang_kind_of_api_version() - the kind of a group object from its apiVersion and kind (an
 * Event's involvedObject), GANG_NONE when it is no gang kind. Pure. */
enum gang_kind gang_kind_of_api_version(const char *api_version, const char *kind);

/* pod_gang_free() - free what project_pod_gang() allocated (the struct itself too). NULL-safe. */
void pod_gang_free(struct pod_gang *g);
/* pod_gang_equal() - same kind, name, sub and replica. Pure. */
bool pod_gang_equal(const struct pod_gang *a, const struct pod_gang *b);

/* gang_group_sub_min() - the minimum of sub-group `sub` (1.35 Workload podGroups), or -1. */
int64_t gang_group_sub_min(const struct gang_group *g, const char *sub);

#endif
