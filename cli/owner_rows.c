/*
 * owner_rows.c - `kubectl gputri pods` rows for the ReplicaSets, StatefulSets and Jobs whose GPU
 * pods a ResourceQuota refuses (classify/quota.h): there is no pod, only the workload
 * controller's FailedCreate Events on the owner (pods.h pods_fetch_owner_rows).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/informer.h"
#include "classify/classify.h"
#include "classify/quota.h"
#include "kube/project.h"
#include "model/quantity.h"
#include "triage/owner_alive.h"
#include "pods.h"
#include "util/result.h"

/* Owners and namespaces looked at, at most. */
#define OWNER_ROWS_MAX 1024
#define OWNER_ROWS_NAMESPACES 64
/* Owners looked up (GET) to drop those deleted since their refusal, at most. */
#define OWNER_ROWS_LOOKUPS 64

struct owner_read {
    const struct gpu_set *gpus, *dra_classes;
    struct quota_owner *owners;
    size_t n;
    int64_t *newest; /* per owner: the newest creation time of its pods */
    int64_t now;
};

static void keep_owner(void *ctx, json_object *obj)
{
    struct owner_read *r = ctx;
    struct kevent ev;
    struct quota_owner o;
    if (project_event(obj, &ev) != K_OK || !quota_owner_event(&ev, r->gpus, r->dra_classes, &o))
        return;
    if (!quota_owner_current(&o, r->now, 0))
        return; /* stale, undated or dated ahead: no row, and no room taken from the others */
    size_t same_ns = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->owners[i].uid, o.uid) == 0) {
            if (o.q.at >= r->owners[i].q.at)
                r->owners[i] = o;
            return;
        }
        same_ns += strcmp(r->owners[i].ns, o.ns) == 0;
    }
    if (r->n < OWNER_ROWS_MAX && same_ns < OWNER_ROWS_MAX / QUOTA_OWNER_NS_SHARE)
        r->owners[r->n++] = o;
}

static void note_pod(void *ctx, json_object *obj)
{
    struct owner_read *r = ctx;
    struct kpod pod;
    if (project_pod(obj, r->gpus, &pod) != K_OK)
        return;
    for (size_t i = 0; pod.owner_uid && i < r->n; i++)
        if (strcmp(r->owners[i].uid, pod.owner_uid) == 0 && pod.created > r->newest[i])
            r->newest[i] = pod.created;
    pod_cleanup(&pod);
}

static int add_row(struct pod_rows *rows, const struct quota_owner *o)
{
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? rows->cap * 2 : 8;
        struct pod_row *grown = realloc(rows->items, cap * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        rows->items = grown;
        rows->cap = cap;
    }
    struct pod_row *r = &rows->items[rows->n];
    memset(r, 0, sizeof(*r));
    char name[KEVENT_NAME_MAX + 16], detail[1024];
    snprintf(name, sizeof(name), "%s/%s", quota_owner_kind_name(o->kind), o->name);
    struct line l = {.buf = detail, .cap = sizeof(detail)};
    quota_put_owner(&l, o);
    line_finish(&l);
    r->ns = strdup(o->ns);
    r->name = strdup(name);
    r->phase = strdup("NoPod");
    r->cause = strdup(cause_word(CAUSE_QUOTA_EXCEEDED));
    r->detail = strdup(detail);
    r->source = POD_ROW_EVENTS;
    r->since = o->q.at; /* the newest refusal */
    /* the GPUs one refused pod asks, where the key names a resource: requests.<resource> */
    const char *res = strncmp(o->q.key, "requests.", 9) == 0 ? o->q.key + 9 : NULL;
    int64_t v = 0;
    int rc = (res && quantity_parse(o->q.requested, &v) == K_OK && v > 0)
                 ? resource_list_add(&r->gpus, res, v)
                 : K_OK;
    rows->n++; /* cleaned up with the rows whatever failed */
    if (rc != K_OK || !r->ns || !r->name || !r->phase || !r->cause || !r->detail)
        return K_ENOMEM;
    return K_OK;
}

int pods_fetch_owner_rows(struct kube_client *c, const struct gpu_set *gpus,
                          const struct gpu_set *dra_classes, const char *ns, struct pod_rows *out,
                          struct kube_error *err)
{
    char path[1024], ns_esc[256];
    struct owner_read r = {.gpus = gpus, .dra_classes = dra_classes, .now = (int64_t)time(NULL)};
    r.owners = calloc(OWNER_ROWS_MAX, sizeof(*r.owners));
    r.newest = calloc(OWNER_ROWS_MAX, sizeof(*r.newest));
    if (!r.owners || !r.newest) {
        free(r.owners);
        free(r.newest);
        return K_ENOMEM;
    }
    if (ns && kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK) {
        free(r.owners);
        free(r.newest);
        return K_EINVAL;
    }
    snprintf(path, sizeof(path), "%s%s%s/events?fieldSelector=type%%3DWarning%%2Creason%%3D%s",
             ns ? "/api/v1/namespaces/" : "/api/v1", ns ? ns_esc : "", ns ? "" : "",
             QUOTA_OWNER_EVENT_REASON);
    struct informer_handlers h = {.ctx = &r, .upsert = keep_owner};
    int rc = informer_list_once(c, path, 500, &h, NULL, 0, err);
    /* the owners' pods, per namespace: a pod created after the refusal ends it */
    const char *seen[OWNER_ROWS_NAMESPACES];
    size_t n_seen = 0;
    for (size_t i = 0; rc == K_OK && i < r.n; i++) {
        bool done = false;
        for (size_t j = 0; j < n_seen && !done; j++)
            done = strcmp(seen[j], r.owners[i].ns) == 0;
        if (done || n_seen == OWNER_ROWS_NAMESPACES)
            continue;
        seen[n_seen++] = r.owners[i].ns;
        if (kube_path_escape(r.owners[i].ns, ns_esc, sizeof(ns_esc)) != K_OK)
            continue;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns_esc);
        struct informer_handlers ph = {.ctx = &r, .upsert = note_pod};
        rc = informer_list_once(c, path, 500, &ph, NULL, 0, err);
    }
    int64_t now = r.now;
    size_t lookups = 0;
    for (size_t i = 0; rc == K_OK && i < r.n; i++) {
        if (!quota_owner_current(&r.owners[i], now, r.newest[i]))
            continue;
        /* deleted since (its Events outlive it); an error (403: no RBAC get) keeps the row */
        struct kube_error get_err = {0};
        if (lookups++ < OWNER_ROWS_LOOKUPS &&
            triage_owner_alive(c, &r.owners[i], &get_err) == K_ENOTFOUND)
            continue;
        rc = add_row(out, &r.owners[i]);
    }
    free(r.owners);
    free(r.newest);
    return rc;
}
