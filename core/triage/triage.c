/* triage.c - the classifier's input from the caches, and whose pods its verdicts are. */
#include "triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "util/result.h"

/* What the per-pod callbacks of triage_fill_facts() need. */
struct facts_walk {
    const struct kpod *pod;
    int64_t now;
    struct triage_facts *f;
    struct classify_input *in;
};

/* Another pod: not the same object, nor an earlier copy of the same pod. */
static bool other_pod(const struct kpod *pod, const struct kpod *p)
{
    return p != pod && !(p->uid && pod->uid && strcmp(p->uid, pod->uid) == 0);
}

static void count_sibling(void *ctx, const struct kpod *p)
{
    struct facts_walk *w = ctx;
    if (other_pod(w->pod, p) && pod_rejected_by_kubelet(p) &&
        (w->now <= 0 || p->created >= w->now - 3600))
        w->in->rejected_siblings++;
}

static void note_victim(void *ctx, const struct kpod *p)
{
    struct facts_walk *w = ctx;
    struct classify_input *in = w->in;
    if (!other_pod(w->pod, p) || !p->deleting || pod_is_terminal(p))
        return;
    if (in->n_victims < TRIAGE_MAX_VICTIMS) {
        char *name = w->f->names[in->n_victims];
        if (meta_namespace_key(name, STORE_KEY_MAX, p->ns, p->name) != K_OK)
            snprintf(name, STORE_KEY_MAX, "%s", p->name ? p->name : "?");
        w->f->ptrs[in->n_victims] = name;
        in->n_victims++;
    }
    in->victims_total++;
}

void triage_fill_facts(struct store *s, const struct kpod *pod, int64_t now, struct triage_facts *f,
                       struct classify_input *in)
{
    in->now = now;
    in->rejected_siblings = 0;
    in->n_victims = in->victims_total = 0;
    struct facts_walk w = {pod, now, f, in};
    if (pod->owner_uid && pod_rejected_by_kubelet(pod))
        store_for_each_pod_of_owner(s, pod->owner_uid, count_sibling, &w);
    else if (!pod->node_name && pod->nominated_node)
        store_for_each_pod_on_node(s, pod->nominated_node, note_victim, &w);
    in->victims = in->n_victims ? f->ptrs : NULL;
}

struct dra_view triage_dra_view(struct dra_store *dra, const struct gpu_set *gpu_classes)
{
    return (struct dra_view){
        .gpu_classes = gpu_classes,
        .ctx = dra,
        .claim = dra_store_claim,
        .claim_template = dra_store_template,
        .device_class = dra_store_class,
        .extended_class = dra_store_extended_class,
        .node_slices = dra_store_node_slices,
        .device_holder = dra_store_device_holder,
        .device_shares = dra_store_device_shares,
        .device_taint_rules = dra_store_device_taint_rules,
    };
}

/*
 * The Event records of `pod` in `events` (its uid's) into recs[POD_EVENTS_PER_POD], with the
 * cache's read lock taken when it returns true (the caller releases it after reading them);
 * false, and no lock, when the pod cannot have any.
 */
static bool lock_records(struct pod_events *events, const struct kpod *pod,
                         const struct pod_event **recs, size_t *got)
{
    *got = 0;
    if (!events || !pod || !pod->ns || !pod->name || !pod->uid)
        return false;
    pod_events_read_lock(events);
    *got = pod_events_get(events, pod->ns, pod->name, pod->uid, recs, POD_EVENTS_PER_POD);
    return true;
}

size_t triage_autoscaler_evidence(struct pod_events *events, const struct kpod *pod,
                                  struct autoscaler_evidence *out, size_t max)
{
    const struct pod_event *recs[POD_EVENTS_PER_POD];
    size_t n = 0, got;
    if (!lock_records(events, pod, recs, &got))
        return 0;
    /* most pods have no record: no allocation for them (2.6 KiB: not on a worker's stack) */
    struct kevent *ev = got ? malloc(sizeof(*ev)) : NULL;
    for (size_t i = 0; ev && i < got && n < max; i++) {
        pod_event_to_kevent(recs[i], pod->ns, pod->name, ev);
        if (autoscaler_parse(ev, &out[n]))
            n++;
    }
    pod_events_read_unlock(events);
    free(ev);
    return n;
}

bool triage_quota_refusal(struct pod_events *events, const struct kpod *pod,
                          struct quota_refusal *out)
{
    const struct pod_event *recs[POD_EVENTS_PER_POD];
    size_t got;
    bool found = false;
    if (!pod || pod->n_claims == 0 || !lock_records(events, pod, recs, &got))
        return false;
    struct kevent *ev = got ? malloc(sizeof(*ev)) : NULL;
    struct quota_refusal q;
    for (size_t i = 0; ev && i < got; i++) {
        if (strcmp(recs[i]->reason, QUOTA_CLAIM_EVENT_REASON) != 0)
            continue;
        pod_event_to_kevent(recs[i], pod->ns, pod->name, ev);
        if (quota_claim_event(ev, &q) && (!found || q.at > out->at)) {
            *out = q;
            found = true;
        }
    }
    pod_events_read_unlock(events);
    free(ev);
    return found;
}

static void count_member(void *ctx, const struct kpod *p)
{
    struct gang_facts *f = ctx;
    if (pod_is_terminal(p) || p->deleting)
        return;
    f->exist++;
    if (p->n_scheduling_gates > 0)
        f->gated++;
}

bool triage_gang_facts(struct store *s, struct gang_store *gangs, const struct kpod *pod,
                       struct gang_facts *f)
{
    if (!gangs || !pod || !pod->gang)
        return false;
    memset(f, 0, sizeof(*f));
    if (!gang_store_facts(gangs, pod, f))
        return false;
    store_for_each_pod_of_gang(s, pod->ns, pod->gang, count_member, f);
    return true;
}

size_t triage_placement_events(struct pod_events *events, const struct kpod *pod,
                               struct triage_placement *out)
{
    out->facts = (struct placement_facts){.events = out->events, .n_events = 0};
    const struct pod_event *recs[POD_EVENTS_PER_POD];
    size_t n = 0, got;
    if (!lock_records(events, pod, recs, &got))
        return 0;
    for (size_t i = 0; i < got && n < PLACEMENT_MAX_EVENTS; i++) {
        const struct pod_event *e = recs[i];
        if (!placement_event_kept(e->component, e->type, e->reason, e->message))
            continue;
        snprintf(out->reasons[n], sizeof(out->reasons[n]), "%s", e->reason);
        snprintf(out->messages[n], sizeof(out->messages[n]), "%s", e->message);
        out->events[n] = (struct placement_event){
            .reason = out->reasons[n], .message = out->messages[n], .at = pod_event_time(e)};
        n++;
    }
    pod_events_read_unlock(events);
    out->facts.n_events = n;
    return n;
}

int triage_pod(const struct triage_source *src, const struct kpod *pod, struct classify_result *out)
{
    if (!src || !src->store || !pod || !out)
        return K_EINVAL;
    size_t n_nodes;
    const struct knode *const *nodes = store_nodes(src->store, &n_nodes);
    bool use_dra = src->dra && src->dra_classes && (pod->n_claims > 0 || pod_has_ext_requests(pod));
    struct dra_view view =
        use_dra ? triage_dra_view(src->dra, src->dra_classes) : (struct dra_view){0};
    struct classify_input in = {
        .pod = pod,
        .nodes = nodes,
        .n_nodes = n_nodes,
        .usage = src->usage ? src->usage : store_node_usage,
        .usage_ctx = src->usage ? src->usage_ctx : src->store,
        .dra = use_dra ? &view : NULL,
        .no_scheduler_grace = src->no_scheduler_grace,
    };
    /* on the heap: a worker thread's stack is not the place for the victims' names */
    struct triage_facts *facts = malloc(sizeof(*facts));
    if (!facts)
        return K_ENOMEM;
    triage_fill_facts(src->store, pod, src->now, facts, &in);
    in.provision_window = src->provision_window;
    in.n_autoscaler =
        triage_autoscaler_evidence(src->events, pod, facts->evidence, TRIAGE_MAX_EVIDENCE);
    in.autoscaler = in.n_autoscaler ? facts->evidence : NULL;
    if (triage_quota_refusal(src->events, pod, &facts->quota))
        in.quota = &facts->quota;
    if (!pod->node_name && triage_gang_facts(src->store, src->gangs, pod, &facts->gang))
        in.gang = &facts->gang;
    /* a bound pod with container statuses (the store keeps them until its GPU containers have
     * started): the kubelet's Events about it; on the heap, and only for such pods */
    struct triage_placement *placement = NULL;
    if (pod->node_name && pod->containers && src->events) {
        placement = malloc(sizeof(*placement));
        if (!placement) {
            free(facts);
            return K_ENOMEM;
        }
        if (triage_placement_events(src->events, pod, placement) > 0)
            in.placement = &placement->facts;
    }
    if (use_dra)
        dra_store_read_lock(src->dra);
    /* queue-waiting: only an unbound pod waits for its queue */
    bool use_wl = src->workloads && !(pod->node_name && *pod->node_name);
    if (use_wl) {
        workload_store_read_lock(src->workloads);
        in.workload = workload_store_for_pod(src->workloads, pod->uid, pod->owner_uid);
    }
    int rc = classify(&in, out);
    if (use_wl)
        workload_store_read_unlock(src->workloads);
    if (use_dra)
        dra_store_read_unlock(src->dra);
    free(placement);
    free(facts);
    return rc;
}

bool triage_is_ours(const struct kpod *pod, enum cause cause)
{
    return cause != CAUSE_NO_REQUEST || pod->gpu_requests.n > 0;
}

bool triage_ext_served(const struct kpod *pod, struct dra_store *dra)
{
    if (!dra || !pod_has_ext_requests(pod))
        return false;
    const struct pod_ext *e = pod->ext;
    for (size_t i = 0; i < e->n_requests; i++)
        if ((i == 0 || strcmp(e->requests[i].resource, e->requests[i - 1].resource) != 0) &&
            dra_store_extended_class(dra, e->requests[i].resource))
            return true;
    return false;
}

bool triage_claims_ask_gpu(const struct kpod *pod)
{
    /* a pod asking an extended resource under a DeviceClass's implicit name (no GPU resource)
       is one through DRA too (model.h pod_has_ext_requests) */
    if ((pod->n_claims == 0 && !(pod_has_ext_requests(pod) && pod->gpu_requests.n == 0)) ||
        !pod->cause)
        return false;
    int cause = cause_from_word(pod->cause);
    return cause >= 0 && cause != CAUSE_NO_REQUEST;
}

bool triage_is_gpu_pod(const struct kpod *pod)
{
    return pod->gpu_requests.n > 0 || triage_claims_ask_gpu(pod);
}
