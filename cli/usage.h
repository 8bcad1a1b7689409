/*
 * usage.h - which pods a one-shot classification has to read, and reading only those.
 *
 * The ladder (core/classify) reads the GPU usage of a node (the requests of its non-terminal
 * pods) only for the nodes that pass the pod's node selection, and the usage changes a step only
 * on a node that lists the resource in status.capacity: on any other node the step is
 * no-gpu-node whatever the usage. A dry run of classify() with a usage callback that records
 * what it is asked tells, without forking the ladder, which nodes those are for one pod: none for
 * a pod decided before node selection (scheduling-gated, no-scheduler, a missing claim), none
 * for label-mismatch, the nodes of its nodeSelector otherwise. A pod with
 * status.nominatedNodeName also needs the pods on that node (the preemption victims,
 * core/triage/triage.h triage_fill_facts). The CLI then LISTs the pods of those nodes one node
 * at a time (fieldSelector=spec.nodeName=NODE) when they are at most USAGE_PER_NODE_MAX, and every
 * non-terminal pod in one paged LIST otherwise.
 *
 * The per-node LISTs carry resourceVersion=0 ("any"): the API server answers them from its watch
 * cache at once, through the cache's spec.nodeName index. Without it each is a consistent read,
 * which waits until the cache has caught up with etcd (up to ~100 ms each time the cluster is
 * being written to: 50 nodes took 1.9 s at 30,000 pods, against 0.1 s). The pods read may then
 * lag the cluster by the watch cache's delay, as an informer's (and the controller's) do; the
 * pod itself comes from a GET, and the one LIST of every pod stays consistent (a LIST with
 * resourceVersion=0 is not paged by every API server version). kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (GetList, consistent reads).
 *
 * What differs from reading every pod: nothing in the cause or the detail (the steps, the
 * ranking and the numbers the detail names all come from the nodes read); `explain` shows an IN
 * USE of "-" on a node whose pods were not read (cli/triage.h triage_usage_read), whatever pods
 * bound there by spec.nodeName ask for.
 */
#ifndef GPUTRI_CLI_USAGE_H
#define GPUTRI_CLI_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/informer.h"
#include "cache/store.h"
#include "classify/classify.h"
#include "kube/client.h"
#include "triage/triage.h"

/*
 * Candidate nodes read one LIST per node at most; past it one LIST of every non-terminal pod. A
 * per-node LIST is answered from the API server's watch cache through its spec.nodeName index,
 * in about a millisecond and independent of the cluster's size, while one LIST of 30,000 pods
 * takes seconds (BENCHMARKS.md, bench/compare). Up to USAGE_SEQUENTIAL_MAX nodes are read one
 * after the other on the caller's client; more by USAGE_WORKERS clients at once (threads, each
 * with its own connection), so that a round trip to a distant API server is paid about
 * nodes / USAGE_WORKERS times, not once per node.
 */
#define USAGE_PER_NODE_MAX 1024
#define USAGE_SEQUENTIAL_MAX 16
#define USAGE_WORKERS 8

/* The nodes whose pods are needed. */
struct usage_nodes {
    char **names;  /* owned, at most USAGE_PER_NODE_MAX, no duplicates */
    size_t n, cap; /* entries in use / allocated */
    bool all;      /* more than USAGE_PER_NODE_MAX: read every non-terminal pod */
};

/*
 * usage_nodes_collect() - add to `u` the nodes whose pods classifying `pod` reads: a dry run of
 * the ladder through core/triage/triage.h triage_pod() with `src` (src->store holds every Node;
 * `pod` is borrowed from it; src's DRA store, now and grace as for the real run, its usage
 * callback replaced), recording each candidate node the ladder asks the usage of for a resource
 * the node lists in status.capacity above 0; plus status.nominatedNodeName of an unbound pod.
 * The store's read lock must be held, the DRA store's must not (triage_pod takes it). Several
 * calls (several pods) add up. Returns K_OK or K_ENOMEM (u is then still valid and must be
 * cleaned up). Not thread-safe on one `u`.
 */
int usage_nodes_collect(const struct triage_source *src, const struct kpod *pod,
                        struct usage_nodes *u);

/*
 * usage_nodes_add() - add one node name (copied) to `u`; past USAGE_PER_NODE_MAX distinct
 * names `u->all` is set instead. Returns K_OK or K_ENOMEM.
 */
int usage_nodes_add(struct usage_nodes *u, const char *node);

/*
 * usage_fetch() - LIST the non-terminal pods (status.phase neither Succeeded nor Failed) that
 * `u` names into the store `s`: for u->all one paged LIST of every namespace (a consistent
 * read), otherwise one LIST per node with fieldSelector spec.nodeName=NODE and
 * resourceVersion=0 (none at all when u names no node): on `c` one after the other for up to
 * USAGE_SEQUENTIAL_MAX nodes, else on `c` and clones of it (kube_client_clone) in up to
 * USAGE_WORKERS threads (each on a clone with its own HTTP/1.1 connection,
 * kube_client_set_http1), in no particular order. The LISTs ask for protobuf, as client-go does
 * (kube/proto.h): the API server writes it several times faster than JSON, and the CLI reads only
 * what usage needs (project_pod_usage_proto); a server that answers JSON is read as JSON. A pod
 * `s` already holds keeps its record (it was read whole). The store is written under its own
 * lock, one pod at a time. Returns K_OK or the first K_* error, err filled; after an error no
 * further node is read; K_EPARSE when pods did not project (informer_list_skipped: how many),
 * as the usage of their nodes is then unknown.
 */
int usage_fetch(struct kube_client *c, const struct usage_nodes *u, struct store *s,
                struct kube_error *err);

/*
 * usage_list_nodes() - LIST every node into the store `s` (a consistent read, in pages of 500),
 * asking for protobuf as usage_fetch does (project_node_proto; a JSON answer is read as JSON):
 * the CLI's one read of the nodes a classification walks. Returns K_OK or a K_* error, err
 * filled; K_EPARSE when nodes did not project (informer_list_skipped: how many), as no verdict
 * may come from the others alone. Not thread-safe on one client.
 */
int usage_list_nodes(struct kube_client *c, struct store *s, struct kube_error *err);

/*
 * usage_list_nodes_selected() - usage_list_nodes() of the nodes matching `label_selector` (a
 * label selector as kubectl -l takes it, sent to the API server as labelSelector, URL-escaped;
 * NULL or "": every node). K_EINVAL (err says so) for a selector too long for the request line.
 */
int usage_list_nodes_selected(struct kube_client *c, struct store *s, const char *label_selector,
                              struct kube_error *err);

/*
 * usage_list_dra() - the DRA objects a live classification reads, into a new store *out (NULL:
 * none needed, or resource.k8s.io/v1 not served): every kind when `claims` (a pod has
 * spec.resourceClaims, or asks a DeviceClass's implicit extended resource name); otherwise (pods
 * asking extended resources a class may serve, KEP-5004) the DeviceClasses, and the other kinds
 * only when one of them has spec.extendedResourceName, so a device-plugin pod on a cluster
 * without such a class costs one small LIST; there a user who may not list them (K_EFORBIDDEN)
 * gets no DRA, as before KEP-5004. Returns K_OK or a K_* error, err filled (*out NULL).
 * Not thread-safe on one client.
 */
int usage_list_dra(struct kube_client *c, bool claims, struct dra_store **out,
                   struct kube_error *err);

/* The field selector of every non-terminal pod (URL-encoded), for a query string. */
#define USAGE_NON_TERMINAL "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"

void usage_nodes_cleanup(struct usage_nodes *u);

#endif
