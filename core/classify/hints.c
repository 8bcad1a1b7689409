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

/*
 * Whether the node holds `resource` as a healthy GPU node does: listed, all of it allocatable,
 * neither cordoned nor tainted. Such a node's GPU stack keeps nothing from the pod, so its labels
 * are not read (a cheap test first: the labels of thousands of nodes are not scanned for each
 * pod when they serve their GPUs).
 */
static bool serves(const struct knode *n, const char *resource)
{
    if (!resource || n->unschedulable || n->n_taints > 0)
        return false;
    int64_t cap = resource_list_get(&n->capacity, resource);
    return cap > 0 && resource_list_get(&n->allocatable, resource) >= cap;
}

/* What the candidates' labels say, gathered in one pass over the nodes. */
struct node_hints {
    const struct knode *stack_node[2]; /* in a GPU stack state, the deciding node first */
    struct gpu_stack_state stack[2];
    size_t n_stack;                 /* all of them, named or not */
    const struct knode *label_node; /* the first labelled GPU node without a GPU resource */
    struct node_gpu_label label;
    size_t n_label;
};

static void add_stack(struct node_hints *h, const struct knode *n, const struct gpu_stack_state *st)
{
    if (h->n_stack < 2) {
        h->stack_node[h->n_stack] = n;
        h->stack[h->n_stack] = *st;
    }
    h->n_stack++;
}

/*
 * The candidates in a GPU stack state, and those labelled GPU nodes by their cloud or provisioner
 * that list no GPU resource at all and are in no GPU stack state (put_gpu_stack names those).
 * With gpu_listed_only, nodes that list no GPU resource key at all (not even at 0) are skipped:
 * their labels are cold memory, and reading them for every exhausted or tainted pod of a large
 * cluster of CPU nodes doubled the cost of a classification (bench_classify).
 */
/* Note one node that does not serve the pod's resource, if it is a candidate: its labels first
 * (one pass), the node selection (a lookup per selector term) only for the few that say
 * something. */
static void note(struct node_hints *h, const struct classify_input *in, const struct knode *n)
{
    struct gpu_stack_state st;
    struct node_gpu_label label;
    unsigned found = node_gpu_states(n, &st, &label);
    if (!found || !candidate(in, n))
        return;
    if (found & NODE_GPU_STACK) {
        add_stack(h, n, &st);
    } else if ((found & NODE_GPU_LABEL) && !lists_gpu(n)) {
        if (!h->label_node) {
            h->label_node = n;
            h->label = label;
        }
        h->n_label++;
    }
}

static void gather(const struct classify_input *in, const struct node_verdict *best,
                   bool gpu_listed_only, struct node_hints *h)
{
    const struct knode *decider = best->node;
    memset(h, 0, sizeof(*h));
    /* the deciding node first; then the cheapest tests first: a node's own fields, then its
     * labels (selection, GPU states) */
    if (!serves(decider, best->resource))
        note(h, in, decider);
    for (size_t i = 0; i < in->n_nodes; i++) {
        const struct knode *n = in->nodes[i];
        if (!n || n == decider || (gpu_listed_only && n->capacity.n == 0) ||
            serves(n, best->resource))
            continue;
        note(h, in, n);
    }
}

static void put_gpu_stack(struct line *l, const struct node_hints *h)
{
    size_t named = h->n_stack < 2 ? h->n_stack : 2;
    for (size_t i = 0; i < named; i++) {
        line_printf(l, "; ");
        gpu_stack_state_put(l, h->stack_node[i]->name, &h->stack[i]);
    }
    if (h->n_stack > named)
        line_printf(l, " (and %zu more node%s in a GPU stack state)", h->n_stack - named,
                    h->n_stack - named == 1 ? "" : "s");
}

static void put_gpu_label_not_ready(struct line *l, const struct node_hints *h,
                                    const char *resource)
{
    if (!h->label_node)
        return;
    line_printf(l, "; node %s is labelled %s=%s by %s but lists no %s nor any other GPU resource",
                h->label_node->name, h->label.key, h->label.value, h->label.writer, resource);
    if (h->n_label > 1)
        line_printf(l, " (and %zu more such node%s)", h->n_label - 1, h->n_label == 2 ? "" : "s");
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
        struct node_hints h;
        gather(in, best, cause == CAUSE_TAINT || cause == CAUSE_EXHAUSTED, &h);
        put_gpu_stack(l, &h);
        if (best->resource)
            put_gpu_label_not_ready(l, &h, best->resource);
    }
    if (cause_rank(cause) >= cause_rank(CAUSE_LABEL_MISMATCH))
        put_vendor_resource(l, in->pod);
}
