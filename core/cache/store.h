/*
 * store.h - the object cache: every Node and every Pod, as compact projections, plus the sums the
 * classifier needs kept up to date on every change.
 *
 * What is kept:
 *   - nodes by name, in an array sorted by name (the classifier's input order);
 *   - pods by "namespace/name"; scheduling fields (nodeSelector, affinity, tolerations,
 *     PodScheduled message) only for pending GPU pods, so 150,000 bound pods cost little
 *     (spec.resourceClaims and status.resourceClaimStatuses are kept for every pod); container
 *     statuses only for bound GPU pods whose GPU containers have not all started
 *     (store_is_starting_gpu_pod);
 *   - per node, the sum of the GPU requests of its non-terminal bound pods (the scheduler's
 *     NodeInfo.Requested, kubernetes/kubernetes: pkg/scheduler/framework/types.go), so
 *     classifying one pod costs time proportional to the nodes, not to the pods. The sums are
 *     exact (128-bit) inside the store and read saturated to INT64_MAX, so a node holding more
 *     than INT64_MAX looks full, and removing pods later gives back the exact sum again. A node's
 *     sums name at most RESOURCE_LIST_MAX resources;
 *   - the set of pending GPU pods (unbound, non-terminal, requesting a GPU resource or having
 *     spec.resourceClaims: whether a claim asks for a GPU only the DRA objects tell, so every
 *     pending pod with claims is kept whole and counted here).
 *
 * Locking: writers (the store_*_upsert/delete/sync functions) take the write lock themselves.
 * Readers call store_read_lock() around store_pod_get(), store_nodes(), store_node_usage() and
 * the iterators; pointers they return are borrowed and valid only until store_read_unlock().
 * The lock prefers writers (glibc's PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP; why: store.c,
 * store_new): once a writer waits, new readers wait behind it. Hence a thread holding the read
 * lock must not take it again, nor wait for another thread that may be taking it (a lock or a
 * condition another reader holds or signals while waiting for this one): with a writer waiting
 * both would wait for ever. Calling any writer with the read lock held deadlocks, as before.
 *
 * Unchanged updates: store_pod_upsert() and store_node_upsert() (and the JSON entry points)
 * first compare the object with the record under the read lock; an update that would change
 * nothing the store keeps (a node heartbeat, a pod status change outside the projection) takes
 * no write lock and reports STORE_CHANGED_NOTHING. So does store_pod_delete() of a pod the store
 * does not hold (most pods, with store_keep_gpu_pods_only). Otherwise the write lock is taken and
 * the write is decided again from the record found then, so a writer that ran between the two sees
 * its change kept or superseded as with one lock; and skipping is what a write at the moment of
 * the comparison would have done (nothing), so no update is lost even with writers running
 * side by side. A record a relist marked stale is always written (the write clears the mark).
 */
#ifndef GPUTRI_STORE_H
#define GPUTRI_STORE_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/key.h"
#include "model/gpu.h"
#include "model/model.h"

struct store;

#define STORE_KEY_MAX META_KEY_MAX

/* What a write changed; the controller turns these into workqueue keys. */
enum store_change {
    STORE_CHANGED_NOTHING = 0,
    STORE_CHANGED_POD = 1 << 0,   /* a pod that is, or was, a pending, rejected or starting
                                     (store_is_starting_gpu_pod) GPU pod or carries a
                                     gputri/cause annotation was written or deleted */
    STORE_CHANGED_USAGE = 1 << 1, /* some node's GPU usage changed (a slot freed or taken) */
    STORE_CHANGED_NODES = 1 << 2, /* a node appeared, vanished, or changed labels, taints,
                                     unschedulable, capacity or allocatable */
};

/*
 * The store's lock, for metrics (controller: gputri_store_write_lock_wait_seconds_total and its
 * companions): counts since store_new(), each read on its own (not one snapshot).
 */
struct store_lock_stats {
    uint64_t write_locks;   /* times a writer took the write lock */
    uint64_t write_wait_ns; /* nanoseconds writers waited for it, in all (CLOCK_MONOTONIC) */
    uint64_t unchanged;     /* upserts and pod deletions that changed nothing, found under the
                               read lock alone */
};

/* store_lock_stats() - the counts above into *out. Thread-safe; takes no lock. */
void store_lock_stats(struct store *s, struct store_lock_stats *out);

/*
 * What one write changed, beyond the STORE_CHANGED_* bits: which node, and how, so that the
 * controller re-checks only the pending pods the change can affect (core/triage/requeue.h).
 * Filled by the *_delta writers below; the content is bounded (one node name, at most
 * STORE_DELTA_MAX_USAGE usage entries, the replaced node record).
 */
enum store_delta_what {
    STORE_DELTA_USAGE_FREED = 1 << 0,   /* a resource's sum on `node` went down */
    STORE_DELTA_USAGE_TAKEN = 1 << 1,   /* ... went up */
    STORE_DELTA_NODE_ADDED = 1 << 2,    /* `node` appeared (old_node NULL) */
    STORE_DELTA_NODE_REMOVED = 1 << 3,  /* `node` vanished (old_node is its last version) */
    STORE_DELTA_LABELS = 1 << 4,        /* metadata.labels of `node` changed */
    STORE_DELTA_TAINTS = 1 << 5,        /* spec.taints changed */
    STORE_DELTA_UNSCHEDULABLE = 1 << 6, /* spec.unschedulable flipped */
    STORE_DELTA_CAPACITY = 1 << 7,      /* status.capacity of a GPU resource changed */
    STORE_DELTA_ALLOCATABLE = 1 << 8,   /* status.allocatable of a GPU resource changed */
    /* a pod write (STORE_CHANGED_POD) whose only change is the PodScheduled condition's message
     * (model.h pod_equal_but_scheduled_message): what kube-scheduler writes on each retry */
    STORE_DELTA_POD_SCHEDULED_MESSAGE = 1 << 9,
};

#define STORE_DELTA_MAX_USAGE 8
#define STORE_DELTA_NAME_MAX 256

/* One resource's sum on the node before and after (as store_node_usage() reads it). */
struct store_delta_usage {
    char resource[STORE_DELTA_NAME_MAX];
    int64_t before, after;
};

struct store_delta {
    unsigned changed; /* STORE_CHANGED_* bits of this write */
    unsigned what;    /* STORE_DELTA_* bits */
    /* The description is incomplete (usage moved on two nodes, more than STORE_DELTA_MAX_USAGE
     * resources, a name past STORE_DELTA_NAME_MAX): a reader must assume anything changed. */
    bool overflow;
    char node[STORE_KEY_MAX]; /* the node changed, or whose usage changed; "" when none */
    struct store_delta_usage usage[STORE_DELTA_MAX_USAGE];
    size_t n_usage;
    /* A node change: the version replaced or removed (owned by the delta, freed by
     * store_delta_cleanup), NULL for a new node or when the write changed no node. */
    struct knode *old_node;
};

/* store_delta_cleanup() - free what *d owns and zero it. NULL-safe. */
void store_delta_cleanup(struct store_delta *d);

/* store_new() - an empty store; `gpus` is borrowed and must outlive it. NULL on ENOMEM. */
struct store *store_new(const struct gpu_set *gpus);
void store_free(struct store *s);

/*
 * store_keep_gpu_pods_only() - from now on keep only the pods the ladder and the controller can
 * read: those with a GPU request or a spec.resourceClaims entry, those being deleted (they may be
 * preemption victims, whatever they ask for), and those carrying a gputri/cause annotation. Any
 * other pod is not stored, and an upsert of it removes the record an earlier version left. Node
 * usage counts GPU requests only, so it is the same either way; a one-shot tool that reads any
 * pod by name (gputri triage of a pod without a GPU request) must not call it. For the
 * controller's memory: most pods of a cluster ask for no GPU (BENCHMARKS.md, cold start). A
 * bound pod kept then also loses its per-container extended-resource requests (kpod.ext) unless
 * the controller reads them again: when it is starting or rejected by its kubelet (it is still
 * classified), or when they alone make it a GPU pod (no GPU request, no claim); the CLI's stores
 * keep them for every pod. Call before the first upsert. Thread-safe.
 */
void store_keep_gpu_pods_only(struct store *s);

/* The GPU set the store was made with (borrowed). */
const struct gpu_set *store_gpus(const struct store *s);

/*
 * store_pod_upsert() - insert or replace the pod; takes the contents of *pod (which is zeroed, or
 * cleaned up on an error). *changed receives STORE_CHANGED_* bits; none when the pod equals its
 * record (model.h pod_equal, after the store's compaction): a status update of fields the
 * projection does not keep, or of a bound pod's fields compaction drops, changes nothing. Returns
 * K_OK, K_ENOMEM, or K_ETOOBIG when the key passes STORE_KEY_MAX or the pod's node would then be
 * using more than RESOURCE_LIST_MAX resource names. All or nothing: on an error the store is as
 * before (an existing record keeps its old version and its old accounting, and is not swept by the
 * running relist; a new pod is not stored).
 */
int store_pod_upsert(struct store *s, struct kpod *pod, unsigned *changed);
/* store_pod_delete() - remove "ns/name" if present. Same change bits. */
int store_pod_delete(struct store *s, const char *ns, const char *name, unsigned *changed);
/* store_node_upsert() / store_node_delete() - the same for nodes; an upsert that changes none of
 * labels, taints, unschedulable, capacity and allocatable (a heartbeat) reports no bits. */
int store_node_upsert(struct store *s, struct knode *node, unsigned *changed);
int store_node_delete(struct store *s, const char *name, unsigned *changed);

/*
 * The same writers, describing the change in *d (reset first; d->changed receives the bits the
 * writers above OR into *changed). The caller owns d->old_node: store_delta_cleanup(d) after
 * reading it. A usage change names the node and each resource whose sum moved, with the sums
 * before and after; a node change names the node, what changed, and hands over the replaced
 * version. Same returns and all-or-nothing rules; on an error *d describes no change.
 */
int store_pod_upsert_delta(struct store *s, struct kpod *pod, struct store_delta *d);
int store_pod_delete_delta(struct store *s, const char *ns, const char *name,
                           struct store_delta *d);
int store_node_upsert_delta(struct store *s, struct knode *node, struct store_delta *d);
int store_node_delete_delta(struct store *s, const char *name, struct store_delta *d);
int store_node_apply_json_delta(struct store *s, json_object *obj, int deleted, char *key,
                                struct store_delta *d);

/*
 * JSON entry points used by informers and the CLI: project the object (core/kube/project.h)
 * and upsert or delete it. `obj` is borrowed. Return K_OK, K_EPARSE for an object that does not
 * project (logged by the caller, skipped), K_ETOOBIG when the store refuses it (its key passes
 * STORE_KEY_MAX, or an upsert it cannot account, see store_pod_upsert), or K_ENOMEM. On K_OK *key
 * (may be NULL) receives the pod's "namespace/name" or the node's name, in a caller buffer of
 * STORE_KEY_MAX bytes.
 */
int store_pod_apply_json(struct store *s, json_object *obj, int deleted, char *key,
                         unsigned *changed);
int store_node_apply_json(struct store *s, json_object *obj, int deleted, char *key,
                          unsigned *changed);

/*
 * Relist support (mark and sweep). store_*_sync_begin() marks every record stale; upserts clear
 * the mark; store_*_sync_end() deletes the records still stale (they vanished while the watch
 * was down) and ORs the change bits into *changed. Writers take the lock themselves.
 */
void store_pods_sync_begin(struct store *s);
void store_pods_sync_end(struct store *s, unsigned *changed);
void store_nodes_sync_begin(struct store *s);
void store_nodes_sync_end(struct store *s, unsigned *changed);

void store_read_lock(struct store *s);
void store_read_unlock(struct store *s);

/* store_pod_get() - the pod "ns/name", or NULL. Read lock held. */
const struct kpod *store_pod_get(struct store *s, const char *ns, const char *name);

/* store_nodes() - all nodes sorted by name; *n receives the count. Read lock held. */
const struct knode *const *store_nodes(struct store *s, size_t *n);

/* store_node_get() - the node `name`, or NULL. Read lock held. */
const struct knode *store_node_get(struct store *s, const char *name);

/*
 * store_node_usage() - the classifier's node_usage_fn: the GPU `resource` requested by the
 * non-terminal pods bound to `node` (0 for an unknown node), saturated to INT64_MAX (INT64_MIN
 * for hand-built negative requests). ctx is the store. Read lock held.
 */
int64_t store_node_usage(void *ctx, const char *node, const char *resource);

/*
 * store_for_each_pending_gpu_pod() - call fn with the key of every pending GPU pod. Read lock
 * held; fn must not call back into the store's writers.
 */
void store_for_each_pending_gpu_pod(struct store *s, void (*fn)(void *ctx, const char *key),
                                    void *ctx);

/*
 * store_for_each_starting_gpu_pod() - call fn with the key of every bound GPU pod whose GPU
 * containers have not all started (store_is_starting_gpu_pod); store_starting_gpu_pod_count()
 * - how many there are. For the controller's resync and a new leader, which look at such pods
 * again as at the pending ones. Read lock held; fn must not call back into the store's writers.
 */
void store_for_each_starting_gpu_pod(struct store *s, void (*fn)(void *ctx, const char *key),
                                     void *ctx);
size_t store_starting_gpu_pod_count(struct store *s);

/*
 * store_for_each_pod_on_node() - call fn for every non-terminal pod bound to `node` that requests
 * a GPU resource (for `explain`: who holds the GPUs). Read lock held. Cost: all pods.
 */
void store_for_each_gpu_pod_on_node(struct store *s, const char *node,
                                    void (*fn)(void *ctx, const struct kpod *pod), void *ctx);

/*
 * store_for_each_bound_gpu_pod() - call fn for every non-terminal pod bound to any node that
 * requests a GPU resource: the pods store_node_usage() sums, in one pass (for the node view of
 * the CLI, cli/nodes.h: who holds each node's GPUs). Read lock held; fn must not call the
 * store's writers. Cost: all pods.
 */
void store_for_each_bound_gpu_pod(struct store *s, void (*fn)(void *ctx, const struct kpod *pod),
                                  void *ctx);

/* Counts, for metrics. Read lock held. */
size_t store_pod_count(struct store *s);
size_t store_node_count(struct store *s);
size_t store_pending_gpu_pod_count(struct store *s);

/* store_is_pending_gpu_pod() - unbound, not terminal, and requests a GPU resource, has
 * spec.resourceClaims (DRA: the claims may ask for GPUs), or asks for an extended resource a
 * DeviceClass may serve (model.h pod_has_ext_requests). */
int store_is_pending_gpu_pod(const struct kpod *p);

/*
 * store_is_starting_gpu_pod() - bound, not terminal nor being deleted, not rejected by its
 * kubelet, requests a GPU resource, has claims or extended resources a DeviceClass may serve,
 * and has GPU containers (a container referencing a claim counts as one) that have not all
 * started once (model/containers.h pod_gpu_containers_started). Such pods keep their container
 * statuses and runtimeClassName in the store until the containers have started, then are
 * compacted like every bound pod: the after-placement steps of the ladder read them
 * (classify/placement.h). Pure.
 */
int store_is_starting_gpu_pod(const struct kpod *p);

/* store_is_rejected_gpu_pod() - requests a GPU resource or has claims, and its kubelet rejected
 * it at admission (model.h pod_rejected_by_kubelet). Such pods keep their status reason,
 * message, creation time and controller owner in the store; they are few. */
int store_is_rejected_gpu_pod(const struct kpod *p);

/*
 * store_for_each_pod_on_node() - call fn for every pod the store holds with spec.nodeName ==
 * `node`, whatever its phase and requests (with store_keep_gpu_pods_only, the pods it keeps).
 * store_for_each_pod_of_owner() - the same for every pod whose controller owner reference has
 * uid `owner_uid` (kpod.owner_uid). For the classifier's facts (core/triage/triage.h: the
 * preemption victims on a nominated node, the rejected siblings of a rejected pod). Read lock
 * held; fn must not call the store's writers. Cost: all pods (neither is indexed: both are asked
 * only for the few pods that are nominated or rejected).
 */
void store_for_each_pod_on_node(struct store *s, const char *node,
                                void (*fn)(void *ctx, const struct kpod *pod), void *ctx);
void store_for_each_pod_of_owner(struct store *s, const char *owner_uid,
                                 void (*fn)(void *ctx, const struct kpod *pod), void *ctx);

/*
 * store_for_each_pod_of_gang() - fn for every pod of namespace `ns` whose gang link
 * (kpod.gang, model/gang.h) has g's kind and name, and g's sub and replica when g->sub is set (a
 * 1.35 Workload's podGroup and podGroupReplicaKey), whatever its phase (with
 * store_keep_gpu_pods_only the store keeps every gang member). For the gang's member count
 * (core/triage/triage.h). Read lock held; fn must not call the store's writers. Cost: all pods
 * (asked only for pending pods that belong to a gang).
 */
void store_for_each_pod_of_gang(struct store *s, const char *ns, const struct pod_gang *g,
                                void (*fn)(void *ctx, const struct kpod *pod), void *ctx);

#endif
