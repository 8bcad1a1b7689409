/*
 * handlers.c - the informers' event handlers: every pod and node change goes into the store, and
 * the pods whose answer may have changed go onto the workqueue (the event handlers of
 * kubernetes/sample-controller: controller.go, enqueueFoo / handleObject).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cache/key.h"
#include "controller_internal.h"
#include "kube/json.h"
#include "kube/project.h"
#include "metrics.h"
#include "triage/triage.h"
#include "util/log.h"
#include "util/result.h"

/* A re-check for someone else's change: low priority, coalesced (workqueue.h). */
static void enqueue_one(void *ctx, const char *key)
{
    workqueue_add_low(ctx, key);
}

void controller_enqueue_pending(struct controller *c)
{
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, enqueue_one, c->queue);
    store_read_unlock(c->store);
}

/* Pending pods with claims only (the pod is looked up under the caller's read lock). */
static void enqueue_if_claims(void *ctx, const char *key)
{
    struct controller *c = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(c->store, k.ns, k.name);
    if (pod && pod->n_claims > 0)
        workqueue_add_low(c->queue, key);
}

void controller_enqueue_claim_pods(struct controller *c)
{
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, enqueue_if_claims, c);
    store_read_unlock(c->store);
}

static void after_change(struct controller *c, unsigned changed)
{
    if (!(changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES)))
        return;
    if (!atomic_load(&c->listing))
        controller_enqueue_pending(c);
}

/* Logs why an object from a watch or list was not applied to the store (rc from
 * store_*_apply_json): K_ETOOBIG is the store refusing an object it cannot account, not a parse
 * failure. */
static void skipped(json_object *obj, const char *kind, int rc)
{
    const char *ns = kube_json_meta_str(obj, "namespace");
    const char *name = kube_json_meta_str(obj, "name");
    char who[320];
    snprintf(who, sizeof(who), "%s%s%s", ns ? ns : "", ns ? "/" : "", name ? name : "?");
    if (rc == K_ETOOBIG)
        log_warn("%s %s not cached: the store refused it (its key is too long, or its node would "
                 "then account more than %d resource names)",
                 kind, who, RESOURCE_LIST_MAX);
    else if (rc == K_ENOMEM)
        log_warn("%s %s not cached: out of memory", kind, who);
    else
        log_warn("skipping a %s that cannot be read: %s", kind, k_strerror(rc));
}

/*
 * Whether pending pod `p` is a GPU pod for the histogram: it requests a GPU resource, or (a pod
 * with only ResourceClaims) the controller wrote a cause for it, which it does only for pods
 * whose claims ask for a GPU (as gputri_pending_gpu_pods counts them).
 */
static bool histogram_gpu_pod(const struct kpod *p)
{
    return triage_is_gpu_pod(p);
}

/* After a relist: keep the records of pods still cached, the pending marks of pending pods
 * (store read lock held by the caller). */
static unsigned still_cached(void *ctx, const char *key)
{
    struct controller *c = ctx;
    struct meta_key k;
    const struct kpod *pod =
        meta_key_parse(key, &k) == K_OK ? store_pod_get(c->store, k.ns, k.name) : NULL;
    if (!pod)
        return 0;
    return POD_LEDGER_KEEP_POD | (store_is_pending_gpu_pod(pod) ? POD_LEDGER_KEEP_PENDING : 0u);
}

/* What one pod event leaves to do once the store has it, read from the projection before the
 * store takes it over. */
struct pod_seen {
    struct metrics_pending_pod pending; /* uid points into uid[] */
    char uid[64];
    char cause[64]; /* its gputri/cause annotation, "" when none */
    bool has_cause;
    bool needs_work; /* a pending or rejected GPU pod, or one carrying a cause */
};

static void pod_seen(const struct kpod *pod, struct pod_seen *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->uid, sizeof(out->uid), "%s", pod->uid ? pod->uid : "");
    out->has_cause = pod->cause != NULL;
    snprintf(out->cause, sizeof(out->cause), "%s", pod->cause ? pod->cause : "");
    out->needs_work = store_is_pending_gpu_pod(pod) || store_is_rejected_gpu_pod(pod) || pod->cause;
    out->pending = (struct metrics_pending_pod){
        .pending = store_is_pending_gpu_pod(pod) && histogram_gpu_pod(pod),
        .uid = out->uid,
        .created_ms = pod->created * 1000,
        .cause = pod->cause ? cause_from_word(pod->cause) : METRICS_NO_CAUSE,
    };
}

/*
 * One pod event: the projection goes into the store (its one lock of the event); what the
 * ledger and the histogram need is read from the projection first. Then the written cause is
 * settled against what the watch shows, the pending-time mark advanced, and the key queued when
 * the pod's work may have changed, or dropped when it needs none.
 */
static void pod_event(struct controller *c, json_object *obj, int deleted)
{
    char key[STORE_KEY_MAX];
    struct pod_seen seen = {.pending.pending = false};
    unsigned changed = 0;
    int rc;
    if (deleted) {
        rc = store_pod_apply_json(c->store, obj, 1, key, &changed);
    } else {
        struct kpod pod;
        rc = project_pod(obj, store_gpus(c->store), &pod);
        if (rc == K_OK && meta_namespace_key(key, sizeof(key), pod.ns, pod.name) != K_OK) {
            pod_cleanup(&pod);
            rc = K_ETOOBIG; /* the store refuses such a key too */
        }
        if (rc == K_OK) {
            pod_seen(&pod, &seen);
            rc = store_pod_upsert(c->store, &pod, &changed); /* takes the pod over */
        }
    }
    if (rc) {
        skipped(obj, "pod", rc);
        return;
    }

    struct metrics_pending_mark mark;
    pod_ledger_pending(c->ledger, key, &mark);
    metrics_pending_step(c->metrics, &mark, &seen.pending, clock_wall_ms(&c->clock),
                         controller_may_write(c));
    pod_ledger_set_pending(c->ledger, key, &mark);
    if (deleted) {
        pod_ledger_forget(c->ledger, key);
        workqueue_drop(c->queue, key);
    } else {
        pod_ledger_seen(c->ledger, key, seen.has_cause ? seen.cause : NULL);
        /* a cause written by us and not yet seen may still have to become ok */
        if (!seen.needs_work && !pod_ledger_written(c->ledger, key, NULL))
            workqueue_drop(c->queue, key);
        else if (changed & STORE_CHANGED_POD)
            workqueue_add(c->queue, key);
    }
    after_change(c, changed);
}

static void pod_upsert(void *ctx, json_object *obj)
{
    pod_event(ctx, obj, 0);
}

static void pod_remove(void *ctx, json_object *obj)
{
    pod_event(ctx, obj, 1);
}

static void node_event(struct controller *c, json_object *obj, int deleted)
{
    unsigned changed = 0;
    int rc = store_node_apply_json(c->store, obj, deleted, NULL, &changed);
    if (rc) {
        skipped(obj, "node", rc);
        return;
    }
    after_change(c, changed);
}

static void node_upsert(void *ctx, json_object *obj)
{
    node_event(ctx, obj, 0);
}

static void node_remove(void *ctx, json_object *obj)
{
    node_event(ctx, obj, 1);
}

static void pods_watch_restart(void *ctx, int result)
{
    struct controller *c = ctx;
    (void)result;
    metrics_watch_restart(c->metrics, "pods");
}

static void nodes_watch_restart(void *ctx, int result)
{
    struct controller *c = ctx;
    (void)result;
    metrics_watch_restart(c->metrics, "nodes");
}

/*
 * The informers share `listing`, one bit each (LISTING_PODS, LISTING_NODES, LISTING_DRA << the
 * DRA kind): they run in different threads, so the flag is only a hint to batch work; a change seen
 * outside a list is requeued directly, and every list ends with a requeue of all pending GPU pods.
 * A bit, not a count: a LIST that fails gets no sync_end and the informer's next LIST begins again
 * (at once, when the resourceVersion it asked for was refused), so begins may come twice before one
 * end.
 */
enum { LISTING_PODS = 1, LISTING_NODES = 2, LISTING_DRA = 4 };

static void list_begin(struct controller *c, int which)
{
    atomic_fetch_or(&c->listing, which);
}

static void list_end(struct controller *c, int which)
{
    atomic_fetch_and(&c->listing, ~which);
    controller_enqueue_pending(c);
}

static void pods_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    list_begin(c, LISTING_PODS);
    store_pods_sync_begin(c->store);
}

static void pods_sync_end(void *ctx)
{
    struct controller *c = ctx;
    unsigned changed = 0;
    store_pods_sync_end(c->store, &changed);
    store_read_lock(c->store);
    pod_ledger_prune(c->ledger, still_cached, c);
    store_read_unlock(c->store);
    list_end(c, LISTING_PODS);
}

static void nodes_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    list_begin(c, LISTING_NODES);
    store_nodes_sync_begin(c->store);
}

static void nodes_sync_end(void *ctx)
{
    struct controller *c = ctx;
    unsigned changed = 0;
    store_nodes_sync_end(c->store, &changed);
    list_end(c, LISTING_NODES);
}

/* ---- DRA ---------------------------------------------------------------------------------- */

/* Whether pending pod `pod` in namespace `ns` uses ResourceClaim ns/name: by resourceClaimName,
 * or as the claim generated for it (status.resourceClaimStatuses). */
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

/* Whether pending pod `pod` in namespace `ns` names ResourceClaimTemplate ns/name. */
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

/*
 * Whether pending pod `pod` may name DeviceClass `cls` through its claims: by a claim it names
 * or was generated for it, or by the template it names. A claim or template that is not cached
 * counts as naming it (the pod's verdict may still depend on it). DRA read lock held.
 */
static bool pod_may_name_class(struct dra_store *d, const struct kpod *pod, const char *cls)
{
    for (size_t i = 0; i < pod->n_claims; i++) {
        const struct pod_claim_ref *ref = &pod->claims[i];
        const char *claim = ref->claim_name ? ref->claim_name : generated_claim(pod, ref->name);
        const struct dra_claim_spec *spec = NULL;
        if (claim) {
            const struct dra_claim *c = dra_store_claim(d, pod->ns, claim);
            spec = c ? &c->spec : NULL;
        } else if (ref->template_name) {
            const struct dra_template *t = dra_store_template(d, pod->ns, ref->template_name);
            spec = t ? &t->spec : NULL;
        }
        if (!spec || spec_names_class(spec, cls))
            return true;
    }
    return false;
}

/* Which pending claim pods a DRA event concerns when it cannot change devices. */
enum users_of { USERS_ALL, USERS_OF_CLAIM, USERS_OF_TEMPLATE, USERS_OF_CLASS };

struct claim_users {
    struct controller *c;
    enum users_of which;
    const char *ns, *name;
};

static void enqueue_if_uses(void *ctx, const char *key)
{
    struct claim_users *u = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(u->c->store, k.ns, k.name);
    if (!pod || pod->n_claims == 0)
        return;
    bool uses = false;
    switch (u->which) {
    case USERS_OF_CLAIM:
        uses = pod_uses_claim(pod, u->ns, u->name);
        break;
    case USERS_OF_TEMPLATE:
        uses = pod_uses_template(pod, u->ns, u->name);
        break;
    case USERS_OF_CLASS:
        dra_store_read_lock(u->c->dra);
        uses = pod_may_name_class(u->c->dra, pod, u->name);
        dra_store_read_unlock(u->c->dra);
        break;
    case USERS_ALL:
    default:
        uses = true;
        break;
    }
    if (uses)
        workqueue_add_low(u->c->queue, key);
}

/* Whether a ResourceClaim object carries status.allocation. */
static bool json_claim_allocated(json_object *obj)
{
    json_object *st = NULL, *alloc = NULL;
    return json_object_object_get_ex(obj, "status", &st) &&
           json_object_object_get_ex(st, "allocation", &alloc) && alloc != NULL;
}

static void dra_event(struct controller_dra_ctx *x, json_object *obj, int deleted)
{
    /*
     * Only a claim's allocation and a ResourceSlice change which devices are free or exist, for
     * any pending claim pod. Every other DRA change concerns the pods that name the object:
     * a claim that holds no devices, before or after this event (it exists, is being deleted,
     * names its requests), the pods that use it; a ResourceClaimTemplate, the pods that name
     * it; a DeviceClass (its selectors, or whether it exists), the pods whose requests name it.
     * Narrowing keeps a stream of new, not yet allocated claims (one per pod made from a
     * template) from re-classifying every pending claim pod.
     */
    const char *cns = kube_json_meta_str(obj, "namespace");
    const char *cname = kube_json_meta_str(obj, "name");
    enum users_of which = USERS_ALL;
    if (x->kind == DRA_KIND_CLAIM && cns && cname && !json_claim_allocated(obj)) {
        dra_store_read_lock(x->c->dra);
        const struct dra_claim *old = dra_store_claim(x->c->dra, cns, cname);
        if (!old || !old->allocated)
            which = USERS_OF_CLAIM;
        dra_store_read_unlock(x->c->dra);
    } else if (x->kind == DRA_KIND_TEMPLATE && cns && cname) {
        which = USERS_OF_TEMPLATE;
    } else if (x->kind == DRA_KIND_CLASS && cname) {
        which = USERS_OF_CLASS;
    }
    int rc = dra_store_apply_json(x->c->dra, x->kind, obj, deleted);
    if (rc) {
        const char *ns = kube_json_meta_str(obj, "namespace");
        const char *name = kube_json_meta_str(obj, "name");
        log_warn("%s %s%s%s not cached: %s", dra_kind_name(x->kind), ns ? ns : "", ns ? "/" : "",
                 name ? name : "?", k_strerror(rc));
        if (rc != K_ENOMEM && !deleted) {
            /* an object that cannot be read must not stand for its old version: drop it */
            dra_store_apply_json(x->c->dra, x->kind, obj, 1);
        }
    }
    if (atomic_load(&x->c->listing))
        return;
    if (which != USERS_ALL && !rc) {
        struct claim_users u = {x->c, which, cns, cname};
        store_read_lock(x->c->store);
        store_for_each_pending_gpu_pod(x->c->store, enqueue_if_uses, &u);
        store_read_unlock(x->c->store);
    } else {
        controller_enqueue_claim_pods(x->c);
    }
}

static void dra_upsert(void *ctx, json_object *obj)
{
    dra_event(ctx, obj, 0);
}

static void dra_remove(void *ctx, json_object *obj)
{
    dra_event(ctx, obj, 1);
}

static void dra_sync_begin(void *ctx)
{
    struct controller_dra_ctx *x = ctx;
    list_begin(x->c, LISTING_DRA << x->kind);
    dra_store_sync_begin(x->c->dra, x->kind);
}

static void dra_sync_end(void *ctx)
{
    struct controller_dra_ctx *x = ctx;
    dra_store_sync_end(x->c->dra, x->kind);
    list_end(x->c, LISTING_DRA << x->kind);
}

static void dra_watch_restart(void *ctx, int result)
{
    struct controller_dra_ctx *x = ctx;
    (void)result;
    metrics_watch_restart(x->c->metrics, dra_kind_name(x->kind));
}

struct informer_handlers controller_dra_handlers(struct controller *c, enum dra_kind kind)
{
    return (struct informer_handlers){
        .ctx = &c->dra_ctx[kind],
        .upsert = dra_upsert,
        .remove = dra_remove,
        .sync_begin = dra_sync_begin,
        .sync_end = dra_sync_end,
        .watch_restart = dra_watch_restart,
    };
}

struct informer_handlers controller_pod_handlers(struct controller *c)
{
    return (struct informer_handlers){
        .ctx = c,
        .upsert = pod_upsert,
        .remove = pod_remove,
        .sync_begin = pods_sync_begin,
        .sync_end = pods_sync_end,
        .watch_restart = pods_watch_restart,
    };
}

struct informer_handlers controller_node_handlers(struct controller *c)
{
    return (struct informer_handlers){
        .ctx = c,
        .upsert = node_upsert,
        .remove = node_remove,
        .sync_begin = nodes_sync_begin,
        .sync_end = nodes_sync_end,
        .watch_restart = nodes_watch_restart,
    };
}
