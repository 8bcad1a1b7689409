/* hints.c - near misses named after the ladder's word (hints.h). */
#include "classify/hints.h"

#include <stdio.h>
#include <string.h>

#include "classify/match.h"
#include "classify/node_state.h"

/* Whether the node lists some GPU resource in status.capacity (the projection keeps only GPU
 * resources, model.h). */
static bool lists_gpu(const struct knode *n)
{
    for (size_t i = 0; i < n->capacity.n; i++)
        if (n->capacity.items[i].value > 0)
            return true;
    return false;
}

/* A candidate of the pod: a node that passes its node selection (classify_node()'s test). */
static bool candidate(const struct classify_input *in, const struct knode *n)
{
    return n && pod_matches_node_selection(in->pod, n);
}

/* Candidates labelled GPU nodes by their cloud or provisioner that list no GPU resource at all,
 * those in a GPU stack state left out (put_gpu_stack names them). */
static void put_gpu_label_not_ready(struct line *l, const struct classify_input *in,
                                    const char *resource)
{
    size_t count = 0;
    const struct knode *first = NULL;
    struct node_gpu_label label = {0}, cur;
    struct gpu_stack_state st;
    for (size_t i = 0; i < in->n_nodes; i++) {
        const struct knode *n = in->nodes[i];
        if (!candidate(in, n) || !node_gpu_label(n, &cur) || lists_gpu(n) ||
            node_gpu_stack_state(n, &st))
            continue;
        if (!first) {
            first = n;
            label = cur;
        }
        count++;
    }
    if (!first)
        return;
    line_printf(l, "; node %s is labelled %s=%s by %s but lists no %s nor any other GPU resource",
                first->name, label.key, label.value, label.writer, resource);
    if (count > 1)
        line_printf(l, " (and %zu more such node%s)", count - 1, count == 2 ? "" : "s");
    line_printf(l, ": the GPU driver installer or the device plugin has not finished there");
}

/* Candidates in a GPU stack state: the deciding node first, then in input order; two named. */
static void put_gpu_stack(struct line *l, const struct classify_input *in,
                          const struct node_verdict *best)
{
    struct gpu_stack_state st;
    size_t named = 0, more = 0;
    const struct knode *decider = best ? best->node : NULL;
    if (candidate(in, decider) && node_gpu_stack_state(decider, &st)) {
        line_printf(l, "; ");
        gpu_stack_state_put(l, decider->name, &st);
        named++;
    }
    for (size_t i = 0; i < in->n_nodes; i++) {
        const struct knode *n = in->nodes[i];
        if (n == decider || !candidate(in, n) || !node_gpu_stack_state(n, &st))
            continue;
        if (named == 2) {
            more++;
            continue;
        }
        line_printf(l, "; ");
        gpu_stack_state_put(l, n->name, &st);
        named++;
    }
    if (more)
        line_printf(l, " (and %zu more node%s in a GPU stack state)", more, more == 1 ? "" : "s");
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
    bool decided = best && best->node;
    /* first what the deciding node itself says ("it advertises"), then the other candidates */
    if (cause == CAUSE_NO_GPU_NODE && decided)
        put_other_resources(l, best, best->resource);
    if ((cause == CAUSE_EXHAUSTED || cause == CAUSE_GPU_FITS) && decided)
        put_unhealthy(l, best);
    if (cause == CAUSE_LABEL_MISMATCH)
        put_shared_rename(l, in);
    if (decided && (cause == CAUSE_TAINT || cause == CAUSE_NO_GPU_NODE ||
                    cause == CAUSE_ALLOCATABLE_ZERO || cause == CAUSE_EXHAUSTED)) {
        put_gpu_stack(l, in, best);
        if (best->resource)
            put_gpu_label_not_ready(l, in, best->resource);
    }
    if (cause_rank(cause) >= cause_rank(CAUSE_LABEL_MISMATCH))
        put_vendor_resource(l, in->pod);
}
