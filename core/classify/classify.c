/*
 * classify.c - the cause ladder of classify.h.
 *
 * Per candidate node the ladder is: cordon/taint, then for every requested GPU resource
 * capacity, allocatable and free space. The node that came closest decides the cause; the detail
 * line names it with its numbers so a platform engineer can act on it without running kubectl.
 */
#include "classify.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "classify/autoscaler.h"
#include "classify/binding.h"
#include "classify/dra_ladder.h"
#include "classify/gang.h"
#include "classify/hints.h"
#include "classify/line.h"
#include "classify/match.h"
#include "classify/node_state.h"
#include "classify/placement.h"
#include "classify/queue.h"
#include "classify/quota.h"
#include "classify/toleration_advice.h"
#include "util/result.h"

static const char *const words[] = {
    [CAUSE_NO_REQUEST] = "no-request",
    [CAUSE_OK] = "ok",
    [CAUSE_LABEL_MISMATCH] = "label-mismatch",
    [CAUSE_TAINT] = "taint",
    [CAUSE_NO_GPU_NODE] = "no-gpu-node",
    [CAUSE_ALLOCATABLE_ZERO] = "allocatable-zero",
    [CAUSE_EXHAUSTED] = "exhausted",
    [CAUSE_GPU_FITS] = "gpu-fits",
    [CAUSE_DRA_TEMPLATE_MISSING] = "dra-template-missing",
    [CAUSE_DRA_CLAIM_MISSING] = "dra-claim-missing",
    [CAUSE_DRA_CLASS_MISSING] = "dra-class-missing",
    [CAUSE_DRA_NO_DRIVER] = "dra-no-driver",
    [CAUSE_DRA_NO_MATCH] = "dra-no-match",
    [CAUSE_DRA_EXHAUSTED] = "dra-exhausted",
    [CAUSE_DRA_TAINTED] = "dra-tainted",
    [CAUSE_NODE_REJECTED] = "node-rejected",
    [CAUSE_SCHEDULING_GATED] = "scheduling-gated",
    [CAUSE_NO_SCHEDULER] = "no-scheduler",
    [CAUSE_PREEMPTING] = "preempting",
    [CAUSE_SCALING_UP] = "scaling-up",
    [CAUSE_SCALE_UP_BLOCKED] = "scale-up-blocked",
    [CAUSE_BINDING] = "binding",
    [CAUSE_BINDING_FAILED] = "binding-failed",
    [CAUSE_RUNTIME_MISSING] = "runtime-missing",
    [CAUSE_IMAGE_PULL_FAILED] = "image-pull-failed",
    [CAUSE_CONTAINER_START_FAILED] = "container-start-failed",
    [CAUSE_QUOTA_EXCEEDED] = "quota-exceeded",
    [CAUSE_QUEUE_WAITING] = "queue-waiting",
    [CAUSE_GANG_WAITING] = "gang-waiting",
};

static const char *const event_reasons[] = {
    [CAUSE_NO_REQUEST] = "GPUNotRequested",
    [CAUSE_OK] = "GPUPlaced",
    [CAUSE_LABEL_MISMATCH] = "NodeSelectorMismatch",
    [CAUSE_TAINT] = "UntoleratedTaint",
    [CAUSE_NO_GPU_NODE] = "NoGPUNode",
    [CAUSE_ALLOCATABLE_ZERO] = "GPUAllocatableZero",
    [CAUSE_EXHAUSTED] = "GPUExhausted",
    [CAUSE_GPU_FITS] = "GPUFits",
    [CAUSE_DRA_TEMPLATE_MISSING] = "DRAClaimTemplateMissing",
    [CAUSE_DRA_CLAIM_MISSING] = "DRAClaimMissing",
    [CAUSE_DRA_CLASS_MISSING] = "DRADeviceClassMissing",
    [CAUSE_DRA_NO_DRIVER] = "DRANoDriver",
    [CAUSE_DRA_NO_MATCH] = "DRANoMatchingDevice",
    [CAUSE_DRA_EXHAUSTED] = "DRADevicesExhausted",
    [CAUSE_DRA_TAINTED] = "DRADeviceTainted",
    [CAUSE_NODE_REJECTED] = "KubeletRejected",
    [CAUSE_SCHEDULING_GATED] = "SchedulingGated",
    [CAUSE_NO_SCHEDULER] = "SchedulerNotRunning",
    [CAUSE_PREEMPTING] = "GPUPreempting",
    [CAUSE_SCALING_UP] = "GPUScalingUp",
    [CAUSE_SCALE_UP_BLOCKED] = "GPUScaleUpBlocked",
    [CAUSE_BINDING] = "GPUBinding",
    [CAUSE_BINDING_FAILED] = "DeviceBindingFailed",
    [CAUSE_RUNTIME_MISSING] = "GPURuntimeMissing",
    [CAUSE_IMAGE_PULL_FAILED] = "GPUImagePullFailed",
    [CAUSE_CONTAINER_START_FAILED] = "GPUContainerStartFailed",
    [CAUSE_QUOTA_EXCEEDED] = "GPUQuotaExceeded",
    [CAUSE_QUEUE_WAITING] = "GPUQueueWaiting",
    [CAUSE_GANG_WAITING] = "GPUGangWaiting",
};

/* The ladder's order (classify.h); indexed by enum cause. */
static const int ranks[] = {
    [CAUSE_NO_REQUEST] = 0,
    [CAUSE_NODE_REJECTED] = 1,
    [CAUSE_RUNTIME_MISSING] = 2,
    [CAUSE_IMAGE_PULL_FAILED] = 3,
    [CAUSE_CONTAINER_START_FAILED] = 4,
    [CAUSE_OK] = 5,
    [CAUSE_QUOTA_EXCEEDED] = 6,
    [CAUSE_QUEUE_WAITING] = 7,
    [CAUSE_GANG_WAITING] = 8,
    [CAUSE_SCHEDULING_GATED] = 9,
    [CAUSE_PREEMPTING] = 10,
    [CAUSE_BINDING_FAILED] = 11,
    [CAUSE_BINDING] = 12,
    [CAUSE_NO_SCHEDULER] = 13,
    [CAUSE_DRA_TEMPLATE_MISSING] = 14,
    [CAUSE_DRA_CLAIM_MISSING] = 15,
    [CAUSE_DRA_CLASS_MISSING] = 16,
    [CAUSE_LABEL_MISMATCH] = 17,
    [CAUSE_TAINT] = 18,
    [CAUSE_NO_GPU_NODE] = 19,
    [CAUSE_ALLOCATABLE_ZERO] = 20,
    [CAUSE_EXHAUSTED] = 21,
    [CAUSE_DRA_NO_DRIVER] = 22,
    [CAUSE_DRA_NO_MATCH] = 23,
    [CAUSE_DRA_TAINTED] = 24,
    [CAUSE_DRA_EXHAUSTED] = 25,
    [CAUSE_GPU_FITS] = 26,
    [CAUSE_SCALING_UP] = 27,
    [CAUSE_SCALE_UP_BLOCKED] = 28,
};

_Static_assert(sizeof(words) / sizeof(words[0]) == CAUSE_COUNT, "a word for every cause");
_Static_assert(sizeof(event_reasons) / sizeof(event_reasons[0]) == CAUSE_COUNT,
               "an Event reason for every cause");
_Static_assert(sizeof(ranks) / sizeof(ranks[0]) == CAUSE_COUNT, "a rank for every cause");

#define N_CAUSES ((int)(sizeof(words) / sizeof(words[0])))

const char *cause_word(enum cause c)
{
    if ((int)c < 0 || (int)c >= N_CAUSES)
        return "unknown";
    return words[c];
}

int cause_from_word(const char *word)
{
    if (!word)
        return -1;
    for (int i = 0; i < N_CAUSES; i++)
        if (strcmp(words[i], word) == 0)
            return i;
    return -1;
}

const char *cause_event_reason(enum cause c)
{
    if ((int)c < 0 || (int)c >= N_CAUSES)
        return "Unknown";
    return event_reasons[c];
}

int cause_rank(enum cause c)
{
    if ((int)c < 0 || (int)c >= N_CAUSES)
        return -1;
    return ranks[c];
}

int cause_is_blocking(enum cause c)
{
    return c != CAUSE_NO_REQUEST && c != CAUSE_OK && c != CAUSE_PREEMPTING &&
           c != CAUSE_SCALING_UP && c != CAUSE_BINDING;
}

/* ---- states outside "Pending and unschedulable" ------------------------------------------- */

static const struct knode *find_node(const struct classify_input *in, const char *name);

/* A non-default scheduler, no PodScheduled condition yet. */
static bool waits_for_own_scheduler(const struct kpod *pod)
{
    return pod->scheduler_name && *pod->scheduler_name &&
           strcmp(pod->scheduler_name, "default-scheduler") != 0 &&
           pod->scheduled.status == COND_ABSENT;
}

int64_t pod_no_scheduler_pending(const struct kpod *pod, int64_t now, int64_t grace)
{
    if (!pod || pod->node_name || !waits_for_own_scheduler(pod) || now <= 0 || pod->created <= 0 ||
        pod->n_scheduling_gates > 0 || pod->nominated_node)
        return 0;
    if (grace <= 0)
        grace = CLASSIFY_NO_SCHEDULER_GRACE;
    int64_t age = now - pod->created;
    return age < grace ? grace - age : 0;
}

static void put_rejected(struct line *l, const struct classify_input *in)
{
    const struct kpod *pod = in->pod;
    line_printf(l, "kubelet on node %s rejected the pod at admission: %s", pod->node_name,
                pod->failed_reason);
    if (pod->failed_message && *pod->failed_message)
        line_printf(l, ": %s", pod->failed_message);
    if (in->rejected_siblings)
        line_printf(l, "; %zu other pod%s of the same controller rejected in the last hour",
                    in->rejected_siblings, in->rejected_siblings == 1 ? "" : "s");
}

static void put_gates(struct line *l, const struct kpod *pod)
{
    size_t kept = pod->n_scheduling_gates < POD_MAX_SCHEDULING_GATES ? pod->n_scheduling_gates
                                                                     : POD_MAX_SCHEDULING_GATES;
    bool kueue = false;
    line_printf(l, "scheduling gate%s ", pod->n_scheduling_gates == 1 ? "" : "s");
    for (size_t i = 0; i < kept; i++) {
        const char *g = pod->scheduling_gates[i];
        line_printf(l, "%s%s", i ? ", " : "", g);
        kueue = kueue || strcmp(g, "kueue.x-k8s.io/admission") == 0;
    }
    if (pod->n_scheduling_gates > kept)
        line_printf(l, " and %zu more", pod->n_scheduling_gates - kept);
    line_printf(l, ": the scheduler does not look at the pod until %s removed",
                pod->n_scheduling_gates == 1 ? "it is" : "they are");
    if (kueue)
        line_printf(l, "; Kueue removes kueue.x-k8s.io/admission when it admits the workload "
                       "(the workload waits for quota in its queue)");
}

static void put_no_scheduler(struct line *l, const struct classify_input *in, int64_t grace)
{
    const struct kpod *pod = in->pod;
    line_printf(l,
                "spec.schedulerName %s: no PodScheduled condition %lld s after creation (grace "
                "%lld s); no scheduler of that name is running or it does not serve this pod",
                pod->scheduler_name, (long long)(in->now - pod->created), (long long)grace);
}

static void put_preempting(struct line *l, const struct classify_input *in)
{
    const struct kpod *pod = in->pod;
    line_printf(l,
                "nominated node %s: the scheduler preempted lower-priority pods there and will "
                "most likely place this pod",
                pod->nominated_node);
    if (in->victims_total == 0) {
        line_printf(l, "; no pod is terminating there any more");
        return;
    }
    line_printf(l, "; %zu still terminating there: ", in->victims_total);
    for (size_t i = 0; i < in->n_victims && in->victims; i++)
        line_printf(l, "%s%s", i ? ", " : "", in->victims[i]);
    if (in->victims_total > in->n_victims)
        line_printf(l, ", ...");
}

/*
 * An unbound pod's word from its nominated node and binding state (classify.h: preempting,
 * binding-failed, binding), with the detail written to l; CAUSE_COUNT when none applies.
 */
static enum cause nominated_word(const struct classify_input *in, const struct dra_prep *prep,
                                 struct line *l, struct classify_result *out)
{
    const struct kpod *pod = in->pod;
    if (pod->nominated_node && in->victims_total > 0) {
        put_preempting(l, in);
        return CAUSE_PREEMPTING;
    }
    int64_t timeout = in->binding_timeout > 0 ? in->binding_timeout : CLASSIFY_BINDING_TIMEOUT;
    size_t n;
    const struct dra_claim *const *claims = dra_prep_allocated(prep, &n);
    struct binding_facts f;
    binding_facts_of(claims, n, in->now, timeout, &f);
    if (f.failed || f.timed_out_claim || (!pod->nominated_node && binding_scheduler_failed(pod))) {
        binding_put(l, pod, &f, timeout, true);
        return CAUSE_BINDING_FAILED;
    }
    if (!pod->nominated_node)
        return CAUSE_COUNT;
    if (pod->n_claims > 0 || pod->pvc_volumes || f.devices > 0 || dra_prep_ext(prep)) {
        binding_put(l, pod, &f, timeout, false);
        out->binding_waits = f.pending > 0;
        out->binding_until = f.deadline;
        return CAUSE_BINDING;
    }
    put_preempting(l, in);
    return CAUSE_PREEMPTING;
}

/* ---- the detail line ---------------------------------------------------------------------- */

static const char *op_name(enum selector_op op)
{
    switch (op) {
    case SELECTOR_OP_IN:
        return "In";
    case SELECTOR_OP_NOT_IN:
        return "NotIn";
    case SELECTOR_OP_EXISTS:
        return "Exists";
    case SELECTOR_OP_DOES_NOT_EXIST:
        return "DoesNotExist";
    case SELECTOR_OP_GT:
        return "Gt";
    case SELECTOR_OP_LT:
        return "Lt";
    case SELECTOR_OP_UNKNOWN:
    default:
        return "(unsupported operator)";
    }
}

static void put_requirement(struct line *l, const struct selector_requirement *r)
{
    line_printf(l, "%s %s", r->key ? r->key : "", op_name(r->op));
    if (r->op == SELECTOR_OP_EXISTS || r->op == SELECTOR_OP_DOES_NOT_EXIST)
        return;
    line_printf(l, " (");
    for (size_t i = 0; i < r->n_values; i++)
        line_printf(l, "%s%s", i ? "," : "", r->values[i] ? r->values[i] : "");
    line_printf(l, ")");
}

static void put_affinity(struct line *l, const struct node_affinity *aff)
{
    line_printf(l, "required node affinity");
    if (aff->n_terms == 0) {
        line_printf(l, " with no terms");
        return;
    }
    for (size_t t = 0; t < aff->n_terms; t++) {
        const struct selector_term *term = &aff->terms[t];
        line_printf(l, "%s[", t ? " OR " : " ");
        size_t k = 0;
        for (size_t i = 0; i < term->n_exprs; i++, k++) {
            if (k)
                line_printf(l, " AND ");
            put_requirement(l, &term->exprs[i]);
        }
        for (size_t i = 0; i < term->n_fields; i++, k++) {
            if (k)
                line_printf(l, " AND ");
            put_requirement(l, &term->fields[i]);
        }
        if (k == 0)
            line_printf(l, "empty term");
        line_printf(l, "]");
    }
}

static void put_taint(struct line *l, const struct taint *t)
{
    const char *key = t->key ? t->key : "";
    const char *value = t->value ? t->value : "";
    const char *effect = t->effect ? t->effect : "";
    if (*value)
        line_printf(l, "%s=%s:%s", key, value, effect);
    else
        line_printf(l, "%s:%s", key, effect);
}

static void put_toleration_hint(struct line *l, const struct taint *t)
{
    char advice[TOLERATION_ADVICE_MAX];
    toleration_advice(advice, sizeof(advice), t, false);
    line_printf(l, "add toleration %s", advice);
}

/* ---- the per-node ladder ------------------------------------------------------------------ */

static int64_t usage_of(node_usage_fn usage, void *ctx, const struct knode *node,
                        const char *resource)
{
    if (!usage || !node->name)
        return 0;
    int64_t u = usage(ctx, node->name, resource);
    return u < 0 ? 0 : u;
}

enum cause node_resource_step(const struct knode *node, const char *resource, int64_t requested,
                              int64_t allocated)
{
    int64_t capacity = resource_list_get(&node->capacity, resource);
    int64_t allocatable = resource_list_get(&node->allocatable, resource);
    if (capacity <= 0)
        return CAUSE_NO_GPU_NODE;
    if (allocatable <= 0)
        return CAUSE_ALLOCATABLE_ZERO;
    if ((__int128)allocatable - (__int128)allocated < (__int128)requested)
        return CAUSE_EXHAUSTED;
    return CAUSE_GPU_FITS;
}

/* classify_node(), but a resource DRA serves on the node (dra_prep_serves and the node's
 * allocatable lacks it) takes no resource step: the DRA step stands for it. */
static bool node_ladder(const struct kpod *pod, const struct knode *node, node_usage_fn usage,
                        void *usage_ctx, const struct dra_prep *prep, struct node_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->node = node;
    if (!pod_matches_node_selection(pod, node)) {
        v->step = v->resource_step = CAUSE_LABEL_MISMATCH;
        return false;
    }
    v->resource_step = CAUSE_GPU_FITS;
    v->dra_step = CAUSE_GPU_FITS;
    bool first = true;
    for (size_t i = 0; i < pod->gpu_requests.n; i++) {
        const struct resource_amount *r = &pod->gpu_requests.items[i];
        if (r->value <= 0)
            continue;
        if (prep && resource_list_get(&node->allocatable, r->name) <= 0 &&
            dra_prep_serves(prep, r->name))
            continue; /* served by DRA here (extendeddynamicresources.go) */
        int64_t used = usage_of(usage, usage_ctx, node, r->name);
        enum cause step = node_resource_step(node, r->name, r->value, used);
        if (first || cause_rank(step) < cause_rank(v->resource_step)) {
            v->resource_step = step;
            v->resource = r->name;
            v->capacity = resource_list_get(&node->capacity, r->name);
            v->allocatable = resource_list_get(&node->allocatable, r->name);
            v->allocated = used;
            v->requested = r->value;
            first = false;
        }
    }
    v->full_capacity = cause_rank(v->resource_step) > cause_rank(CAUSE_NO_GPU_NODE);
    v->step = v->resource_step;
    if (node_cordon_blocks(node, pod->tolerations, pod->n_tolerations)) {
        v->step = CAUSE_TAINT;
        v->taint = NULL;
    } else {
        const struct taint *t =
            node_first_untolerated_taint(node, pod->tolerations, pod->n_tolerations);
        if (t) {
            v->step = CAUSE_TAINT;
            v->taint = t;
        }
    }
    return true;
}

bool classify_node(const struct kpod *pod, const struct knode *node, node_usage_fn usage,
                   void *usage_ctx, struct node_verdict *v)
{
    return node_ladder(pod, node, usage, usage_ctx, NULL, v);
}

int64_t node_verdict_free(const struct node_verdict *v)
{
    __int128 f = (__int128)v->allocatable - (__int128)v->allocated;
    return f <= 0 ? 0 : f > INT64_MAX ? INT64_MAX : (int64_t)f;
}

int node_verdict_cmp(const void *pa, const void *pb)
{
    const struct node_verdict *a = pa, *b = pb;
    if (a->full_capacity != b->full_capacity)
        return a->full_capacity ? -1 : 1;
    if (a->step != b->step)
        return cause_rank(a->step) > cause_rank(b->step) ? -1 : 1;
    if (a->step == CAUSE_EXHAUSTED) {
        int64_t fa = node_verdict_free(a), fb = node_verdict_free(b);
        if (fa != fb)
            return fa > fb ? -1 : 1;
    }
    if (a->step == CAUSE_DRA_EXHAUSTED && a->dra_free != b->dra_free)
        return a->dra_free > b->dra_free ? -1 : 1;
    return 0;
}

static const char *node_name_of(const struct knode *n)
{
    return n && n->name ? n->name : "(unnamed)";
}

static void put_siblings(struct line *l, const struct knode *node, const char *resource)
{
    size_t k = 0;
    for (size_t i = 0; i < node->capacity.n; i++) {
        const struct resource_amount *r = &node->capacity.items[i];
        if (r->value <= 0 || strcmp(r->name, resource) == 0)
            continue;
        line_printf(l, "%s%s", k ? ", " : "; it lists ", r->name);
        k++;
    }
}

/* The resource outcome of one node, e.g. "node n: nvidia.com/gpu capacity 4, allocatable 0". */
static void put_resource_outcome(struct line *l, const struct node_verdict *v)
{
    const char *name = node_name_of(v->node);
    const char *res = v->resource ? v->resource : "";
    switch (v->resource_step) {
    case CAUSE_NO_GPU_NODE: {
        bool listed = false;
        for (size_t i = 0; i < v->node->capacity.n; i++)
            if (strcmp(v->node->capacity.items[i].name, res) == 0)
                listed = true;
        if (listed) {
            line_printf(l,
                        "node %s does not list %s in status.capacity (it is there as 0, which "
                        "the kubelet writes when the device plugin is gone)",
                        name, res);
            put_siblings(l, v->node, res);
            return;
        }
        line_printf(l, "node %s does not list %s in status.capacity", name, res);
        put_siblings(l, v->node, res);
        return;
    }
    case CAUSE_ALLOCATABLE_ZERO:
        line_printf(l, "node %s: %s capacity %lld, allocatable %lld", name, res,
                    (long long)v->capacity, (long long)v->allocatable);
        return;
    case CAUSE_EXHAUSTED:
        line_printf(l, "node %s: %s allocatable %lld, allocated %lld, free %lld, requested %lld",
                    name, res, (long long)v->allocatable, (long long)v->allocated,
                    (long long)node_verdict_free(v), (long long)v->requested);
        return;
    case CAUSE_GPU_FITS:
    default:
        line_printf(l, "%s fits on %s (free %lld, requested %lld)", res, name,
                    (long long)node_verdict_free(v), (long long)v->requested);
        return;
    }
}

static void put_histogram(struct line *l, const struct classify_result *out, size_t n_nodes)
{
    enum cause order[CAUSE_COUNT];
    size_t n = 0;
    for (int c = 0; c < CAUSE_COUNT; c++)
        if (out->counts[c] && cause_rank((enum cause)c) >= cause_rank(CAUSE_TAINT))
            order[n++] = (enum cause)c;
    /* count descending, then word ascending */
    for (size_t i = 1; i < n; i++) {
        enum cause x = order[i];
        size_t j = i;
        while (j > 0 && (out->counts[order[j - 1]] < out->counts[x] ||
                         (out->counts[order[j - 1]] == out->counts[x] &&
                          strcmp(cause_word(order[j - 1]), cause_word(x)) > 0))) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    line_printf(l, "; candidates: ");
    for (size_t i = 0; i < n; i++)
        line_printf(l, "%s%zu %s", i ? ", " : "", out->counts[order[i]], cause_word(order[i]));
    line_printf(l, " (%zu of %zu nodes match node selection)", out->n_candidates, n_nodes);
}

static void put_label_mismatch(struct line *l, const struct classify_input *in)
{
    const struct kpod *pod = in->pod;
    bool has_sel = pod->node_selector.n > 0;
    bool has_aff = pod->affinity.present;
    if (!has_sel && !has_aff) {
        line_printf(l, "0 of %zu nodes: the cluster has no Node objects", in->n_nodes);
        return;
    }
    line_printf(l, "0 of %zu nodes match ", in->n_nodes);
    if (has_sel) {
        line_printf(l, "nodeSelector ");
        for (size_t i = 0; i < pod->node_selector.n; i++)
            line_printf(l, "%s%s=%s", i ? "," : "", pod->node_selector.items[i].key,
                        pod->node_selector.items[i].value ? pod->node_selector.items[i].value : "");
    }
    if (has_aff) {
        if (has_sel)
            line_printf(l, " and ");
        put_affinity(l, &pod->affinity);
    }
    /* name the selector keys that no node carries at all */
    for (size_t i = 0; i < pod->node_selector.n; i++) {
        const char *key = pod->node_selector.items[i].key;
        bool seen = false;
        for (size_t j = 0; j < in->n_nodes && !seen; j++)
            if (in->nodes[j] && kv_list_get(&in->nodes[j]->labels, key))
                seen = true;
        if (!seen && in->n_nodes > 0)
            line_printf(l, "; no node has the label %s", key);
    }
}

static bool has_gpu_request(const struct kpod *pod)
{
    for (size_t i = 0; i < pod->gpu_requests.n; i++)
        if (pod->gpu_requests.items[i].value > 0)
            return true;
    return false;
}

/* The resource outcome of the deciding node, DRA included. */
static void put_outcome(struct line *l, const struct node_verdict *v, const struct dra_prep *prep)
{
    bool dra_step =
        v->resource_step == CAUSE_DRA_NO_DRIVER || v->resource_step == CAUSE_DRA_NO_MATCH ||
        v->resource_step == CAUSE_DRA_TAINTED || v->resource_step == CAUSE_DRA_EXHAUSTED;
    struct node_verdict tmp = *v;
    if (dra_step) {
        dra_node(prep, v->node, &tmp, l);
        return;
    }
    if (v->resource) {
        put_resource_outcome(l, v);
        if (v->resource_step == CAUSE_GPU_FITS && prep && v->dra_request) {
            line_printf(l, "; ");
            dra_node(prep, v->node, &tmp, l);
        }
        return;
    }
    if (prep && v->dra_request)
        dra_node(prep, v->node, &tmp, l);
    else
        line_printf(l, "node %s", node_name_of(v->node));
}

/*
 * One pass of the per-node ladder over the nodes and the closest candidate: the loop classify()
 * and classify_nodes() share. With a DRA prep, a node outside an allocated claim's nodeSelector
 * is no candidate (counted in `narrowed`) and the DRA step joins each candidate's verdict.
 */
struct node_pass {
    const struct kpod *pod;
    const struct knode *const *nodes;
    size_t n_nodes;
    node_usage_fn usage;
    void *usage_ctx;
    struct dra_prep *prep;     /* NULL: no DRA */
    struct node_verdict *each; /* NULL, or n_nodes entries: every node's verdict, input order */
    void (*candidate)(void *ctx, const struct node_verdict *v); /* NULL, or per candidate */
    void *ctx;
    /* results */
    struct node_verdict best; /* the closest candidate's verdict */
    size_t closest;           /* its index in nodes, SIZE_MAX when there is no candidate */
    size_t narrowed;          /* nodes selected but left out by an allocated claim */
};

static void node_pass_run(struct node_pass *p)
{
    p->closest = SIZE_MAX;
    p->narrowed = 0;
    for (size_t i = 0; i < p->n_nodes; i++) {
        const struct knode *node = p->nodes[i];
        struct node_verdict local;
        struct node_verdict *v = p->each ? &p->each[i] : &local;
        if (!node) {
            memset(v, 0, sizeof(*v));
            v->step = v->resource_step = CAUSE_LABEL_MISMATCH;
            continue;
        }
        if (!node_ladder(p->pod, node, p->usage, p->usage_ctx, p->prep, v))
            continue;
        if (p->prep && !dra_prep_node_allowed(p->prep, node)) {
            p->narrowed++;
            v->step = CAUSE_LABEL_MISMATCH;
            continue;
        }
        if (p->prep) {
            dra_node(p->prep, node, v, NULL);
            if (cause_rank(v->dra_step) < cause_rank(v->resource_step))
                v->resource_step = v->dra_step;
            if (v->dra_step == CAUSE_DRA_NO_DRIVER)
                v->full_capacity = false;
            if (v->step != CAUSE_TAINT)
                v->step = v->resource_step;
        }
        if (p->candidate)
            p->candidate(p->ctx, v);
        if (p->closest == SIZE_MAX || node_verdict_cmp(v, &p->best) < 0) {
            p->best = *v;
            p->closest = i;
        }
    }
}

size_t classify_nodes(const struct kpod *pod, const struct knode *const *nodes, size_t n_nodes,
                      node_usage_fn usage, void *usage_ctx, struct node_verdict *verdicts)
{
    struct node_pass pass = {.pod = pod,
                             .nodes = nodes,
                             .n_nodes = n_nodes,
                             .usage = usage,
                             .usage_ctx = usage_ctx,
                             .each = verdicts};
    node_pass_run(&pass);
    return pass.closest;
}

/* What classify() counts over the candidates, besides the closest one. */
struct tally {
    struct classify_result *out;
    int64_t max_allocatable;
    /* a few DRA-exhausted nodes, to name who holds their devices */
    const struct knode *dra_full[4];
    size_t n_dra_full;
    /* the first candidate an autoscaler is still adding (node_state.h), or NULL */
    const struct knode *joining;
};

static void tally_candidate(void *ctx, const struct node_verdict *v)
{
    struct tally *t = ctx;
    if (v->step == CAUSE_DRA_EXHAUSTED &&
        t->n_dra_full < sizeof(t->dra_full) / sizeof(t->dra_full[0]))
        t->dra_full[t->n_dra_full++] = v->node;
    t->out->n_candidates++;
    t->out->counts[v->step]++;
    if (t->out->verdicts)
        t->out->verdicts[t->out->n_verdicts++] = *v;
    if (v->full_capacity && v->allocatable > t->max_allocatable)
        t->max_allocatable = v->allocatable;
    if (!t->joining && node_autoscaler_joining(v->node))
        t->joining = v->node;
}

/* The node named `name`, or NULL. */
static const struct knode *find_node(const struct classify_input *in, const char *name)
{
    for (size_t i = 0; i < in->n_nodes; i++)
        if (in->nodes[i] && in->nodes[i]->name && strcmp(in->nodes[i]->name, name) == 0)
            return in->nodes[i];
    return NULL;
}

/*
 * The autoscalers' word over the per-node ladder's (classify_input.autoscaler): the word it
 * gives, or the ladder's when none applies; *e receives the record that decided (NULL: none, a
 * joining node decided or nothing did).
 */
static enum cause autoscaler_word(const struct classify_input *in, const struct knode *joining,
                                  const struct autoscaler_evidence **e)
{
    int64_t window = in->provision_window > 0 ? in->provision_window : CLASSIFY_PROVISION_WINDOW;
    size_t i =
        in->autoscaler ? autoscaler_pick(in->autoscaler, in->n_autoscaler, in->now, window, 0) : 0;
    *e = NULL;
    if (in->autoscaler && i < in->n_autoscaler) {
        const struct autoscaler_evidence *ev = &in->autoscaler[i];
        if (autoscaler_blocking(ev->kind)) {
            *e = ev;
            return CAUSE_SCALE_UP_BLOCKED;
        }
        /* Karpenter nominated a node that is there and has joined: the ladder speaks for it */
        const struct knode *n =
            ev->kind == AUTOSCALER_NOMINATED && ev->node[0] ? find_node(in, ev->node) : NULL;
        if (!n || node_autoscaler_joining(n)) {
            *e = ev;
            return CAUSE_SCALING_UP;
        }
    }
    return joining ? CAUSE_SCALING_UP : CAUSE_COUNT;
}

/*
 * Replace the per-node word in out with the autoscalers' (autoscaler_word), keeping what the
 * current nodes say after it.
 */
static void apply_autoscaler(const struct classify_input *in, const struct knode *joining,
                             struct classify_result *out, struct line *l)
{
    out->ladder_cause = out->cause;
    const struct autoscaler_evidence *e = NULL;
    enum cause word = autoscaler_word(in, joining, &e);
    if (word == CAUSE_COUNT)
        return;
    line_finish(l);
    char nodes_say[sizeof(out->detail)];
    snprintf(nodes_say, sizeof(nodes_say), "%s", out->detail);
    *l = (struct line){.buf = out->detail, .cap = sizeof(out->detail)};
    if (e) {
        autoscaler_detail(e, in->now, l);
        int64_t window =
            in->provision_window > 0 ? in->provision_window : CLASSIFY_PROVISION_WINDOW;
        out->autoscaler_until = e->at > 0 ? e->at + window : 0;
    } else {
        line_printf(l, "node %s is being added by an autoscaler and has not joined yet",
                    joining->name ? joining->name : "?");
    }
    line_printf(l, "; on the current nodes: %s: %s", cause_word(out->cause), nodes_say);
    out->cause = word;
}

int classify(const struct classify_input *in, struct classify_result *out)
{
    if (!in || !in->pod || !out)
        return K_EINVAL;
    struct node_verdict *storage = out->verdicts;
    memset(out, 0, sizeof(*out));
    out->verdicts = storage;
    struct line l = {.buf = out->detail, .cap = sizeof(out->detail)};
    const struct kpod *pod = in->pod;
    struct dra_prep *prep = NULL;
    if (in->dra && dra_prep_new(pod, in->dra, &prep) != K_OK)
        return K_ENOMEM;

    if (!has_gpu_request(pod) && !dra_prep_gpu(prep)) {
        out->cause = CAUSE_NO_REQUEST;
        line_printf(&l, "no container requests a GPU resource");
        if (prep)
            line_printf(&l, " and no resource claim asks for a GPU DeviceClass");
        goto out;
    }
    if (pod->node_name && *pod->node_name) {
        if (pod_rejected_by_kubelet(pod)) {
            out->cause = CAUSE_NODE_REJECTED;
            put_rejected(&l, in);
            goto out;
        }
        /* claims of a pod classified without DRA objects may ask for a GPU: assume they do */
        bool claims_gpu = prep ? dra_prep_gpu(prep) : pod->n_claims > 0;
        enum cause after =
            placement_word(pod, find_node(in, pod->node_name), claims_gpu, in->placement, &l);
        if (after != CAUSE_COUNT) {
            out->cause = after;
            goto out;
        }
        out->cause = CAUSE_OK;
        line_printf(&l, "bound to node %s", pod->node_name);
        goto out;
    }
    if (in->quota && quota_claim_current(pod, in->quota)) {
        out->cause = CAUSE_QUOTA_EXCEEDED;
        quota_put_claim(&l, in->quota);
        goto out;
    }
    if (queue_kueue_waiting(in->workload, &l)) {
        out->cause = CAUSE_QUEUE_WAITING;
        goto out;
    }
    enum cause gang = gang_word(pod, in->gang, &l);
    if (gang != CAUSE_COUNT) {
        out->cause = gang;
        goto out;
    }
    if (pod->n_scheduling_gates > 0) {
        out->cause = CAUSE_SCHEDULING_GATED;
        put_gates(&l, pod);
        goto out;
    }
    enum cause nominated = nominated_word(in, prep, &l, out);
    if (nominated != CAUSE_COUNT) {
        out->cause = nominated;
        goto out;
    }
    int64_t grace =
        in->no_scheduler_grace > 0 ? in->no_scheduler_grace : CLASSIFY_NO_SCHEDULER_GRACE;
    if (waits_for_own_scheduler(pod) && in->now > 0 && pod->created > 0 &&
        in->now - pod->created >= grace) {
        out->cause = CAUSE_NO_SCHEDULER;
        put_no_scheduler(&l, in, grace);
        goto out;
    }
    enum cause pod_cause = dra_prep_pod_cause(prep, &l);
    if (pod_cause != CAUSE_GPU_FITS) {
        out->cause = pod_cause;
        goto out;
    }

    struct tally t = {.out = out};
    struct node_pass pass = {.pod = pod,
                             .nodes = in->nodes,
                             .n_nodes = in->n_nodes,
                             .usage = in->usage,
                             .usage_ctx = in->usage_ctx,
                             .prep = prep,
                             .candidate = tally_candidate,
                             .ctx = &t};
    node_pass_run(&pass);
    size_t narrowed = pass.narrowed;
    struct node_verdict best = pass.best;
    bool have_best = pass.closest != SIZE_MAX;
    int64_t max_allocatable = t.max_allocatable;
    const struct knode *const *dra_full = t.dra_full;
    size_t n_dra_full = t.n_dra_full;

    if (!have_best) {
        out->cause = CAUSE_LABEL_MISMATCH;
        if (narrowed) {
            line_printf(&l, "%zu of %zu nodes match node selection, but ", narrowed, in->n_nodes);
            dra_prep_put_narrowing(prep, &l);
        } else {
            put_label_mismatch(&l, in);
        }
        hints_put(&l, in, out->cause, NULL);
        goto nodes_said;
    }

    out->closest = best;
    out->cause = best.step;
    const char *name = node_name_of(best.node);
    switch (out->cause) {
    case CAUSE_TAINT:
        if (!best.taint) {
            line_printf(&l, "node %s is cordoned (spec.unschedulable)", name);
        } else if (taint_is_node_condition(best.taint)) {
            const struct node_condition_taint *c = taint_node_condition(best.taint);
            line_printf(&l, "node %s %s (taint ", name, c->state);
            put_taint(&l, best.taint);
            line_printf(&l, ", set by %s); %s rather than tolerate it", c->setter, c->remedy);
        } else {
            line_printf(&l, "node %s has untolerated taint ", name);
            put_taint(&l, best.taint);
            line_printf(&l, "; ");
            put_toleration_hint(&l, best.taint);
        }
        if (best.resource_step != CAUSE_GPU_FITS) {
            line_printf(
                &l, "; past it the pod would still fail with %s: ", cause_word(best.resource_step));
            put_outcome(&l, &best, prep);
        }
        break;
    case CAUSE_NO_GPU_NODE:
    case CAUSE_ALLOCATABLE_ZERO:
    case CAUSE_DRA_NO_DRIVER:
    case CAUSE_DRA_NO_MATCH:
    case CAUSE_DRA_TAINTED:
        put_outcome(&l, &best, prep);
        break;
    case CAUSE_DRA_EXHAUSTED:
        put_outcome(&l, &best, prep);
        for (size_t i = 0; i < n_dra_full; i++)
            if (dra_full[i] != best.node)
                dra_put_holders(prep, dra_full[i], &l);
        break;
    case CAUSE_EXHAUSTED:
        put_resource_outcome(&l, &best);
        if (best.requested > max_allocatable)
            line_printf(&l, "; the request is larger than any candidate's allocatable, so "
                            "waiting will not help");
        break;
    case CAUSE_GPU_FITS:
    default:
        put_outcome(&l, &best, prep);
        line_printf(&l, "; blocked by something else: ");
        if (pod->scheduled.status == COND_FALSE && pod->scheduled.message &&
            *pod->scheduled.message)
            line_printf(&l, "%s", pod->scheduled.message);
        else
            line_printf(&l, "the scheduler has not reported yet");
        if (pod->scheduler_name && *pod->scheduler_name &&
            strcmp(pod->scheduler_name, "default-scheduler") != 0)
            line_printf(&l, "; the pod uses schedulerName %s, whose accounting may differ",
                        pod->scheduler_name);
        break;
    }
    hints_put(&l, in, out->cause, &best);
    if (narrowed) {
        line_printf(&l, "; ");
        dra_prep_put_narrowing(prep, &l);
        line_printf(&l, " (%zu node%s left out)", narrowed, narrowed == 1 ? "" : "s");
    }
    if (out->n_candidates > 1)
        put_histogram(&l, out, in->n_nodes);
nodes_said:
    apply_autoscaler(in, t.joining, out, &l);
    dra_prep_free(prep);
    line_finish(&l);
    return K_OK;

out:
    out->ladder_cause = out->cause;
    dra_prep_free(prep);
    line_finish(&l);
    return K_OK;
}
