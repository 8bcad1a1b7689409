/*
 * workload.h - a Kueue Workload (kueue.x-k8s.io, v1beta2 or v1beta1: the fields read here have
 * the same names and places in both) as gputri keeps it: who owns it, which queue it is in, and
 * what Kueue says about its admission. The projection is bounded: at most WORKLOAD_MAX_OWNERS
 * ownerReferences, the first WORKLOAD_MAX_CONDITIONS entries of status.conditions looked at,
 * every string cut to WORKLOAD_MAX_TEXT bytes (whole UTF-8 characters, kube/project_workload.h).
 *
 * Kueue's semantics (kubernetes-sigs/kueue: apis/kueue/v1beta2/workload_types.go,
 * pkg/workload/workload.go, pkg/controller/jobframework/reconciler.go):
 *   - a Workload is created for every job it manages; its ownerReferences name the job: for plain
 *     pods (pod integration) the Pod itself (every Pod of a pod group), for a batch/v1 Job the Job;
 *   - spec.queueName is the LocalQueue (in the Workload's namespace);
 *   - status.admission.clusterQueue is the ClusterQueue that reserved quota (set with
 *     QuotaReserved=True);
 *   - condition QuotaReserved False (reason Pending, or Inadmissible) with Kueue's message while
 *     no quota is reserved, e.g. "couldn't assign flavors to pod set main: insufficient unused
 *     quota for nvidia.com/gpu in flavor default-flavor, 1 more needed";
 *   - condition Admitted True once quota is reserved and every admission check passed (then
 *     Kueue removes the pod's scheduling gate kueue.x-k8s.io/admission, or unsuspends the Job);
 *   - condition Finished True when the job is done.
 *
 * Ownership: a struct kworkload owns every string it points to; workload_cleanup() frees them.
 * Thread-safety: pure data; the functions read only their arguments.
 */
#ifndef GPUTRI_MODEL_WORKLOAD_H
#define GPUTRI_MODEL_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

#define WORKLOAD_MAX_OWNERS 8
#define WORKLOAD_MAX_CONDITIONS 32
#define WORKLOAD_MAX_TEXT 512

/* The LocalQueue label Kueue reads on a job or pod (kueue.x-k8s.io/queue-name). */
#define WORKLOAD_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

struct workload_owner {
    char *kind; /* e.g. "Pod", "Job" */
    char *name;
    char *uid;
};

struct kworkload {
    char *ns;
    char *name;
    char *uid;
    struct workload_owner owners[WORKLOAD_MAX_OWNERS];
    size_t n_owners;
    char *queue_name;                    /* spec.queueName: the LocalQueue, or NULL */
    char *cluster_queue;                 /* status.admission.clusterQueue, or NULL */
    struct pod_condition quota_reserved; /* status.conditions[type=QuotaReserved] */
    struct pod_condition admitted;       /* status.conditions[type=Admitted] */
    bool finished;                       /* Finished=True */
    bool deleting;                       /* metadata.deletionTimestamp set */
};

/* workload_cleanup() - free everything the struct owns and zero it. NULL-safe. */
void workload_cleanup(struct kworkload *w);

/* workload_owned_by() - whether one of w's ownerReferences has uid `uid` (NULL: false). Pure. */
bool workload_owned_by(const struct kworkload *w, const char *uid);

/*
 * workload_waiting() - whether Kueue holds the Workload's job back, and by which condition:
 * QuotaReserved=False (no quota reserved: the queue's reason), else QuotaReserved=True with
 * Admitted=False (quota reserved, admission checks pending). Returns the deciding condition
 * (borrowed from w) and its name in *type ("QuotaReserved" / "Admitted", static), or NULL when
 * Kueue does not hold it back by its conditions (admitted, finished, being deleted, or no
 * condition written yet). Pure.
 */
const struct pod_condition *workload_waiting(const struct kworkload *w, const char **type);

/* workload_equal() - the same for everything gputri reads. Pure. */
bool workload_equal(const struct kworkload *a, const struct kworkload *b);

#endif
