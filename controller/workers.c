/*
 * workers.c - the reconcile workers: take a pod key off the workqueue, plan, and write the cause
 * through a writer that checks leadership right before each write (the worker loop of
 * kubernetes/sample-controller: controller.go, runWorker / processNextWorkItem / syncHandler).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The ms left before a gpu-fits verdict for `key` may be written; 0 when the grace is over. */
static int64_t fits_wait(struct controller *c, const char *key)
{
    int64_t now = clock_mono_ms(&c->clock), wait = GPU_FITS_GRACE_MS;
    pthread_mutex_lock(&c->written_mu);
    void *v = NULL;
    if (lh_table_lookup_ex(c->fits_since, key, &v)) {
        wait = (int64_t)(intptr_t)v + GPU_FITS_GRACE_MS - now;
    } else {
        char *k = strdup(key);
        if (!k || lh_table_insert(c->fits_since, k, (void *)(intptr_t)now) != 0)
            free(k);
    }
    pthread_mutex_unlock(&c->written_mu);
    return wait > 0 ? wait : 0;
}

static void fits_forget(struct controller *c, const char *key)
{
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->fits_since, key);
    if (e)
        lh_table_delete_entry(c->fits_since, e);
    pthread_mutex_unlock(&c->written_mu);
}

/* Remember that `cause` was written to pod `uid` under `key`, until the watch shows it. */
static void remember_written(struct controller *c, const char *key, const char *uid,
                             const char *cause)
{
    pthread_mutex_lock(&c->written_mu);
    char *k = strdup(key), *val = NULL;
    if (asprintf(&val, "%s %s", uid, cause) < 0)
        val = NULL;
    struct lh_entry *e = lh_table_lookup_entry(c->written, key);
    if (e)
        lh_table_delete_entry(c->written, e);
    if (!k || !val || lh_table_insert(c->written, k, val) != 0) {
        free(k);
        free(val);
    }
    pthread_mutex_unlock(&c->written_mu);
}

/* Keep a copy of `plan`, whose annotation went through and whose Event did not. */
static void owe_event(struct controller *c, const char *key, const struct reconcile_plan *plan)
{
    char *k = strdup(key);
    struct reconcile_plan *copy = malloc(sizeof(*copy));
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->owed_events, key);
    if (e)
        lh_table_delete_entry(c->owed_events, e);
    if (k && copy) {
        *copy = *plan;
        if (lh_table_insert(c->owed_events, k, copy) == 0)
            k = NULL, copy = NULL;
    }
    pthread_mutex_unlock(&c->written_mu);
    free(k);
    free(copy);
}

/* The Event owed for `key`, if the pod (same uid) still carries that cause: copied to *out. An
 * owed Event for a pod that is gone, recreated or has another cause now is dropped. */
static bool owed_event(struct controller *c, const char *key, const char *current_uid,
                       const char *current_cause, struct reconcile_plan *out)
{
    bool owed = false;
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->owed_events, key);
    if (e) {
        const struct reconcile_plan *p = lh_entry_v(e);
        if (current_uid && current_cause && strcmp(p->uid, current_uid) == 0 &&
            strcmp(cause_word(p->cause), current_cause) == 0) {
            *out = *p;
            owed = true;
        } else {
            lh_table_delete_entry(c->owed_events, e);
        }
    }
    pthread_mutex_unlock(&c->written_mu);
    return owed;
}

static void owed_event_done(struct controller *c, const char *key)
{
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->owed_events, key);
    if (e)
        lh_table_delete_entry(c->owed_events, e);
    pthread_mutex_unlock(&c->written_mu);
}

/* Record an owed Event: true when there was one to record (done, or queued again). */
static bool settle_owed_event(struct controller *c, struct pod_writer *w, const char *key,
                              const char *written_uid, const char *written_cause)
{
    char ns[256], name[256], uid[64] = "", cause[64] = "";
    if (split_meta_namespace_key(key, ns, sizeof(ns), name, sizeof(name)) != K_OK)
        return false;
    store_read_lock(c->store);
    const struct kpod *pod = store_pod_get(c->store, ns, name);
    if (pod) {
        snprintf(uid, sizeof(uid), "%s", pod->uid ? pod->uid : "");
        const char *cur = written_cause && written_uid && strcmp(written_uid, uid) == 0
                              ? written_cause
                              : pod->cause;
        snprintf(cause, sizeof(cause), "%s", cur ? cur : "");
    }
    store_read_unlock(c->store);
    struct reconcile_plan plan;
    if (!owed_event(c, key, pod ? uid : NULL, pod ? cause : NULL, &plan))
        return false;
    struct kube_error err = {0};
    int rc = w->event(w->ctx, &plan, &err);
    if (rc == K_OK || rc == K_ENOTFOUND || rc == K_ECANCELED) {
        if (rc == K_OK)
            log_info(1, "pod %s: recorded the Event owed for %s", key, cause_word(plan.cause));
        owed_event_done(c, key);
        return false; /* go on with the pod's plan */
    }
    int64_t delay = workqueue_add_rate_limited(c->queue, key, err.retry_after * 1000LL);
    log_warn("pod %s: recording the Event for %s failed: %s%s%s; retrying in %lld ms", key,
             cause_word(plan.cause), k_strerror(rc), err.message[0] ? ": " : "", err.message,
             (long long)delay);
    return true;
}

void controller_process(struct controller *c, struct pod_writer *w, const char *key)
{
    char written[128] = "";
    /* A follower keeps its caches warm but leaves the work to the leader; a new leader
     * requeues every pending GPU pod. */
    if (!controller_may_write(c)) {
        workqueue_forget(c->queue, key);
        return;
    }
    pthread_mutex_lock(&c->written_mu);
    void *v = NULL;
    if (lh_table_lookup_ex(c->written, key, &v))
        snprintf(written, sizeof(written), "%s", (const char *)v);
    pthread_mutex_unlock(&c->written_mu);

    /* The entry is "<uid> <cause>": it only speaks for the pod with that uid, not for a pod
     * recreated under the same name whose deletion a relist swept away. */
    char *written_cause = strchr(written, ' ');
    if (written_cause)
        *written_cause++ = '\0';
    if (settle_owed_event(c, w, key, written_cause ? written : NULL, written_cause))
        return;
    struct reconcile_plan plan;
    struct reconcile_env env = {clock_wall_s(&c->clock), c->opts.no_scheduler_grace};
    if (reconcile_plan(c->store, atomic_load(&c->dra_synced) ? c->dra : NULL, c->opts.dra_classes,
                       &env, key, written_cause, written_cause ? written : NULL, &plan) != K_OK) {
        log_error("invalid key %s", key);
        return;
    }
    if (plan.classified)
        metrics_inc_classifications(c->metrics);
    if (plan.recheck_after_ms > 0)
        workqueue_add_after(c->queue, key, plan.recheck_after_ms);
    if (plan.kind == RECONCILE_WRITE && plan.cause == CAUSE_GPU_FITS) {
        int64_t wait = fits_wait(c, key);
        if (wait > 0) {
            workqueue_add_after(c->queue, key, wait);
            return;
        }
    } else {
        fits_forget(c, key);
    }
    if (plan.kind != RECONCILE_WRITE) {
        workqueue_forget(c->queue, key);
        return;
    }
    struct kube_error err = {0};
    bool annotated = false;
    int rc = reconcile_apply(&plan, w, &err, &annotated);
    if (rc != K_OK && annotated && rc != K_ECANCELED) {
        /* the cause is on the pod: the next plan finds it written; only the Event is owed */
        remember_written(c, key, plan.uid, cause_word(plan.cause));
        metrics_cause_transition(c->metrics, plan.from, (int)plan.cause);
        owe_event(c, key, &plan);
    }
    if (rc == K_ECANCELED) {
        log_info(1, "pod %s: not written: leadership lost", key);
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_ENOTFOUND) {
        log_info(1, "pod %s: gone before its cause could be written (%s)", key, err.message);
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_OK) {
        log_info(1, "pod %s: %s (%s)", key, cause_word(plan.cause), plan.detail);
        metrics_cause_transition(c->metrics, plan.from, (int)plan.cause);
        remember_written(c, key, plan.uid, cause_word(plan.cause));
        workqueue_forget(c->queue, key);
        return;
    }
    /* 429, 5xx and transport errors back off per key, at least for the server's Retry-After. */
    int64_t delay =
        rc == K_ECONFLICT ? 0 : workqueue_add_rate_limited(c->queue, key, err.retry_after * 1000LL);
    if (rc == K_ECONFLICT)
        workqueue_add(c->queue, key);
    log_warn("pod %s: writing cause %s failed: %s%s%s; retrying in %lld ms", key,
             cause_word(plan.cause), k_strerror(rc), err.message[0] ? ": " : "", err.message,
             (long long)delay);
}

void *controller_worker(void *arg)
{
    struct controller *c = arg;
    struct kube_client *client = kube_client_new(c->cfg, USER_AGENT);
    if (!client) {
        log_error("worker: out of memory");
        return NULL;
    }
    struct kube_pod_writer kw = {client, c->opts.instance, c->events};
    struct gated_writer g = {c, pod_writer_kube(&kw)};
    struct pod_writer w = controller_gated_writer(&g);
    for (;;) {
        int64_t queued_ms = 0;
        char *key = workqueue_get(c->queue, &queued_ms);
        if (!key)
            break;
        metrics_queue_latency(c->metrics, queued_ms);
        controller_process(c, &w, key);
        workqueue_done(c->queue, key);
        free(key);
    }
    kube_client_free(client);
    return NULL;
}
