/* wh_testutil.h - shared helpers of the webhook unit tests (header-only, static functions). */
#ifndef GPUTRI_TEST_WH_TESTUTIL_H
#define GPUTRI_TEST_WH_TESTUTIL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
    /* DRA: each list is synced when the fixture has its key */
    struct gpu_set dra_gpus; /* DRA_GPU_SET_DEFAULT */
    struct dra_class *classes;
    struct dra_slice *slices;
    struct dra_claim *claims;
    struct dra_template *templates;
    size_t n_classes, n_slices, n_claims, n_templates;
    bool classes_synced, slices_synced, claims_synced, templates_synced;
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
    json_object *dummy;
    if (gpu_set_parse(&o->dra_gpus, DRA_GPU_SET_DEFAULT) != K_OK)
        return K_ENOMEM;
    o->classes_synced = json_object_object_get_ex(s, "deviceClasses", &dummy);
    a = arr_of(s, "deviceClasses", &n);
    o->classes = calloc(n + 1, sizeof(*o->classes));
    for (size_t i = 0; i < n; i++) {
        int rc = project_dra_class(json_object_array_get_idx(a, i), &o->classes[o->n_classes]);
        if (rc != K_OK)
            return rc;
        o->n_classes++;
    }
    qsort(o->classes, o->n_classes, sizeof(*o->classes), wh_dra_class_cmp);
    o->slices_synced = json_object_object_get_ex(s, "resourceSlices", &dummy);
    a = arr_of(s, "resourceSlices", &n);
    o->slices = calloc(n + 1, sizeof(*o->slices));
    for (size_t i = 0; i < n; i++) {
        int rc = project_dra_slice(json_object_array_get_idx(a, i), &o->slices[o->n_slices]);
        if (rc != K_OK)
            return rc;
        o->n_slices++;
    }
    qsort(o->slices, o->n_slices, sizeof(*o->slices), wh_dra_slice_cmp);
    o->claims_synced = json_object_object_get_ex(s, "resourceClaims", &dummy);
    a = arr_of(s, "resourceClaims", &n);
    o->claims = calloc(n + 1, sizeof(*o->claims));
    for (size_t i = 0; i < n; i++) {
        int rc = project_dra_claim(json_object_array_get_idx(a, i), &o->claims[o->n_claims]);
        if (rc != K_OK)
            return rc;
        o->n_claims++;
    }
    qsort(o->claims, o->n_claims, sizeof(*o->claims), wh_dra_claim_cmp);
    o->templates_synced = json_object_object_get_ex(s, "resourceClaimTemplates", &dummy);
    a = arr_of(s, "resourceClaimTemplates", &n);
    o->templates = calloc(n + 1, sizeof(*o->templates));
    for (size_t i = 0; i < n; i++) {
        int rc =
            project_dra_template(json_object_array_get_idx(a, i), &o->templates[o->n_templates]);
        if (rc != K_OK)
            return rc;
        o->n_templates++;
    }
    qsort(o->templates, o->n_templates, sizeof(*o->templates), wh_dra_template_cmp);
    json_object *ert = NULL;
    json_object_object_get_ex(s, "assumeExtendedResourceToleration", &ert);
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
        .dra_gpus = &o->dra_gpus,
        .device_classes = o->classes,
        .n_device_classes = o->n_classes,
        .slices = o->slices,
        .n_slices = o->n_slices,
        .claims = o->claims,
        .n_claims = o->n_claims,
        .claim_templates = o->templates,
        .n_claim_templates = o->n_templates,
        .device_classes_synced = o->classes_synced,
        .slices_synced = o->slices_synced,
        .claims_synced = o->claims_synced,
        .claim_templates_synced = o->templates_synced,
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
    for (size_t i = 0; i < o->n_classes; i++)
        dra_class_cleanup(&o->classes[i]);
    for (size_t i = 0; i < o->n_slices; i++)
        dra_slice_cleanup(&o->slices[i]);
    for (size_t i = 0; i < o->n_claims; i++)
        dra_claim_cleanup(&o->claims[i]);
    for (size_t i = 0; i < o->n_templates; i++)
        dra_template_cleanup(&o->templates[i]);
    free(o->classes);
    free(o->slices);
    free(o->claims);
    free(o->templates);
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
