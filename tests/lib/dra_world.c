/* dra_world.c - loading the DRA classifier fixtures for unit tests. */
#include "dra_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/dra_store.h"
#include "kube/project.h"
#include "util/result.h"

static json_object *list(json_object *root, const char *key, size_t *n)
{
    json_object *a = NULL;
    json_object_object_get_ex(root, key, &a);
    *n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
    return a;
}

/* Project root[key] into a new array of `size`-byte records (one spare) with fn. */
#define LOAD(key, field, count, call)                                                              \
    do {                                                                                           \
        size_t n_;                                                                                 \
        json_object *a_ = list(root, key, &n_);                                                    \
        w->field = calloc(n_ + 1, sizeof(*w->field));                                              \
        if (!w->field) {                                                                           \
            snprintf(err, errlen, "out of memory");                                                \
            goto fail;                                                                             \
        }                                                                                          \
        for (; w->count < n_; w->count++) {                                                        \
            json_object *o_ = json_object_array_get_idx(a_, w->count);                             \
            int rc_ = call;                                                                        \
            if (rc_ != K_OK) {                                                                     \
                snprintf(err, errlen, "%s[%zu] does not project: %s", key, w->count,               \
                         k_strerror(rc_));                                                         \
                goto fail;                                                                         \
            }                                                                                      \
        }                                                                                          \
    } while (0)

int dra_world_load(json_object *root, const struct gpu_set *gpus, struct dra_world *w, char *err,
                   size_t errlen)
{
    memset(w, 0, sizeof(*w));
    if (gpu_set_parse(&w->dra_gpus, DRA_GPU_SET_DEFAULT) != K_OK) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_object *pod = NULL;
    json_object_object_get_ex(root, "pod", &pod);
    if (project_pod(pod, gpus, &w->pod) != K_OK) {
        snprintf(err, errlen, "pod does not project");
        goto fail;
    }
    LOAD("nodes", nodes, n_nodes, project_node(o_, gpus, &w->nodes[w->n_nodes]));
    LOAD("pods", pods, n_pods, project_pod(o_, gpus, &w->pods[w->n_pods]));
    LOAD("resourceclaims", claims, n_claims, project_dra_claim(o_, &w->claims[w->n_claims]));
    LOAD("resourceclaimtemplates", templates, n_templates,
         project_dra_template(o_, &w->templates[w->n_templates]));
    LOAD("deviceclasses", classes, n_classes, project_dra_class(o_, &w->classes[w->n_classes]));
    LOAD("resourceslices", slices, n_slices, project_dra_slice(o_, &w->slices[w->n_slices]));
    LOAD("devicetaintrules", rules, n_rules, project_dra_taint_rule(o_, &w->rules[w->n_rules]));
    w->node_ptrs = calloc(w->n_nodes + 1, sizeof(*w->node_ptrs));
    if (!w->node_ptrs) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    dra_world_node_ptrs(w);
    return 0;
fail:
    dra_world_cleanup(w);
    return -1;
}

void dra_world_node_ptrs(struct dra_world *w)
{
    for (size_t i = 0; i < w->n_nodes; i++)
        w->node_ptrs[i] = &w->nodes[i];
}

void dra_world_cleanup(struct dra_world *w)
{
    pod_cleanup(&w->pod);
    for (size_t i = 0; i < w->n_nodes; i++)
        node_cleanup(&w->nodes[i]);
    for (size_t i = 0; i < w->n_pods; i++)
        pod_cleanup(&w->pods[i]);
    for (size_t i = 0; i < w->n_claims; i++)
        dra_claim_cleanup(&w->claims[i]);
    for (size_t i = 0; i < w->n_templates; i++)
        dra_template_cleanup(&w->templates[i]);
    for (size_t i = 0; i < w->n_classes; i++)
        dra_class_cleanup(&w->classes[i]);
    for (size_t i = 0; i < w->n_slices; i++)
        dra_slice_cleanup(&w->slices[i]);
    for (size_t i = 0; i < w->n_rules; i++)
        dra_taint_rule_cleanup(&w->rules[i]);
    free(w->nodes);
    free(w->node_ptrs);
    free(w->pods);
    free(w->claims);
    free(w->templates);
    free(w->classes);
    free(w->slices);
    free(w->rules);
    gpu_set_cleanup(&w->dra_gpus);
    memset(w, 0, sizeof(*w));
}

int dra_world_apply(struct dra_store *ds, json_object *root)
{
    static const char *const keys[DRA_KIND_COUNT] = {
        [DRA_KIND_CLAIM] = "resourceclaims",        [DRA_KIND_TEMPLATE] = "resourceclaimtemplates",
        [DRA_KIND_CLASS] = "deviceclasses",         [DRA_KIND_SLICE] = "resourceslices",
        [DRA_KIND_TAINT_RULE] = "devicetaintrules",
    };
    int first = K_OK;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        size_t n;
        json_object *a = list(root, keys[k], &n);
        for (size_t i = 0; i < n; i++) {
            int rc = dra_store_apply_json(ds, (enum dra_kind)k, json_object_array_get_idx(a, i), 0);
            if (first == K_OK)
                first = rc;
        }
    }
    return first;
}

size_t dra_world_taint_rules(void *ctx, const char *driver, const char *pool, const char *device,
                             const struct dra_taint_rule **buf, size_t cap)
{
    const struct dra_world *w = ctx;
    size_t n = 0;
    for (size_t i = 0; i < w->n_rules; i++) {
        if (!dra_taint_rule_selects(&w->rules[i], driver, pool, device))
            continue;
        if (n < cap)
            buf[n] = &w->rules[i];
        n++;
    }
    return n;
}
