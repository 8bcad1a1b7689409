/*
 * queue.h - queue-waiting from Kueue: the pod's Workload (model/workload.h) has not been admitted,
 * and Kueue says why.
 *
 * A pod Kueue manages waits for its Workload: with the pod integration Kueue's webhook gives the
 * pod the scheduling gate kueue.x-k8s.io/admission and removes it once the Workload is admitted;
 * with the batch/v1 Job integration the Job stays suspended (no pods) until then
 * (kubernetes-sigs/kueue: pkg/controller/jobs/pod/pod_controller.go, pkg/controller/jobs/job).
 * While no quota is reserved the Workload's condition QuotaReserved is False with Kueue's reason
 * (Pending, Inadmissible) and message, e.g. "couldn't assign flavors to pod set main: insufficient
 * unused quota for nvidia.com/gpu in flavor default-flavor, 1 more needed"
 * (pkg/scheduler/scheduler.go, pkg/workload/workload.go UnsetQuotaReservationWithCondition); with
 * quota reserved and admission checks pending, Admitted is False. That word outranks
 * scheduling-gated: the gate is Kueue's, and its reason is the answer.
 */
#ifndef GPUTRI_CLASSIFY_QUEUE_H
#define GPUTRI_CLASSIFY_QUEUE_H

#include <stdbool.h>

#include "classify/line.h"
#include "model/model.h"
#include "model/workload.h"

/*
 * queue_kueue_waiting() - whether the pod's Workload `w` (NULL: none known) holds the unbound pod
 * back (model/workload.h workload_waiting). When it does, appends to `l` Kueue's own words and the
 * objects to look at: "Kueue Workload ns/name: QuotaReserved=False (Pending): <message>;
 * ClusterQueue cq" (status.admission), or "...; LocalQueue ns/lq" (spec.queueName) when no quota
 * is reserved. Pure; thread-safe on read-only input.
 */
bool queue_kueue_waiting(const struct kworkload *w, struct line *l);

#endif
