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
#include "cache/pod_events.h"
#include "kube/project_gang.h"
#include "classify/autoscaler.h"
#include "classify/quota.h"
#include "controller_internal.h"
#include "kube/json.h"
#include "kube/project.h"
#include "metrics.h"
#include "triage/owner_alive.h"
#include "triage/requeue.h"
#include "triage/triage.h"
#include "util/log.h"
#include "util/result.h"

/* A re-check for someone else's change: low priority, coalesced (workqueue.h). */
void controller_enqueue_recheck(struct controller *c, const char *key)
{
    workqueue_add_low(c->queue, key);
}

static void enqueue_one(void *ctx, const char *key)
{
    controller_enqueue_recheck(ctx, key);
}

void controller_enqueue_pending(struct controller *c)
{
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, enqueue_one, c);
    /* bound GPU pods not started yet: their word may be owed too (a new leader, a resync) */
    store_for_each_starting_gpu_pod(c->store, enqueue_one, c);
    store_read_unlock(c->store);
}

/* Pending pods with claims, or with extended resources a DeviceClass may serve (KEP-5004), only
 * (the pod is looked up under the caller's read lock). */
static void enqueue_if_claims(void *ctx, const char *key)
{
    struct controller *c = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(c->store, k.ns, k.name);
    if (pod && (pod->n_claims > 0 || triage_ext_served(pod, c->dra)))
        controller_enqueue_recheck(c, key);
}

void controller_enqueue_claim_pods(struct controller *c)
{
    store_read_lock(c->store);
    if (c->dra)
        dra_store_read_lock(c->dra); /* lock order: the object store, then the DRA store */
    store_for_each_pending_gpu_pod(c->store, enqueue_if_claims, c);
    if (c->dra)
        dra_store_read_unlock(c->dra);
    store_read_unlock(c->store);
}

/* ---- gangs ---------------------------------------------------------------------------------- */

struct gang_walk {
    struct controller *c;
    enum gang_kind kind; /* every pod of a gang of this kind (gang_changed with no name) */
};

static void enqueue_gang_member(void *ctx, const struct kpod *p)
{
    struct gang_walk *w = ctx;
    char key[STORE_KEY_MAX];
    if (store_is_pending_gpu_pod(p) && meta_namespace_key(key, sizeof(key), p->ns, p->name) == K_OK)
        controller_enqueue_recheck(w->c, key);
}

static void enqueue_if_gang_kind(void *ctx, const char *key)
{
    struct gang_walk *w = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(w->c->store, k.ns, k.name);
    if (pod && pod->gang && pod->gang->kind == w->kind)
        controller_enqueue_recheck(w->c, key);
}

void controller_gang_changed(void *ctx, enum gang_kind k, const char *ns, const char *name)
{
    struct controller *c = ctx;
    struct gang_walk w = {c, k};
    store_read_lock(c->store);
    if (ns && name) {
        struct pod_gang link = {.kind = k, .name = (char *)name};
        store_for_each_pod_of_gang(c->store, ns, &link, enqueue_gang_member, &w);
    } else {
        store_for_each_pending_gpu_pod(c->store, enqueue_if_gang_kind, &w);
    }
    store_read_unlock(c->store);
}

/* What of a gang member counts for its gang (model/gang.h; core/triage triage_gang_facts): 0
 * absent, else 1 plus a bit each for terminal, being deleted, gated. Read lock taken. */
static int member_state(struct controller *c, const char *ns, const char *name)
{
    store_read_lock(c->store);
    const struct kpod *p = store_pod_get(c->store, ns, name);
    int st = p ? 1 | (pod_is_terminal(p) ? 2 : 0) | (p->deleting ? 4 : 0) |
                     (p->n_scheduling_gates > 0 ? 8 : 0)
               : 0;
    store_read_unlock(c->store);
    return st;
}

/* One store change and the node it names as the store holds it now. */
struct judged_change {
    struct controller *c;
    const struct store_delta *d;
    const struct knode *now_node;
};

/* Queue pending pod `key` when the change can move its word (store read lock held). */
static void recheck_if_affected(void *ctx, const char *key)
{
    struct judged_change *j = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(j->c->store, k.ns, k.name);
    if (pod && !requeue_store_change_reaches(pod, j->d, j->now_node))
        return; /* cheap: no record needed */
    struct requeue_record rec;
    pod_ledger_verdict(j->c->ledger, key, &rec);
    if (!pod ||
        requeue_after_store_change(pod, &rec, j->d, j->now_node, store_node_usage, j->c->store))
        controller_enqueue_recheck(j->c, key);
}

/*
 * After a change of usage or nodes: the pending pods it can give another word
 * (core/triage/requeue.h), or every one with --recheck=all. Called with apply_mu held, right
 * after the store write: each change is judged against the verdicts as they stood before it.
 */
static void after_change(struct controller *c, const struct store_delta *d)
{
    if (!(d->changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES)))
        return;
    if (atomic_load(&c->listing))
        return;
    if (c->opts.recheck_all) {
        controller_enqueue_pending(c);
        return;
    }
    store_read_lock(c->store);
    struct judged_change j = {c, d, d->node[0] ? store_node_get(c->store, d->node) : NULL};
    store_for_each_pending_gpu_pod(c->store, recheck_if_affected, &j);
    store_read_unlock(c->store);
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
        log_warn_kv("not cached: the store refused it (its key is too long, or its node would "
                    "then account more resource names than maxResourceNames)",
                    LOG_STR("kind", kind), LOG_STR("object", who),
                    LOG_INT("maxResourceNames", RESOURCE_LIST_MAX));
    else if (rc == K_ENOMEM)
        log_warn_kv("not cached: out of memory", LOG_STR("kind", kind), LOG_STR("object", who));
    else
        log_warn_kv("skipping an object that cannot be read", LOG_STR("kind", kind),
                    LOG_STR("err", k_strerror(rc)));
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
    bool needs_work;  /* a pending, rejected or starting GPU pod, or one carrying a cause */
    bool is_pending;  /* a pending GPU pod (store_is_pending_gpu_pod) */
    bool is_starting; /* a bound GPU pod whose GPU containers have not all started
                         (store_is_starting_gpu_pod): its kubelet Events are kept */
};

static void pod_seen(const struct kpod *pod, struct pod_seen *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->uid, sizeof(out->uid), "%s", pod->uid ? pod->uid : "");
    out->has_cause = pod->cause != NULL;
    snprintf(out->cause, sizeof(out->cause), "%s", pod->cause ? pod->cause : "");
    out->is_starting = store_is_starting_gpu_pod(pod);
    out->needs_work = store_is_pending_gpu_pod(pod) || store_is_rejected_gpu_pod(pod) ||
                      out->is_starting || pod->cause;
    out->is_pending = store_is_pending_gpu_pod(pod);
    out->pending = (struct metrics_pending_pod){
        .pending = store_is_pending_gpu_pod(pod) && histogram_gpu_pod(pod),
        .uid = out->uid,
        .created_ms = pod->created * 1000,
        .cause = pod->cause ? cause_from_word(pod->cause) : METRICS_NO_CAUSE,
    };
}

/* A pending pod's own object changed: a high-priority check, unless the change cannot move its
 * word (core/triage/requeue.h requeue_after_own_change). */
static void own_change(struct controller *c, const char *key, const char *uid,
                       const struct store_delta *d)
{
    struct requeue_record rec;
    pod_ledger_verdict(c->ledger, key, &rec);
    if (c->opts.recheck_all || requeue_after_own_change(uid, &rec, d))
        workqueue_add(c->queue, key);
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
    struct store_delta d;
    memset(&d, 0, sizeof(d));
    int rc;
    /* a gang member that appears, goes or changes what counts: its gang's pods are re-checked */
    struct pod_gang *gang = NULL;
    (void)project_pod_gang(kube_json_get(obj, "metadata", json_type_object),
                           kube_json_get(obj, "spec", json_type_object), &gang);
    const char *obj_ns = kube_json_meta_str(obj, "namespace");
    const char *obj_name = kube_json_meta_str(obj, "name");
    int member_before = gang && obj_name ? member_state(c, obj_ns, obj_name) : 0;
    pthread_mutex_lock(&c->apply_mu);
    if (deleted) {
        const char *name = kube_json_meta_str(obj, "name");
        const char *ns = kube_json_meta_str(obj, "namespace");
        rc = !name ? K_EPARSE
             : meta_namespace_key(key, sizeof(key), ns, name) != K_OK
                 ? K_ETOOBIG
                 : store_pod_delete_delta(c->store, ns, name, &d);
    } else {
        struct kpod pod;
        rc = project_pod(obj, store_gpus(c->store), &pod);
        if (rc == K_OK && meta_namespace_key(key, sizeof(key), pod.ns, pod.name) != K_OK) {
            pod_cleanup(&pod);
            rc = K_ETOOBIG; /* the store refuses such a key too */
        }
        if (rc == K_OK) {
            pod_seen(&pod, &seen);
            /* a refused owner that gets a pod (quota_owners.h) */
            quota_owners_note_pod(c->quota_owners, pod.owner_uid, pod.created);
            rc = store_pod_upsert_delta(c->store, &pod, &d); /* takes the pod over */
        }
    }
    if (rc) {
        pthread_mutex_unlock(&c->apply_mu);
        skipped(obj, "pod", rc);
        pod_gang_free(gang);
        return;
    }
    unsigned changed = d.changed;
    if (gang && obj_ns && member_state(c, obj_ns, obj_name) != member_before)
        controller_gang_changed(c, gang->kind, obj_ns, gang->name);
    pod_gang_free(gang);

    struct metrics_pending_mark mark;
    pod_ledger_pending(c->ledger, key, &mark);
    metrics_pending_step(c->metrics, &mark, &seen.pending, clock_wall_ms(&c->clock),
                         controller_may_write(c));
    pod_ledger_set_pending(c->ledger, key, &mark);
    if (deleted || (!seen.is_pending && !seen.is_starting))
        pod_events_forget_pod_key(c->pod_events, key);
    if (deleted) {
        pod_ledger_forget(c->ledger, key);
        workqueue_drop(c->queue, key);
    } else {
        pod_ledger_seen(c->ledger, key, seen.has_cause ? seen.cause : NULL);
        if (!seen.is_pending)
            pod_ledger_forget_verdict(c->ledger, key); /* only pending pods are re-checked */
        /* a cause written by us and not yet seen may still have to become ok */
        if (!seen.needs_work && !pod_ledger_written(c->ledger, key, NULL))
            workqueue_drop(c->queue, key);
        else if (changed & STORE_CHANGED_POD)
            own_change(c, key, seen.uid, &d);
    }
    after_change(c, &d);
    pthread_mutex_unlock(&c->apply_mu);
    store_delta_cleanup(&d);
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
    struct store_delta d;
    pthread_mutex_lock(&c->apply_mu);
    int rc = store_node_apply_json_delta(c->store, obj, deleted, NULL, &d);
    if (rc == K_OK)
        after_change(c, &d);
    pthread_mutex_unlock(&c->apply_mu);
    store_delta_cleanup(&d);
    if (rc)
        skipped(obj, "node", rc);
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

void controller_dra_gone(struct controller *c)
{
    int all = 0;
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        all |= LISTING_DRA << k;
    list_end(c, all);
}

static void pods_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    list_begin(c, LISTING_PODS);
    store_pods_sync_begin(c->store);
}

/* After a relist: keep the Event records of pods still pending, or bound and still starting
 * (store read lock held). */
static bool still_pending(void *ctx, const char *key)
{
    struct controller *c = ctx;
    struct meta_key k;
    const struct kpod *pod =
        meta_key_parse(key, &k) == K_OK ? store_pod_get(c->store, k.ns, k.name) : NULL;
    return pod && (store_is_pending_gpu_pod(pod) || store_is_starting_gpu_pod(pod));
}

static void pods_sync_end(void *ctx)
{
    struct controller *c = ctx;
    unsigned changed = 0;
    store_pods_sync_end(c->store, &changed);
    store_read_lock(c->store);
    pod_ledger_prune(c->ledger, still_cached, c);
    pod_events_retain(c->pod_events, still_pending, c);
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

/* One DRA event, judged for each pending pod (both stores' read locks held). */
struct judged_dra {
    struct controller *c;
    const struct requeue_dra_change *ev;
};

static void recheck_if_dra_affects(void *ctx, const char *key)
{
    struct judged_dra *j = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(j->c->store, k.ns, k.name);
    if (!pod || (pod->n_claims == 0 && !pod_has_ext_requests(pod)))
        return; /* requeue_after_dra_event judges the extended resources */
    struct requeue_record rec;
    pod_ledger_verdict(j->c->ledger, key, &rec);
    /* --recheck=all: as if no pod had a verdict (every claim pod after a device change) */
    if (requeue_after_dra_event(pod, j->c->opts.recheck_all ? NULL : &rec, j->ev, j->c->dra))
        controller_enqueue_recheck(j->c, key);
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
    /* Which pending claim pods the event concerns: core/triage/requeue.h
     * requeue_after_dra_event(); whether a claim holds devices is read before the store
     * replaces it. */
    struct requeue_dra_change ev = {
        .kind = x->kind,
        .ns = kube_json_meta_str(obj, "namespace"),
        .name = kube_json_meta_str(obj, "name"),
    };
    pthread_mutex_lock(&x->c->apply_mu);
    if (x->kind == DRA_KIND_CLAIM && ev.ns && ev.name) {
        ev.holds_devices = json_claim_allocated(obj);
        dra_store_read_lock(x->c->dra);
        const struct dra_claim *old = dra_store_claim(x->c->dra, ev.ns, ev.name);
        ev.holds_devices = ev.holds_devices || (old && old->allocated);
        dra_store_read_unlock(x->c->dra);
    }
    int rc = dra_store_apply_json(x->c->dra, x->kind, obj, deleted);
    if (rc) {
        log_warn_kv("not cached", LOG_STR("kind", dra_kind_name(x->kind)),
                    LOG_STR("namespace", ev.ns), LOG_STR("name", ev.name ? ev.name : "?"),
                    LOG_STR("err", k_strerror(rc)));
        if (rc != K_ENOMEM && !deleted) {
            /* an object that cannot be read must not stand for its old version: drop it */
            dra_store_apply_json(x->c->dra, x->kind, obj, 1);
        }
        ev.unreadable = true;
    }
    if (!atomic_load(&x->c->listing)) {
        struct judged_dra j = {x->c, &ev};
        store_read_lock(x->c->store);
        dra_store_read_lock(x->c->dra);
        store_for_each_pending_gpu_pod(x->c->store, recheck_if_dra_affects, &j);
        dra_store_read_unlock(x->c->dra);
        store_read_unlock(x->c->store);
    }
    pthread_mutex_unlock(&x->c->apply_mu);
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

/* ---- the pods' Events ------------------------------------------------------------------------ */

/* Whether `ev` is about a pod of the store (the same uid) for which `is` holds (store read lock
 * held). */
static bool about_pod(struct controller *c, const struct kevent *ev,
                      int (*is)(const struct kpod *pod))
{
    const struct kpod *pod = store_pod_get(c->store, ev->obj_ns, ev->obj_name);
    return pod && pod->uid && strcmp(pod->uid, ev->obj_uid) == 0 && is(pod);
}

/*
 * Keep (or, deleted, drop) the record of Event `ev` when it is about a pod of the store for which
 * `is` holds; `key` receives the pod's key when its records changed ("" otherwise). Returns
 * pod_events_apply's result (K_OK when the pod is not one to keep it for). The store's read lock
 * is held from the check to the write (lock order: store, then pod_events): a pod deleted,
 * placed or started in between would else keep the record, its handler having forgotten the
 * pod's records before this one was written.
 */
static int keep_pod_event(struct controller *c, const struct kevent *ev, int deleted,
                          int (*is)(const struct kpod *pod), char *key)
{
    int64_t now = clock_wall_s(&c->clock);
    key[0] = '\0';
    store_read_lock(c->store);
    if (!deleted && !about_pod(c, ev, is)) {
        store_read_unlock(c->store);
        return K_OK; /* its pod may still come: the writers repeat their Events */
    }
    int rc = pod_events_apply(c->pod_events, ev, deleted, now + AUTOSCALER_CLOCK_SKEW, key);
    store_read_unlock(c->store);
    if (rc == K_ETOOBIG)
        log_info_kv(2, "Event not kept: the Event cache is full", LOG_STR("namespace", ev->ns),
                    LOG_STR("name", ev->name));
    else if (rc != K_OK)
        log_warn_kv("Event not kept", LOG_STR("namespace", ev->ns), LOG_STR("name", ev->name),
                    LOG_STR("err", k_strerror(rc)));
    return rc;
}

/*
 * One Event of the autoscalers', the quota refusals' (resource_claim) or the kubelets' streams:
 * kept by the one rule of the Event records (triage.h triage_event_kind) when it is about a pod
 * of the store it is read for: a pending GPU pod for an autoscaler's verdict or a claim refused
 * by quota, a bound GPU pod whose GPU containers have not all started (store_is_starting_gpu_pod)
 * for a kubelet's warning. The pod is re-checked (low priority, coalesced) when its records
 * changed. A deletion (Events expire, --event-ttl) removes the record it made.
 */
static void event_on_pod(struct controller_events_ctx *x, json_object *obj, int deleted)
{
    struct controller *c = x->c;
    struct kevent ev;
    if (project_event(obj, &ev) != K_OK)
        return;
    enum triage_event_kind kind = triage_event_kind(&ev);
    if (kind == TRIAGE_EVENT_NONE)
        return;
    char key[STORE_KEY_MAX];
    int rc = keep_pod_event(
        c, &ev, deleted,
        kind == TRIAGE_EVENT_PLACEMENT ? store_is_starting_gpu_pod : store_is_pending_gpu_pod, key);
    /* the cluster has an autoscaler at work (reconcile_env.autoscaler_seen): only a verdict the
     * cache took counts (its own pod's namespace, a pending GPU pod of that uid, a sane date),
     * not any Event anyone may write with these reasons */
    int64_t now = clock_wall_s(&c->clock);
    struct autoscaler_evidence e;
    if (kind == TRIAGE_EVENT_AUTOSCALER && !deleted && rc == K_OK && key[0] &&
        autoscaler_parse(&ev, &e) && !autoscaler_stale(&e, now, RECONCILE_AUTOSCALED_FOR, 0))
        atomic_store(&c->autoscaler_seen, now);
    /* another object than the pod: a re-check, behind new pods and their own changes, so that
     * an Event storm does not hold back the answer for a newly blocked pod */
    if (key[0] && !atomic_load(&c->listing))
        controller_enqueue_recheck(c, key);
}

/* ---- owners whose GPU pods a quota refuses (quota_owners.h) ------------------------------- */

static bool owner_stream(const struct controller_events_ctx *x)
{
    return strcmp(x->component, CONTROLLER_OWNER_EVENTS) == 0;
}

/* The controller's Event on an owner (written by the owners' recorder thread). */
static void post_owner_event(struct controller *c, const struct quota_owner *o, const char *type,
                             const char *reason, const char *message)
{
    if (!controller_may_write(c))
        return;
    struct kube_event_spec e = {
        .ns = o->ns,
        .kind = quota_owner_kind_name(o->kind),
        .api_version = quota_owner_api_version(o->kind),
        .name = o->name,
        .uid = o->uid,
        .type = type,
        .reason = reason,
        .message = message,
        .component = "gputri",
        .instance = c->opts.instance,
    };
    if (event_recorder_post(c->owner_events, &e))
        metrics_inc_events(c->metrics);
}

/*
 * One FailedCreate Event: kept when a workload controller could not create a ReplicaSet's,
 * StatefulSet's or Job's pods because a ResourceQuota refuses their GPUs; a new owner, or one
 * whose quota numbers changed, gets a Warning Event GPUQuotaExceeded.
 */
static void owner_event(struct controller_events_ctx *x, json_object *obj, int deleted)
{
    struct controller *c = x->c;
    struct kevent ev;
    struct quota_owner o;
    if (project_event(obj, &ev) != K_OK ||
        !quota_owner_event(&ev, store_gpus(c->store), c->opts.dra_classes, &o))
        return;
    int64_t now = clock_wall_s(&c->clock);
    if (!deleted && !quota_owner_current(&o, now, 0))
        return; /* an old Event (a relist brings what the last hour left) */
    enum quota_owners_change ch = quota_owners_apply(c->quota_owners, &o, deleted);
    if (ch == QUOTA_OWNERS_FULL)
        log_info_kv(2, "owner not kept: the table of refused owners is full",
                    LOG_STR("namespace", o.ns), LOG_STR("name", o.name));
    if (ch != QUOTA_OWNERS_NEW && ch != QUOTA_OWNERS_CHANGED)
        return;
    char detail[1024];
    struct line l = {.buf = detail, .cap = sizeof(detail)};
    quota_put_owner(&l, &o);
    line_finish(&l);
    post_owner_event(c, &o, "Warning", cause_event_reason(CAUSE_QUOTA_EXCEEDED), detail);
}

void controller_quota_owners_tick(struct controller *c)
{
    int64_t now_ms = clock_mono_ms(&c->clock);
    if (c->quota_tick_ms && now_ms - c->quota_tick_ms < CONTROLLER_QUOTA_TICK_MS)
        return;
    c->quota_tick_ms = now_ms;
    int64_t now = clock_wall_s(&c->clock);
    struct quota_owner gone[8];
    bool admitted[8];
    size_t n = quota_owners_expire_noted(c->quota_owners, now, gone, admitted, 8);
    for (size_t i = 0; i < n && i < 8; i++) {
        if (!admitted[i])
            continue; /* timed out, not seen to get its pods: nothing to say */
        char msg[1024];
        struct line l = {.buf = msg, .cap = sizeof(msg)};
        line_printf(&l, "%s %s creates its GPU pods again: ResourceQuota %s admits them (%s)",
                    quota_owner_kind_name(gone[i].kind), gone[i].name, gone[i].q.quota,
                    gone[i].q.key);
        line_finish(&l);
        post_owner_event(c, &gone[i], "Normal", "GPUQuotaAdmitted", msg);
    }
    /* owners deleted while refused: their Events outlive them */
    struct quota_owner due[CONTROLLER_OWNER_CHECKS];
    n = quota_owners_due(c->quota_owners, now, CONTROLLER_OWNER_CHECK_S, due,
                         CONTROLLER_OWNER_CHECKS);
    for (size_t i = 0; i < n && c->owner_get_client; i++) {
        struct kube_error err = {0};
        if (triage_owner_alive(c->owner_get_client, &due[i], &err) == K_ENOTFOUND &&
            quota_owners_forget(c->quota_owners, due[i].uid))
            log_info_kv(1, "owner gone: no longer counted as refused by quota",
                        LOG_STR("kind", quota_owner_kind_name(due[i].kind)),
                        LOG_STR("namespace", due[i].ns), LOG_STR("name", due[i].name));
    }
}

static void events_upsert(void *ctx, json_object *obj)
{
    if (owner_stream(ctx))
        owner_event(ctx, obj, 0);
    else
        event_on_pod(ctx, obj, 0);
}

static void events_remove(void *ctx, json_object *obj)
{
    if (owner_stream(ctx))
        owner_event(ctx, obj, 1);
    else
        event_on_pod(ctx, obj, 1);
}

static void enqueue_key(void *ctx, const char *key)
{
    controller_enqueue_recheck(ctx, key);
}

static void events_sync_begin(void *ctx)
{
    struct controller_events_ctx *x = ctx;
    if (owner_stream(x))
        quota_owners_sync_begin(x->c->quota_owners);
    else
        pod_events_sync_begin(x->c->pod_events, x->component);
}

static void events_sync_end(void *ctx)
{
    struct controller_events_ctx *x = ctx;
    if (owner_stream(x)) {
        quota_owners_sync_end(x->c->quota_owners);
        return;
    }
    pod_events_sync_end(x->c->pod_events, x->component, enqueue_key, x->c);
    controller_enqueue_pending(x->c); /* what the LIST brought is judged by a re-check */
}

static void events_watch_restart(void *ctx, int result)
{
    struct controller_events_ctx *x = ctx;
    (void)result;
    metrics_watch_restart(x->c->metrics, x->name);
}

struct informer_handlers controller_events_handlers(struct controller_events_ctx *x)
{
    return (struct informer_handlers){
        .ctx = x,
        .upsert = events_upsert,
        .remove = events_remove,
        .sync_begin = events_sync_begin,
        .sync_end = events_sync_end,
        .watch_restart = events_watch_restart,
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
