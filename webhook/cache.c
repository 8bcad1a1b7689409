/* cache.c - informer-fed caches of nodes, RuntimeClasses, ResourceQuotas and Namespaces, a core
 * DRA store fed by the four DRA informers, and the node autoscalers present. */
#include "cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/dra_informers.h"
#include "cache/dra_store.h"
#include "cache/informer.h"
#include "cache/key.h"
#include "cache/store.h"
#include "kube/project.h"
#include "util/log.h"
#include "util/result.h"
#include "util/version.h"

/* A sorted array of fixed-size records (the projections), keyed by a string. */
struct table {
    struct wh_cache *c;
    const char *name;
    size_t rec_size;
    char *recs; /* n * rec_size bytes */
    char **keys;
    bool *stale;
    size_t n, cap;
    /* project obj into rec; fill key (STORE_KEY_MAX bytes) */
    int (*project)(json_object *obj, const struct gpu_set *gpus, void *rec, char *key);
    void (*cleanup)(void *rec);
};

struct wh_cache {
    const struct kube_config *cfg;
    const struct gpu_set *gpus;
    const struct gpu_set *dra_gpus;
    bool assume_ert;
    atomic_uint autoscalers;              /* WH_AUTOSCALER_* bits */
    struct wh_autoscaler_watch *as_watch; /* mode auto only */
    struct store *nodes;
    pthread_rwlock_t lock; /* the tables */
    struct table rcs, quotas, nss;
    struct informer *inf_nodes, *inf_rcs, *inf_quotas, *inf_nss;
    struct dra_store *dra; /* NULL without dra_gpus */
    struct dra_store_feed dra_feeds[DRA_KIND_COUNT];
    struct dra_informers *dra_watch; /* its informers, at the version served */
    bool stopped;
};

/* ------------------------------------------------------------------ projections */

static int project_rc(json_object *obj, const struct gpu_set *gpus, void *rec, char *key)
{
    (void)gpus;
    struct wh_runtime_class *rc = rec;
    int r = wh_project_runtime_class(obj, rc);
    if (r == K_OK)
        snprintf(key, STORE_KEY_MAX, "%s", rc->name);
    return r;
}

static int project_q(json_object *obj, const struct gpu_set *gpus, void *rec, char *key)
{
    struct wh_quota *q = rec;
    int r = wh_project_quota(obj, gpus, q);
    if (r == K_OK)
        meta_namespace_key(key, STORE_KEY_MAX, q->ns, q->name);
    return r;
}

static int project_ns(json_object *obj, const struct gpu_set *gpus, void *rec, char *key)
{
    (void)gpus;
    struct wh_namespace *ns = rec;
    int r = wh_project_namespace(obj, ns);
    if (r == K_OK)
        snprintf(key, STORE_KEY_MAX, "%s", ns->name);
    return r;
}

static void cleanup_rc(void *rec)
{
    wh_runtime_class_cleanup(rec);
}

static void cleanup_q(void *rec)
{
    wh_quota_cleanup(rec);
}

static void cleanup_ns(void *rec)
{
    wh_namespace_cleanup(rec);
}

/* ------------------------------------------------------------------ tables */

/* Index of key, or -(insertion point) - 1. Lock held. */
static long table_find(const struct table *t, const char *key)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->keys[mid], key);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

static int table_grow(struct table *t)
{
    if (t->n < t->cap)
        return K_OK;
    size_t cap = t->cap ? t->cap * 2 : 16;
    char *recs = realloc(t->recs, cap * t->rec_size);
    if (!recs)
        return K_ENOMEM;
    t->recs = recs;
    char **keys = realloc(t->keys, cap * sizeof(*keys));
    if (!keys)
        return K_ENOMEM;
    t->keys = keys;
    bool *stale = realloc(t->stale, cap * sizeof(*stale));
    if (!stale)
        return K_ENOMEM;
    t->stale = stale;
    t->cap = cap;
    return K_OK;
}

static void table_upsert(void *ctx, json_object *obj)
{
    struct table *t = ctx;
    char key[STORE_KEY_MAX];
    char *rec = malloc(t->rec_size);
    if (!rec)
        return;
    int rc = t->project(obj, t->c->gpus, rec, key);
    if (rc != K_OK) {
        log_warn_kv("skipping an object that does not project", LOG_STR("informer", t->name),
                    LOG_STR("err", k_strerror(rc)));
        free(rec);
        return;
    }
    pthread_rwlock_wrlock(&t->c->lock);
    long i = table_find(t, key);
    if (i >= 0) {
        t->cleanup(t->recs + (size_t)i * t->rec_size);
        memcpy(t->recs + (size_t)i * t->rec_size, rec, t->rec_size);
        t->stale[i] = false;
    } else {
        size_t at = (size_t)(-i - 1);
        char *k = strdup(key);
        if (!k || table_grow(t) != K_OK) {
            free(k);
            t->cleanup(rec);
            pthread_rwlock_unlock(&t->c->lock);
            free(rec);
            log_error_kv("out of memory", LOG_STR("informer", t->name));
            return;
        }
        memmove(t->recs + (at + 1) * t->rec_size, t->recs + at * t->rec_size,
                (t->n - at) * t->rec_size);
        memmove(t->keys + at + 1, t->keys + at, (t->n - at) * sizeof(*t->keys));
        memmove(t->stale + at + 1, t->stale + at, (t->n - at) * sizeof(*t->stale));
        memcpy(t->recs + at * t->rec_size, rec, t->rec_size);
        t->keys[at] = k;
        t->stale[at] = false;
        t->n++;
    }
    pthread_rwlock_unlock(&t->c->lock);
    free(rec);
    log_info_kv(4, "updated", LOG_STR("informer", t->name), LOG_STR("key", key));
}

/* Removes index i. Lock held. */
static void table_remove_at(struct table *t, size_t i)
{
    t->cleanup(t->recs + i * t->rec_size);
    free(t->keys[i]);
    memmove(t->recs + i * t->rec_size, t->recs + (i + 1) * t->rec_size,
            (t->n - i - 1) * t->rec_size);
    memmove(t->keys + i, t->keys + i + 1, (t->n - i - 1) * sizeof(*t->keys));
    memmove(t->stale + i, t->stale + i + 1, (t->n - i - 1) * sizeof(*t->stale));
    t->n--;
}

static void table_remove(void *ctx, json_object *obj)
{
    struct table *t = ctx;
    char key[STORE_KEY_MAX];
    char *rec = malloc(t->rec_size);
    if (!rec)
        return;
    if (t->project(obj, t->c->gpus, rec, key) != K_OK) {
        free(rec);
        return;
    }
    t->cleanup(rec);
    free(rec);
    pthread_rwlock_wrlock(&t->c->lock);
    long i = table_find(t, key);
    if (i >= 0)
        table_remove_at(t, (size_t)i);
    pthread_rwlock_unlock(&t->c->lock);
}

static void table_sync_begin(void *ctx)
{
    struct table *t = ctx;
    pthread_rwlock_wrlock(&t->c->lock);
    for (size_t i = 0; i < t->n; i++)
        t->stale[i] = true;
    pthread_rwlock_unlock(&t->c->lock);
}

static void table_sync_end(void *ctx)
{
    struct table *t = ctx;
    pthread_rwlock_wrlock(&t->c->lock);
    for (size_t i = t->n; i-- > 0;)
        if (t->stale[i])
            table_remove_at(t, i);
    pthread_rwlock_unlock(&t->c->lock);
    log_info_kv(2, "listed", LOG_STR("informer", t->name));
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        t->cleanup(t->recs + i * t->rec_size);
        free(t->keys[i]);
    }
    free(t->recs);
    free(t->keys);
    free(t->stale);
    memset(t, 0, sizeof(*t));
}

/* ------------------------------------------------------------------ nodes */

static void node_upsert(void *ctx, json_object *obj)
{
    struct wh_cache *c = ctx;
    unsigned changed = 0;
    int rc = store_node_apply_json(c->nodes, obj, 0, NULL, &changed);
    if (rc != K_OK)
        log_warn_kv("skipping a node that does not project", LOG_STR("err", k_strerror(rc)));
}

static void node_remove(void *ctx, json_object *obj)
{
    struct wh_cache *c = ctx;
    unsigned changed = 0;
    store_node_apply_json(c->nodes, obj, 1, NULL, &changed);
}

static void nodes_sync_begin(void *ctx)
{
    struct wh_cache *c = ctx;
    store_nodes_sync_begin(c->nodes);
}

static void nodes_sync_end(void *ctx)
{
    struct wh_cache *c = ctx;
    unsigned changed = 0;
    store_nodes_sync_end(c->nodes, &changed);
    log_info_kv(2, "listed", LOG_STR("informer", "nodes"));
}

/* ------------------------------------------------------------------ lifetime */

static struct informer *table_informer(struct wh_cache *c, struct table *t, const char *path)
{
    struct informer_handlers h = {
        .ctx = t,
        .upsert = table_upsert,
        .remove = table_remove,
        .sync_begin = table_sync_begin,
        .sync_end = table_sync_end,
    };
    struct informer_options o = {.name = t->name, .path = path};
    return informer_new(c->cfg, &o, &h);
}

struct wh_cache *wh_cache_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                              const struct gpu_set *dra_gpus, bool assume_ert,
                              const struct wh_cache_autoscaler *as)
{
    struct wh_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = cfg;
    c->gpus = gpus;
    c->dra_gpus = dra_gpus;
    c->assume_ert = assume_ert;
    pthread_rwlock_init(&c->lock, NULL);
    c->rcs = (struct table){
        c,          "runtimeclasses", sizeof(struct wh_runtime_class), NULL, NULL, NULL, 0, 0,
        project_rc, cleanup_rc};
    c->quotas = (struct table){
        c, "resourcequotas", sizeof(struct wh_quota), NULL, NULL, NULL, 0, 0, project_q, cleanup_q};
    c->nss = (struct table){
        c,          "namespaces", sizeof(struct wh_namespace), NULL, NULL, NULL, 0, 0,
        project_ns, cleanup_ns};
    c->nodes = store_new(gpus);
    struct informer_handlers nh = {
        .ctx = c,
        .upsert = node_upsert,
        .remove = node_remove,
        .sync_begin = nodes_sync_begin,
        .sync_end = nodes_sync_end,
    };
    struct informer_options no = {.name = "nodes", .path = "/api/v1/nodes"};
    c->inf_nodes = informer_new(cfg, &no, &nh);
    c->inf_rcs = table_informer(c, &c->rcs, "/apis/node.k8s.io/v1/runtimeclasses");
    c->inf_quotas = table_informer(c, &c->quotas, "/api/v1/resourcequotas");
    c->inf_nss = table_informer(c, &c->nss, "/api/v1/namespaces");
    bool dra_ok = true;
    if (dra_gpus) {
        dra_ok = (c->dra = dra_store_new()) != NULL;
        struct informer_handlers h[DRA_KIND_COUNT] = {{0}}; /* no DeviceTaintRules (cache.h) */
        for (int k = 0; k < DRA_KIND_CORE_COUNT && dra_ok; k++) {
            c->dra_feeds[k] = (struct dra_store_feed){c->dra, (enum dra_kind)k};
            h[k] = dra_store_handlers(&c->dra_feeds[k]);
        }
        struct dra_informers_options o = {.user_agent = "gputri-webhook/" GPUTRI_VERSION};
        dra_ok = dra_ok && (c->dra_watch = dra_informers_new(cfg, c->dra, h, &o)) != NULL;
    }
    enum wh_autoscaler_mode mode = as ? as->mode : WH_AUTOSCALER_MODE_NONE;
    atomic_init(&c->autoscalers, wh_autoscaler_mode_bits(mode));
    bool as_ok = true;
    if (mode == WH_AUTOSCALER_MODE_AUTO)
        as_ok =
            (c->as_watch = wh_autoscaler_watch_new(cfg, as->discovery_ms, &c->autoscalers)) != NULL;
    if (!c->nodes || !c->inf_nodes || !c->inf_rcs || !c->inf_quotas || !c->inf_nss || !dra_ok ||
        !as_ok) {
        c->stopped = true; /* nothing started */
        wh_cache_free(c);
        return NULL;
    }
    return c;
}

int wh_cache_start(struct wh_cache *c)
{
    if (informer_start(c->inf_nodes) != K_OK || informer_start(c->inf_rcs) != K_OK ||
        informer_start(c->inf_quotas) != K_OK || informer_start(c->inf_nss) != K_OK)
        return K_ENOMEM;
    if (c->dra_watch && dra_informers_start(c->dra_watch, false) != K_OK) /* not waited for */
        return K_ENOMEM;
    if (c->as_watch && wh_autoscaler_watch_start(c->as_watch) != K_OK)
        return K_ENOMEM;
    return K_OK;
}

bool wh_cache_synced(struct wh_cache *c)
{
    return informer_has_synced(c->inf_nodes) && informer_has_synced(c->inf_rcs) &&
           informer_has_synced(c->inf_quotas) && informer_has_synced(c->inf_nss) &&
           (!c->as_watch || wh_autoscaler_watch_checked(c->as_watch));
}

void wh_cache_read(struct wh_cache *c, struct wh_snapshot *snap)
{
    memset(snap, 0, sizeof(*snap));
    /* the synced flags first: a list counted as synced is complete under the locks below */
    snap->nodes_synced = informer_has_synced(c->inf_nodes);
    snap->runtime_classes_synced = informer_has_synced(c->inf_rcs);
    snap->quotas_synced = informer_has_synced(c->inf_quotas);
    snap->namespaces_synced = informer_has_synced(c->inf_nss);
    snap->autoscalers = atomic_load(&c->autoscalers);
    store_read_lock(c->nodes);
    pthread_rwlock_rdlock(&c->lock);
    if (c->dra)
        dra_store_read_lock(c->dra); /* the DRA kinds' synced flags are read under it */
    snap->gpus = c->gpus;
    snap->assume_ert = c->assume_ert;
    snap->nodes = store_nodes(c->nodes, &snap->n_nodes);
    snap->runtime_classes = (const struct wh_runtime_class *)c->rcs.recs;
    snap->n_runtime_classes = c->rcs.n;
    snap->quotas = (const struct wh_quota *)c->quotas.recs;
    snap->n_quotas = c->quotas.n;
    snap->namespaces = (const struct wh_namespace *)c->nss.recs;
    snap->n_namespaces = c->nss.n;
    snap->dra_gpus = c->dra ? c->dra_gpus : NULL;
    snap->dra = c->dra;
}

void wh_cache_release(struct wh_cache *c)
{
    if (c->dra)
        dra_store_read_unlock(c->dra);
    pthread_rwlock_unlock(&c->lock);
    store_read_unlock(c->nodes);
}

void wh_cache_stop(struct wh_cache *c)
{
    if (!c || c->stopped)
        return;
    c->stopped = true;
    informer_stop(c->inf_nodes);
    informer_stop(c->inf_rcs);
    informer_stop(c->inf_quotas);
    informer_stop(c->inf_nss);
    dra_informers_stop(c->dra_watch);
    wh_autoscaler_watch_free(c->as_watch);
    c->as_watch = NULL;
}

void wh_cache_free(struct wh_cache *c)
{
    if (!c)
        return;
    wh_cache_stop(c);
    wh_autoscaler_watch_free(c->as_watch); /* when never started: wh_cache_new failed */
    informer_free(c->inf_nodes);
    informer_free(c->inf_rcs);
    informer_free(c->inf_quotas);
    informer_free(c->inf_nss);
    dra_informers_free(c->dra_watch);
    dra_store_free(c->dra);
    table_free(&c->rcs);
    table_free(&c->quotas);
    table_free(&c->nss);
    store_free(c->nodes);
    pthread_rwlock_destroy(&c->lock);
    free(c);
}
