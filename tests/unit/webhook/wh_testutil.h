/* wh_testutil.h - shared helpers of the webhook unit tests (header-only, static functions). */
#ifndef GPUTRI_TEST_WH_TESTUTIL_H
#define GPUTRI_TEST_WH_TESTUTIL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "autoscaler.h"
#include "cache/dra_store.h"
#include "kube/project.h"
#include "snapshot.h"
#include "util/result.h"
#include "util/utf8.h"
#include "warnings.h"

/* A snapshot that owns its objects, built from a fixture's "snapshot" member. */
struct owned_snapshot {
    struct wh_snapshot snap;
    struct knode *nodes;
    const struct knode **node_ptrs;
    struct wh_runtime_class *rcs;
    struct wh_quota *quotas;
    struct wh_namespace *nss;
    size_t n_nodes, n_rcs, n_quotas, n_nss;
    /* DRA: a kind is synced (dra_store_synced) when the fixture has its key; the store is
     * read-locked from owned_snapshot_build() to owned_snapshot_cleanup(), as a review holds it */
    struct gpu_set dra_gpus; /* DRA_GPU_SET_DEFAULT */
    struct dra_store *dra;
    bool dra_locked;
};

static inline int cmp_node(const void *a, const void *b)
{
    return strcmp(((const struct knode *)a)->name, ((const struct knode *)b)->name);
}
static inline int cmp_rc(const void *a, const void *b)
{
    return strcmp(((const struct wh_runtime_class *)a)->name,
                  ((const struct wh_runtime_class *)b)->name);
}
static inline int cmp_quota(const void *a, const void *b)
{
    const struct wh_quota *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}
static inline int cmp_ns(const void *a, const void *b)
{
    return strcmp(((const struct wh_namespace *)a)->name, ((const struct wh_namespace *)b)->name);
}

static inline json_object *arr_of(json_object *o, const char *key, size_t *n)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array)) {
        *n = 0;
        return NULL;
    }
    *n = json_object_array_length(v);
    return v;
}

/* Returns K_OK or the first projection error. */
static inline int owned_snapshot_build(struct owned_snapshot *o, json_object *s,
                                       const struct gpu_set *gpus)
{
    memset(o, 0, sizeof(*o));
    size_t n;
    json_object *a = arr_of(s, "nodes", &n);
    o->nodes = calloc(n + 1, sizeof(*o->nodes));
    o->node_ptrs = calloc(n + 1, sizeof(*o->node_ptrs));
    for (size_t i = 0; i < n; i++) {
        int rc = project_node(json_object_array_get_idx(a, i), gpus, &o->nodes[o->n_nodes]);
        if (rc != K_OK)
            return rc;
        o->n_nodes++;
    }
    qsort(o->nodes, o->n_nodes, sizeof(*o->nodes), cmp_node);
    for (size_t i = 0; i < o->n_nodes; i++)
        o->node_ptrs[i] = &o->nodes[i];
    a = arr_of(s, "runtimeClasses", &n);
    o->rcs = calloc(n + 1, sizeof(*o->rcs));
    for (size_t i = 0; i < n; i++) {
        int rc = wh_project_runtime_class(json_object_array_get_idx(a, i), &o->rcs[o->n_rcs]);
        if (rc != K_OK)
            return rc;
        o->n_rcs++;
    }
    qsort(o->rcs, o->n_rcs, sizeof(*o->rcs), cmp_rc);
    a = arr_of(s, "resourceQuotas", &n);
    o->quotas = calloc(n + 1, sizeof(*o->quotas));
    for (size_t i = 0; i < n; i++) {
        int rc = wh_project_quota(json_object_array_get_idx(a, i), gpus, &o->quotas[o->n_quotas]);
        if (rc != K_OK)
            return rc;
        o->n_quotas++;
    }
    qsort(o->quotas, o->n_quotas, sizeof(*o->quotas), cmp_quota);
    a = arr_of(s, "namespaces", &n);
    o->nss = calloc(n + 1, sizeof(*o->nss));
    for (size_t i = 0; i < n; i++) {
        int rc = wh_project_namespace(json_object_array_get_idx(a, i), &o->nss[o->n_nss]);
        if (rc != K_OK)
            return rc;
        o->n_nss++;
    }
    qsort(o->nss, o->n_nss, sizeof(*o->nss), cmp_ns);
    if (gpu_set_parse(&o->dra_gpus, DRA_GPU_SET_DEFAULT) != K_OK)
        return K_ENOMEM;
    if (!(o->dra = dra_store_new()))
        return K_ENOMEM;
    /* the fixture's keys, in the order of enum dra_kind */
    static const char *const dra_keys[DRA_KIND_CORE_COUNT] = {
        "resourceClaims", "resourceClaimTemplates", "deviceClasses", "resourceSlices"};
    for (int k = 0; k < DRA_KIND_CORE_COUNT; k++) {
        json_object *items = NULL;
        if (!json_object_object_get_ex(s, dra_keys[k], &items))
            continue; /* never listed: the checks reading this kind stay off */
        int rc = dra_store_relist_items(o->dra, (enum dra_kind)k, items);
        if (rc != K_OK)
            return rc;
    }
    dra_store_read_lock(o->dra);
    o->dra_locked = true;
    json_object *ert = NULL, *as = NULL;
    json_object_object_get_ex(s, "assumeExtendedResourceToleration", &ert);
    /* "autoscaler": a --autoscaler mode naming the autoscaler present (absent: none) */
    enum wh_autoscaler_mode as_mode = WH_AUTOSCALER_MODE_NONE;
    if (json_object_object_get_ex(s, "autoscaler", &as) &&
        wh_autoscaler_mode_parse(json_object_get_string(as), &as_mode) != K_OK)
        return K_EINVAL;
    o->snap = (struct wh_snapshot){
        .gpus = gpus,
        .nodes = o->node_ptrs,
        .n_nodes = o->n_nodes,
        .runtime_classes = o->rcs,
        .n_runtime_classes = o->n_rcs,
        .quotas = o->quotas,
        .n_quotas = o->n_quotas,
        .namespaces = o->nss,
        .n_namespaces = o->n_nss,
        .nodes_synced = true,
        .runtime_classes_synced = true,
        .quotas_synced = true,
        .namespaces_synced = true,
        .assume_ert = ert && json_object_get_boolean(ert),
        .autoscalers = wh_autoscaler_mode_bits(as_mode),
        .dra_gpus = &o->dra_gpus,
        .dra = o->dra,
    };
    return K_OK;
}

static inline void owned_snapshot_cleanup(struct owned_snapshot *o)
{
    for (size_t i = 0; i < o->n_nodes; i++)
        node_cleanup(&o->nodes[i]);
    for (size_t i = 0; i < o->n_rcs; i++)
        wh_runtime_class_cleanup(&o->rcs[i]);
    for (size_t i = 0; i < o->n_quotas; i++)
        wh_quota_cleanup(&o->quotas[i]);
    for (size_t i = 0; i < o->n_nss; i++)
        wh_namespace_cleanup(&o->nss[i]);
    free(o->nodes);
    free(o->node_ptrs);
    free(o->rcs);
    free(o->quotas);
    free(o->nss);
    if (o->dra_locked)
        dra_store_read_unlock(o->dra);
    dra_store_free(o->dra);
    gpu_set_cleanup(&o->dra_gpus);
    memset(o, 0, sizeof(*o));
}

/* Valid UTF-8 without C0/C1 control characters or DEL (what NewWarningHeader accepts). */
static inline bool clean_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    while (left) { /* every pass consumes 1..4 bytes */
        unsigned cp;
        size_t n = utf8_decode(p, left, &cp);
        if (!n || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            return false;
        p += n;
        left -= n;
    }
    return true;
}

#endif
