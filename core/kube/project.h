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

#include "model/gpu.h"
#include "model/model.h"

/*
 * project_pod() - fill `out` (zeroed first) from a Pod object. Returns K_OK, K_EPARSE when
 * metadata.name is missing or a GPU quantity does not parse, K_ETOOBIG when the pod names more
 * than RESOURCE_LIST_MAX distinct GPU resources, or K_ENOMEM. On error `out` is cleaned up.
 */
int project_pod(json_object *pod, const struct gpu_set *gpus, struct kpod *out);

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

#endif
