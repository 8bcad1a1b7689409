/*
 * workloads.c - the Kueue Workload informer's handlers: every Workload change goes into the
 * workload store (core/cache/workload_store.h), and the pods it owns go onto the workqueue.
 */
#include <stdbool.h>
#include <string.h>

#include "cache/key.h"
#include "controller_internal.h"
#include "kube/project_workload.h"
#include "util/log.h"
#include "util/result.h"

/* The pending pods owned by `w`: its Pod owners, by key (pod integration). A Job's pods do not
 * exist while its Workload waits (the Job stays suspended); the resync looks at the rest. */
static void requeue_owned(struct controller *c, const struct kworkload *w)
{
    for (size_t i = 0; i < w->n_owners; i++) {
        const struct workload_owner *o = &w->owners[i];
        char key[META_KEY_MAX];
        if (!o->kind || strcmp(o->kind, "Pod") != 0 || !o->name ||
            meta_namespace_key(key, sizeof(key), w->ns, o->name) != K_OK)
            continue;
        controller_enqueue_recheck(c, key);
    }
}

static void workload_event(struct controller *c, json_object *obj, bool deleted)
{
    struct kworkload w;
    int rc = project_workload(obj, &w);
    if (rc != K_OK) {
        log_info_kv(2, "skipping a Workload that cannot be read", LOG_STR("err", k_strerror(rc)));
        return;
    }
    bool changed = true;
    if (deleted) {
        changed = workload_store_remove(c->workloads, w.ns, w.name);
        if (changed)
            requeue_owned(c, &w);
        workload_cleanup(&w);
        return;
    }
    /* the owners to requeue, kept before the store takes the strings */
    struct kworkload owners = {.ns = w.ns, .n_owners = w.n_owners};
    memcpy(owners.owners, w.owners, sizeof(owners.owners));
    struct kworkload keep = w;
    rc = workload_store_upsert(c->workloads, &w, &changed);
    if (rc != K_OK) {
        log_info_kv(2, "cannot keep a Workload", LOG_STR("namespace", keep.ns),
                    LOG_STR("name", keep.name), LOG_STR("err", k_strerror(rc)));
        workload_cleanup(&keep);
        return;
    }
    /* The store owns the strings now; requeue under its read lock so they stay valid. */
    if (changed) {
        workload_store_read_lock(c->workloads);
        requeue_owned(c, &owners);
        workload_store_read_unlock(c->workloads);
    }
}

static void wl_upsert(void *ctx, json_object *obj)
{
    workload_event(ctx, obj, false);
}

static void wl_remove(void *ctx, json_object *obj)
{
    workload_event(ctx, obj, true);
}

static void wl_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    workload_store_sync_begin(c->workloads);
}

static void wl_sync_end(void *ctx)
{
    struct controller *c = ctx;
    size_t dropped = workload_store_sync_end(c->workloads);
    if (dropped)
        controller_enqueue_pending(c); /* Workloads gone while no watch ran */
}

struct informer_handlers controller_workload_handlers(struct controller *c)
{
    return (struct informer_handlers){
        .ctx = c,
        .upsert = wl_upsert,
        .remove = wl_remove,
        .sync_begin = wl_sync_begin,
        .sync_end = wl_sync_end,
    };
}
