/*
 * triage.h - classify one pod on demand, straight from the API server: GET the pod, and only
 * when it is a pending GPU pod, LIST the nodes and then the non-terminal pods of only the nodes
 * whose GPU usage the ladder reads for it (cli/usage.h: one LIST per node with
 * fieldSelector=spec.nodeName when they are at most USAGE_PER_NODE_MAX, one LIST of every
 * non-terminal pod otherwise; none for a pod decided before the per-node steps); when it has
 * spec.resourceClaims, also LIST the four DRA kinds (resourceclaims, resourceclaimtemplates,
 * deviceclasses, resourceslices) into a DRA store at the version of resource.k8s.io discovery
 * finds (core/cache/dra_store.h dra_store_list: v1, else v1beta2, else v1beta1; none when the
 * API server serves none of them). A pod without claims never needs the DRA objects: the DRA steps
 * of the ladder look only at the pod's own claims.
 */
#ifndef GPUTRI_TRIAGE_H
#define GPUTRI_TRIAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/dra_store.h"
#include "cache/gang_store.h"
#include "cache/pod_events.h"
#include "cache/store.h"
#include "cache/workload_store.h"
#include "classify/classify.h"
#include "kube/client.h"

struct usage_nodes; /* cli/usage.h */

struct triage {
    struct store *store;    /* owned */
    const struct kpod *pod; /* borrowed from store */
    struct classify_result result;
    struct node_verdict *verdicts;     /* owned, result.n_verdicts entries */
    struct dra_store *dra;             /* owned; NULL: no DRA */
    const struct gpu_set *dra_classes; /* borrowed; set when dra is */
    struct pod_events *events;         /* owned: the autoscalers' Events on the pod; NULL: none */
    struct workload_store *workloads;  /* owned: the pod's Kueue Workload; NULL: none */
    struct gang_store *gangs; /* owned: the pod's gang (core/triage triage_read_gang); NULL: none */
    /*
     * The nodes whose pods were read (cli/usage.h), owned; NULL when the store holds every
     * non-terminal pod (triage_from_store, or more than USAGE_PER_NODE_MAX nodes). On any other
     * node an IN USE is not known: triage_usage_read().
     */
    struct usage_nodes *usage_read;
    /* After triage_run() failed: true when the pod itself was read and the error came from what
     * classifying it reads next (nodes, pods, DRA objects), e.g. a 403 on nodes for a user bound
     * to the `view` ClusterRole (cli/answer.h). Nothing else of `t` is set then. */
    bool pod_read;
};

/*
 * triage_usage_read() - whether the GPU usage of `node` was read (its pods listed), so that the
 * IN USE of a verdict there is a measured number. Pure; t borrowed.
 */
bool triage_usage_read(const struct triage *t, const char *node);

/*
 * triage_run() - fetch and classify ns/name. On K_OK `t` must be released with
 * triage_cleanup(). K_ENOTFOUND when the pod does not exist; other K_* values with err filled.
 * gpus is borrowed and must outlive t; so is dra_classes, the GPU DeviceClass / driver patterns
 * (--gpu-device-classes), or NULL for no DRA (the DRA objects are then not listed).
 * no_scheduler_grace is classify_input.no_scheduler_grace in seconds (--no-scheduler-grace-period;
 * 0: CLASSIFY_NO_SCHEDULER_GRACE).
 */
int triage_run(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, const char *name, struct triage *t,
               struct kube_error *err);

/*
 * triage_from_store() - classify ns/name from a store already holding the pod, the nodes and the
 * non-terminal pods (triage_run's second half; tests fill the store from fixtures). Takes
 * ownership of `s` in every case: on K_OK it is released by triage_cleanup(), on error already
 * released. K_ENOTFOUND when the store has no such pod, K_ENOMEM. The store must not be written
 * while `t` lives (one thread; no lock is taken).
 */
int triage_from_store(struct store *s, const char *ns, const char *name, struct triage *t);

/*
 * triage_from_stores() - triage_from_store() with the DRA objects of `dra` (NULL: none), whose
 * ownership it takes likewise; GPU claims are those of `dra_classes` (borrowed, must outlive t;
 * NULL: no DRA).
 */
int triage_from_stores(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                       const char *ns, const char *name, struct triage *t);

/*
 * triage_from_stores_grace() - triage_from_stores() with the no-scheduler grace period in seconds
 * (classify_input.no_scheduler_grace; 0: CLASSIFY_NO_SCHEDULER_GRACE) and the autoscalers'
 * Events on the pod (`events`, NULL: none) and its Kueue Workloads (`workloads`, NULL: none;
 * core/triage/triage.h triage_read_workloads); ownership of both taken as for `s`.
 */
int triage_from_stores_grace(struct store *s, struct dra_store *dra,
                             const struct gpu_set *dra_classes, int64_t no_scheduler_grace,
                             struct pod_events *events, struct workload_store *workloads,
                             const char *ns, const char *name, struct triage *t);

/*
 * triage_print_explain() - the explain report: a header (pod, phase, GPU requests, cause, detail,
 * the controller's annotation, the scheduler's message), then for a blocked pod how many nodes
 * pass node selection, the per-outcome counts, a table of every candidate node (the step it stops
 * at and its GPU numbers, as classify_node() found them; the deciding node first, then closest
 * first by node_verdict_cmp(), then more free GPUs, then by name), and for `exhausted` the
 * pods holding the GPUs on the closest exhausted nodes (at most 3). Columns are aligned as kubectl
 * aligns them. Returns K_OK, K_ENOMEM or K_EIO (write error).
 */
int triage_print_explain(const struct triage *t, FILE *out);

/*
 * triage_explain_json() - the explain report as an object for `explain -o json|yaml`
 * (cli/printer.h): {"apiVersion": "gputri.io/v1alpha1", "kind": "GPUPodExplanation",
 * "metadata": {"name", "namespace"}, "status": {"phase", "nodeName", "gpuRequests", "cause",
 * "detail", "annotationCause", "annotationDetail", "schedulerReason", "schedulerMessage"},
 * "nodeSelection": {"candidates", "nodes"}, "counts": {step: n}, "nodes": [every candidate
 * node's row as the text's table: "node", "stopsAt", "resource", "capacity", "allocatable",
 * "inUse", "free", "request", "why", "closest", and "dra" {"step", "request", "deviceClass",
 * "driver", "devices", "matching", "free", "tainted", "wanted"} for a DRA request], "holders":
 * [{"node", "namespace", "name", "gpuRequests", "phase"}] (exhausted only)}; the per-node members
 * only when the cause is decided at or past node selection, in the text's order. Members without
 * a value are left out. On K_OK *out is new (json_object_put). Returns K_OK or K_ENOMEM.
 */
int triage_explain_json(const struct triage *t, json_object **out);

void triage_cleanup(struct triage *t);

/*
 * triage_print_causes() - "Causes, checked in this order: ..." for --help: every word of
 * core/classify in the ladder's order (cause_rank), gpu-fits last, wrapped at 78 columns.
 */
void triage_print_causes(FILE *out);

#endif
