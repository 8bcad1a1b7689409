/*
 * warnings.h - the checks behind gputri-webhook's admission warnings, and the bounded warning
 * list they fill.
 *
 * Warning text rules (kubernetes/apiserver: pkg/endpoints/filters/warning.go and
 * kubernetes/apimachinery: pkg/util/net/http.go NewWarningHeader; admission-webhooks.md 2):
 * the field path first ("spec.template.spec.tolerations: ..."), one problem per warning, valid
 * UTF-8 without control characters (the API server silently drops such a warning), aim for
 * ~120 characters, never more than WARN_ITEM_MAX bytes (cut on a character boundary), at most
 * WARN_MAX_ITEMS warnings and WARN_TOTAL_MAX bytes in all (the API server's budget is 4096
 * runes shared with every other webhook), duplicates dropped.
 *
 * The checks read a snapshot (snapshot.h) and the object's JSON (borrowed); they are pure and
 * thread-safe on distinct warn_lists.
 */
#ifndef GPUTRI_WEBHOOK_WARNINGS_H
#define GPUTRI_WEBHOOK_WARNINGS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"
#include "kube/dra_api.h"
#include "snapshot.h"

#define WARN_MAX_ITEMS 10
#define WARN_ITEM_MAX 200
#define WARN_TOTAL_MAX 3072

/* Event reasons, one per check. */
#define WARN_REASON_TAINT "GPUUntoleratedTaint"
#define WARN_REASON_RUNTIMECLASS "RuntimeClassNotFound"
#define WARN_REASON_QUOTA "GPUQuotaExceeded"
#define WARN_REASON_QUOTA_KEY "GPUQuotaIneffective"
#define WARN_REASON_SELECTOR "NodeSelectorMismatch"
#define WARN_REASON_NO_GPU_NODE "NoGPUNode"
#define WARN_REASON_TOO_LARGE "GPURequestTooLarge"
#define WARN_REASON_QGPU_MIXED "QGPUMixedResources"
#define WARN_REASON_QGPU_NS "QGPUNamespaceUnlabeled"
#define WARN_REASON_NOT_CHECKED "GPUChecksSkipped"
/* DRA (warnings_dra.c); the first five as the controller's Event reasons (classify.h) */
#define WARN_REASON_DRA_TEMPLATE "DRAClaimTemplateMissing"
#define WARN_REASON_DRA_CLAIM "DRAClaimMissing"
#define WARN_REASON_DRA_CLASS "DRADeviceClassMissing"
#define WARN_REASON_DRA_NO_DRIVER "DRANoDriver"
#define WARN_REASON_DRA_NO_MATCH "DRANoMatchingDevice"
#define WARN_REASON_DRA_TOO_LARGE "DRARequestTooLarge"
#define WARN_REASON_DRA_ADMIN "DRAAdminAccessNamespaceUnlabeled"

/*
 * Distinct GPU resources a pod may request and still have its node checks run (selection,
 * capacity, size, taints, each per resource per node): their cost grows with this times the
 * nodes times the selector and toleration caps (64 distinct nvidia.com/mig-* resources cost
 * about 60 ms against 5,000 nodes, bench/webhook-adversarial). A real pod names one or two.
 * Above it the node checks are skipped with one WARN_REASON_NOT_CHECKED warning; the qGPU,
 * RuntimeClass and quota checks still run.
 */
#define WH_MAX_NODE_CHECK_GPU_RESOURCES 16

/* The namespace label adminAccess requests need (kubernetes/kubernetes:
 * staging/src/k8s.io/api/resource/v1/types.go DRAAdminNamespaceLabelKey). */
#define DRA_ADMIN_ACCESS_LABEL "resource.kubernetes.io/admin-access"

/*
 * Request alternatives (an `exactly`, or one firstAvailable sub-request) per admitted object
 * whose devices are matched against every node (core/classify dra_count_matching: the devices
 * reaching each node times the selectors). The rest are still checked for their class, driver
 * and adminAccess, and one WARN_REASON_NOT_CHECKED warning says how many were not matched. The
 * other lists are bounded by the projection: at most DRA_MAX_POD_CLAIMS claims per pod,
 * DRA_MAX_REQUESTS requests per claim, DRA_MAX_FIRST_AVAILABLE alternatives per request
 * (model/dra.h); a pod with more claims than that is not checked (one warning says so).
 */
#define WH_DRA_MAX_MATCHED 8
/*
 * And within a work budget per object, in units of the ladder's per-node DRA step
 * (core/classify/dra_ladder.c), estimated before an alternative is matched: on each node every
 * ResourceSlice reaching it is compared with the others of its pool for the newest generation
 * (slices^2 units), and every device is visited (WH_DRA_COST_DEVICE units: its holder, its
 * attribute filter, the call into its selectors). Measured once, ad hoc, at 4 to 15 ns a unit
 * (x86-64, gcc -O2, the whole check timed around wh_check_dra_object; not in bench/): 5,000
 * nodes with one 8-device slice each cost about 0.65M units per alternative, so 8 alternatives
 * fit; many cluster-wide slices (allNodes or a nodeSelector reach every node) make the cost
 * grow with their square on every node, and such alternatives are skipped (the warning above)
 * rather than run past the API server's timeout. At most WH_DRA_MAX_WORK units: about 0.5 s.
 */
#define WH_DRA_MAX_WORK (32u << 20)
#define WH_DRA_COST_DEVICE 16
/*
 * And the selectors themselves, in CEL steps (core/cel/cel.h: the compiled program's size, then
 * the nodes each evaluation visits and the string bytes it traverses), charged as they run over
 * every alternative of the object: at most WH_DRA_MAX_CEL_STEPS, the ladder's bound per
 * classification (classify.h DRA_CEL_MAX_STEPS, about 126 ms at CEL_NS_PER_STEP). When they are
 * spent the devices not yet evaluated are undecided (they count as possibly matching, so no
 * warning rests on them), the alternatives not yet matched are not, and one
 * WARN_REASON_NOT_CHECKED warning says "selectors too costly to check". Measured with
 * bench/cel_hostile.py (BENCHMARKS.md): a Pod review naming a stored template of 128 selectors
 * of 10 KiB (~320 `||` each) at 1,000 DRA nodes took 15.8 s of CPU with a flat charge per
 * selector; with this budget, under 0.2 s.
 */
#define WH_DRA_MAX_CEL_STEPS DRA_CEL_MAX_STEPS

#define QGPU_PREFIX "tke.cloud.tencent.com/qgpu-"
#define QGPU_POLICY_LABEL "tke.cloud.tencent.com/qgpu-schedule-policy"

struct warning {
    char text[WARN_ITEM_MAX + 1];
    const char *reason; /* static, one of WARN_REASON_* */
};

struct warn_list {
    struct warning items[WARN_MAX_ITEMS];
    size_t n;
    size_t total;   /* bytes of all texts */
    size_t dropped; /* warnings refused for the count or total limit */
};

/* warn_list_init() - empty the list. */
void warn_list_init(struct warn_list *l);

/*
 * warn_add() - format one warning, replace control characters and invalid UTF-8 with spaces or
 * '?', cut it to WARN_ITEM_MAX bytes on a character boundary (ending in "..."), and append it
 * unless an identical text is present or a limit is reached. Returns true when appended.
 */
bool warn_add(struct warn_list *l, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What is being admitted: one pod spec, bare or inside a workload. All borrowed. */
struct wh_object {
    const char *ns;        /* the request's namespace */
    json_object *spec;     /* the PodSpec */
    json_object *meta;     /* the pod's (or template's) metadata; may be NULL */
    const char *spec_path; /* "spec", "spec.template.spec", "spec.jobTemplate.spec.template.spec" */
    int64_t replicas;      /* pods the object asks for; -1 when unknown (DaemonSet) */
    bool is_pod;           /* a bare Pod (no replica wording) */
    bool create;           /* CREATE (UPDATE: only checks that do not depend on current usage) */
};

/*
 * wh_check_pod_spec() - run every pod check (qGPU, RuntimeClass, quota, node selection, GPU
 * listed in capacity, request above every node's capacity, taints; then the DRA checks of
 * wh_check_pod_claims) and append warnings to `out`. Objects requesting no GPU resource and
 * having no GPU claims get none. A spec with more than DRA_MAX_POD_CLAIMS resourceClaims, or
 * naming more than RESOURCE_LIST_MAX distinct GPU resources (project_pod_spec's K_ETOOBIG), is not
 * checked (one WARN_REASON_NOT_CHECKED warning). Checks whose list is not synced in the snapshot
 * are skipped. The spec is projected with the caps of core/kube/project.h: a node selection or a
 * toleration list above them, or more than WH_MAX_NODE_CHECK_GPU_RESOURCES distinct GPU
 * resources, skips the node checks (selection, capacity, size, taints) with one
 * WARN_REASON_NOT_CHECKED warning saying which cap; the other checks still run. With a node
 * autoscaler in snap->autoscalers (autoscaler.h), the node checks that find no current node
 * fitting (no node matches the selection, no selected node lists the resource, the request is
 * above every candidate's capacity) say what the current nodes lack and that the autoscaler,
 * named, must add a node, instead of "pods will stay Pending" / "no node will ever fit it";
 * the others (taints, cordons, RuntimeClass, quota, qGPU, DRA) do not change. Returns K_OK,
 * K_EPARSE when the spec does not project (core/kube/project.h project_pod_spec), or K_ENOMEM.
 */
int wh_check_pod_spec(const struct wh_snapshot *snap, const struct wh_object *obj,
                      struct warn_list *out);

/*
 * wh_check_pod_claims() - the DRA checks of a projected pod spec (pod->claims; project.h):
 * for each spec.resourceClaims[i], a resourceClaimTemplateName naming no ResourceClaimTemplate
 * or a resourceClaimName naming no ResourceClaim in obj->ns, then the requests of the
 * template or (not yet allocated) claim as wh_check_dra_object() checks them. Only a pod with
 * GPU claims (a request whose class or its driver is in snap->dra_gpus, classify.h
 * dra_exact_is_gpu; a missing template or claim counts, it cannot be inspected) gets
 * warnings; a pod with spec.nodeName set (bound: it has its devices) gets none. Nothing when
 * snap->dra_gpus is NULL; each check needs the DRA kinds it reads synced (snap->dra,
 * dra_store_synced). Returns K_OK or K_ENOMEM.
 */
int wh_check_pod_claims(const struct wh_snapshot *snap, const struct wh_object *obj,
                        const struct kpod *pod, struct warn_list *out);

/*
 * wh_check_dra_object() - a ResourceClaim's spec (`is_template` false) or a
 * ResourceClaimTemplate's spec.spec (true), of resource.k8s.io `version` (v1, v1beta2 or
 * v1beta1: read in the layout of v1, core/kube/dra_api.h dra_json_as_v1; the field paths in the
 * warnings are those of `version`: no ".exactly" in v1beta1), in namespace `ns`, when one of
 * its requests is a GPU request: per request, a DeviceClass that does not exist (for
 * `exactly`, or every firstAvailable alternative); a class whose driver publishes no
 * ResourceSlice, or none reaching a node; no device on any node satisfying the selectors, or a
 * count above the most matching devices any node has (core/classify dra_count_matching; held
 * devices count, as nothing allocated lasts); adminAccess in a namespace without the label
 * DRA_ADMIN_ACCESS_LABEL=true. A firstAvailable request is warned about only when no
 * alternative can be allocated. Objects that do not project (core/kube/project.h) get nothing:
 * the API server rejects them. Returns K_OK or K_ENOMEM.
 */
int wh_check_dra_object(const struct wh_snapshot *snap, const char *ns, json_object *obj,
                        bool is_template, enum dra_api_version version, struct warn_list *out);

/*
 * wh_check_quota_object() - a ResourceQuota's own spec.hard: a GPU key without the requests.
 * prefix (bare "nvidia.com/gpu" or "limits.nvidia.com/gpu") limits nothing
 * (https://kubernetes.io/docs/concepts/policy/resource-quotas/#resource-quota-for-extended-resources).
 */
/*
 * What one pod counts against ResourceQuota keys that gputri checks (warnings_ext.c):
 * requests.<GPU resource> (kpod.gpu_requests), requests.<implicit DeviceClass name>
 * (DRA_EXTENDED_CLASS_PREFIX, the pod's effective request), and for an extended resource a
 * DeviceClass serves through DRA (KEP-5004) what the claim kube-scheduler creates for it counts:
 * <class>.deviceclass.resource.k8s.io/devices and requests.deviceclass.resource.kubernetes.io/
 * <class>, the devices of its requests (kubernetes/kubernetes: pkg/quota/v1/evaluator/core/
 * pods.go podComputeUsageHelper, resource_claims.go addExtendedResourceQuota). `resource` is
 * the pod's resource behind the key (borrowed from pod), `via_class` the serving class (borrowed
 * from the snapshot's DRA store) or NULL.
 */
struct wh_quota_item {
    char key[320];
    const char *resource;
    const char *via_class;
    int64_t per_pod;
};
#define WH_MAX_QUOTA_ITEMS 32

/*
 * wh_quota_items() - the items of `pod` (at most `max`; the rest are left out), the served ones
 * only when the snapshot's DeviceClasses are synced. Returns how many were written. Reads the
 * snapshot's DRA store (read-locked by the snapshot's owner).
 */
size_t wh_quota_items(const struct wh_snapshot *snap, const struct kpod *pod,
                      struct wh_quota_item *out, size_t max);

/*
 * wh_quota_key() - whether a ResourceQuota key is one wh_quota_items() may name:
 * requests.<GPU resource>, requests.deviceclass.resource.kubernetes.io/<class>, or
 * <class>.deviceclass.resource.k8s.io/devices. Pure.
 */
bool wh_quota_key(const struct gpu_set *gpus, const char *key);

/*
 * wh_served_by_dra() - the DeviceClass that serves extended resource `resource` through DRA
 * (the snapshot's DRA store, classes synced), or NULL: a node whose allocatable lacks it is
 * then no reason for a warning.
 */
const struct dra_class *wh_served_by_dra(const struct wh_snapshot *snap, const char *resource);

void wh_check_quota_object(json_object *quota, const struct gpu_set *gpus, struct warn_list *out);

/*
 * wh_node_verdicts() - the classifier's per-node ladder (core/classify/classify.h classify_nodes)
 * for `pod` as the scheduler will see it once admitted: spec.nodeSelector merged with the
 * RuntimeClass's scheduling.nodeSelector and its scheduling.tolerations added
 * (kubernetes/kubernetes: plugin/pkg/admission/runtimeclass/admission.go; the RuntimeClass is
 * looked up only when runtime_classes_synced), and with snap->assume_ert a toleration
 * {key: <resource>, operator: Exists, effect: NoSchedule} per requested GPU resource
 * (plugin/pkg/admission/extendedresourcetoleration/admission.go). `verdicts` is caller storage
 * for snap->n_nodes entries, filled in snapshot order (CAUSE_LABEL_MISMATCH for a node outside
 * the selection); *closest receives the index of the closest candidate by node_verdict_cmp (the
 * first among equals, as classify() picks), or SIZE_MAX when no node is selected. `usage` is
 * classify_node's usage callback; the admission checks pass NULL (nothing allocated), tests may
 * pass a real one. Pointers in the verdicts borrow from `pod` and the snapshot. Returns K_OK or
 * K_ENOMEM (*closest SIZE_MAX). Pure; thread-safe on distinct `verdicts`.
 */
int wh_node_verdicts(const struct wh_snapshot *snap, const struct kpod *pod, node_usage_fn usage,
                     void *usage_ctx, struct node_verdict *verdicts, size_t *closest);

#endif
