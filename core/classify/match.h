/*
 * match.h - the scheduler's node filters that gputri reproduces: taints against tolerations and
 * node selection (spec.nodeSelector and required node affinity).
 *
 * Pure functions over model.h projections: no I/O, no allocation, no globals. All arguments are
 * borrowed and only read, so every function is safe to call from several threads on shared
 * read-only input. NULL arguments are not accepted unless a contract says so.
 */
#ifndef GPUTRI_CLASSIFY_MATCH_H
#define GPUTRI_CLASSIFY_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* The key of the taint that spec.unschedulable stands for (kubernetes/api: core/v1). */
#define TAINT_NODE_UNSCHEDULABLE "node.kubernetes.io/unschedulable"
/* The taint Karpenter puts on a node it launched until the node registers
 * (kubernetes-sigs/karpenter: pkg/apis/v1/taints.go UnregisteredNoExecuteTaint). */
#define TAINT_KARPENTER_UNREGISTERED "karpenter.sh/unregistered"

/*
 * toleration_tolerates_taint() - whether one toleration tolerates one taint.
 * kubernetes/api: core/v1/toleration.go Toleration.ToleratesTaint (without the alpha Lt/Gt
 * operators, which are gated off by default and rejected by validation):
 *   - a non-empty effect must equal the taint's effect; an empty effect matches every effect;
 *   - a non-empty key must equal the taint's key; an empty key matches every key;
 *   - operator "" or "Equal": values equal (empty equals empty); "Exists": any value;
 *     any other operator: false.
 * NULL strings inside the structs are treated as "".
 */
bool toleration_tolerates_taint(const struct toleration *tol, const struct taint *taint);

/*
 * tolerations_tolerate_taint() - whether any of `n` tolerations tolerates the taint
 * (kubernetes/component-helpers: scheduling/corev1/helpers.go TolerationsTolerateTaint).
 * `tols` may be NULL when n is 0.
 */
bool tolerations_tolerate_taint(const struct toleration *tols, size_t n, const struct taint *taint);

/*
 * taint_blocks_scheduling() - whether the scheduler's TaintToleration filter considers the taint
 * at all: effect NoSchedule or NoExecute. PreferNoSchedule only affects scoring
 * (kubernetes/kubernetes: pkg/scheduler/framework/plugins/helper/taint.go
 * DoNotScheduleTaintsFilterFunc).
 */
bool taint_blocks_scheduling(const struct taint *taint);

/*
 * A taint that Kubernetes itself or a node autoscaler puts on a node to report the node's state,
 * and what it means. Tolerating one of these hides a broken, joining or departing node from the
 * scheduler instead of waiting for it or fixing it, so gputri never advises a toleration for them.
 */
struct node_condition_taint {
    const char *key;    /* the taint key, e.g. "node.kubernetes.io/not-ready" */
    const char *state;  /* the node's state as a predicate, e.g. "is not ready" */
    const char *setter; /* who sets it, e.g. "the node controller" */
    const char *remedy; /* what to do instead of tolerating it, an imperative without a final
                           stop that reads before " rather than tolerate it", e.g. "fix the
                           node" */
    bool autoscaler;    /* set by a node autoscaler (Karpenter, the Cluster Autoscaler): the node
                           is joining or leaving rather than broken */
};

/*
 * taint_node_condition() - the entry for `taint` when its key is one of the taints the node
 * lifecycle controller, the kubelet, the cloud controller manager or a node autoscaler manage,
 * else NULL (also for a NULL key). The effect and value are not looked at (whether a taint blocks
 * at all is taint_blocks_scheduling()). The keys:
 *   node.kubernetes.io/{not-ready, unreachable, memory-pressure, disk-pressure, pid-pressure,
 *   network-unavailable, unschedulable, out-of-service}
 *     (kubernetes/kubernetes: staging/src/k8s.io/api/core/v1/well_known_taints.go, the same as
 *      pkg/apis/core/well_known_taints.go; set by pkg/controller/nodelifecycle, out-of-service
 *      by an administrator after a non-graceful node shutdown)
 *   node.cloudprovider.kubernetes.io/uninitialized
 *     (kubernetes/kubernetes: staging/src/k8s.io/cloud-provider/api/well_known_taints.go
 *      TaintExternalCloudProvider; set by the kubelet with --cloud-provider=external until the
 *      cloud controller manager initializes the node)
 *   karpenter.sh/unregistered (NoExecute: launched, not registered yet; removed at
 *   registration), karpenter.sh/disrupted (NoSchedule: being consolidated, drifted, expired or
 *   deleted), karpenter.sh/rebooting (NoSchedule)
 *     (kubernetes-sigs/karpenter: pkg/apis/v1/taints.go)
 *   ToBeDeletedByClusterAutoscaler (NoSchedule: being drained for scale-down),
 *   DeletionCandidateOfClusterAutoscaler (PreferNoSchedule: unneeded; never blocks, so the
 *   ladder never names it)
 *     (kubernetes/autoscaler: cluster-autoscaler/utils/taints/taints.go)
 * Returns a pointer to static storage. Pure; thread-safe.
 */
const struct node_condition_taint *taint_node_condition(const struct taint *taint);

/* taint_is_node_condition() - taint_node_condition(taint) != NULL. Pure; thread-safe. */
bool taint_is_node_condition(const struct taint *taint);

/*
 * node_first_untolerated_taint() - the first taint in node.spec.taints order that blocks
 * scheduling (NoSchedule/NoExecute) and that none of the pod's tolerations tolerates, or NULL.
 * Borrowed from `node`. kubernetes/component-helpers: scheduling/corev1/helpers.go
 * FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc. spec.unschedulable is not
 * looked at here; see node_cordon_blocks().
 */
const struct taint *node_first_untolerated_taint(const struct knode *node,
                                                 const struct toleration *tols, size_t n);

/*
 * node_cordon_blocks() - spec.unschedulable is set and the pod does not tolerate the taint
 * node.kubernetes.io/unschedulable:NoSchedule (empty value).
 * kubernetes/kubernetes: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go
 * Filter, which runs before TaintToleration.
 */
bool node_cordon_blocks(const struct knode *node, const struct toleration *tols, size_t n);

/*
 * selector_requirement_matches_labels() - one matchExpressions requirement against node labels.
 * kubernetes/apimachinery: pkg/labels/selector.go Requirement.Matches, with the value-count
 * checks of NewRequirement:
 *   In      label present and its value in the list (at least one value required);
 *   NotIn   label absent, or its value not in the list (at least one value required);
 *   Exists / DoesNotExist   label present / absent (no values allowed);
 *   Gt / Lt label present and a base-10 int64, exactly one value that is a base-10 int64,
 *           strict comparison; any parse failure is no match;
 *   unknown operator: no match.
 * A requirement that violates the value-count rules is invalid; invalid requirements never
 * match (see selector_term_matches for what that does to the term).
 */
bool selector_requirement_matches_labels(const struct selector_requirement *req,
                                         const struct kv_list *labels);

/*
 * selector_requirement_valid() - whether NewRequirement (for matchExpressions, fields=false) or
 * nodeSelectorRequirementsAsFieldSelector (for matchFields, fields=true) accepts the
 * requirement. kubernetes/component-helpers: scheduling/corev1/nodeaffinity/nodeaffinity.go.
 * Label key and value syntax is not re-validated (the API server already did).
 */
bool selector_requirement_valid(const struct selector_requirement *req, bool fields);

/*
 * selector_requirement_matches_fields() - one matchFields requirement against a node. Only In
 * and NotIn with exactly one value are valid; the field set is {metadata.name: node name}, any
 * other key reads as "" (kubernetes/apimachinery: pkg/fields/selector.go OneTermEqualSelector).
 */
bool selector_requirement_matches_fields(const struct selector_requirement *req,
                                         const char *node_name);

/*
 * selector_term_matches() - one NodeSelectorTerm against a node: expressions ANDed, fields
 * ANDed, the two ANDed. A term with neither expressions nor fields matches nothing, and so does
 * a term with any invalid requirement (nodeaffinity.go nodeSelectorTerm.match: parse errors
 * mean no match).
 */
bool selector_term_matches(const struct selector_term *term, const struct knode *node);

/*
 * node_affinity_matches() - required node affinity against a node: `present` false matches
 * every node; otherwise the terms are ORed and an empty term list matches nothing
 * (nodeaffinity.go LazyErrorNodeSelector.Match).
 */
bool node_affinity_matches(const struct node_affinity *aff, const struct knode *node);

/*
 * node_selector_matches() - spec.nodeSelector against node labels: every key present with an
 * exactly equal value (kubernetes/apimachinery: pkg/labels/selector.go SelectorFromSet). An
 * empty selector matches every node.
 */
bool node_selector_matches(const struct kv_list *selector, const struct kv_list *labels);

/*
 * pod_matches_node_selection() - nodeSelector AND required node affinity, as the NodeAffinity
 * filter checks them (nodeaffinity.go RequiredNodeAffinity.Match).
 */
bool pod_matches_node_selection(const struct kpod *pod, const struct knode *node);

#endif
