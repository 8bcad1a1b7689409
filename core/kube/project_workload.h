/*
 * project_workload.h - a Kueue Workload (kueue.x-k8s.io v1beta2 or v1beta1) as JSON into the
 * model's struct kworkload (model/workload.h).
 *
 * Bounded whatever the object: at most WORKLOAD_MAX_OWNERS ownerReferences kept, the first
 * WORKLOAD_MAX_CONDITIONS status.conditions looked at, each string kept cut to WORKLOAD_MAX_TEXT
 * bytes of valid UTF-8 (util/utf8.h utf8_copy: an invalid byte becomes '?'). Fields of another
 * type read as absent.
 *
 * Upstream: kubernetes-sigs/kueue apis/kueue/v1beta2/workload_types.go (spec.queueName,
 * status.admission.clusterQueue, status.conditions of metav1.Condition: type, status, reason,
 * message), the same in apis/kueue/v1beta1.
 */
#ifndef GPUTRI_KUBE_PROJECT_WORKLOAD_H
#define GPUTRI_KUBE_PROJECT_WORKLOAD_H

#include <json-c/json.h>

#include "model/workload.h"

/*
 * project_workload() - fill *out (zeroed first) from `obj` (borrowed). Returns K_OK, K_EINVAL
 * when obj has no metadata.namespace or metadata.name (out left zeroed), or K_ENOMEM (out
 * cleaned up). The caller owns *out (workload_cleanup). Thread-safe on distinct outputs.
 */
int project_workload(json_object *obj, struct kworkload *out);

#endif
