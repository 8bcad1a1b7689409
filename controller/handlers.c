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
#include "metrics.h"
#include "triage/triage.h"
#include "util/log.h"
#include "util/result.h"

static void enqueue_one(void *ctx, const char *key)
{
    workqueue_add(ctx, key);
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
    char ns[256], name[256];
    if (split_meta_namespace_key(key, ns, sizeof(ns), name, sizeof(name)) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(c->store, ns, name);
    if (pod && pod->n_claims > 0)
        workqueue_add(c->queue, key);
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

/* Forget a written cause once the watch shows it, or once the pod is gone. */
static void settle_written(struct controller *c, const char *key, const char *seen, int gone)
{
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->written, key);
    const char *cause = e ? strchr(lh_entry_v(e), ' ') : NULL;
    if (e && (gone || (seen && cause && strcmp(seen, cause + 1) == 0)))
        lh_table_delete_entry(c->written, e);
    if (gone) {
        struct lh_entry *f = lh_table_lookup_entry(c->fits_since, key);
        if (f)
            lh_table_delete_entry(c->fits_since, f);
    }
    pthread_mutex_unlock(&c->written_mu);
}

/*
 * Whether pod `key` may still need a write: it is a pending GPU pod, or it carries a cause (seen
 * or written by us and not yet seen) that may have to become `ok`. Work queued for any other pod
 * (placed without a cause, finished, gone) is dropped.
 */
static int needs_work(struct controller *c, const char *key)
{
    char ns[256], name[256];
    if (split_meta_namespace_key(key, ns, sizeof(ns), name, sizeof(name)) != K_OK)
        return 1;

    pthread_mutex_lock(&c->written_mu);
    int written = lh_table_lookup_entry(c->written, key) != NULL;
    pthread_mutex_unlock(&c->written_mu);
    if (written)
        return 1;
    store_read_lock(c->store);
    const struct kpod *pod = store_pod_get(c->store, ns, name);
    int needed =
        pod && (store_is_pending_gpu_pod(pod) || store_is_rejected_gpu_pod(pod) || pod->cause);
    store_read_unlock(c->store);
    return needed;
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

/* ---- gputri_gpu_pod_pending_seconds ------------------------------------------------------- */

/* What the pod was before an event, as far as the pending-time histogram cares. */
struct pending_before {
    bool pending;    /* a pending GPU pod */
    int64_t created; /* seconds since the epoch; 0: unknown */
    char uid[64];
    int cause; /* its last blocking cause, or METRICS_NO_CAUSE */
};

/* The blocking cause pod `p` carries in its annotation, or METRICS_NO_CAUSE. */
static int blocking_cause(const struct kpod *p)
{
    int cause = p->cause ? cause_from_word(p->cause) : -1;
    return cause >= 0 && cause_is_blocking((enum cause)cause) ? cause : METRICS_NO_CAUSE;
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

static void pending_before(struct controller *c, const char *key, const char *ns, const char *name,
                           struct pending_before *b)
{
    memset(b, 0, sizeof(*b));
    b->cause = METRICS_NO_CAUSE;
    if (!ns || !name)
        return;
    store_read_lock(c->store);
    const struct kpod *pod = store_pod_get(c->store, ns, name);
    if (pod && store_is_pending_gpu_pod(pod) && histogram_gpu_pod(pod)) {
        b->pending = true;
        b->created = pod->created;
        snprintf(b->uid, sizeof(b->uid), "%s", pod->uid ? pod->uid : "");
        b->cause = blocking_cause(pod);
    }
    store_read_unlock(c->store);
    if (b->pending && b->cause == METRICS_NO_CAUSE) {
        /* now preempting, or its cause not yet seen: the blocking cause it had before */
        void *v = NULL;
        if (lh_table_lookup_ex(c->pending_marks, key, &v) &&
            strcmp(((struct pending_mark *)v)->uid, b->uid) == 0)
            b->cause = ((struct pending_mark *)v)->cause;
    }
}

static void forget_mark(struct controller *c, const char *key)
{
    struct lh_entry *e = lh_table_lookup_entry(c->pending_marks, key);
    if (e)
        lh_table_delete_entry(c->pending_marks, e);
}

/*
 * After an event of pod `key`: a GPU pod that was pending and no longer is (bound, finished, or
 * deleted, or replaced by a pod of another uid) is observed in gputri_gpu_pod_pending_seconds
 * by the leader (the other replicas see the same events; counting once keeps sums across
 * replicas right); a pending GPU pod carrying a blocking cause has it remembered.
 */
static void pending_after(struct controller *c, const char *key, const char *ns, const char *name,
                          const struct pending_before *b, int deleted)
{
    bool pending = false;
    int cause = METRICS_NO_CAUSE;
    char uid[64] = "";
    if (!deleted && ns && name) {
        store_read_lock(c->store);
        const struct kpod *pod = store_pod_get(c->store, ns, name);
        if (pod && store_is_pending_gpu_pod(pod)) {
            pending = true;
            cause = blocking_cause(pod);
            snprintf(uid, sizeof(uid), "%s", pod->uid ? pod->uid : "");
        }
        store_read_unlock(c->store);
    }
    if (b->pending && (!pending || strcmp(uid, b->uid) != 0)) {
        if (b->created > 0 && controller_may_write(c))
            metrics_pending_time(c->metrics, b->cause,
                                 clock_wall_ms(&c->clock) - b->created * 1000);
        forget_mark(c, key);
    }
    if (!pending) {
        forget_mark(c, key);
        return;
    }
    if (cause == METRICS_NO_CAUSE)
        return;
    struct pending_mark *m = NULL;
    void *v = NULL;
    if (lh_table_lookup_ex(c->pending_marks, key, &v)) {
        m = v;
    } else {
        char *k = strdup(key);
        m = calloc(1, sizeof(*m));
        if (!k || !m || lh_table_insert(c->pending_marks, k, m) != 0) {
            free(k);
            free(m);
            return;
        }
    }
    snprintf(m->uid, sizeof(m->uid), "%s", uid);
    m->cause = cause;
}

/* After a relist: forget the marks of pods that are gone or no longer pending (deleted while
 * the watch was down; their pending time is not known). */
static void prune_marks(struct controller *c)
{
    struct lh_entry *e, *next;
    store_read_lock(c->store);
    for (e = c->pending_marks->head; e; e = next) {
        next = e->next;
        char ns[256], name[256];
        const struct kpod *pod = NULL;
        if (split_meta_namespace_key(lh_entry_k(e), ns, sizeof(ns), name, sizeof(name)) == K_OK)
            pod = store_pod_get(c->store, ns, name);
        if (!pod || !store_is_pending_gpu_pod(pod))
            lh_table_delete_entry(c->pending_marks, e);
    }
    store_read_unlock(c->store);
}

static void pod_event(struct controller *c, json_object *obj, int deleted)
{
    char key[STORE_KEY_MAX];
    unsigned changed = 0;
    const char *ns = kube_json_meta_str(obj, "namespace");
    const char *name = kube_json_meta_str(obj, "name");
    char before_key[STORE_KEY_MAX] = "";
    if (ns && name && meta_namespace_key(before_key, sizeof(before_key), ns, name) != K_OK)
        ns = name = NULL; /* the store refuses such a key too */
    struct pending_before before;
    pending_before(c, before_key, ns, name, &before);
    int rc = store_pod_apply_json(c->store, obj, deleted, key, &changed);
    if (rc) {
        skipped(obj, "pod", rc);
        return;
    }
    pending_after(c, key, ns, name, &before, deleted);
    settle_written(c, key, kube_json_annotation(obj, ANNOTATION_CAUSE), deleted);
    if (deleted || !needs_work(c, key))
        workqueue_drop(c->queue, key);
    else if (changed & STORE_CHANGED_POD)
        workqueue_add(c->queue, key);
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
    prune_marks(c);
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
    char ns[256], name[256];
    if (split_meta_namespace_key(key, ns, sizeof(ns), name, sizeof(name)) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(u->c->store, ns, name);
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
        workqueue_add(u->c->queue, key);
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
