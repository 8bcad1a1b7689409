/* gang_informers.c - gang objects read while served, and the PodGroup Events (gang_informers.h). */
#include "cache/gang_informers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/discovery_loop.h"
#include "cache/informer.h"
#include "kube/json.h"
#include "kube/project_gang.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/result.h"

/* The versions read per kind, best first (header). */
static const char *const versions[GANG_KIND_COUNT][3] = {
    [GANG_KAI] = {"v2alpha2"},
    [GANG_VOLCANO] = {"v1beta1"},
    [GANG_WORKLOAD] = {"v1alpha1"},
    [GANG_PODGROUP] = {"v1beta1", "v1alpha2"},
};

struct fwd {
    struct gang_informers *w;
    enum gang_kind kind;
};

struct gang_informers {
    const struct kube_config *cfg;
    struct gang_store *store;
    struct gang_informers_options o;
    gang_changed_fn changed;
    void *ctx;
    struct discovery_loop disc;
    struct fwd fwd[GANG_KIND_COUNT];
    pthread_mutex_t mu; /* inf[], version[] for readers on other threads */
    struct informer *inf[GANG_KIND_COUNT];
    char version[GANG_KIND_COUNT][16]; /* "" not served */
    struct informer *events;
    bool stopped;
};

bool gang_api_path(char *out, size_t cap, enum gang_kind k, const char *version, const char *ns,
                   const char *name)
{
    const char *group, *resource;
    if (!gang_kind_api(k, &group, NULL, &resource) || !version)
        return false;
    int n = ns && name ? snprintf(out, cap, "/apis/%s/%s/namespaces/%s/%s/%s", group, version, ns,
                                  resource, name)
                       : snprintf(out, cap, "/apis/%s/%s/%s", group, version, resource);
    return n > 0 && (size_t)n < cap;
}

/* Whether an APIResourceList lists `resource`. */
static bool lists(json_object *doc, const char *resource)
{
    json_object *res = kube_json_get(doc, "resources", json_type_array);
    size_t n = res ? json_object_array_length(res) : 0;
    for (size_t i = 0; i < n && i < 4096; i++) {
        const char *name = kube_json_str(json_object_array_get_idx(res, i), "name");
        if (name && strcmp(name, resource) == 0)
            return true;
    }
    return false;
}

int gang_api_probe(struct kube_client *c, enum gang_kind k, bool *served, char *version, size_t cap,
                   struct kube_error *err)
{
    *served = false;
    if (cap)
        version[0] = '\0';
    const char *group, *resource;
    if (!gang_kind_api(k, &group, NULL, &resource))
        return K_EINVAL;
    for (int i = 0; i < 3 && versions[k][i]; i++) {
        char path[256];
        snprintf(path, sizeof(path), "/apis/%s/%s", group, versions[k][i]);
        json_object *doc = NULL;
        struct kube_error e = {0};
        int rc = kube_get(c, path, &doc, &e);
        if (rc == K_OK) {
            bool has = lists(doc, resource);
            json_object_put(doc);
            if (has) {
                *served = true;
                snprintf(version, cap, "%s", versions[k][i]);
                return K_OK;
            }
            continue;
        }
        if (e.http_status == 404)
            continue;
        if (err)
            *err = e;
        return rc;
    }
    return K_OK;
}

/* ---- the informers' handlers ----------------------------------------------------------------- */

static void obj_upsert(void *ctx, json_object *obj)
{
    struct fwd *f = ctx;
    struct gang_group *g = malloc(sizeof(*g)); /* 13 KiB: not on the informer's stack */
    if (!g)
        return;
    bool changed = false;
    if (project_gang_group(obj, f->kind, g) == K_OK &&
        gang_store_put(f->w->store, g, &changed) == K_OK && changed && f->w->changed)
        f->w->changed(f->w->ctx, f->kind, g->ns, g->name);
    free(g);
}

static void obj_remove(void *ctx, json_object *obj)
{
    struct fwd *f = ctx;
    json_object *meta = kube_json_get(obj, "metadata", json_type_object);
    const char *ns = kube_json_str(meta, "namespace"), *name = kube_json_str(meta, "name");
    if (!name)
        return;
    gang_store_remove(f->w->store, f->kind, ns, name);
    if (f->w->changed)
        f->w->changed(f->w->ctx, f->kind, ns, name);
}

static void obj_sync_begin(void *ctx)
{
    struct fwd *f = ctx;
    gang_store_sync_begin(f->w->store, f->kind);
}

static void gone(void *ctx, const struct gang_group *g)
{
    struct gang_informers *w = ctx;
    if (w->changed)
        w->changed(w->ctx, g->kind, g->ns, g->name);
}

static void obj_sync_end(void *ctx)
{
    struct fwd *f = ctx;
    gang_store_sync_end(f->w->store, f->kind, gone, f->w);
    if (!gang_store_is_read(f->w->store, f->kind)) {
        gang_store_set_read(f->w->store, f->kind, true);
        log_info_kv(0, "objects synced", LOG_STR("kind", gang_kind_name(f->kind)),
                    LOG_INT("count", gang_store_count(f->w->store, f->kind)));
        if (f->w->changed)
            f->w->changed(f->w->ctx, f->kind, NULL, NULL);
    }
}

static void obj_api_error(void *ctx, long http_status)
{
    struct fwd *f = ctx;
    if (http_status == 404)
        discovery_loop_poke(&f->w->disc);
}

/* The group an Event is about (involvedObject), GANG_NONE when it is none. An Event speaks for
 * the groups of its own namespace only (as the pods' Event records, cache/pod_events.h). */
static enum gang_kind event_group(json_object *ev, const char **ns, const char **name)
{
    json_object *io = kube_json_get(ev, "involvedObject", json_type_object);
    *ns = kube_json_str(io, "namespace");
    *name = kube_json_str(io, "name");
    const char *own = kube_json_str(kube_json_get(ev, "metadata", json_type_object), "namespace");
    if (!*name || !*ns || !own || strcmp(*ns, own) != 0)
        return GANG_NONE;
    return gang_kind_of_api_version(kube_json_str(io, "apiVersion"), kube_json_str(io, "kind"));
}

bool gang_event_apply(struct gang_store *s, json_object *ev)
{
    const char *ns, *name;
    enum gang_kind k = event_group(ev, &ns, &name);
    if (k == GANG_NONE)
        return false;
    int64_t at = 0;
    if (!clock_parse_rfc3339(kube_json_str(ev, "lastTimestamp"), &at))
        (void)clock_parse_rfc3339(kube_json_str(ev, "eventTime"), &at);
    return gang_store_event(s, k, ns, name, kube_json_str(ev, "reason"),
                            kube_json_str(ev, "message"), at);
}

static void event_upsert(void *ctx, json_object *obj)
{
    struct gang_informers *w = ctx;
    const char *ns, *name;
    enum gang_kind k = event_group(obj, &ns, &name);
    if (k != GANG_NONE && gang_event_apply(w->store, obj) && w->changed)
        w->changed(w->ctx, k, ns, name);
}

static void event_remove(void *ctx, json_object *obj)
{
    struct gang_informers *w = ctx;
    const char *ns, *name;
    enum gang_kind k = event_group(obj, &ns, &name);
    /* a held group's word stays until a newer Event replaces it; the record of a group not held
       goes (gang_store_event_gone) */
    if (k != GANG_NONE)
        gang_store_event_gone(w->store, k, ns, name);
}

/* ---- discovery ---------------------------------------------------------------------------------
 */

static void check_cb(void *ctx)
{
    gang_informers_check(ctx);
}

struct gang_informers *gang_informers_new(const struct kube_config *cfg, struct gang_store *store,
                                          const struct gang_informers_options *o,
                                          gang_changed_fn changed, void *ctx)
{
    struct gang_informers *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->cfg = cfg;
    w->store = store;
    if (o)
        w->o = *o;
    w->changed = changed;
    w->ctx = ctx;
    for (int k = 0; k < GANG_KIND_COUNT; k++)
        w->fwd[k] = (struct fwd){w, (enum gang_kind)k};
    pthread_mutex_init(&w->mu, NULL);
    if (discovery_loop_init(&w->disc, cfg, w->o.discovery_transport, w->o.user_agent,
                            w->o.discovery_ms, GANG_INFORMERS_POKE_MS, check_cb, w) != K_OK) {
        gang_informers_free(w);
        return NULL;
    }
    return w;
}

static void drop(struct gang_informers *w, enum gang_kind k)
{
    pthread_mutex_lock(&w->mu);
    struct informer *old = w->inf[k];
    w->inf[k] = NULL;
    w->version[k][0] = '\0';
    pthread_mutex_unlock(&w->mu);
    if (old) {
        informer_stop(old);
        informer_free(old);
    }
}

int gang_informers_check(struct gang_informers *w)
{
    int rc = K_OK;
    for (int k = 1; k < GANG_KIND_COUNT; k++) {
        bool served;
        char version[16];
        struct kube_error err = {0};
        if (gang_api_probe(w->disc.client, (enum gang_kind)k, &served, version, sizeof(version),
                           &err) != K_OK)
            continue; /* not known now: keep what runs */
        pthread_mutex_lock(&w->mu);
        bool same = strcmp(w->version[k], version) == 0;
        pthread_mutex_unlock(&w->mu);
        if (same)
            continue;
        const char *group;
        gang_kind_api((enum gang_kind)k, &group, NULL, NULL);
        bool was = w->inf[k] != NULL;
        drop(w, (enum gang_kind)k);
        gang_store_set_read(w->store, (enum gang_kind)k, false);
        if (was && w->changed)
            w->changed(w->ctx, (enum gang_kind)k, NULL, NULL);
        if (!served) {
            log_info_kv(0, "API group not served any more",
                        LOG_STR("kind", gang_kind_name((enum gang_kind)k)),
                        LOG_STR("group", group));
            continue;
        }
        char path[256];
        gang_api_path(path, sizeof(path), (enum gang_kind)k, version, NULL, NULL);
        log_info_kv(0, "API served: reading it", LOG_STR("kind", gang_kind_name((enum gang_kind)k)),
                    LOG_STR("group", group), LOG_STR("version", version), LOG_STR("path", path));
        struct informer_handlers h = {.ctx = &w->fwd[k],
                                      .upsert = obj_upsert,
                                      .remove = obj_remove,
                                      .sync_begin = obj_sync_begin,
                                      .sync_end = obj_sync_end,
                                      .api_error = obj_api_error};
        struct informer_options io = {
            .name = gang_kind_name((enum gang_kind)k), .path = path, .transport = w->o.transport};
        struct informer *inf = informer_new(w->cfg, &io, &h);
        if (!inf || informer_start(inf) != K_OK) {
            informer_free(inf);
            rc = K_ENOMEM;
            continue;
        }
        pthread_mutex_lock(&w->mu);
        w->inf[k] = inf;
        snprintf(w->version[k], sizeof(w->version[k]), "%s", version);
        pthread_mutex_unlock(&w->mu);
    }
    return rc;
}

int gang_informers_start(struct gang_informers *w, bool check_now)
{
    if (check_now)
        gang_informers_check(w);
    if (!w->o.no_events) {
        struct informer_handlers h = {.ctx = w, .upsert = event_upsert, .remove = event_remove};
        struct informer_options io = {
            .name = "events/podgroups", .path = GANG_EVENTS_PATH, .transport = w->o.transport};
        w->events = informer_new(w->cfg, &io, &h);
        if (!w->events || informer_start(w->events) != K_OK)
            return K_ENOMEM;
    }
    return discovery_loop_start(&w->disc, check_now);
}

bool gang_informers_synced(struct gang_informers *w)
{
    bool synced = true;
    pthread_mutex_lock(&w->mu);
    for (int k = 1; k < GANG_KIND_COUNT && synced; k++)
        synced = !w->inf[k] || informer_has_synced(w->inf[k]);
    pthread_mutex_unlock(&w->mu);
    return synced && (!w->events || informer_has_synced(w->events));
}

bool gang_informers_served(struct gang_informers *w, enum gang_kind k)
{
    if ((int)k <= 0 || k >= GANG_KIND_COUNT)
        return false;
    pthread_mutex_lock(&w->mu);
    bool served = w->version[k][0] != '\0';
    pthread_mutex_unlock(&w->mu);
    return served;
}

void gang_informers_stop(struct gang_informers *w)
{
    if (!w || w->stopped)
        return;
    w->stopped = true;
    discovery_loop_stop(&w->disc);
    for (int k = 1; k < GANG_KIND_COUNT; k++)
        drop(w, (enum gang_kind)k);
    if (w->events)
        informer_stop(w->events);
}

void gang_informers_free(struct gang_informers *w)
{
    if (!w)
        return;
    gang_informers_stop(w);
    informer_free(w->events);
    discovery_loop_destroy(&w->disc);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
