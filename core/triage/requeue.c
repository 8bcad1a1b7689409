/* requeue.c - the targeted re-check policy of requeue.h. */
#include "requeue.h"

#include <string.h>

#include "triage/triage.h"

/* A node's closeness for one pod, node_verdict_cmp's key; a non-candidate is below all. */
struct key {
    bool candidate;
    bool full;
    int rank;
    enum cause step;
};

static int key_cmp(struct key a, struct key b)
{
    if (a.candidate != b.candidate)
        return a.candidate ? 1 : -1;
    if (!a.candidate)
        return 0;
    if (a.full != b.full)
        return a.full ? 1 : -1;
    return a.rank == b.rank ? 0 : a.rank > b.rank ? 1 : -1;
}

static struct key node_key(const struct kpod *pod, const struct knode *node, node_usage_fn usage,
                           void *usage_ctx, struct node_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->step = v->resource_step = CAUSE_LABEL_MISMATCH;
    if (!node || !classify_node(pod, node, usage, usage_ctx, v))
        return (struct key){.candidate = false};
    return (struct key){true, v->full_capacity, cause_rank(v->step), v->step};
}

/* The usage before the change: d->usage[].before on d->node, the sums now elsewhere. */
struct usage_before {
    const struct store_delta *d;
    node_usage_fn usage;
    void *ctx;
};

static int64_t usage_before(void *ctx, const char *node, const char *resource)
{
    const struct usage_before *b = ctx;
    if (strcmp(node, b->d->node) == 0)
        for (size_t i = 0; i < b->d->n_usage; i++)
            if (strcmp(b->d->usage[i].resource, resource) == 0)
                return b->d->usage[i].before;
    return b->usage ? b->usage(b->ctx, node, resource) : 0;
}

/* A per-node DRA word: for a pod asking extended resources, a DeviceClass served them then. */
static bool dra_word(enum cause w)
{
    return w == CAUSE_DRA_NO_DRIVER || w == CAUSE_DRA_NO_MATCH || w == CAUSE_DRA_EXHAUSTED;
}

bool requeue_word_reads_nodes(enum cause word)
{
    return cause_rank(word) >= cause_rank(CAUSE_LABEL_MISMATCH);
}

/* The record speaks for this pod: valid, a known word, the same uid. */
static bool record_holds(const struct kpod *pod, const struct requeue_record *rec)
{
    if (!rec || !rec->valid || cause_rank(rec->word) < 0)
        return false;
    return strcmp(pod->uid ? pod->uid : "", rec->uid) == 0;
}

enum {
    NODE_BITS = STORE_DELTA_NODE_ADDED | STORE_DELTA_NODE_REMOVED | STORE_DELTA_LABELS |
                STORE_DELTA_TAINTS | STORE_DELTA_UNSCHEDULABLE | STORE_DELTA_CAPACITY |
                STORE_DELTA_ALLOCATABLE,
    USAGE_BITS = STORE_DELTA_USAGE_FREED | STORE_DELTA_USAGE_TAKEN,
};

bool requeue_store_change_reaches(const struct kpod *pod, const struct store_delta *d,
                                  const struct knode *now_node)
{
    if (!(d->changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES)))
        return false;
    if (!pod || d->overflow || (d->what & NODE_BITS) || !(d->what & USAGE_BITS))
        return true;
    for (size_t i = 0; i < d->n_usage; i++) {
        const struct store_delta_usage *u = &d->usage[i];
        int64_t req = resource_list_get(&pod->gpu_requests, u->resource);
        if (req <= 0 || !now_node)
            continue;
        /* as classify_node reads a node's usage: a negative sum counts as 0 */
        int64_t before = u->before < 0 ? 0 : u->before, after = u->after < 0 ? 0 : u->after;
        if (node_resource_step(now_node, u->resource, req, before) !=
            node_resource_step(now_node, u->resource, req, after))
            return true;
    }
    return false;
}

bool requeue_after_own_change(const char *uid, const struct requeue_record *rec,
                              const struct store_delta *d)
{
    /* binding-failed reads the scheduler's message (classify/binding.h), and binding quotes it */
    if (rec && rec->valid && (rec->word == CAUSE_BINDING || rec->word == CAUSE_BINDING_FAILED))
        return true;
    if (!uid || !rec || !rec->valid || d->overflow ||
        (d->what & ~(unsigned)STORE_DELTA_POD_SCHEDULED_MESSAGE) ||
        !(d->what & STORE_DELTA_POD_SCHEDULED_MESSAGE))
        return true;
    return strcmp(uid, rec->uid) != 0;
}

bool requeue_after_store_change(const struct kpod *pod, const struct requeue_record *rec,
                                const struct store_delta *d, const struct knode *now_node,
                                node_usage_fn usage, void *usage_ctx)
{
    if (!(d->changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES)))
        return false;
    if (!pod || !record_holds(pod, rec) || d->overflow)
        return true;
    /* preempting and binding tell each other apart by the pods terminating on the nominated
     * node (classify.h victims): a GPU pod leaving it may change the word */
    if ((rec->word == CAUSE_PREEMPTING || rec->word == CAUSE_BINDING) && pod->nominated_node &&
        strcmp(d->node, pod->nominated_node) == 0)
        return true;
    if (!requeue_word_reads_nodes(rec->word))
        return false; /* decided before node selection: reads no node and no usage */
    if (!(d->what & (NODE_BITS | USAGE_BITS)))
        return false; /* nothing the ladder reads moved (a usage change that nets to zero) */
    if (rec->autoscaler && (d->what & NODE_BITS))
        return true; /* a node joining, or the nominated one changing, may end the word */
    if (!d->node[0])
        return true;

    const struct knode *before = now_node, *after = now_node;
    if (d->what & NODE_BITS) {
        before = d->old_node;
        after = d->what & STORE_DELTA_NODE_REMOVED ? NULL : now_node;
        if ((!before && !(d->what & STORE_DELTA_NODE_ADDED)) ||
            (!after && !(d->what & STORE_DELTA_NODE_REMOVED)))
            return true; /* the description lacks a version it should have */
    }
    struct usage_before ub = {d, usage, usage_ctx};
    struct node_verdict vo, vn;
    struct key ko = node_key(pod, before, usage_before, &ub, &vo);
    struct key kn = node_key(pod, after, usage, usage_ctx, &vn);
    /* the closest candidate is at least this close; no candidate at all for label-mismatch */
    struct key lo = {.candidate = rec->word != CAUSE_LABEL_MISMATCH,
                     .full = false,
                     .rank = cause_rank(rec->word),
                     .step = rec->word};

    if (pod->n_claims > 0 || (pod_has_ext_requests(pod) && dra_word(rec->word))) {
        /* DRA (claims, or extended resources a DeviceClass may serve): the keys are upper
           bounds; labels also move the DRA step and the narrowing */
        if ((d->what & (STORE_DELTA_LABELS | STORE_DELTA_NODE_ADDED | STORE_DELTA_NODE_REMOVED)) &&
            (ko.candidate || kn.candidate))
            return true;
        if (ko.candidate == kn.candidate && vo.step == vn.step &&
            vo.resource_step == vn.resource_step && vo.full_capacity == vn.full_capacity)
            return false;
        return key_cmp(kn, lo) > 0 || key_cmp(ko, lo) >= 0;
    }
    int moved = key_cmp(kn, ko);
    if (moved == 0)
        return false;
    if (moved > 0) /* closer: the word changes only if N now decides, with another step */
        return key_cmp(kn, lo) > 0 && kn.step != rec->word;
    return key_cmp(ko, lo) >= 0; /* further: only if N may have been the closest */
}

/* Whether `pod` uses ResourceClaim ns/name: by resourceClaimName, or as the claim generated
 * for it (status.resourceClaimStatuses). */
static bool pod_uses_claim(const struct kpod *pod, const char *ns, const char *name)
{
    if (!pod->ns || strcmp(pod->ns, ns) != 0)
        return false;
    for (size_t i = 0; i < pod->n_claims; i++)
        if (pod->claims[i].claim_name && strcmp(pod->claims[i].claim_name, name) == 0)
            return true;
    for (size_t i = 0; i < pod->n_claim_statuses; i++)
        if (pod->claim_statuses[i].claim_name &&
            strcmp(pod->claim_statuses[i].claim_name, name) == 0)
            return true;
    return false;
}

/* Whether `pod` names ResourceClaimTemplate ns/name. */
static bool pod_uses_template(const struct kpod *pod, const char *ns, const char *name)
{
    if (!pod->ns || strcmp(pod->ns, ns) != 0)
        return false;
    for (size_t i = 0; i < pod->n_claims; i++)
        if (pod->claims[i].template_name && strcmp(pod->claims[i].template_name, name) == 0)
            return true;
    return false;
}

/* Whether a claim spec names DeviceClass `cls` in a request or a firstAvailable alternative. */
static bool spec_names_class(const struct dra_claim_spec *spec, const char *cls)
{
    for (size_t i = 0; i < spec->n_requests; i++) {
        const struct dra_request *r = &spec->requests[i];
        if (r->has_exactly && r->exactly.class_name && strcmp(r->exactly.class_name, cls) == 0)
            return true;
        for (size_t j = 0; j < r->n_first_available; j++)
            if (r->first_available[j].class_name &&
                strcmp(r->first_available[j].class_name, cls) == 0)
                return true;
    }
    return false;
}

/* The claim generated for the pod's claim `ref_name` (status.resourceClaimStatuses), or NULL. */
static const char *generated_claim(const struct kpod *pod, const char *ref_name)
{
    for (size_t i = 0; ref_name && i < pod->n_claim_statuses; i++)
        if (pod->claim_statuses[i].name && strcmp(pod->claim_statuses[i].name, ref_name) == 0)
            return pod->claim_statuses[i].claim_name;
    return NULL;
}

/* Whether `pod` may name DeviceClass `cls` through its claims: by a claim it names or was
 * generated for it, or by the template it names; one not cached counts as naming it. */
static bool pod_may_name_class(struct dra_store *d, const struct kpod *pod, const char *cls)
{
    for (size_t i = 0; i < pod->n_claims; i++) {
        const struct pod_claim_ref *ref = &pod->claims[i];
        const char *claim = ref->claim_name ? ref->claim_name : generated_claim(pod, ref->name);
        const struct dra_claim_spec *spec = NULL;
        if (claim) {
            const struct dra_claim *c = d ? dra_store_claim(d, pod->ns, claim) : NULL;
            spec = c ? &c->spec : NULL;
        } else if (ref->template_name) {
            const struct dra_template *t =
                d ? dra_store_template(d, pod->ns, ref->template_name) : NULL;
            spec = t ? &t->spec : NULL;
        }
        if (!spec || spec_names_class(spec, cls))
            return true;
    }
    return false;
}

bool requeue_after_dra_event(const struct kpod *pod, const struct requeue_record *rec,
                             const struct requeue_dra_change *ev, struct dra_store *dra)
{
    if (!pod)
        return false;
    /* extended resources a DeviceClass serves now, or did when the word was given (KEP-5004) */
    bool ext = pod_has_ext_requests(pod) &&
               (triage_ext_served(pod, dra) || (rec && rec->valid && dra_word(rec->word)));
    if (pod->n_claims == 0 && !ext)
        return false;
    if (ev->unreadable)
        return true;
    if (ev->kind == DRA_KIND_CLASS && ext)
        return true; /* the class may start or stop serving them */
    bool named = ev->name && (ev->ns || ev->kind == DRA_KIND_CLASS);
    if (named && ev->kind == DRA_KIND_CLAIM && !ev->holds_devices)
        return pod_uses_claim(pod, ev->ns, ev->name);
    if (named && ev->kind == DRA_KIND_TEMPLATE)
        return pod_uses_template(pod, ev->ns, ev->name);
    if (named && ev->kind == DRA_KIND_CLASS)
        return pod_may_name_class(dra, pod, ev->name);
    if (named && ev->kind == DRA_KIND_CLAIM && pod_uses_claim(pod, ev->ns, ev->name))
        return true;
    /* devices appear, vanish, are taken or freed: only the per-node DRA steps read them */
    return !record_holds(pod, rec) || requeue_word_reads_nodes(rec->word);
}
