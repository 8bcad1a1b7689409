/*
 * project.h - turn API JSON into the compact projections of model/model.h.
 *
 * Only what gputri needs is kept; GPU resources are those of the given gpu_set. Requests default
 * from limits per container, as the API server's defaulting does for pods
 * (kubernetes/kubernetes: pkg/apis/core/v1/defaults.go SetDefaults_Pod), so pod templates of
 * workloads give the same result as created pods. Quantities are parsed by quantity.h.
 * The json_object arguments are borrowed; the output struct owns copies.
 */
#ifndef GPUTRI_KUBE_PROJECT_H
#define GPUTRI_KUBE_PROJECT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dra.h"
#include "model/event.h"
#include "model/gpu.h"
#include "model/model.h"

/*
 * project_pod() - fill `out` (zeroed first) from a Pod object. Returns K_OK, K_EPARSE when
 * metadata.name is missing or a GPU quantity does not parse, K_ETOOBIG when the pod names more
 * than RESOURCE_LIST_MAX distinct GPU resources, or K_ENOMEM. On error `out` is cleaned up.
 */
int project_pod(json_object *pod, const struct gpu_set *gpus, struct kpod *out);

/*
 * project_pod_usage_proto() - fill `out` (zeroed first) from a Pod in the API server's protobuf
 * encoding (`len` bytes at `pod`: one item of a PodList, kube/proto.h), with what the ladder
 * reads from the pods it is not classifying, the pods whose requests make up a node's usage
 * (cli/usage.h): metadata namespace, name, uid, creationTimestamp, deletionTimestamp (deleting),
 * the controller ownerReference's uid; spec.nodeName, schedulerName and the GPU requests
 * (containers, initContainers and their restartPolicy, overhead; the rule is model/requests.h,
 * as for project_pod); status.phase and nominatedNodeName. Everything else stays empty (no
 * selector, tolerations, claims, conditions or annotations): such a pod may be counted, not
 * classified. Message numbers: kubernetes/kubernetes: staging/src/k8s.io/api/core/v1/
 * generated.proto (Pod, PodSpec, Container, ResourceRequirements, PodStatus) and
 * staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto (ObjectMeta, OwnerReference,
 * Time). Returns K_OK, K_EPARSE (malformed, no metadata.name, a string that is not UTF-8, a GPU
 * quantity that does not parse; a controller's uid that is too long, holds a NUL or is not UTF-8
 * is left out instead, as the API server accepts any non-empty one), K_ETOOBIG (more than
 * RESOURCE_LIST_MAX GPU resources) or K_ENOMEM; on error `out` is cleaned up. Thread-safe on
 * distinct outputs.
 */
int project_pod_usage_proto(const uint8_t *pod, size_t len, const struct gpu_set *gpus,
                            struct kpod *out);

/*
 * project_node_proto() - fill `out` (zeroed first) from a Node in the API server's protobuf
 * encoding (one item of a NodeList, kube/proto.h), with what project_node reads from JSON:
 * metadata.name and labels, spec.unschedulable and taints (key, value, effect; "" when absent),
 * and the GPU entries of status.capacity and status.allocatable as Value(). Message numbers:
 * kubernetes/kubernetes: staging/src/k8s.io/api/core/v1/generated.proto (Node, NodeSpec, Taint,
 * NodeStatus) and apimachinery's meta/v1 ObjectMeta. Returns K_OK, K_EPARSE (malformed, no
 * metadata.name, a string that is not UTF-8, a GPU quantity that does not parse), K_ETOOBIG or
 * K_ENOMEM; on error `out` is cleaned up. Thread-safe on distinct outputs.
 */
int project_node_proto(const uint8_t *node, size_t len, const struct gpu_set *gpus,
                       struct knode *out);

/*
 * Caps for a pod spec from an admission request, where one pod is checked against every node:
 * the node selection is evaluated per node (kubernetes/component-helpers:
 * scheduling/corev1/nodeaffinity/nodeaffinity.go; each requirement looks its label up, each value
 * is compared) and so are the tolerations against each node's taints (scheduling/corev1/
 * helpers.go FindMatchingUntoleratedTaint). The API server sets no count limit on either; these
 * keep the work per node fixed: with 5,000 nodes the checks of a pod at the caps stay well under
 * 100 ms (BENCHMARKS.md). Real pods use a handful of each.
 *   requirements = nodeSelector entries + required node-affinity terms + their matchExpressions
 *                  and matchFields;
 *   values       = the values of those requirements.
 */
#define PROJECT_MAX_SELECTOR_REQUIREMENTS 64
#define PROJECT_MAX_SELECTOR_VALUES 512
#define PROJECT_MAX_TOLERATIONS 128
/* ownerReferences looked at for the controller reference (the API server allows any number). */
#define PROJECT_MAX_OWNER_REFERENCES 64

/* What project_pod_spec() did not project because it was above a cap. */
struct project_excess {
    size_t selector_requirements; /* 0, or the requirements found when a selection cap was hit */
    size_t selector_values;       /* 0, or the values found when a selection cap was hit */
    size_t tolerations;           /* 0, or the tolerations found when above their cap */
};

/*
 * project_pod_spec() - the same for a bare PodSpec (a workload's spec.template.spec), with
 * metadata from `meta` (may be NULL). Used by the webhook. With `excess` non-NULL (zeroed first)
 * the caps above apply: a node selection above either selection cap is not projected
 * (node_selector and affinity stay empty) and excess->selector_* say how large it was;
 * tolerations above their cap are not projected (n_tolerations 0) and excess->tolerations says
 * how many there were. Everything else is projected as usual; the caller must not evaluate
 * what was left out. `excess` NULL: no caps.
 */
int project_pod_spec(json_object *spec, json_object *meta, const struct gpu_set *gpus,
                     struct kpod *out, struct project_excess *excess);

/*
 * project_pod_containers() - pod->containers (model/containers.h) from a Pod's spec and status
 * (borrowed; either may be NULL): the first POD_CONTAINERS_MAX of spec.initContainers then
 * spec.containers, each marked a GPU container when its requests or limits name a resource of
 * `gpus`, when pod->ext (project it first) has an extended-resource request of it, and
 * claim_ref when resources.claims names a claim; then status.initContainerStatuses and
 * containerStatuses matched by name (at most 2 * POD_CONTAINERS_MAX entries of each read): the
 * states, lastState.terminated, started and restartCount, messages cut at
 * CONTAINER_MESSAGE_MAX bytes on a UTF-8 boundary. Nothing is set for a pod without
 * containers. Field names: kubernetes/api core/v1/types.go ContainerStatus. Called by
 * project_pod. Returns K_OK or K_ENOMEM (pod->containers then holds what was read: pod_cleanup
 * frees it). Thread-safe on distinct pods.
 */
int project_pod_containers(json_object *spec, json_object *status, const struct gpu_set *gpus,
                           struct kpod *pod);

/* project_node() - fill `out` (zeroed first) from a Node object. Same results as project_pod. */
int project_node(json_object *node, const struct gpu_set *gpus, struct knode *out);

/*
 * project_string_map() - a string map such as labels or nodeSelector ({"k": "v"}) into `out`
 * (empty on entry); values that are not strings are skipped, NULL or a non-object gives an
 * empty list. Returns K_OK or K_ENOMEM (out then holds what was copied: kv_list_cleanup it).
 */
int project_string_map(json_object *map, struct kv_list *out);

/*
 * project_toleration_list() - a tolerations array (core/v1 Toleration: key, operator, value,
 * effect; absent fields as "") into a new array *out of *n entries. NULL or a non-array gives
 * none. Returns K_OK or K_ENOMEM (*out and *n then hold what was copied: tolerations_free them).
 */
int project_toleration_list(json_object *arr, struct toleration **out, size_t *n);

/*
 * project_node_selector() - a core/v1 NodeSelector ({"nodeSelectorTerms": [...]}) into `out`
 * (zeroed by the caller): present = true when `sel` is an object; terms ORed. max_terms > 0
 * bounds the terms (K_ETOOBIG above it); 0: no bound (the caller bounded the input). Returns
 * K_OK, K_ETOOBIG or K_ENOMEM (out then holds what was copied: node_affinity_cleanup it).
 */
int project_node_selector(json_object *sel, size_t max_terms, struct node_affinity *out);

/* ---- DRA (resource.k8s.io/v1, project_dra.c) ---------------------------------------------- */
/*
 * The layout of v1 (and v1beta2); an object read at v1beta1 goes through kube/dra_api.h
 * dra_json_as_v1() first. Each fills `out` (zeroed first) from one API object and is strict:
 * K_EPARSE when a required field (metadata.name; a slice's spec.driver and spec.pool.name; a
 * request's name) is missing or has the wrong type, K_ETOOBIG when a list is longer than the API
 * allows (the DRA_MAX_* limits of model/dra.h, which cite types.go), K_ENOMEM. On error `out` is
 * cleaned up. Semantics: kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1/types.go.
 */
/* Also spec.extendedResourceName and metadata.creationTimestamp (project_ext.c). */
int project_dra_class(json_object *obj, struct dra_class *out);
/* Attribute and capacity names are stored fully qualified under spec.driver. */
int project_dra_slice(json_object *obj, struct dra_slice *out);
/* owner_pod_uid from the ownerReference with kind Pod and controller true. */
int project_dra_claim(json_object *obj, struct dra_claim *out);
int project_dra_template(json_object *obj, struct dra_template *out);
/* A DeviceTaintRule (resource.k8s.io/v1 from 1.37, v1beta2 in 1.36, v1alpha3 before: the same
 * fields): metadata.name and spec.taint (key required) are required; spec.deviceSelector's
 * driver, pool and device are copied as given (absent: any). K_OK, K_EPARSE, K_ENOMEM; on an
 * error *out is cleaned up. */
int project_dra_taint_rule(json_object *obj, struct dra_taint_rule *out);
/* spec.devices of a ResourceClaimSpec (also used for a template's spec.spec). */
int project_dra_claim_spec(json_object *spec, struct dra_claim_spec *out);

/*
 * Binding conditions (KEP-5007; project_dra_binding.c), called by the projections above:
 * project_dra_binding() reads bindsToNode, bindingConditions[] and bindingFailureConditions[] of
 * a Device or a DeviceRequestAllocationResult `o` into *out (zeroed on entry; absent fields read
 * as none); project_dra_claim_binding() reads a claim's status.allocation.allocationTimestamp and
 * status.devices[] (driver, pool, device, shareID, conditions[] type/status/reason/message) into
 * *out (its fields zeroed on entry; `status` NULL reads as none). K_EPARSE when a list is not an
 * array, a condition type or a device entry's driver/pool/device is not a string; K_ETOOBIG above
 * DRA_MAX_BINDING_CONDITIONS, DRA_MAX_DEVICE_CONDITIONS or DRA_MAX_DEVICE_STATUSES; K_ENOMEM. On
 * error *out holds what was copied (its cleanup frees it). Field names: kubernetes/kubernetes:
 * staging/src/k8s.io/api/resource/v1/types.go (Device, DeviceRequestAllocationResult,
 * AllocationResult.AllocationTimestamp, AllocatedDeviceStatus).
 */
int project_dra_binding(json_object *o, struct dra_binding *out);
/*
 * project_dra_array() - the JSON array `key` of `o` (absent reads as empty; *arr names it,
 * borrowed): *n its length, *items a zeroed array of *n records of `size` bytes owned by the
 * caller (NULL when *n is 0). K_EPARSE when not an array, K_ETOOBIG above max, K_ENOMEM. The
 * list reader of project_dra.c, for project_dra_binding.c.
 */
int project_dra_array(json_object *o, const char *key, size_t max, size_t size, void **items,
                      json_object **arr, size_t *n);
int project_dra_claim_binding(json_object *status, struct dra_claim *out);

/*
 * project_pod_claims() / project_pod_claim_statuses() - a pod's spec.resourceClaims and
 * status.resourceClaimStatuses into pod->claims / pod->claim_statuses (empty on entry). NULL or
 * a non-array gives none; entries without a name are K_EPARSE; more than DRA_MAX_POD_CLAIMS is
 * K_ETOOBIG. On error the pod holds what was copied (pod_cleanup frees it).
 */
int project_pod_claims(json_object *arr, struct kpod *pod);
int project_pod_claim_statuses(json_object *arr, struct kpod *pod);

/* ---- extended resources served by DRA (KEP-5004, project_ext.c) ---------------------------- */
/*
 * project_class_extended() - a DeviceClass's spec.extendedResourceName (a string, else absent)
 * and metadata.creationTimestamp into out->extended_resource_name / out->created. K_OK or
 * K_ENOMEM.
 */
int project_class_extended(json_object *cls, struct dra_class *out);
/*
 * project_pod_ext() - from a pod's spec (containers and initContainers: resources.requests,
 * defaulted from resources.limits, and restartPolicy) one pod_ext_request per container and
 * resource that is a GPU resource of `gpus` or a DRA_EXTENDED_CLASS_PREFIX name, with a whole,
 * positive quantity, as kube-scheduler reads them for the special claim (kubernetes/kubernetes:
 * pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go
 * createResourceRequestAndMappings: the container's index over initContainers then containers,
 * the resource's index in the container's sorted request names, the count from
 * Quantity.AsInt64); and from its status extendedResourceClaimStatus{resourceClaimName,
 * requestMappings[]}. Either may be NULL. pod->ext stays NULL when there is nothing to keep.
 * At most POD_EXT_MAX_REQUESTS requests and as many mappings are kept (the rest are left out).
 * Returns K_OK, K_EPARSE for a quantity that does not parse, or K_ENOMEM (pod->ext then holds
 * what was copied; pod_cleanup frees it).
 */
int project_pod_ext(json_object *spec, json_object *status, const struct gpu_set *gpus,
                    struct kpod *pod);

/* ---- Events (core/v1, project_event.c) ------------------------------------------------------ */
/*
 * project_event() - fill `out` (zeroed first) from a core/v1 Event object (model/event.h): each
 * string member a bounded copy (a member of another type reads as absent), count from `count`
 * or else series.count (clamped to 0..INT32_MAX), the four times parsed as RFC 3339 into whole
 * seconds. Lenient like the getters of kube/json.h: only an `ev` that is not a JSON object is
 * K_EPARSE; a missing or malformed field leaves its member empty (0). Allocates nothing;
 * thread-safe on distinct outputs. Field names: kubernetes/api: core/v1/types.go Event.
 */
int project_event(json_object *ev, struct kevent *out);

#endif
