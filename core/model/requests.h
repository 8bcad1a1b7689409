/*
 * requests.h - a pod's effective request of each GPU resource, from its containers' requests.
 *
 * The one implementation of the rule the scheduler applies (kubernetes/component-helpers:
 * resource/helpers.go PodRequests, AggregateContainerRequests), whatever the pod was read from:
 * the JSON projection (kube/project.c) and the protobuf one (kube/project_proto.c) hand it each
 * container's amounts in the order of the pod spec.
 *
 *   reqs = sum(containers); walking initContainers in order, a restartable one (restartPolicy
 *   Always, a sidecar) adds to reqs and to the running sidecar sum, and
 *   initMax = max(initMax, sidecars); any other one gives
 *   initMax = max(initMax, its request + sidecars so far);
 *   reqs = max(reqs, initMax) + spec.overhead.
 *
 * Amounts are milli-units (model/quantity.h) while they add up, saturating (resource_list_add),
 * and each total becomes Value() (rounded up, away from zero) at the end, like the scheduler's
 * Resource.Add of the aggregated quantities. Zero and negative totals ask for nothing and are
 * dropped.
 */
#ifndef GPUTRI_MODEL_REQUESTS_H
#define GPUTRI_MODEL_REQUESTS_H

#include <stdbool.h>

#include "model/model.h"

/* The sums so far; zero-initialise, then add containers, then pod_requests_finish(). */
struct pod_requests {
    struct resource_list reqs;     /* containers + sidecars, milli */
    struct resource_list sidecars; /* restartable init containers so far, milli */
    struct resource_list init_max; /* the largest init-time request so far, milli */
};

/*
 * container_requests_default() - one container's request per resource: every entry of
 * `requests`, plus each entry of `limits` whose name `requests` does not list (not even as 0),
 * as the API server defaults requests from limits (kubernetes/kubernetes:
 * pkg/apis/core/v1/defaults.go SetDefaults_Pod). All milli; both inputs borrowed. Appends to
 * `out`. Returns K_OK, K_ENOMEM or K_ETOOBIG (RESOURCE_LIST_MAX names). Pure.
 */
int container_requests_default(const struct resource_list *requests,
                               const struct resource_list *limits, struct resource_list *out);

/*
 * pod_requests_add_container() / pod_requests_add_init() - one entry of spec.containers, or of
 * spec.initContainers in spec order (`restartable`: restartPolicy Always), with its request
 * `one` (milli, borrowed; container_requests_default). Returns K_OK, K_ENOMEM or K_ETOOBIG; on
 * error `pr` must still be cleaned up. Not thread-safe on one `pr`.
 */
int pod_requests_add_container(struct pod_requests *pr, const struct resource_list *one);
int pod_requests_add_init(struct pod_requests *pr, const struct resource_list *one,
                          bool restartable);

/*
 * pod_requests_finish() - add spec.overhead (`overhead`, milli, borrowed; NULL: none) and write
 * the effective request of each resource, in whole units and above zero, to `out` (appended).
 * `pr` is cleaned up whatever the result. Returns K_OK, K_ENOMEM or K_ETOOBIG.
 */
int pod_requests_finish(struct pod_requests *pr, const struct resource_list *overhead,
                        struct resource_list *out);

/* pod_requests_cleanup() - free the sums; `pr` is zeroed. NULL-safe. */
void pod_requests_cleanup(struct pod_requests *pr);

#endif
