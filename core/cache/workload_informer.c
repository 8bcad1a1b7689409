/* workload_informer.c - the Workload informer at the version discovery chose. */
#include "cache/workload_informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache/discovery_loop.h"
#include "util/log.h"
#include "util/result.h"

struct workload_informer {
    const struct kube_config *cfg;
    struct workload_store *store;
    struct workload_informer_options o;
    struct informer_handlers owner;
    struct discovery_loop disc; /* the discovery thread and its client */
    struct kueue_api_probe probe;
    pthread_mutex_t mu; /* guards inf for readers on other threads */
    struct informer *inf;
    char path[128];
    atomic_int version;
};

static void fwd_upsert(void *ctx, json_object *obj)
{
    struct workload_informer *w = ctx;
    w->owner.upsert(w->owner.ctx, obj);
}

static void fwd_remove(void *ctx, json_object *obj)
{
    struct workload_informer *w = ctx;
    w->owner.remove(w->owner.ctx, obj);
}

static void fwd_sync_begin(void *ctx)
{
    struct workload_informer *w = ctx;
    if (w->owner.sync_begin)
        w->owner.sync_begin(w->owner.ctx);
}

static void fwd_sync_end(void *ctx)
{
    struct workload_informer *w = ctx;
    if (w->owner.sync_end)
        w->owner.sync_end(w->owner.ctx);
}

static void fwd_watch_restart(void *ctx, int result)
{
    struct workload_informer *w = ctx;
    if (w->owner.watch_restart)
        w->owner.watch_restart(w->owner.ctx, result);
}

static void fwd_api_error(void *ctx, long http_status)
{
    struct workload_informer *w = ctx;
    if (w->owner.api_error)
        w->owner.api_error(w->owner.ctx, http_status);
    if (http_status == 404) /* the CRD may have gone: ask discovery */
        discovery_loop_poke(&w->disc);
}

static void check_cb(void *ctx)
{
    workload_informer_check(ctx);
}

struct workload_informer *workload_informer_new(const struct kube_config *cfg,
                                                struct workload_store *store,
                                                const struct informer_handlers *handlers,
                                                const struct workload_informer_options *o)
{
    struct workload_informer *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->cfg = cfg;
    w->store = store;
    w->owner = *handlers;
    if (o)
        w->o = *o;
    pthread_mutex_init(&w->mu, NULL);
    if (discovery_loop_init(&w->disc, cfg, w->o.discovery_transport, w->o.user_agent,
                            w->o.discovery_ms, WORKLOAD_INFORMER_POKE_MS, check_cb, w) != K_OK) {
        workload_informer_free(w);
        return NULL;
    }
    return w;
}

static void drop_informer(struct workload_informer *w)
{
    pthread_mutex_lock(&w->mu);
    struct informer *old = w->inf;
    w->inf = NULL;
    pthread_mutex_unlock(&w->mu);
    if (old) {
        informer_stop(old);
        informer_free(old);
    }
}

int workload_informer_check(struct workload_informer *w)
{
    if (!kueue_api_probe_step(w->disc.client, &w->probe))
        return K_OK;
    enum kueue_api_version v = w->probe.version;
    drop_informer(w);
    atomic_store(&w->version, v);
    if (v == KUEUE_API_NONE) {
        workload_store_clear(w->store);
        return K_OK;
    }
    kueue_workloads_path(v, NULL, w->path, sizeof(w->path));
    struct informer_handlers h = {
        .ctx = w,
        .upsert = fwd_upsert,
        .remove = fwd_remove,
        .sync_begin = fwd_sync_begin,
        .sync_end = fwd_sync_end,
        .watch_restart = fwd_watch_restart,
        .api_error = fwd_api_error,
    };
    struct informer_options io = {
        .name = "workloads", .path = w->path, .transport = w->o.transport};
    struct informer *inf = informer_new(w->cfg, &io, &h);
    int rc = inf ? informer_start(inf) : K_ENOMEM;
    if (rc != K_OK) {
        informer_free(inf);
        log_error_kv("cannot start the Kueue Workload informer",
                     LOG_STR("version", kueue_api_version_name(v)), LOG_STR("err", k_strerror(rc)));
        w->probe.checked = false; /* the next check starts it */
        atomic_store(&w->version, KUEUE_API_NONE);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    w->inf = inf;
    pthread_mutex_unlock(&w->mu);
    return K_OK;
}

int workload_informer_start(struct workload_informer *w, bool check_now)
{
    if (check_now)
        workload_informer_check(w);
    return discovery_loop_start(&w->disc, check_now);
}

enum kueue_api_version workload_informer_version(struct workload_informer *w)
{
    return (enum kueue_api_version)atomic_load(&w->version);
}

void workload_informer_poke(struct workload_informer *w)
{
    discovery_loop_poke(&w->disc);
}

bool workload_informer_synced(struct workload_informer *w)
{
    if (atomic_load(&w->version) == KUEUE_API_NONE)
        return true;
    pthread_mutex_lock(&w->mu);
    bool synced = w->inf && informer_has_synced(w->inf);
    pthread_mutex_unlock(&w->mu);
    return synced;
}

void workload_informer_stop(struct workload_informer *w)
{
    if (!w || !discovery_loop_stop(&w->disc))
        return;
    drop_informer(w);
}

void workload_informer_free(struct workload_informer *w)
{
    if (!w)
        return;
    workload_informer_stop(w);
    discovery_loop_destroy(&w->disc);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
