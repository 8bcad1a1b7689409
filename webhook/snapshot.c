/* snapshot.c - projections of RuntimeClass, ResourceQuota and Namespace objects; lookups. */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/quantity.h"
#include "triage/triage.h"
#include "warnings.h"
#include "util/result.h"

/* Short names for the shared getters (kube/json.h). */
static json_object *get(json_object *o, const char *key, json_type type)
{
    return kube_json_get(o, key, type);
}

static const char *get_str(json_object *o, const char *key)
{
    return kube_json_str(o, key);
}

static int dup_str(const char *s, char **out)
{
    *out = strdup(s ? s : "");
    return *out ? K_OK : K_ENOMEM;
}

void wh_runtime_class_cleanup(struct wh_runtime_class *rc)
{
    if (!rc)
        return;
    free(rc->name);
    kv_list_cleanup(&rc->node_selector);
    tolerations_free(rc->tolerations, rc->n_tolerations);
    memset(rc, 0, sizeof(*rc));
}

int wh_project_runtime_class(json_object *obj, struct wh_runtime_class *out)
{
    memset(out, 0, sizeof(*out));
    const char *name = get_str(get(obj, "metadata", json_type_object), "name");
    if (!name)
        return K_EPARSE;
    int rc = K_ENOMEM;
    if (dup_str(name, &out->name) != K_OK)
        goto fail;
    json_object *sched = get(obj, "scheduling", json_type_object);
    if ((rc = project_string_map(get(sched, "nodeSelector", json_type_object),
                                 &out->node_selector)) != K_OK)
        goto fail;
    if ((rc = project_toleration_list(get(sched, "tolerations", json_type_array), &out->tolerations,
                                      &out->n_tolerations)) != K_OK)
        goto fail;
    return K_OK;
fail:
    wh_runtime_class_cleanup(out);
    return rc;
}

void wh_quota_cleanup(struct wh_quota *q)
{
    if (!q)
        return;
    free(q->ns);
    free(q->name);
    resource_list_cleanup(&q->hard);
    resource_list_cleanup(&q->used);
    memset(q, 0, sizeof(*q));
}

/* The entries of a ResourceList object that gputri checks (warnings.h wh_quota_key). */
static int quota_gpu_keys(json_object *list, const struct gpu_set *gpus, struct resource_list *out)
{
    if (!list)
        return K_OK;
    json_object_object_foreach(list, k, v)
    {
        if (!wh_quota_key(gpus, k))
            continue;
        int64_t value;
        if (!json_object_is_type(v, json_type_string) ||
            quantity_parse(json_object_get_string(v), &value) != K_OK)
            continue;
        int rc = resource_list_add(out, k, value);
        if (rc != K_OK)
            return rc; /* K_ETOOBIG past RESOURCE_LIST_MAX keys, or K_ENOMEM */
    }
    return K_OK;
}

int wh_project_quota(json_object *obj, const struct gpu_set *gpus, struct wh_quota *out)
{
    memset(out, 0, sizeof(*out));
    json_object *meta = get(obj, "metadata", json_type_object);
    const char *name = get_str(meta, "name"), *ns = get_str(meta, "namespace");
    if (!name || !ns)
        return K_EPARSE;
    int rc = K_ENOMEM;
    if (dup_str(name, &out->name) != K_OK || dup_str(ns, &out->ns) != K_OK)
        goto fail;
    json_object *spec = get(obj, "spec", json_type_object);
    json_object *status = get(obj, "status", json_type_object);
    json_object *scopes = get(spec, "scopes", json_type_array);
    out->scoped = (scopes && json_object_array_length(scopes) > 0) ||
                  get(spec, "scopeSelector", json_type_object) != NULL;
    json_object *shard = get(status, "hard", json_type_object);
    out->has_status = shard && json_object_object_length(shard) > 0;
    if ((rc = quota_gpu_keys(out->has_status ? shard : get(spec, "hard", json_type_object), gpus,
                             &out->hard)) != K_OK ||
        (rc = quota_gpu_keys(get(status, "used", json_type_object), gpus, &out->used)) != K_OK)
        goto fail;
    return K_OK;
fail:
    wh_quota_cleanup(out);
    return rc;
}

void wh_namespace_cleanup(struct wh_namespace *ns)
{
    if (!ns)
        return;
    free(ns->name);
    kv_list_cleanup(&ns->labels);
    memset(ns, 0, sizeof(*ns));
}

int wh_project_namespace(json_object *obj, struct wh_namespace *out)
{
    memset(out, 0, sizeof(*out));
    json_object *meta = get(obj, "metadata", json_type_object);
    const char *name = get_str(meta, "name");
    if (!name)
        return K_EPARSE;
    int rc = K_ENOMEM;
    if (dup_str(name, &out->name) != K_OK)
        goto fail;
    if ((rc = project_string_map(get(meta, "labels", json_type_object), &out->labels)) != K_OK)
        goto fail;
    return K_OK;
fail:
    wh_namespace_cleanup(out);
    return rc;
}

static int cmp_rc(const void *key, const void *elem)
{
    return strcmp(key, ((const struct wh_runtime_class *)elem)->name);
}

static int cmp_ns(const void *key, const void *elem)
{
    return strcmp(key, ((const struct wh_namespace *)elem)->name);
}

const struct wh_runtime_class *wh_snapshot_runtime_class(const struct wh_snapshot *s,
                                                         const char *name)
{
    if (!name || !s->n_runtime_classes)
        return NULL;
    return bsearch(name, s->runtime_classes, s->n_runtime_classes, sizeof(*s->runtime_classes),
                   cmp_rc);
}

const struct wh_namespace *wh_snapshot_namespace(const struct wh_snapshot *s, const char *name)
{
    if (!name || !s->n_namespaces)
        return NULL;
    return bsearch(name, s->namespaces, s->n_namespaces, sizeof(*s->namespaces), cmp_ns);
}

/* ------------------------------------------------------------------ DRA */

struct dra_view wh_snapshot_dra_view(const struct wh_snapshot *s)
{
    struct dra_view v = triage_dra_view(s->dra, s->dra_gpus);
    v.device_holder = NULL; /* lasting faults only: no "held by" at admission */
    v.device_shares = NULL;
    return v;
}
