/*
 * workers.c - the reconcile workers: take a pod key off the workqueue, plan, and write the cause
 * through a writer that checks leadership right before each write (the worker loop of
 * kubernetes/sample-controller: controller.go, runWorker / processNextWorkItem / syncHandler).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "controller_internal.h"
#include "kube/event_recorder.h"
#include "metrics.h"
#include "util/log.h"
#include "util/result.h"

bool controller_may_write(struct controller *c)
{
    return !c->le || leader_is_leading(c->le);
}

static int gated_annotate(void *ctx, const char *ns, const char *name, const char *cause,
                          const char *detail, struct kube_error *err)
{
    struct gated_writer *g = ctx;
    if (!controller_may_write(g->c)) {
        err->code = K_ECANCELED;
        snprintf(err->message, sizeof(err->message), "not the leader");
        return K_ECANCELED;
    }
    int rc = g->inner.annotate(g->inner.ctx, ns, name, cause, detail, err);
    if (rc == K_OK)
        metrics_inc_patches(g->c->metrics);
    return rc;
}

static int gated_event(void *ctx, const struct reconcile_plan *plan, struct kube_error *err)
{
    struct gated_writer *g = ctx;
    if (!controller_may_write(g->c)) {
        err->code = K_ECANCELED;
        snprintf(err->message, sizeof(err->message), "not the leader");
        return K_ECANCELED;
    }
    int rc = g->inner.event(g->inner.ctx, plan, err);
    if (rc == K_OK)
        metrics_inc_events(g->c->metrics);
    return rc;
}

struct pod_writer controller_gated_writer(struct gated_writer *g)
{
    return (struct pod_writer){g, gated_annotate, gated_event};
}

/* Record an owed Event: true when there was one to record (done, or queued again). */
static bool settle_owed_event(struct controller *c, struct pod_writer *w, const char *key,
                              const struct pod_written *written)
{
    struct meta_key k;
    char uid[64] = "", cause[64] = "";
    bool deleting = false;
    if (meta_key_parse(key, &k) != K_OK)
        return false;
    store_read_lock(c->store);
    const struct kpod *pod = store_pod_get(c->store, k.ns, k.name);
    if (pod) {
        deleting = pod->deleting;
        snprintf(uid, sizeof(uid), "%s", pod->uid ? pod->uid : "");
        /* what we wrote stands for the pod's cause until the watch shows it */
        const char *cur =
            written && strcmp(written->uid, uid) == 0 ? cause_word(written->cause) : pod->cause;
        snprintf(cause, sizeof(cause), "%s", cur ? cur : "");
    }
    store_read_unlock(c->store);
    struct reconcile_plan plan;
    if (deleting) { /* a pod being deleted is told nothing more (reconcile.h) */
        pod_ledger_event_done(c->ledger, key);
        return false;
    }
    if (!pod_ledger_owed_event(c->ledger, key, pod ? uid : NULL, pod ? cause : NULL, &plan))
        return false;
    struct kube_error err = {0};
    int rc = w->event(w->ctx, &plan, &err);
    if (rc == K_OK || rc == K_ECANCELED || reconcile_event_hopeless(rc, &err)) {
        if (rc == K_OK)
            log_info_kv(1, "recorded the Event owed", LOG_STR("pod", key),
                        LOG_STR("cause", cause_word(plan.cause)));
        pod_ledger_event_done(c->ledger, key);
        return false; /* go on with the pod's plan */
    }
    int64_t delay = workqueue_add_rate_limited(c->queue, key, err.retry_after * 1000LL);
    log_warn_kv("recording the Event failed", LOG_STR("pod", key),
                LOG_STR("cause", cause_word(plan.cause)), LOG_STR("err", k_strerror(rc)),
                LOG_STR("detail", err.message[0] ? err.message : NULL),
                LOG_INT("retryInMs", delay));
    return true;
}

void controller_process(struct controller *c, struct pod_writer *w, const char *key)
{
    /* A follower keeps its caches warm but leaves the work to the leader; a new leader
     * requeues every pending GPU pod. */
    if (!controller_may_write(c)) {
        pod_ledger_forget_verdict(c->ledger, key); /* not kept up to date while following */
        workqueue_forget(c->queue, key);
        return;
    }
    /* What we wrote only speaks for the pod with that uid, not for a pod recreated under the
     * same name whose deletion a relist swept away (reconcile_plan compares the uids). */
    struct pod_written written;
    bool has_written = pod_ledger_written(c->ledger, key, &written);
    if (settle_owed_event(c, w, key, has_written ? &written : NULL))
        return;
    struct reconcile_plan plan;
    struct reconcile_env env = {
        .now = clock_wall_s(&c->clock),
        .no_scheduler_grace = c->opts.no_scheduler_grace,
        .events = c->pod_events,
        .provision_window = c->opts.provision_window,
        .autoscaler_seen = atomic_load(&c->autoscaler_seen),
        .autoscaler_grace = c->opts.autoscaler_grace,
        .workloads = c->workloads,
        .gangs = c->gangs,
    };
    /* before the caches are read: a change judged until the verdict is set re-checks the pod */
    pod_ledger_forget_verdict(c->ledger, key);
    if (reconcile_plan(c->store, atomic_load(&c->dra_synced) ? c->dra : NULL, c->opts.dra_classes,
                       &env, key, has_written ? cause_word(written.cause) : NULL,
                       has_written ? written.uid : NULL, &plan) != K_OK) {
        log_error_kv("invalid key", LOG_STR("key", key));
        return;
    }
    if (plan.classified) {
        metrics_inc_classifications(c->metrics);
        /* only pending pods are re-checked; a rejected or starting pod is bound (its words rank
         * at or above ok) */
        if (plan.verdict != CAUSE_NODE_REJECTED && plan.verdict != CAUSE_OK &&
            plan.verdict != CAUSE_RUNTIME_MISSING && plan.verdict != CAUSE_IMAGE_PULL_FAILED &&
            plan.verdict != CAUSE_CONTAINER_START_FAILED)
            pod_ledger_set_verdict(c->ledger, key, plan.uid, plan.verdict, plan.verdict_autoscaler);
        /* a gated pod may be Kueue's, installed since the last discovery: ask now, not in a
           minute (at most every WORKLOAD_INFORMER_POKE_MS) */
        if (plan.verdict == CAUSE_SCHEDULING_GATED && c->workload_watch &&
            workload_informer_version(c->workload_watch) == KUEUE_API_NONE)
            workload_informer_poke(c->workload_watch);
    }
    if (plan.recheck_after_ms > 0)
        workqueue_add_after(c->queue, key, plan.recheck_after_ms);
    if (plan.kind == RECONCILE_WRITE && plan.cause == CAUSE_GPU_FITS) {
        int64_t wait = pod_ledger_fits_wait(c->ledger, key, GPU_FITS_GRACE_MS);
        if (wait > 0) {
            workqueue_add_after(c->queue, key, wait);
            return;
        }
    } else {
        pod_ledger_fits_forget(c->ledger, key);
    }
    if (plan.kind != RECONCILE_WRITE) {
        workqueue_forget(c->queue, key);
        return;
    }
    struct kube_error err = {0};
    bool annotated = false;
    int64_t began_ms = clock_mono_ms(&c->clock);
    int rc = reconcile_apply(&plan, w, &err, &annotated);
    int64_t took_ms = clock_mono_ms(&c->clock) - began_ms;
    if (rc != K_OK && annotated && rc != K_ECANCELED) {
        /* the cause is on the pod: the next plan finds it written; only the Event is owed */
        pod_ledger_set_written(c->ledger, key, plan.uid, plan.cause);
        metrics_cause_transition(c->metrics, plan.from, (int)plan.cause);
        pod_ledger_owe_event(c->ledger, key, &plan);
    }
    if (rc == K_ECANCELED) {
        log_info_kv(1, "cause not written: leadership lost", LOG_STR("pod", key));
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_ENOTFOUND) {
        log_info_kv(1, "pod gone before its cause could be written", LOG_STR("pod", key),
                    LOG_STR("detail", err.message));
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_OK) {
        log_info_kv(1, "cause written", LOG_STR("pod", key),
                    LOG_STR("cause", cause_word(plan.cause)), LOG_STR("detail", plan.detail));
        metrics_cause_transition(c->metrics, plan.from, (int)plan.cause);
        pod_ledger_set_written(c->ledger, key, plan.uid, plan.cause);
        workqueue_forget(c->queue, key);
        return;
    }
    /* 429, 5xx and transport errors back off per key, at least for the server's Retry-After, and
     * at least twice as long as the failed attempt took: a pod whose writes run into the API
     * server's timeout (a huge object on a loaded server: 30 s and more each) holds a worker at
     * most a third of the time, so a few such pods cannot keep every worker from the others. */
    int64_t min_delay = err.retry_after * 1000LL;
    if (took_ms > 0 && 2 * took_ms > min_delay)
        min_delay = 2 * took_ms;
    int64_t delay = rc == K_ECONFLICT ? 0 : workqueue_add_rate_limited(c->queue, key, min_delay);
    if (rc == K_ECONFLICT)
        workqueue_add(c->queue, key);
    log_warn_kv("writing the cause failed", LOG_STR("pod", key),
                LOG_STR("cause", cause_word(plan.cause)), LOG_STR("err", k_strerror(rc)),
                LOG_STR("detail", err.message[0] ? err.message : NULL),
                LOG_INT("retryInMs", delay));
}

void *controller_worker(void *arg)
{
    struct controller *c = arg;
    struct kube_client *client = kube_client_new(c->cfg, USER_AGENT);
    if (!client) {
        log_error_kv("worker: out of memory");
        return NULL;
    }
    struct kube_pod_writer kw = {client, c->opts.instance, c->events};
    struct gated_writer g = {c, pod_writer_kube(&kw)};
    struct pod_writer w = controller_gated_writer(&g);
    for (;;) {
        struct workqueue_got got;
        char *key = workqueue_get_info(c->queue, &got);
        if (!key)
            break;
        metrics_queue_latency(c->metrics, got.queued_ms);
        controller_process(c, &w, key);
        if (got.priority == WORKQUEUE_HIGH)
            metrics_high_priority_done(c->metrics, clock_mono_ms(&c->clock) - got.high_since_ms);
        workqueue_done(c->queue, key);
        free(key);
    }
    kube_client_free(client);
    return NULL;
}
