/*
 * snapshot.h - the read-only view of the cluster that the admission checks run against, and the
 * compact projections of the objects only the webhook needs: RuntimeClasses (node.k8s.io/v1),
 * ResourceQuotas and Namespaces. Nodes are core knode projections (core/model/model.h); the
 * Dynamic Resource Allocation objects (resource.k8s.io DeviceClasses, ResourceSlices,
 * ResourceClaims, ResourceClaimTemplates, at the version served: core/kube/dra_api.h) are
 * core/model/dra.h records.
 *
 * A snapshot borrows everything; it is valid while the cache's read lock is held (see cache.h)
 * or, in tests, while the fixture owning the objects lives. Projections own their strings and
 * are released with the matching *_cleanup(). Pure: no I/O, no globals; the project functions
 * are thread-safe on distinct outputs.
 */
#ifndef GPUTRI_WEBHOOK_SNAPSHOT_H
#define GPUTRI_WEBHOOK_SNAPSHOT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "cache/dra_store.h"
#include "classify/classify.h"
#include "model/dra.h"
#include "model/gpu.h"
#include "model/model.h"

/* A RuntimeClass: its name and the scheduling fields the RuntimeClass admission plugin merges
 * into pods (kubernetes/kubernetes: plugin/pkg/admission/runtimeclass/admission.go). */
struct wh_runtime_class {
    char *name;
    struct kv_list node_selector;   /* scheduling.nodeSelector */
    struct toleration *tolerations; /* scheduling.tolerations */
    size_t n_tolerations;
};

/*
 * A ResourceQuota, reduced to its GPU keys (warnings.h wh_quota_key: requests.<gpu>, and the
 * DeviceClass keys of extended resources served by DRA). `hard` holds the enforced limits:
 * status.hard when the quota controller has written it, otherwise spec.hard (has_status false;
 * the API server does not enforce a quota before its status is written, see
 * scheduler-semantics.md 7.1, so numbers from spec.hard are a forecast). `used` is status.used.
 * Names in both lists keep the "requests." prefix. `scoped`: spec.scopes or spec.scopeSelector
 * is set (the checks skip such quotas rather than guess whether they apply).
 */
struct wh_quota {
    char *ns;
    char *name;
    bool scoped;
    bool has_status;
    struct resource_list hard;
    struct resource_list used;
};

struct wh_namespace {
    char *name;
    struct kv_list labels;
};

struct wh_snapshot {
    const struct gpu_set *gpus;
    const struct knode *const *nodes;
    size_t n_nodes;
    const struct wh_runtime_class *runtime_classes; /* sorted by name */
    size_t n_runtime_classes;
    const struct wh_quota *quotas; /* every namespace, sorted by namespace/name */
    size_t n_quotas;
    const struct wh_namespace *namespaces; /* sorted by name */
    size_t n_namespaces;
    /* which lists are trustworthy (their informer listed at least once) */
    bool nodes_synced, runtime_classes_synced, quotas_synced, namespaces_synced;
    bool assume_ert; /* ExtendedResourceToleration admission plugin is enabled */
    /* Node autoscalers that add nodes on demand (autoscaler.h WH_AUTOSCALER_* bits; 0: none
     * known). With one, the node checks that find no current node fitting say that the autoscaler
     * must add one instead of "pods will stay Pending" (warnings.h wh_check_pod_spec). */
    unsigned autoscalers;
    /*
     * DRA. dra_gpus: the DeviceClass / driver patterns of GPU requests (model/gpu.h
     * DRA_GPU_SET_DEFAULT); NULL: no DRA checks. dra: the DRA objects, borrowed and read-locked
     * (dra_store_read_lock) by whoever filled the snapshot, for the snapshot's lifetime; NULL
     * when dra_gpus is. A kind that is not synced (dra_store_synced: the API server serves no
     * DRA version gputri reads, or its informer has not listed yet) turns off the checks that
     * read it.
     */
    const struct gpu_set *dra_gpus;
    struct dra_store *dra;
    /* Set by the caller for a review answered shed (http/lanes.h: it waited too long for a
     * worker): the claims' classes and drivers are checked, their devices are not matched
     * against the nodes (the costly part), and one GPUChecksSkipped warning says so. */
    bool dra_busy;
    /* When the claims' CEL selectors must stop, whatever is left of their steps:
     * clock_mono_ns(NULL) (cel.h cel_budget_set_deadline); 0: none. */
    int64_t cel_deadline_ns;
};

/*
 * wh_project_runtime_class() / wh_project_quota() / wh_project_namespace() - fill `out` (zeroed
 * first) from the API object. Return K_OK, K_EPARSE when metadata.name (and for quotas
 * metadata.namespace) is missing, K_ETOOBIG when a quota's hard or used list names more than
 * RESOURCE_LIST_MAX GPU keys, or K_ENOMEM; `out` is cleaned up on error. Quota quantities
 * that do not parse are skipped. `gpus` selects the quota keys kept.
 */
int wh_project_runtime_class(json_object *obj, struct wh_runtime_class *out);
int wh_project_quota(json_object *obj, const struct gpu_set *gpus, struct wh_quota *out);
int wh_project_namespace(json_object *obj, struct wh_namespace *out);

void wh_runtime_class_cleanup(struct wh_runtime_class *rc);
void wh_quota_cleanup(struct wh_quota *q);
void wh_namespace_cleanup(struct wh_namespace *ns);

/* Lookups over a snapshot (binary search on the sorted lists). Borrowed results or NULL. */
const struct wh_runtime_class *wh_snapshot_runtime_class(const struct wh_snapshot *s,
                                                         const char *name);
const struct wh_namespace *wh_snapshot_namespace(const struct wh_snapshot *s, const char *name);

/*
 * wh_snapshot_dra_view() - the ladder's view (core/classify/classify.h struct dra_view) of
 * s->dra: core/triage/triage.h triage_dra_view() with gpu_classes s->dra_gpus, and
 * device_holder NULL (what is allocated now changes by the minute; admission warns only about
 * lasting faults). The view
 * borrows s->dra and is valid while the snapshot is (s->dra read-locked). s->dra must not be
 * NULL. Pure; thread-safe.
 */
struct dra_view wh_snapshot_dra_view(const struct wh_snapshot *s);

#endif
