/* gang_read.c - a pod's gang read once, for one-shot tools (triage.h triage_read_gang). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/gang_informers.h"
#include "cache/informer.h"
#include "kube/project_gang.h"
#include "triage/triage.h"
#include "util/result.h"

static void event_cb(void *ctx, json_object *obj)
{
    gang_event_apply(ctx, obj);
}

static void pod_cb(void *ctx, json_object *obj)
{
    unsigned changed = 0;
    (void)store_pod_apply_json(ctx, obj, 0, NULL, &changed); /* one pod unread: not counted */
}

int triage_read_gang(struct kube_client *c, struct store *s, struct gang_store *gangs,
                     const struct kpod *pod, bool members, struct kube_error *err)
{
    if (!pod || !pod->gang || !pod->ns || !gangs)
        return K_OK;
    enum gang_kind k = pod->gang->kind;
    char ns[256], name[GANG_NAME_MAX];
    if (kube_path_escape(pod->ns, ns, sizeof(ns)) != K_OK ||
        kube_path_escape(pod->gang->name, name, sizeof(name)) != K_OK)
        return K_EINVAL;
    char version[16] = "";
    int served = gang_store_served(gangs, k, version, sizeof(version));
    if (served < 0) {
        bool on = false;
        struct kube_error e = {0};
        if (gang_api_probe(c, k, &on, version, sizeof(version), &e) != K_OK)
            return K_OK; /* not known (a 403, an error): nothing said of the gang */
        gang_store_set_served(gangs, k, on ? version : NULL);
        gang_store_set_read(gangs, k, on);
        served = on;
    }
    if (!served)
        return K_OK;
    struct gang_facts f = {0};
    gang_store_facts(gangs, pod, &f);
    char path[1024];
    if (!f.found) {
        if (!gang_api_path(path, sizeof(path), k, version, ns, name))
            return K_EINVAL;
        json_object *obj = NULL;
        struct kube_error e = {0};
        int rc = kube_get(c, path, &obj, &e);
        if (rc == K_OK) {
            struct gang_group *g = malloc(sizeof(*g));
            if (!g) {
                json_object_put(obj);
                return K_ENOMEM;
            }
            rc = project_gang_group(obj, k, g) == K_OK ? gang_store_put(gangs, g, NULL) : K_OK;
            free(g);
            json_object_put(obj);
            if (rc)
                return rc;
        } else if (e.http_status == 403) {
            gang_store_set_read(gangs, k, false);
            return K_OK;
        } else if (e.http_status != 404) {
            *err = e;
            return rc;
        }
        if (k != GANG_WORKLOAD) { /* Events: evidence, not a must */
            snprintf(
                path, sizeof(path),
                "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.kind%%3DPodGroup%%2C"
                "involvedObject.name%%3D%s",
                ns, name);
            struct informer_handlers h = {.ctx = gangs, .upsert = event_cb};
            struct kube_error ev_err = {0};
            (void)informer_list_once(c, path, 500, &h, NULL, 0, &ev_err);
        }
    }
    if (!members)
        return K_OK;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
    struct informer_handlers h = {.ctx = s, .upsert = pod_cb};
    return informer_list_once(c, path, 500, &h, NULL, 0, err);
}
