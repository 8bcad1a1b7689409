/* snapshot_fixture.c - a webhook snapshot from a fixture's JSON (snapshot_fixture.h). */
#include "snapshot_fixture.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cache/dra_store.h"
#include "kube/project.h"
#include "util/result.h"

/* Adapters to one signature: project `obj` into `out`, free `rec`. */
static int p_node(json_object *o, const struct gpu_set *g, void *out)
{
    return project_node(o, g, out);
}
static int p_rc(json_object *o, const struct gpu_set *g, void *out)
{
    (void)g;
    return wh_project_runtime_class(o, out);
}
static int p_quota(json_object *o, const struct gpu_set *g, void *out)
{
    return wh_project_quota(o, g, out);
}
static int p_ns(json_object *o, const struct gpu_set *g, void *out)
{
    (void)g;
    return wh_project_namespace(o, out);
}
static void c_node(void *r)
{
    node_cleanup(r);
}
static void c_rc(void *r)
{
    wh_runtime_class_cleanup(r);
}
static void c_quota(void *r)
{
    wh_quota_cleanup(r);
}
static void c_ns(void *r)
{
    wh_namespace_cleanup(r);
}

/* The orders webhook/snapshot.h gives: by name, quotas by namespace then name. */
static int by_node_name(const void *a, const void *b)
{
    return strcmp(((const struct knode *)a)->name, ((const struct knode *)b)->name);
}
static int by_rc_name(const void *a, const void *b)
{
    return strcmp(((const struct wh_runtime_class *)a)->name,
                  ((const struct wh_runtime_class *)b)->name);
}
static int by_quota_key(const void *a, const void *b)
{
    const struct wh_quota *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}
static int by_ns_name(const void *a, const void *b)
{
    return strcmp(((const struct wh_namespace *)a)->name, ((const struct wh_namespace *)b)->name);
}

static const struct kind {
    const char *key; /* the fixture's member */
    size_t size;
    int (*project)(json_object *obj, const struct gpu_set *gpus, void *out);
    void (*cleanup)(void *rec);
    int (*cmp)(const void *a, const void *b);
} kinds[SF_LISTS] = {
    [SF_NODES] = {"nodes", sizeof(struct knode), p_node, c_node, by_node_name},
    [SF_RUNTIME_CLASSES] = {"runtimeClasses", sizeof(struct wh_runtime_class), p_rc, c_rc,
                            by_rc_name},
    [SF_QUOTAS] = {"resourceQuotas", sizeof(struct wh_quota), p_quota, c_quota, by_quota_key},
    [SF_NAMESPACES] = {"namespaces", sizeof(struct wh_namespace), p_ns, c_ns, by_ns_name},
};

/* The fixture's DRA members, in the order of enum dra_kind. */
static const char *const dra_keys[DRA_KIND_COUNT] = {"resourceClaims", "resourceClaimTemplates",
                                                     "deviceClasses", "resourceSlices"};

/* Project and sort one list; its array holds n + 1 records (never NULL). */
static int build_list(struct snapshot_fixture *f, enum snapshot_fixture_list which,
                      json_object *snapshot, const struct gpu_set *gpus)
{
    const struct kind *k = &kinds[which];
    json_object *arr = NULL;
    size_t n = 0;
    if (json_object_object_get_ex(snapshot, k->key, &arr) &&
        json_object_is_type(arr, json_type_array))
        n = json_object_array_length(arr);
    char *items = calloc(n + 1, k->size);
    if (!items)
        return K_ENOMEM;
    f->items[which] = items;
    for (size_t i = 0; i < n; i++) {
        int rc = k->project(json_object_array_get_idx(arr, i), gpus, items + f->n[which] * k->size);
        if (rc != K_OK)
            return rc;
        f->n[which]++;
    }
    qsort(items, f->n[which], k->size, k->cmp);
    return K_OK;
}

int snapshot_fixture_build(struct snapshot_fixture *f, json_object *snapshot,
                           const struct gpu_set *gpus)
{
    memset(f, 0, sizeof(*f));
    for (int i = 0; i < SF_LISTS; i++) {
        int rc = build_list(f, (enum snapshot_fixture_list)i, snapshot, gpus);
        if (rc != K_OK)
            return rc;
    }
    const struct knode *nodes = f->items[SF_NODES];
    f->node_ptrs = calloc(f->n[SF_NODES] + 1, sizeof(*f->node_ptrs));
    if (!f->node_ptrs || gpu_set_parse(&f->dra_gpus, DRA_GPU_SET_DEFAULT) != K_OK)
        return K_ENOMEM;
    for (size_t i = 0; i < f->n[SF_NODES]; i++)
        f->node_ptrs[i] = &nodes[i];
    if (!(f->dra = dra_store_new()))
        return K_ENOMEM;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        json_object *items = NULL;
        if (!json_object_object_get_ex(snapshot, dra_keys[k], &items))
            continue; /* never listed: the checks reading this kind stay off */
        int rc = dra_store_relist_items(f->dra, (enum dra_kind)k, items);
        if (rc != K_OK)
            return rc;
    }
    dra_store_read_lock(f->dra);
    f->dra_locked = true;
    json_object *v = NULL;
    bool ert = json_object_object_get_ex(snapshot, "assumeExtendedResourceToleration", &v) &&
               json_object_get_boolean(v);
    f->snap = (struct wh_snapshot){
        .gpus = gpus,
        .nodes = f->node_ptrs,
        .n_nodes = f->n[SF_NODES],
        .runtime_classes = f->items[SF_RUNTIME_CLASSES],
        .n_runtime_classes = f->n[SF_RUNTIME_CLASSES],
        .quotas = f->items[SF_QUOTAS],
        .n_quotas = f->n[SF_QUOTAS],
        .namespaces = f->items[SF_NAMESPACES],
        .n_namespaces = f->n[SF_NAMESPACES],
        .nodes_synced = true,
        .runtime_classes_synced = true,
        .quotas_synced = true,
        .namespaces_synced = true,
        .assume_ert = ert,
        .dra_gpus = &f->dra_gpus,
        .dra = f->dra,
    };
    return K_OK;
}

void snapshot_fixture_cleanup(struct snapshot_fixture *f)
{
    for (int i = 0; i < SF_LISTS; i++) {
        char *items = f->items[i];
        for (size_t j = 0; j < f->n[i]; j++)
            kinds[i].cleanup(items + j * kinds[i].size);
        free(items);
    }
    free(f->node_ptrs);
    if (f->dra_locked)
        dra_store_read_unlock(f->dra);
    dra_store_free(f->dra);
    gpu_set_cleanup(&f->dra_gpus);
    memset(f, 0, sizeof(*f));
}
