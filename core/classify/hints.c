/* hints.c - near misses named after the ladder's word (hints.h). */
#include "classify/hints.h"

#include <stdio.h>
#include <string.h>

/* Node labels the clouds put on the nodes of a GPU node pool. */
static const char *const cloud_gpu_labels[] = {
    "cloud.google.com/gke-accelerator", /* GKE */
    "k8s.amazonaws.com/accelerator",    /* EKS */
    "kubernetes.azure.com/accelerator", /* AKS */
};

/* The cloud GPU label of a node, or NULL; its value in *value. */
static const char *cloud_label(const struct knode *n, const char **value)
{
    for (size_t i = 0; i < sizeof(cloud_gpu_labels) / sizeof(cloud_gpu_labels[0]); i++) {
        const char *v = kv_list_get(&n->labels, cloud_gpu_labels[i]);
        if (v) {
            *value = v;
            return cloud_gpu_labels[i];
        }
    }
    return NULL;
}

static bool lists_resource(const struct knode *n, const char *resource)
{
    return resource && resource_list_get(&n->capacity, resource) > 0;
}

/* no-gpu-node: cloud GPU nodes without the resource yet. */
static void put_cloud_not_ready(struct line *l, const struct classify_input *in,
                                const char *resource)
{
    size_t count = 0;
    const struct knode *first = NULL;
    const char *key = NULL, *value = NULL;
    for (size_t i = 0; i < in->n_nodes; i++) {
        const struct knode *n = in->nodes[i];
        const char *v = NULL, *k = n ? cloud_label(n, &v) : NULL;
        if (!k || lists_resource(n, resource))
            continue;
        if (!first) {
            first = n;
            key = k;
            value = v;
        }
        count++;
    }
    if (!first)
        return;
    line_printf(l, "; node %s is labelled %s=%s by its cloud but lists no %s", first->name, key,
                value, resource);
    if (count > 1)
        line_printf(l, " (and %zu more such node%s)", count - 1, count == 2 ? "" : "s");
    line_printf(l, ": the GPU driver installer or the device plugin has not finished there");
}

/* no-gpu-node: the GPU resources the deciding node advertises instead. */
static void put_other_resources(struct line *l, const struct node_verdict *best,
                                const char *resource)
{
    const struct knode *n = best->node;
    size_t shown = 0;
    for (size_t i = 0; i < n->capacity.n && shown < 6; i++) {
        const struct resource_amount *r = &n->capacity.items[i];
        if (r->value <= 0 || (resource && strcmp(r->name, resource) == 0))
            continue;
        line_printf(l, "%s%s=%lld", shown ? ", " : "; it advertises ", r->name,
                    (long long)r->value);
        shown++;
    }
    if (!shown)
        return;
    if (resource && strncmp(resource, "nvidia.com/mig-", 15) == 0)
        line_printf(l, " (MIG profiles depend on the GPU model and the node's MIG configuration)");
    else if (resource && strcmp(resource, "nvidia.com/gpu") == 0 &&
             resource_list_get(&n->capacity, "nvidia.com/gpu.shared") > 0)
        line_printf(l, " (time-slicing with renameByDefault advertises nvidia.com/gpu.shared)");
}

/* label-mismatch: a node whose label is the asked value + "-SHARED". */
static void put_shared_rename(struct line *l, const struct classify_input *in)
{
    const struct kv_list *sel = &in->pod->node_selector;
    for (size_t s = 0; s < sel->n; s++) {
        const char *key = sel->items[s].key, *want = sel->items[s].value;
        if (!key || !want)
            continue;
        size_t wl = strlen(want);
        for (size_t i = 0; i < in->n_nodes; i++) {
            const struct knode *n = in->nodes[i];
            const char *have = n ? kv_list_get(&n->labels, key) : NULL;
            if (have && strlen(have) == wl + 7 && strncmp(have, want, wl) == 0 &&
                strcmp(have + wl, "-SHARED") == 0) {
                line_printf(l,
                            "; node %s has %s=%s: GPU time-slicing with renameByDefault appends "
                            "-SHARED to the product label; select %s or turn the rename off",
                            n->name, key, have, have);
                return;
            }
        }
    }
}

/* exhausted, gpu-fits: unhealthy GPUs of the deciding node. */
static void put_unhealthy(struct line *l, const struct node_verdict *best)
{
    if (!best->resource || best->allocatable <= 0 || best->capacity <= best->allocatable)
        return;
    line_printf(l, "; %lld of %lld %s on node %s are unhealthy (allocatable below capacity)",
                (long long)(best->capacity - best->allocatable), (long long)best->capacity,
                best->resource, best->node->name);
}

/* A vendor-scheduler resource asked of another scheduler. */
static void put_vendor_resource(struct line *l, const struct kpod *pod)
{
    const char *sched = gpu_vendor_scheduler(pod->vendor_resource, NULL);
    const char *mine =
        pod->scheduler_name && *pod->scheduler_name ? pod->scheduler_name : "default-scheduler";
    if (!sched || strcmp(mine, sched) == 0)
        return;
    line_printf(l,
                "; %s is placed only by %s, and this pod uses schedulerName %s (no node "
                "advertises it: that scheduler reports Insufficient %s)",
                pod->vendor_resource, sched, mine, pod->vendor_resource);
}

void hints_put(struct line *l, const struct classify_input *in, enum cause cause,
               const struct node_verdict *best)
{
    switch (cause) {
    case CAUSE_NO_GPU_NODE:
        if (best && best->node) {
            put_cloud_not_ready(l, in, best->resource);
            put_other_resources(l, best, best->resource);
        }
        break;
    case CAUSE_LABEL_MISMATCH:
        put_shared_rename(l, in);
        break;
    case CAUSE_EXHAUSTED:
    case CAUSE_GPU_FITS:
        if (best && best->node)
            put_unhealthy(l, best);
        break;
    default:
        break;
    }
    if (cause_rank(cause) >= cause_rank(CAUSE_LABEL_MISMATCH))
        put_vendor_resource(l, in->pod);
}
