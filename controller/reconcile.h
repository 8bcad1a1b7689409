/*
 * reconcile.h - decide and write what one pod should carry.
 *
 * reconcile_plan() is pure apart from reading the store: it classifies the pod and compares the
 * verdict with the pod's gputri/cause annotation (or with what this controller wrote last, which
 * the watch may not have delivered yet). reconcile_apply() performs the writes through a
 * pod_writer, which is the Kubernetes client in production and a recorder in unit tests.
 *
 * The rules:
 *   - a pending GPU pod (unbound, not terminal, requesting a GPU resource, or with DRA claims of
 *     which one asks for a GPU DeviceClass: classify.h) whose cause differs
 *     from its annotation gets gputri/cause and gputri/detail (one merge patch) and a Warning
 *     Event; `gpu-fits` is written only after the scheduler reported the pod unschedulable
 *     (PodScheduled=False), since until then the pod is simply not scheduled yet; the other
 *     causes are written whether or not the pod has a PodScheduled condition (a pod whose
 *     claim template is missing never gets one);
 *   - a bound GPU pod whose GPU containers have not all started once
 *     (store_is_starting_gpu_pod) is classified too: runtime-missing, image-pull-failed or
 *     container-start-failed is written as for a pending pod (classify/placement.h), and again
 *     under the same word when its detail differs from the pod's gputri/detail (the kubelet's
 *     Event with the registry's or the runtime's words arrived); `ok` only over another cause
 *     it carries;
 *   - a pod that carries a blocking gputri/cause and has been bound to a node is set to `ok`
 *     with a Normal Event (once its GPU containers started, for the after-placement words);
 *   - a GPU pod its kubelet rejected at admission (bound, Failed: store_is_rejected_gpu_pod) gets
 *     `node-rejected` once and is never written again;
 *   - the non-blocking `preempting`, `binding` and `scaling-up` get a Normal Event, the other
 *     causes a Warning Event;
 *   - `binding` is written when the scheduler waits for binding conditions
 *     (classify_result.binding_waits) or the pod carries a gputri/cause already (a word it has
 *     left); a pod the scheduler binds at once (claims published, volumes bound) is left alone,
 *     as for `gpu-fits` before the scheduler reports; it is written again, under the same word,
 *     when its detail differs from the pod's gputri/detail (what the scheduler waits for moved:
 *     classify/binding.h);
 *   - a pod of a non-default scheduler that is not yet old enough for `no-scheduler` is to be
 *     looked at again when it is (recheck_after_ms);
 *   - a pod being deleted (metadata.deletionTimestamp set, e.g. held by a finalizer) is left
 *     alone whatever it carries: no word, no `ok`, no Event;
 *   - every other pod (never blocked, no GPU request, only non-GPU claims, finished, deleted) is
 *     left alone.
 */
#ifndef GPUTRI_RECONCILE_H
#define GPUTRI_RECONCILE_H

#include <stdbool.h>

#include "cache/dra_store.h"
#include "cache/pod_events.h"
#include "cache/store.h"
#include "classify/classify.h"
#include "kube/client.h"

enum reconcile_kind {
    RECONCILE_NOTHING, /* nothing to write */
    RECONCILE_GONE,    /* the pod is not in the store any more */
    RECONCILE_WRITE,   /* patch the annotations and record an Event */
};

struct reconcile_plan {
    enum reconcile_kind kind;
    enum cause cause;
    int from; /* the cause the pod carried before (enum cause), or -1: none, or not a cause */
    char ns[256];
    char name[256];
    char uid[64];
    char detail[1024];
    const char *event_type;   /* "Warning" or "Normal" (static) */
    const char *event_reason; /* static */
    int classified;           /* the classifier ran for this plan (for metrics) */
    enum cause verdict;       /* when classified: the per-node ladder's word (written or not;
                                 classify_result.ladder_cause) */
    bool verdict_autoscaler;  /* ... which an autoscaler's word replaced */
    int64_t recheck_after_ms; /* > 0: plan the pod again after this long (no-scheduler grace,
                                 the autoscaler's evidence going stale, the binding timeout
                                 passing) */
};

/* What reconcile_plan() needs to know beyond the caches. */
struct reconcile_env {
    int64_t now;                /* wall time, seconds since the epoch */
    int64_t no_scheduler_grace; /* seconds; 0: CLASSIFY_NO_SCHEDULER_GRACE */
    struct pod_events *events;  /* the autoscalers' Events (NULL: none) */
    int64_t provision_window;   /* seconds; 0: CLASSIFY_PROVISION_WINDOW */
    /*
     * When an autoscaler last wrote a verdict on any pod (seconds since the epoch; 0: never
     * seen), and how long a new pod's per-node word waits for one on such a cluster (seconds;
     * 0: not at all). On a cluster whose GPU nodes are added on demand, every new GPU pod fits
     * no current node until its autoscaler has looked at it (Karpenter batches pods for up to
     * 10 s, Cluster Autoscaler scans every 10 s): a blocking word written before would be a
     * false alarm.
     */
    int64_t autoscaler_seen;
    int64_t autoscaler_grace;
    /* Kueue's Workloads (NULL: none read): triage_source.workloads, for queue-waiting */
    struct workload_store *workloads;
    /* the gang objects and their Events (cache/gang_store.h; NULL: gangs not looked at):
     * triage_source.gangs */
    struct gang_store *gangs;
};

/* How long after its last verdict a cluster counts as autoscaled: the API server's default
 * --event-ttl, the age at which the Events that told go. */
#define RECONCILE_AUTOSCALED_FOR 3600

/*
 * reconcile_plan() - plan for pod "ns/name". `written` is the cause this controller last wrote
 * for the pod and the watch has not shown yet (NULL when none), and `written_uid` the uid of the
 * pod it was written to: it is ignored for a pod with another uid (deleted and recreated under
 * the same name). `dra` (NULL: no DRA, claims are not looked at) serves the pod's claims, their
 * classes and the slices; `dra_classes` names the GPU DeviceClasses / drivers (borrowed; must
 * be set with `dra`). `env` (NULL: now unknown, default grace) gives the time. Takes the store's
 * read lock, then the DRA store's.
 * Returns K_OK, or K_EINVAL for a malformed key.
 */
int reconcile_plan(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                   const struct reconcile_env *env, const char *key, const char *written,
                   const char *written_uid, struct reconcile_plan *out);

/* The writes reconcile needs; production uses the kube client, tests record the calls. */
struct pod_writer {
    void *ctx;
    /* merge-patch metadata.annotations of the pod */
    int (*annotate)(void *ctx, const char *ns, const char *name, const char *cause,
                    const char *detail, struct kube_error *err);
    /* create an Event about the pod */
    int (*event)(void *ctx, const struct reconcile_plan *plan, struct kube_error *err);
};

/*
 * reconcile_apply() - perform a RECONCILE_WRITE plan: the patch, then the Event. Returns K_OK,
 * K_ENOTFOUND when the pod vanished before the patch (no Event is written; the caller should not
 * remember a cause for it), or the first other K_* failure. *annotated (may be NULL) says whether
 * the patch went through: a failure after it leaves the Event owed, and the pod's next plan
 * finds its cause already written (the caller records the Event alone then).
 */
int reconcile_apply(const struct reconcile_plan *plan, const struct pod_writer *w,
                    struct kube_error *err, bool *annotated);

/*
 * reconcile_event_hopeless() - whether an Event write that returned `rc` (err may be NULL) can
 * never go through, so it is given up rather than retried: 404 (the pod or its namespace is
 * gone) or 403 from the namespace lifecycle admission while the namespace is being terminated
 * (kubernetes/kubernetes: plugin/pkg/admission/namespace/lifecycle/admission.go). Pure.
 */
bool reconcile_event_hopeless(int rc, const struct kube_error *err);

/*
 * pod_writer_kube() - a pod_writer over `client` (borrowed). `instance` is the reportingInstance
 * (borrowed, may be NULL). With `events` set, Events go through that recorder, which updates the
 * pod's earlier Event of the same type and reason instead of creating another
 * (kube/event_recorder.h).
 */
struct event_recorder;
struct kube_pod_writer {
    struct kube_client *client;
    const char *instance;
    struct event_recorder *events; /* borrowed, may be NULL */
};
struct pod_writer pod_writer_kube(struct kube_pod_writer *kw);

#endif
