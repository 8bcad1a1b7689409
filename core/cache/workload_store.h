/*
 * workload_store.h - the Kueue Workloads a daemon knows (model/workload.h), by namespace/name and
 * by the uid of each of their owners, so that a pod finds its Workload in O(1): the pod
 * integration's Workload is owned by the Pod, the batch/v1 Job integration's by the Job
 * (kubernetes-sigs/kueue: pkg/controller/jobframework/reconciler.go, the Workload's
 * ownerReference to the job object).
 *
 * Memory: one struct kworkload per Workload (bounded by model/workload.h) and one index entry per
 * owner.
 *
 * Thread-safety: a reader-writer lock; the writers take it themselves; readers hold
 * workload_store_read_lock() around the lookups and for as long as they read what they return.
 * Lock order: the object store (store.h), then the DRA store (dra_store.h), then this one.
 */
#ifndef GPUTRI_CACHE_WORKLOAD_STORE_H
#define GPUTRI_CACHE_WORKLOAD_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/workload.h"

struct workload_store;

/* workload_store_new() - an empty store; NULL on ENOMEM. */
struct workload_store *workload_store_new(void);
/* workload_store_free() - free the store and every Workload in it. NULL-safe. */
void workload_store_free(struct workload_store *ws);

/*
 * workload_store_upsert() - put *w (its strings are moved into the store: *w is zeroed on K_OK)
 * in place of the Workload of the same namespace/name. *changed (may be NULL) says whether
 * anything gputri reads changed (workload_equal). Marks it seen in the current relist
 * (workload_store_sync_begin). Returns K_OK, K_EINVAL (no ns or name), K_ENOMEM (w unchanged).
 * Takes the write lock.
 */
int workload_store_upsert(struct workload_store *ws, struct kworkload *w, bool *changed);

/* workload_store_remove() - drop Workload ns/name if held; true when it was. Write lock. */
bool workload_store_remove(struct workload_store *ws, const char *ns, const char *name);

/*
 * workload_store_sync_begin() / _sync_end() - a relist: the Workloads not upserted between the
 * two are dropped at _sync_end (they were deleted while no watch ran). _sync_end returns how many
 * were dropped. workload_store_clear() drops every Workload (Kueue's API is no longer served).
 * Write lock.
 */
void workload_store_sync_begin(struct workload_store *ws);
size_t workload_store_sync_end(struct workload_store *ws);
void workload_store_clear(struct workload_store *ws);

void workload_store_read_lock(struct workload_store *ws);
void workload_store_read_unlock(struct workload_store *ws);

/*
 * workload_store_for_pod() - the Workload owned by the pod (uid `pod_uid`), else by the pod's
 * controller owner (uid `owner_uid`, may be NULL), else NULL; among several the first held.
 * Borrowed: valid while the read lock is held. Cost: O(1) on average.
 */
const struct kworkload *workload_store_for_pod(struct workload_store *ws, const char *pod_uid,
                                               const char *owner_uid);

/* workload_store_count() - the Workloads held. Read lock held. */
size_t workload_store_count(struct workload_store *ws);

#endif
