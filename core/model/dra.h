/*
 * dra.h - compact records of the Dynamic Resource Allocation objects (resource.k8s.io/v1) that
 * decide whether a GPU pod's claims can be allocated: DeviceClass, ResourceSlice, ResourceClaim,
 * ResourceClaimTemplate, and the pod's own spec.resourceClaims / status.resourceClaimStatuses.
 *
 * Field names and limits follow kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1/types.go
 * (1.34; device taints, tolerations, DeviceTaintRule, shared counters and consumable capacity
 * from 1.37). Only what the classifier needs is kept: no configs, no opaque parameters.
 * core/kube/project_dra.c fills these from API JSON and rejects objects above the API's own limits
 * (DRA_MAX_* below), so every list here is bounded by them.
 *
 * Ownership as in model.h: each record owns every pointer inside it and is released by its
 * *_cleanup() (NULL-safe, leaves the record zeroed). Strings are NUL-terminated UTF-8; NULL means
 * absent. Records are plain values: not thread-safe to modify, safe to share read-only.
 */
#ifndef GPUTRI_MODEL_DRA_H
#define GPUTRI_MODEL_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* ---- limits (types.go; "ours" where the API sets none) ------------------------------------ */
#define DRA_MAX_DEVICES_PER_SLICE 128 /* ResourceSliceMaxDevices */
#define DRA_MAX_ATTRS_PER_DEVICE 32   /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define DRA_MAX_REQUESTS 32           /* DeviceRequestsMaxSize */
#define DRA_MAX_SELECTORS 32          /* DeviceSelectorsMaxSize (class and request) */
#define DRA_MAX_FIRST_AVAILABLE 8     /* FirstAvailableDeviceRequestMaxSize */
#define DRA_MAX_CONSTRAINTS 32        /* DeviceConstraintsMaxSize */
#define DRA_MAX_RESULTS 32            /* AllocationResultsMaxSize */
#define DRA_MAX_RESERVED_FOR 256      /* ResourceClaimReservedForMaxSize */
#define DRA_MAX_POD_CLAIMS 32         /* ours: the API sets no count on pod.spec.resourceClaims */
#define DRA_MAX_SELECTOR_TERMS 32     /* ours: node selector terms of a slice or an allocation */
#define DRA_MAX_ALL_COUNT 128         /* ours: a request count above this reads as this */
#define DRA_MAX_BINDING_CONDITIONS 4  /* BindingConditionsMaxSize (and ...FailureConditions...) */
#define DRA_MAX_DEVICE_CONDITIONS 8   /* AllocatedDeviceStatusMaxConditions */
/* ours: status.devices[] entries kept per claim (the API bounds them by the allocated devices,
 * AllocationResultsMaxSize, each possibly shared: shareID) */
#define DRA_MAX_DEVICE_STATUSES 128
/* Partitionable devices (KEP-4815) and consumable capacity (KEP-5075), 1.37 types.go */
#define DRA_MAX_COUNTER_SETS 8       /* ResourceSliceMaxCounterSets */
#define DRA_MAX_COUNTERS_PER_SET 32  /* ResourceSliceMaxCountersPerCounterSet */
#define DRA_MAX_CONSUMES 2           /* ResourceSliceMaxDeviceCounterConsumptionsPerDevice */
#define DRA_MAX_VALID_VALUES 10      /* CapacityRequestPolicy.validValues */
#define DRA_MAX_CAPACITY_REQUESTS 32 /* ours: capacity.requests / consumedCapacity entries */
/* Device taints and tolerations (KEP-5055), 1.37 types.go */
#define DRA_MAX_TAINTS 16      /* DeviceTaintsMaxLength */
#define DRA_MAX_TOLERATIONS 16 /* DeviceTolerationsMaxLength */

/* ---- device taints and tolerations (KEP-5055; types.go DeviceTaint, DeviceToleration) ------ */
/* A taint's effect. Consumers treat unknown effects like None (types.go DeviceTaintEffect). */
enum dra_taint_effect {
    DRA_EFFECT_UNKNOWN = 0, /* a value not modelled (a future effect): never blocks */
    DRA_EFFECT_NONE,        /* "None": informational */
    DRA_EFFECT_NO_SCHEDULE, /* "NoSchedule" */
    DRA_EFFECT_NO_EXECUTE,  /* "NoExecute" */
};

/* devices[].taints[] of a ResourceSlice, or spec.taint of a DeviceTaintRule. */
struct dra_taint {
    char *key;
    char *value; /* NULL: empty */
    enum dra_taint_effect effect;
    char *time_added; /* RFC 3339 as served, or NULL */
};

enum dra_toleration_op {
    DRA_TOL_EQUAL = 0, /* "Equal" or empty (the default) */
    DRA_TOL_EXISTS,    /* "Exists" */
    DRA_TOL_OTHER,     /* anything else: tolerates nothing */
};

/* exactly.tolerations[] / firstAvailable[].tolerations[] of a request. */
struct dra_toleration {
    char *key; /* NULL: every key (operator Exists) */
    enum dra_toleration_op op;
    char *value;                  /* NULL: empty */
    bool any_effect;              /* effect empty: every effect */
    enum dra_taint_effect effect; /* when !any_effect; DRA_EFFECT_UNKNOWN for a value not
                                     modelled, which then matches no taint that blocks */
};

/* DeviceTaintRule (cluster-scoped): spec.deviceSelector and spec.taint. */
struct dra_taint_rule {
    char *name;
    bool has_selector; /* spec.deviceSelector set: without it the rule selects no device */
    char *driver, *pool, *device; /* the selector's fields; NULL: any */
    struct dra_taint taint;
};

/* ---- DeviceClass (cluster-scoped) --------------------------------------------------------- */
struct dra_class {
    char *name;
    char **selectors; /* spec.selectors[].cel.expression, in order */
    size_t n_selectors;
    /*
     * The driver the class selects, when one of its selectors is literally
     * `device.driver == '<x>'` (either quote, spaces allowed, either operand order); NULL
     * otherwise. Used to match --gpu-device-classes and to find the driver's slices.
     */
    char *driver;
    /*
     * spec.extendedResourceName (KEP-5004, DRAExtendedResource: beta and on in 1.36, GA in 1.37;
     * the API server drops the field while the gate is off), or NULL: the extended resource
     * (e.g. "nvidia.com/gpu") this class serves to pods that ask for it in
     * containers[].resources on nodes whose allocatable lacks it. Every class also serves its
     * implicit name DRA_EXTENDED_CLASS_PREFIX "<class name>".
     */
    char *extended_resource_name;
    /* metadata.creationTimestamp in seconds since the epoch (0 when absent): of two classes
     * naming one extended resource the older serves it (dra_extended_class_wins). */
    int64_t created;
};

/* The prefix of a DeviceClass's implicit extended resource name (k8s.io/api resource/v1
 * ResourceDeviceClassPrefix). */
#define DRA_EXTENDED_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"

/* The annotation the scheduler puts on the claim it creates for a pod's extended resources
 * served by DRA (k8s.io/api resource/v1 ExtendedResourceClaimAnnotation). */
#define DRA_EXTENDED_CLAIM_ANNOTATION "resource.kubernetes.io/extended-resource-claim"

/* ---- ResourceSlice (cluster-scoped) ------------------------------------------------------- */
enum dra_attr_kind {
    DRA_ATTR_BOOL,
    DRA_ATTR_INT,
    DRA_ATTR_STRING,
    DRA_ATTR_VERSION,
    DRA_ATTR_OTHER, /* a value of a form not modelled (a future type): CEL lookups are UNKNOWN */
};

/* One device attribute; the name is fully qualified ("<domain>/<name>"): a name without a
 * domain is filed under the slice's driver, as the CEL environment does (cel/compile.go). */
struct dra_attribute {
    char *name;
    enum dra_attr_kind kind;
    bool b;
    int64_t i;
    char *s; /* DRA_ATTR_STRING and DRA_ATTR_VERSION */
};

/* One device capacity: the quantity as the API serialised it (capacity.<name>.value); the
 * classifier converts it with cel_quantity_milli() when a selector reads it. */
struct dra_capacity {
    char *name; /* fully qualified like attributes */
    char *value;
    /* requestPolicy (consumable capacity, KEP-5075; absent before 1.34 or with the gate off):
     * has_policy when set; each quantity NULL when absent. */
    bool has_policy;
    char *policy_default;
    char **valid_values; /* ascending (API validation) */
    size_t n_valid_values;
    char *range_min, *range_max, *range_step; /* validRange (range_min set when present) */
};

/* A named quantity as the API serialised it: a counter, a capacity request, a consumed
 * capacity. `name` as written (capacity names may lack the driver's domain). */
struct dra_quantity {
    char *name;
    char *value;
};

/* spec.sharedCounters[] of a ResourceSlice (KEP-4815): counters{<name>: {value}}. */
struct dra_counter_set {
    char *name;
    struct dra_quantity *counters;
    size_t n_counters;
};

/* devices[].consumesCounters[]: what the device draws from a counter set of its pool. */
struct dra_counter_use {
    char *counter_set;
    struct dra_quantity *counters;
    size_t n_counters;
};

/*
 * Binding conditions of a device (KEP-5007, gate DRADeviceBindingConditions; types.go Device
 * bindsToNode, bindingConditions, bindingFailureConditions), and the allocation result's copy of
 * them (DeviceRequestAllocationResult): the scheduler's PreBind waits until every condition type
 * in `conditions` is True in the claim's status.devices[] entry for the device, and gives up when
 * one in `failure_conditions` is True (kubernetes/kubernetes: pkg/scheduler/framework/plugins/
 * dynamicresources/dynamicresources.go isClaimReadyForBinding). Read by
 * core/kube/project_dra_binding.c.
 */
struct dra_binding {
    bool binds_to_node;
    char *conditions[DRA_MAX_BINDING_CONDITIONS];
    size_t n_conditions;
    char *failure_conditions[DRA_MAX_BINDING_CONDITIONS];
    size_t n_failure_conditions;
};

struct dra_device {
    char *name;
    struct dra_attribute *attrs;
    size_t n_attrs;
    struct dra_capacity *caps;
    size_t n_caps;
    struct dra_binding binding;
    struct dra_counter_use *consumes; /* consumesCounters[] */
    size_t n_consumes;
    bool allow_multiple;      /* allowMultipleAllocations: true (KEP-5075) */
    struct dra_taint *taints; /* devices[].taints[] as the driver published them */
    size_t n_taints;
};

struct dra_slice {
    char *name;
    char *driver;
    char *pool;                 /* spec.pool.name */
    int64_t generation;         /* spec.pool.generation */
    int64_t slice_count;        /* spec.pool.resourceSliceCount */
    char *node_name;            /* spec.nodeName, or NULL */
    bool all_nodes;             /* spec.allNodes */
    struct node_affinity nodes; /* spec.nodeSelector (present=true when set); terms ORed */
    /* spec.perDeviceNodeSelection: not modelled; such a slice reaches no node here */
    bool per_device_nodes;
    struct dra_device *devices;
    size_t n_devices;
    /* spec.sharedCounters[] (from 1.35 in a slice of its own, without devices) */
    struct dra_counter_set *counter_sets;
    size_t n_counter_sets;
};

/* ---- ResourceClaim / ResourceClaimTemplate ------------------------------------------------ */
enum dra_alloc_mode { DRA_MODE_EXACT_COUNT = 0, DRA_MODE_ALL };

/* ExactDeviceRequest, or one DeviceSubRequest of firstAvailable. */
struct dra_exact {
    char *name;       /* the sub-request's name; NULL for `exactly` */
    char *class_name; /* deviceClassName */
    char **selectors; /* selectors[].cel.expression */
    size_t n_selectors;
    enum dra_alloc_mode mode;
    int64_t count; /* ExactCount: count (default 1); All: 0 */
    bool admin_access;
    /* capacity.requests{<name>: <quantity>} (KEP-5075), names as written */
    struct dra_quantity *capacity;
    size_t n_capacity;
    struct dra_toleration *tolerations; /* tolerations[], in order */
    size_t n_tolerations;
};

struct dra_request {
    char *name;
    bool has_exactly;
    struct dra_exact exactly;
    struct dra_exact *first_available; /* prioritized alternatives, in order */
    size_t n_first_available;
};

/* constraints[].matchAttribute over `requests` (empty: every request of the claim). */
struct dra_constraint {
    char **requests;
    size_t n_requests;
    char *match_attribute; /* fully qualified; NULL when the constraint has another form */
};

struct dra_claim_spec {
    struct dra_request *requests;
    size_t n_requests;
    struct dra_constraint *constraints;
    size_t n_constraints;
};

/* status.allocation.devices.results[] */
struct dra_result {
    char *request; /* "<request>" or "<request>/<subrequest>" */
    char *driver;
    char *pool;
    char *device;
    /* adminAccess: true. Such a result holds nothing: the device stays available to other
     * claims (the allocator leaves it out of its allocated set; kubernetes/kubernetes
     * staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
     * allocator_stable.go). */
    bool admin_access;
    /* shareID: set when the device allows multiple allocations and this is one share of it;
     * such a result does not make the device "in use" (allocateddevices.go). consumed:
     * consumedCapacity{<name>: <quantity>}, names as written. */
    char *share_id;
    struct dra_quantity *consumed;
    size_t n_consumed;
    struct dra_binding binding; /* copied from the device by the scheduler */
};

/* One metav1.Condition of status.devices[].conditions. */
struct dra_condition {
    char *type;
    enum cond_status status; /* model.h: COND_TRUE, COND_FALSE, COND_UNKNOWN */
    char *reason;
    char *message;
};

/* status.devices[] (AllocatedDeviceStatus; gate DRAResourceClaimDeviceStatus): what the driver
 * or a controller reports on an allocated device. */
struct dra_device_status {
    char *driver;
    char *pool;
    char *device;
    char *share_id; /* shareID, or NULL */
    struct dra_condition *conditions;
    size_t n_conditions;
};

/* status.reservedFor[] */
struct dra_consumer {
    char *resource; /* "pods" for pods */
    char *name;
    char *uid;
};

struct dra_claim {
    char *ns;
    char *name;
    char *uid;
    char *owner_pod_uid;  /* the controller ownerReference of kind Pod, or NULL */
    char *pod_claim_name; /* annotation resource.kubernetes.io/pod-claim-name, or NULL */
    /* The scheduler made this claim for the extended resources of its owner pod that DRA serves
     * (annotation DRA_EXTENDED_CLAIM_ANNOTATION "true"); owner_pod_name names that pod. */
    bool extended;
    char *owner_pod_name; /* that ownerReference's name when a pod name, or NULL */
    bool deleting;        /* metadata.deletionTimestamp set */
    struct dra_claim_spec spec;
    bool allocated; /* status.allocation set */
    struct dra_result *results;
    size_t n_results;
    struct node_affinity alloc_nodes; /* status.allocation.nodeSelector (present when set) */
    struct dra_consumer *reserved_for;
    size_t n_reserved_for;
    /* status.allocation.allocationTimestamp in seconds since the epoch (0: absent); the
     * scheduler sets it when it writes an allocation with binding conditions, and its binding
     * timeout counts from it (dynamicresources.go isClaimTimeout) */
    int64_t allocation_timestamp;
    struct dra_device_status *device_statuses; /* status.devices[] */
    size_t n_device_statuses;
};

struct dra_template {
    char *ns;
    char *name;
    struct dra_claim_spec spec; /* spec.spec */
};

/* ---- the pod's side (stored in struct kpod) ------------------------------------------------ */
/* spec.resourceClaims[]: exactly one of claim_name / template_name is set in a valid pod. */
struct pod_claim_ref {
    char *name;
    char *claim_name;    /* resourceClaimName */
    char *template_name; /* resourceClaimTemplateName */
};

/* status.resourceClaimStatuses[] */
struct pod_claim_status {
    char *name;
    char *claim_name; /* the generated claim; NULL when none is needed */
};

/*
 * One extended-resource request of one container that a DeviceClass may serve (KEP-5004): what
 * kube-scheduler turns into a request of the pod's special claim on a node whose allocatable
 * lacks the resource (classify.h). Kept for the resources of the GPU set (model/gpu.h) and the
 * implicit names DRA_EXTENDED_CLASS_PREFIX "<class>"; requests default from limits as for
 * kpod.gpu_requests.
 */
struct pod_ext_request {
    char *resource;
    uint32_t container; /* index over spec.initContainers, then spec.containers */
    uint32_t index;     /* the resource's index in the container's request names, sorted */
    bool short_lived;   /* an init container that is not a sidecar (restartPolicy Always) */
    int64_t count;      /* whole units; a fractional or zero quantity is left out */
};

/* status.extendedResourceClaimStatus.requestMappings[] */
struct pod_ext_mapping {
    char *container;
    char *resource;
    char *request;
};

/* The pod's extended resources that DRA may serve (kpod.ext; NULL when it has none and no
 * status.extendedResourceClaimStatus). */
struct pod_ext {
    struct pod_ext_request *requests; /* sorted by resource, then container */
    size_t n_requests;
    char *claim_name; /* status.extendedResourceClaimStatus.resourceClaimName, or NULL */
    struct pod_ext_mapping *mappings;
    size_t n_mappings;
};

/* Entries kept per pod (a real pod has one or two). */
#define POD_EXT_MAX_REQUESTS 64

/* ---- cleanup and small helpers ------------------------------------------------------------ */
void dra_class_cleanup(struct dra_class *c);
void dra_slice_cleanup(struct dra_slice *s);
void dra_claim_spec_cleanup(struct dra_claim_spec *s);
void dra_claim_cleanup(struct dra_claim *c);
void dra_template_cleanup(struct dra_template *t);
/* dra_binding_cleanup() - free the condition names (NULL-safe; leaves it zeroed). */
void dra_binding_cleanup(struct dra_binding *b);
/* dra_device_statuses_free() - free n entries, their strings and conditions, then the array. */
void dra_device_statuses_free(struct dra_device_status *s, size_t n);

/*
 * dra_claim_device_status() - the status.devices[] entry of `claim` for the allocated device of
 * result `r` (same driver, pool and device; shareID is not modelled in results, so the first
 * entry of the device), borrowed, or NULL. kubernetes/kubernetes: pkg/scheduler/framework/
 * plugins/dynamicresources/dynamicresources.go getAllocatedDeviceStatus. Pure.
 */
const struct dra_device_status *dra_claim_device_status(const struct dra_claim *claim,
                                                        const struct dra_result *r);
/* dra_device_condition() - the condition of this type in `s`, borrowed, or NULL. Pure. */
const struct dra_condition *dra_device_condition(const struct dra_device_status *s,
                                                 const char *type);

/* dra_taint_rule_cleanup() - free the rule's strings (NULL-safe; leaves it zeroed). */
void dra_taint_rule_cleanup(struct dra_taint_rule *r);
/* pod_claims_cleanup() - free n refs / statuses and their strings, then the arrays. */
void pod_claim_refs_free(struct pod_claim_ref *r, size_t n);
void pod_claim_statuses_free(struct pod_claim_status *s, size_t n);
/* pod_ext_free() - free *e and everything in it. NULL-safe. */
void pod_ext_free(struct pod_ext *e);
/* pod_ext_equal() - the same requests, claim name and mappings, in order (NULL equals only
 * NULL). Pure. */
bool pod_ext_equal(const struct pod_ext *a, const struct pod_ext *b);

/* pod_asks_class_name() - whether the pod asks an extended resource under a DeviceClass's
 * implicit name (DRA_EXTENDED_CLASS_PREFIX). NULL-safe; pure. */
bool pod_asks_class_name(const struct kpod *p);

/*
 * dra_extended_class_serves() - whether class `c` serves the extended resource `resource`:
 * its spec.extendedResourceName, or its implicit name DRA_EXTENDED_CLASS_PREFIX "<name>".
 * dra_extended_class_wins() - of two classes serving one name, whether `a` is the one
 * kube-scheduler maps it to: the older (metadata.creationTimestamp), on a tie the smaller name
 * (kubernetes/kubernetes: staging/src/k8s.io/dynamic-resource-allocation/deviceclass/
 * extendedresourcecache/extendedresourcecache.go updateResourceName2class). Pure.
 */
bool dra_extended_class_serves(const struct dra_class *c, const char *resource);
bool dra_extended_class_wins(const struct dra_class *a, const struct dra_class *b);

/*
 * dra_selector_driver() - the driver a CEL selector names when it is literally
 * `device.driver == '<x>'` or `'<x>' == device.driver` (single or double quotes, no escapes,
 * whitespace around tokens allowed, optionally in one pair of parentheses), alone or as the
 * first operand of a top-level `&&` whose rest has no `||` or `?` outside parentheses and
 * strings (so the whole expression is false for any other driver: NVIDIA's class
 * `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`).
 * Returns a new string the caller frees, or NULL when the expression has another form (or on
 * ENOMEM). Pure; thread-safe.
 */
char *dra_selector_driver(const char *expr);

/*
 * dra_device_attribute() / dra_device_capacity() - the attribute or capacity with this fully
 * qualified name, borrowed, or NULL. Linear in the device's entries (at most 32).
 */
const struct dra_attribute *dra_device_attribute(const struct dra_device *d, const char *qname);
const struct dra_capacity *dra_device_capacity(const struct dra_device *d, const char *qname);

/*
 * dra_qualify() - the fully qualified form of an attribute / capacity name: `name` when it
 * contains '/', else "<driver>/<name>" (types.go QualifiedName; cel/compile.go). New string,
 * NULL on ENOMEM.
 */
char *dra_qualify(const char *driver, const char *name);

/*
 * dra_qname_is() - whether `name` as written in an object of `driver` (a capacity request, a
 * consumed capacity) names the fully qualified `qname`: equal, or `name` without a domain and
 * qname == "<driver>/<name>". Pure; no allocation.
 */
bool dra_qname_is(const char *driver, const char *name, const char *qname);

/* dra_quantities_free() - free n named quantities and their strings, then the array. */
void dra_quantities_free(struct dra_quantity *q, size_t n);

/*
 * dra_taint_effect_word() - "None", "NoSchedule", "NoExecute", or "(unknown)". Static string.
 * dra_taint_effect_parse() - the inverse for the API's values; DRA_EFFECT_UNKNOWN otherwise
 * (also for NULL).
 */
const char *dra_taint_effect_word(enum dra_taint_effect e);
enum dra_taint_effect dra_taint_effect_parse(const char *s);

/*
 * dra_toleration_tolerates() - whether toleration `t` tolerates `taint`: the effect is empty or
 * equal, the key is empty or equal, and the operator is Exists, or Equal (or empty) with equal
 * values (an absent value reads as ""). Whether the taint's effect matters at all is the
 * caller's (dra_taint_blocking). kubernetes/kubernetes:
 * staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/devicetoleration.go
 * ToleratesTaint. Pure; thread-safe.
 */
bool dra_toleration_tolerates(const struct dra_toleration *t, const struct dra_taint *taint);

/*
 * dra_taint_blocks() - whether `taint` keeps a request with tolerations `tols` (n of them) off
 * its device: its effect is NoSchedule or NoExecute (None and unknown effects never block) and
 * no toleration tolerates it. kubernetes/kubernetes:
 * staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go
 * taintPreventsAllocation / taintTolerated (the same in the incubating and experimental
 * allocators). Pure; thread-safe.
 */
bool dra_taint_blocks(const struct dra_taint *taint, const struct dra_toleration *tols, size_t n);

/*
 * dra_taint_rule_selects() - whether rule `r` applies to device `device` of pool `pool` of driver
 * `driver`: it has a deviceSelector and each of the selector's driver, pool and device that is
 * set equals the device's (the empty selector selects every device). kubernetes/kubernetes:
 * staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go applyPatches
 * (the scheduler sees a rule's taint appended to each selected device's taints). Pure.
 */
bool dra_taint_rule_selects(const struct dra_taint_rule *r, const char *driver, const char *pool,
                            const char *device);

#endif
