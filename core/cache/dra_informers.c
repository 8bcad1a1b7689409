/* dra_informers.c - the DRA informers at the version discovery chose, switched when it changes. */
#include "cache/dra_informers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/discovery_loop.h"
#include "util/log.h"
#include "util/result.h"

/* What an informer's handlers get as ctx: the owner's handlers are called through it. */
struct fwd {
    struct dra_informers *w;
    enum dra_kind kind;
};

struct dra_informers {
    const struct kube_config *cfg;
    struct dra_store *store;
    struct dra_informers_options o;
    struct informer_handlers owner[DRA_KIND_COUNT];
    struct fwd fwd[DRA_KIND_COUNT];
    struct discovery_loop disc; /* the discovery thread and its client */
    struct dra_api_probe probe; /* the discovery thread's (or start's) */
    /* mu guards inf[] for readers on other threads; only the checking thread changes it */
    pthread_mutex_t mu;
    struct informer *inf[DRA_KIND_COUNT];
    atomic_int version;
    atomic_uint generation;
};

/* ---- the owner's handlers, and a 404 that pokes discovery ---------------------------------- */

#define OWNER(ctx) (&((struct fwd *)(ctx))->w->owner[((struct fwd *)(ctx))->kind])

static void fwd_upsert(void *ctx, json_object *obj)
{
    OWNER(ctx)->upsert(OWNER(ctx)->ctx, obj);
}

static void fwd_remove(void *ctx, json_object *obj)
{
    OWNER(ctx)->remove(OWNER(ctx)->ctx, obj);
}

static void fwd_sync_begin(void *ctx)
{
    if (OWNER(ctx)->sync_begin)
        OWNER(ctx)->sync_begin(OWNER(ctx)->ctx);
}

static void fwd_sync_end(void *ctx)
{
    if (OWNER(ctx)->sync_end)
        OWNER(ctx)->sync_end(OWNER(ctx)->ctx);
}

static void fwd_watch_restart(void *ctx, int result)
{
    if (OWNER(ctx)->watch_restart)
        OWNER(ctx)->watch_restart(OWNER(ctx)->ctx, result);
}

static void fwd_api_error(void *ctx, long http_status)
{
    struct dra_informers *w = ((struct fwd *)ctx)->w;
    if (OWNER(ctx)->api_error)
        OWNER(ctx)->api_error(OWNER(ctx)->ctx, http_status);
    if (http_status == 404) /* the version may have gone away: ask discovery */
        discovery_loop_poke(&w->disc);
}

/* ---- lifetime ------------------------------------------------------------------------------ */

static void check_cb(void *ctx)
{
    dra_informers_check(ctx); /* a failure is logged, and the next check tries again */
}

struct dra_informers *dra_informers_new(const struct kube_config *cfg, struct dra_store *store,
                                        const struct informer_handlers handlers[DRA_KIND_COUNT],
                                        const struct dra_informers_options *o)
{
    struct dra_informers *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->cfg = cfg;
    w->store = store;
    if (o)
        w->o = *o;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        w->owner[k] = handlers[k];
        w->fwd[k] = (struct fwd){w, (enum dra_kind)k};
        if (k >= DRA_KIND_CORE_COUNT && handlers[k].upsert)
            w->probe.optional |= 1u << k; /* discovered only for an owner that reads them */
    }
    pthread_mutex_init(&w->mu, NULL);
    if (discovery_loop_init(&w->disc, cfg, w->o.discovery_transport, w->o.user_agent,
                            w->o.discovery_ms, DRA_INFORMERS_POKE_MS, check_cb, w) != K_OK) {
        dra_informers_free(w);
        return NULL;
    }
    return w;
}

/* Stop and free the informers of the kinds in `kinds` (bits 1u << kind; from the checking
 * thread). */
static void drop_informers(struct dra_informers *w, unsigned kinds)
{
    struct informer *old[DRA_KIND_COUNT] = {0};
    pthread_mutex_lock(&w->mu);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        if (kinds & (1u << k)) {
            old[k] = w->inf[k];
            w->inf[k] = NULL;
        }
    pthread_mutex_unlock(&w->mu);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        if (old[k]) {
            informer_stop(old[k]); /* a second stop of one never started is harmless */
            informer_free(old[k]);
        }
}

#define ALL_KINDS ((1u << DRA_KIND_COUNT) - 1)

/* Whether kind k is read now: its owner reads it and discovery gave it a version. */
static bool kind_read(const struct dra_informers *w, enum dra_kind k)
{
    return w->owner[k].upsert && w->probe.kinds[k] != DRA_API_NONE;
}

/* Make and start the informers of the kinds in `kinds` that are read, each at its version
 * (w->probe.kinds). K_OK or K_ENOMEM (none of them left running). */
static int make_informers(struct dra_informers *w, unsigned kinds)
{
    struct informer *inf[DRA_KIND_COUNT] = {0};
    int rc = K_OK;
    for (int k = 0; k < DRA_KIND_COUNT && rc == K_OK; k++) {
        if (!(kinds & (1u << k)) || !kind_read(w, (enum dra_kind)k))
            continue;
        struct informer_handlers h = {
            .ctx = &w->fwd[k],
            .upsert = fwd_upsert,
            .remove = fwd_remove,
            .sync_begin = fwd_sync_begin,
            .sync_end = fwd_sync_end,
            .watch_restart = fwd_watch_restart,
            .api_error = fwd_api_error,
        };
        struct informer_options io = {.name = dra_kind_name((enum dra_kind)k),
                                      .path = dra_kind_path((enum dra_kind)k, w->probe.kinds[k]),
                                      .transport = w->o.transport};
        if (!(inf[k] = informer_new(w->cfg, &io, &h)))
            rc = K_ENOMEM;
    }
    pthread_mutex_lock(&w->mu);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        if (inf[k])
            w->inf[k] = inf[k];
    pthread_mutex_unlock(&w->mu);
    for (int k = 0; k < DRA_KIND_COUNT && rc == K_OK; k++)
        if (inf[k])
            rc = informer_start(inf[k]);
    if (rc != K_OK)
        drop_informers(w, kinds);
    return rc;
}

/* A relist of nothing through the owner's handlers: kind k is read no more (the objects it left
 * in the store stand for nothing the API server serves now). */
static void relist_none(struct dra_informers *w, enum dra_kind k)
{
    fwd_sync_begin(&w->fwd[k]);
    fwd_sync_end(&w->fwd[k]);
}

int dra_informers_check(struct dra_informers *w)
{
    enum dra_api_version before[DRA_KIND_COUNT] = {0}; /* what the informers read until now */
    if (w->probe.checked && atomic_load(&w->version) != DRA_API_NONE)
        memcpy(before, w->probe.kinds, sizeof(before));
    if (!dra_api_probe_step(w->disc.client, &w->probe))
        return K_OK;
    enum dra_api_version v = w->probe.version;
    atomic_fetch_add(&w->generation, 1);
    if (v == DRA_API_NONE) {
        drop_informers(w, ALL_KINDS);
        atomic_store(&w->version, v);
        dra_store_unsync(w->store);
        return K_OK;
    }
    /* the kinds whose version changed switch; the others keep their informers */
    unsigned changed = 0;
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        if (w->probe.kinds[k] != before[k])
            changed |= 1u << k;
    drop_informers(w, changed);
    atomic_store(&w->version, v);
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        if (!(changed & (1u << k)))
            continue;
        if (w->probe.kinds[k] != DRA_API_NONE)
            dra_store_set_kind_version(w->store, (enum dra_kind)k, w->probe.kinds[k]);
        else if (w->owner[k].upsert && before[k] != DRA_API_NONE)
            relist_none(w, (enum dra_kind)k);
    }
    int rc = make_informers(w, changed);
    if (rc != K_OK) {
        log_error_kv("cannot start the DRA informers", LOG_STR("version", dra_api_version_name(v)),
                     LOG_STR("err", k_strerror(rc)));
        drop_informers(w, ALL_KINDS);
        w->probe.checked = false; /* the next check starts them all */
        atomic_store(&w->version, DRA_API_NONE);
    }
    return rc;
}

int dra_informers_start(struct dra_informers *w, bool check_now)
{
    if (check_now)
        dra_informers_check(w); /* a failure is logged, and the thread tries again */
    return discovery_loop_start(&w->disc, check_now);
}

enum dra_api_version dra_informers_version(struct dra_informers *w)
{
    return (enum dra_api_version)atomic_load(&w->version);
}

bool dra_informers_synced(struct dra_informers *w)
{
    bool synced = atomic_load(&w->version) != DRA_API_NONE;
    pthread_mutex_lock(&w->mu);
    for (int k = 0; k < DRA_KIND_COUNT && synced; k++) /* the kinds read: a core one always */
        synced = w->inf[k] ? informer_has_synced(w->inf[k])
                           : k >= DRA_KIND_CORE_COUNT || !w->owner[k].upsert;
    pthread_mutex_unlock(&w->mu);
    return synced;
}

unsigned dra_informers_generation(struct dra_informers *w)
{
    return atomic_load(&w->generation);
}

void dra_informers_stop(struct dra_informers *w)
{
    if (!w || !discovery_loop_stop(&w->disc))
        return;
    drop_informers(w, ALL_KINDS);
}

void dra_informers_free(struct dra_informers *w)
{
    if (!w)
        return;
    dra_informers_stop(w);
    discovery_loop_destroy(&w->disc);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
