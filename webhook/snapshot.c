/* snapshot.c - projections of RuntimeClass, ResourceQuota and Namespace objects; lookups. */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/quantity.h"
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

/* The requests.<gpu> entries of a ResourceList object. */
static int quota_gpu_keys(json_object *list, const struct gpu_set *gpus, struct resource_list *out)
{
    if (!list)
        return K_OK;
    json_object_object_foreach(list, k, v)
    {
        if (strncmp(k, "requests.", 9) != 0 || !gpu_set_contains(gpus, k + 9))
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

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int cmp2(const char *a1, const char *a2, const char *b1, const char *b2)
{
    int c = strcmp(or_empty(a1), or_empty(b1));
    return c ? c : strcmp(or_empty(a2), or_empty(b2));
}

int wh_dra_class_cmp(const void *a, const void *b)
{
    return strcmp(or_empty(((const struct dra_class *)a)->name),
                  or_empty(((const struct dra_class *)b)->name));
}

int wh_dra_slice_cmp(const void *a, const void *b)
{
    const struct dra_slice *x = a, *y = b;
    int c = cmp2(x->node_name, x->driver, y->node_name, y->driver);
    return c ? c : strcmp(or_empty(x->name), or_empty(y->name));
}

int wh_dra_claim_cmp(const void *a, const void *b)
{
    const struct dra_claim *x = a, *y = b;
    return cmp2(x->ns, x->name, y->ns, y->name);
}

int wh_dra_template_cmp(const void *a, const void *b)
{
    const struct dra_template *x = a, *y = b;
    return cmp2(x->ns, x->name, y->ns, y->name);
}

void wh_dra_slice_key(const struct dra_slice *s, char *key, size_t len)
{
    snprintf(key, len, "%s %s %s", or_empty(s->node_name), or_empty(s->driver), or_empty(s->name));
}

void wh_dra_ns_key(const char *ns, const char *name, char *key, size_t len)
{
    snprintf(key, len, "%s %s", or_empty(ns), or_empty(name));
}

const struct dra_class *wh_snapshot_device_class(const struct wh_snapshot *s, const char *name)
{
    if (!name || !s->n_device_classes)
        return NULL;
    struct dra_class key = {.name = (char *)name};
    return bsearch(&key, s->device_classes, s->n_device_classes, sizeof(*s->device_classes),
                   wh_dra_class_cmp);
}

const struct dra_claim *wh_snapshot_claim(const struct wh_snapshot *s, const char *ns,
                                          const char *name)
{
    if (!name || !s->n_claims)
        return NULL;
    struct dra_claim key = {.ns = (char *)ns, .name = (char *)name};
    return bsearch(&key, s->claims, s->n_claims, sizeof(*s->claims), wh_dra_claim_cmp);
}

const struct dra_template *wh_snapshot_claim_template(const struct wh_snapshot *s, const char *ns,
                                                      const char *name)
{
    if (!name || !s->n_claim_templates)
        return NULL;
    struct dra_template key = {.ns = (char *)ns, .name = (char *)name};
    return bsearch(&key, s->claim_templates, s->n_claim_templates, sizeof(*s->claim_templates),
                   wh_dra_template_cmp);
}

/* The first slice whose nodeName (or "") is not below `node`. */
static size_t slices_lower_bound(const struct wh_snapshot *s, const char *node)
{
    size_t lo = 0, hi = s->n_slices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(or_empty(s->slices[mid].node_name), node) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t wh_snapshot_node_slices(const struct wh_snapshot *s, const char *node, const char *driver,
                               const struct dra_slice **buf, size_t cap)
{
    size_t n = 0;
    if (!node)
        return 0;
    /* cluster-wide slices sort first (nodeName ""), then each node's */
    const char *ranges[2] = {"", node};
    for (size_t r = 0; r < (*node ? 2u : 1u); r++) {
        for (size_t i = slices_lower_bound(s, ranges[r]); i < s->n_slices; i++) {
            const struct dra_slice *sl = &s->slices[i];
            if (strcmp(or_empty(sl->node_name), ranges[r]) != 0)
                break;
            if (driver && strcmp(or_empty(sl->driver), driver) != 0)
                continue;
            if (n < cap)
                buf[n] = sl;
            n++;
        }
    }
    return n;
}

bool wh_snapshot_driver_published(const struct wh_snapshot *s, const char *driver)
{
    for (size_t i = 0; driver && i < s->n_slices; i++)
        if (s->slices[i].driver && strcmp(s->slices[i].driver, driver) == 0)
            return true;
    return false;
}

static const struct dra_claim *v_claim(void *ctx, const char *ns, const char *name)
{
    return wh_snapshot_claim(ctx, ns, name);
}

static const struct dra_template *v_template(void *ctx, const char *ns, const char *name)
{
    return wh_snapshot_claim_template(ctx, ns, name);
}

static const struct dra_class *v_class(void *ctx, const char *name)
{
    return wh_snapshot_device_class(ctx, name);
}

static size_t v_slices(void *ctx, const char *node, const char *driver,
                       const struct dra_slice **buf, size_t cap)
{
    return wh_snapshot_node_slices(ctx, node, driver, buf, cap);
}

struct dra_view wh_snapshot_dra_view(const struct wh_snapshot *s)
{
    return (struct dra_view){
        .gpu_classes = s->dra_gpus,
        .ctx = (void *)s,
        .claim = v_claim,
        .claim_template = v_template,
        .device_class = v_class,
        .node_slices = v_slices,
    };
}
