/*
 * model.h - compact projections of the Kubernetes objects gputri reasons about.
 *
 * These are plain value structs holding only what the classifier and the webhook need, never the
 * raw JSON: a cluster of 150,000 pods and 5,000 nodes must fit in a few hundred MB. They are
 * filled by core/kube/project.c from API JSON and by tests from fixtures.
 *
 * Ownership: every pointer inside a struct is owned by that struct and released by the matching
 * *_cleanup() (pod_cleanup, node_cleanup). Strings are NUL-terminated UTF-8. NULL means "absent".
 * Nothing here is thread-safe; the cache guards records with its own lock.
 */
#ifndef GPUTRI_MODEL_H
#define GPUTRI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/gang.h"

/* One label or one nodeSelector entry. */
struct kv {
    char *key;
    char *value;
};

struct kv_list {
    struct kv *items;
    size_t n;
};

/*
 * One resource amount, as the scheduler counts it: the quantity's Value() rounded up to a whole
 * unit (kubernetes/kubernetes: pkg/scheduler/framework/types.go, Resource.SetMaxResource).
 * GPU resources are always whole numbers (API validation requires it).
 */
struct resource_amount {
    char *name;
    int64_t value;
};

struct resource_list {
    struct resource_amount *items;
    size_t n;
};

/* resource_list_get() - the amount for `name`, 0 when absent. */
int64_t resource_list_get(const struct resource_list *l, const char *name);
/*
 * A list holds at most RESOURCE_LIST_MAX names: lookups are linear, and a real pod or node names a
 * handful of GPU resources, while a hostile object could name tens of thousands.
 */
#define RESOURCE_LIST_MAX 64

/*
 * int64_add_sat() / int64_sub_sat() - a + b and a - b, saturated to [INT64_MIN, INT64_MAX]
 * instead of overflowing. Resource amounts come from API objects (a quantity may be as large as
 * 9223372036854775807), so every sum or difference of them goes through these. Pure, thread-safe.
 */
int64_t int64_add_sat(int64_t a, int64_t b);
int64_t int64_sub_sat(int64_t a, int64_t b);

/*
 * resource_list_add() - add `value` to `name` (inserting it when absent), saturating at
 * INT64_MAX / INT64_MIN (int64_add_sat). A saturated amount has lost information and cannot be
 * taken apart again by subtracting: a caller that must remove contributions later keeps exact
 * sums of its own (the store's per-node usage does, core/cache/store.c). Returns K_OK, K_ETOOBIG
 * when a new name would pass RESOURCE_LIST_MAX, or K_ENOMEM; on an error the list is unchanged.
 * Copies `name`.
 */
int resource_list_add(struct resource_list *l, const char *name, int64_t value);
/* resource_list_cleanup() - free all entries; the list is empty afterwards. */
void resource_list_cleanup(struct resource_list *l);

/* A node taint (kubernetes/api: core/v1/types.go Taint). value may be "" but not NULL. */
struct taint {
    char *key;
    char *value;
    char *effect; /* "NoSchedule", "PreferNoSchedule", "NoExecute" */
};

/* A pod toleration (kubernetes/api: core/v1/types.go Toleration). Empty strings when unset. */
struct toleration {
    char *key;
    char *op; /* "", "Equal" or "Exists" */
    char *value;
    char *effect; /* "" matches every effect */
};

enum selector_op {
    SELECTOR_OP_IN,
    SELECTOR_OP_NOT_IN,
    SELECTOR_OP_EXISTS,
    SELECTOR_OP_DOES_NOT_EXIST,
    SELECTOR_OP_GT,
    SELECTOR_OP_LT,
    SELECTOR_OP_UNKNOWN, /* never matches */
};

/* A NodeSelectorRequirement, for matchExpressions (labels) or matchFields (metadata.name). */
struct selector_requirement {
    char *key;
    enum selector_op op;
    char **values;
    size_t n_values;
};

/* A NodeSelectorTerm: expressions ANDed, fields ANDed, both ANDed. */
struct selector_term {
    struct selector_requirement *exprs;
    size_t n_exprs;
    struct selector_requirement *fields;
    size_t n_fields;
};

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution; terms ORed. */
struct node_affinity {
    bool present; /* false: no required node affinity at all */
    struct selector_term *terms;
    size_t n_terms;
};

enum pod_phase {
    POD_PHASE_UNKNOWN = 0,
    POD_PHASE_PENDING,
    POD_PHASE_RUNNING,
    POD_PHASE_SUCCEEDED,
    POD_PHASE_FAILED,
};

/* The PodScheduled condition; status is 0 when the condition is absent. */
enum cond_status { COND_ABSENT = 0, COND_TRUE, COND_FALSE, COND_UNKNOWN };

struct pod_condition {
    enum cond_status status;
    char *reason;
    char *message;
};

/* cond_status_parse() - a condition's status string as metav1.Condition has it: "True", "False",
 * anything else COND_UNKNOWN, NULL COND_ABSENT. Pure. */
enum cond_status cond_status_parse(const char *s);

struct pod_claim_ref;    /* model/dra.h */
struct pod_claim_status; /* model/dra.h */
struct pod_ext;          /* model/dra.h */
struct pod_containers;   /* model/containers.h */

/*
 * What gputri-controller writes on a pod: its word and the detail, patched as field manager
 * POD_ANNOTATION_MANAGER, so metadata.managedFields tells when (cli/answer.h).
 */
#define POD_ANNOTATION_CAUSE "gputri/cause"
#define POD_ANNOTATION_DETAIL "gputri/detail"
#define POD_ANNOTATION_MANAGER "gputri-controller"

struct kpod {
    char *ns;
    char *name;
    char *uid;
    char *node_name; /* spec.nodeName; NULL when unbound */
    char *scheduler_name;
    char *runtime_class; /* spec.runtimeClassName */
    enum pod_phase phase;
    bool deleting; /* metadata.deletionTimestamp set */
    /* spec.volumes[] has a persistentVolumeClaim or an ephemeral volume: the scheduler binds
     * volumes in PreBind (kubernetes/kubernetes: pkg/scheduler/framework/plugins/volumebinding) */
    bool pvc_volumes;
    /*
     * The effective request of every GPU resource the pod asks for (zero amounts dropped), as
     * the scheduler computes it: max(sum of containers + restartable init containers, the
     * largest init container + sidecars started before it), requests defaulting from limits,
     * plus spec.overhead (kubernetes/component-helpers: resource/helpers.go PodRequests).
     */
    struct resource_list gpu_requests;
    struct kv_list node_selector;
    struct node_affinity affinity;
    struct toleration *tolerations;
    size_t n_tolerations;
    struct pod_condition scheduled; /* PodScheduled */
    char *cause;                    /* annotation POD_ANNOTATION_CAUSE, NULL when absent */
    char *detail;                   /* annotation gputri/detail */
    /* spec.resourceClaims (at most DRA_MAX_POD_CLAIMS, model/dra.h) */
    struct pod_claim_ref *claims;
    size_t n_claims;
    /* status.resourceClaimStatuses: pod claim name -> generated ResourceClaim name */
    struct pod_claim_status *claim_statuses;
    size_t n_claim_statuses;
    /* metadata.creationTimestamp in seconds since the epoch; 0 when absent or unparsable */
    int64_t created;
    /* the uid of the ownerReference with controller: true (a ReplicaSet, Job, ...), or NULL */
    char *owner_uid;
    /* status.reason and status.message, kept only when status.phase is Failed (the kubelet's
     * admission writes e.g. UnexpectedAdmissionError here); NULL otherwise */
    char *failed_reason;
    char *failed_message;
    /* spec.schedulingGates[].name, at most POD_MAX_SCHEDULING_GATES of them; n_scheduling_gates
     * is the number in the object (may be larger) */
    char **scheduling_gates;
    size_t n_scheduling_gates;
    char *nominated_node; /* status.nominatedNodeName, or NULL */
    /* the first resource a container requests that only a vendor's scheduler places
     * (gpu.h gpu_vendor_scheduler; static, not owned), or NULL */
    const char *vendor_resource;
    /* Per container, the extended resources a DeviceClass may serve (KEP-5004), and
     * status.extendedResourceClaimStatus; NULL when the pod has neither (model/dra.h) */
    struct pod_ext *ext;
    /* The gang the pod belongs to (model/gang.h: KAI / Volcano PodGroup, upstream Workload or
     * PodGroup), or NULL */
    struct pod_gang *gang;
    /* Per container, whether it is a GPU container and what the kubelet's status says of it
     * (model/containers.h); NULL when the pod has no containers in its spec. The store keeps it
     * only while a bound GPU pod's GPU containers have not all started (cache/store.h). */
    struct pod_containers *containers;
    /* When not NULL, ns, name, uid, node_name and gpu_requests' entries point into this one owned
     * block (pod_pack_names) instead of owning an allocation each. */
    char *packed;
};

/* model_str_equal() - both NULL, or both strings and equal: how the records of this directory
 * compare their optional strings (a field absent from the API object is NULL). Pure. */
bool model_str_equal(const char *a, const char *b);

/*
 * pod_pack_names() - move ns, name, uid and node_name, and gpu_requests' entries and names, into
 * one allocation (p->packed): a stored pod costs one malloc chunk for them instead of four and
 * two per GPU resource. Fields stay readable as before and pod_cleanup frees the block; a packed
 * pod's gpu_requests must not be grown nor cleaned up on its own (resource_list_add,
 * resource_list_cleanup). On K_ENOMEM the pod is unchanged. Returns K_OK at once when already
 * packed. Not thread-safe on one pod.
 */
int pod_pack_names(struct kpod *p);

/* Scheduling gate names kept per pod (the count of the rest is kept). */
#define POD_MAX_SCHEDULING_GATES 16

struct knode {
    char *name;
    struct kv_list labels;
    struct taint *taints;
    size_t n_taints;
    bool unschedulable; /* spec.unschedulable */
    /* GPU resources only (see gpu.h), from status.capacity and status.allocatable. */
    struct resource_list capacity;
    struct resource_list allocatable;
};

/*
 * pod_equal() - every field of the two projections equal: strings by content (NULL equal only to
 * NULL), lists element by element in order (the same elements in another order count as a
 * change), `packed` aside (where the names live, not what they say). For the store, which skips a
 * write that changes nothing (cache/store.h). Pure; thread-safe.
 */
bool pod_equal(const struct kpod *a, const struct kpod *b);

/*
 * pod_equal_but_scheduled_message() - pod_equal() with the PodScheduled condition's message left
 * out: true when the two versions differ at most in that message. kube-scheduler rewrites it
 * on every failed attempt (the per-reason node counts move as the cluster does:
 * kubernetes/kubernetes: pkg/scheduler/schedule_one.go handleSchedulingFailure), so a pending
 * pod's object changes without anything the ladder's word reads changing. Pure; thread-safe.
 */
bool pod_equal_but_scheduled_message(const struct kpod *a, const struct kpod *b);

/* pod_cleanup() / node_cleanup() - free everything the struct owns and zero it. NULL-safe. */
void pod_cleanup(struct kpod *p);
void node_cleanup(struct knode *n);

/*
 * pod_has_ext_requests() - whether the pod asks for an extended resource that a DeviceClass may
 * serve (kpod.ext has requests, model/dra.h): such a pod may be a GPU pod through DRA even with
 * no GPU resource and no claim (a DRA_EXTENDED_CLASS_PREFIX name). NULL-safe; pure.
 */
bool pod_has_ext_requests(const struct kpod *p);

/* pod_is_terminal() - phase Succeeded or Failed: such pods hold no resources on a node. */
bool pod_is_terminal(const struct kpod *p);

/*
 * pod_rejected_by_kubelet() - whether a bound pod was refused by its node's kubelet at
 * admission: status.phase Failed with a status.reason the kubelet's pod admission writes
 * (UnexpectedAdmissionError, TopologyAffinityError, OutOf<resource>, NodeAffinity, ...; Evicted
 * only with the admission handler's "The node had condition" message). The set of
 * kubernetes/kubernetes: pkg/kubelet/kubelet.go admissionRejectionReasons and
 * pkg/kubelet/lifecycle/predicate.go; pkg/kubelet/eviction. The classifier's node-rejected step
 * (classify/classify.h) and the store's choice of pods to keep (cache/store.h) read it. NULL-safe;
 * pure; thread-safe.
 */
bool pod_rejected_by_kubelet(const struct kpod *pod);

/* kv_list_get() - the value for key, borrowed, or NULL. */
const char *kv_list_get(const struct kv_list *l, const char *key);
void kv_list_cleanup(struct kv_list *l);

/* node_affinity_cleanup() - free the terms and their requirements; zeroes *a. NULL-safe. */
void node_affinity_cleanup(struct node_affinity *a);

/* tolerations_free() - free n tolerations and their strings, then the array. NULL-safe. */
void tolerations_free(struct toleration *t, size_t n);

#endif
