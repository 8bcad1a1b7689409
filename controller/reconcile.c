/* reconcile.c - from a pod's verdict to its annotation and Event. */
#include "reconcile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "kube/event_recorder.h"
#include "kube/event.h"
#include "triage/triage.h"
#include "util/result.h"

/* Seconds a new pod's per-node word still waits for an autoscaler's (reconcile_env), or 0. */
static int64_t autoscaler_wait(const struct reconcile_env *env, const struct kpod *pod,
                               const struct classify_result *r)
{
    if (env->autoscaler_grace <= 0 || env->autoscaler_seen <= 0 || env->now <= 0 ||
        pod->created <= 0 || env->now - env->autoscaler_seen > RECONCILE_AUTOSCALED_FOR)
        return 0;
    if (r->cause != r->ladder_cause || !cause_is_blocking(r->cause) ||
        cause_rank(r->cause) < cause_rank(CAUSE_LABEL_MISMATCH))
        return 0; /* an autoscaler's word, or one no autoscaler speaks to */
    int64_t left = pod->created + env->autoscaler_grace - env->now;
    return left > 0 ? left : 0;
}

/*
 * Words whose detail moves while the word holds, and has no clock or counter in it, so it is
 * written again when it differs from the pod's gputri/detail annotation: binding names what the
 * scheduler waits for (nominated, then the claim allocated with binding conditions pending, then
 * met; classify/binding.h); gang-waiting counts the gang's members and queue-waiting quotes the
 * queue's message as they change (classify/gang.h, classify/queue.h); the after-placement words
 * quote what the kubelet says, which comes in pieces: the container's waiting message first, the
 * registry's reason or the runtime's error when its Event arrives (classify/placement.h).
 */
static bool detail_moved(const struct kpod *pod, const struct classify_result *r)
{
    switch (r->cause) {
    case CAUSE_BINDING:
    case CAUSE_GANG_WAITING:
    case CAUSE_QUEUE_WAITING:
    case CAUSE_RUNTIME_MISSING:
    case CAUSE_IMAGE_PULL_FAILED:
    case CAUSE_CONTAINER_START_FAILED:
        return !pod->detail || strcmp(pod->detail, r->detail) != 0;
    default:
        return false;
    }
}

/* Plan the pod again at `when` (seconds since the epoch) if that is after `now` (known) and
 * sooner than planned already. */
static void recheck_at(struct reconcile_plan *out, int64_t when, int64_t now)
{
    if (now <= 0 || when <= now)
        return;
    int64_t ms = (when - now) * 1000;
    if (out->recheck_after_ms <= 0 || ms < out->recheck_after_ms)
        out->recheck_after_ms = ms;
}

int reconcile_plan(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                   const struct reconcile_env *env, const char *key, const char *written,
                   const char *written_uid, struct reconcile_plan *out)
{
    static const struct reconcile_env no_env;
    if (!env)
        env = &no_env;
    memset(out, 0, sizeof(*out));
    out->from = -1;
    if (split_meta_namespace_key(key, out->ns, sizeof(out->ns), out->name, sizeof(out->name)) !=
            K_OK ||
        !out->ns[0])
        return K_EINVAL; /* a pod's key has a namespace */
    store_read_lock(s);
    const struct kpod *pod = store_pod_get(s, out->ns, out->name);
    if (!pod) {
        out->kind = RECONCILE_GONE;
        goto out;
    }
    if (written && written_uid && (!pod->uid || strcmp(pod->uid, written_uid) != 0))
        written = NULL; /* written for an earlier pod of the same name */
    const char *current = written ? written : pod->cause;
    out->from = current ? cause_from_word(current) : -1;
    snprintf(out->uid, sizeof(out->uid), "%s", pod->uid ? pod->uid : "");
    if (pod->deleting)
        goto out; /* being deleted: whatever held it back, no word and no Event any more */
    bool rejected = store_is_rejected_gpu_pod(pod);
    if (rejected && current && strcmp(current, cause_word(CAUSE_NODE_REJECTED)) == 0)
        goto out; /* a Failed pod is written once */
    bool starting = store_is_starting_gpu_pod(pod);
    if (store_is_pending_gpu_pod(pod) || rejected || starting) {
        struct triage_source src = {.store = s,
                                    .dra = dra,
                                    .dra_classes = dra_classes,
                                    .events = env->events,
                                    .provision_window = env->provision_window,
                                    .now = env->now,
                                    .no_scheduler_grace = env->no_scheduler_grace,
                                    .workloads = env->workloads,
                                    .gangs = env->gangs};
        struct classify_result r;
        r.verdicts = NULL; /* no per-node report needed */
        if (triage_pod(&src, pod, &r) != K_OK)
            goto out; /* out of memory: not classified; the next change or resync retries */
        out->classified = 1;
        out->verdict = r.ladder_cause;
        out->verdict_autoscaler = r.ladder_cause != r.cause;
        if (r.cause != CAUSE_NO_SCHEDULER)
            out->recheck_after_ms =
                pod_no_scheduler_pending(pod, env->now, env->no_scheduler_grace) * 1000;
        if (r.autoscaler_until > 0)
            recheck_at(out, r.autoscaler_until + 1, env->now); /* the evidence goes stale */
        if (r.binding_until > 0)
            recheck_at(out, r.binding_until, env->now); /* the binding timeout passes */
        if (!triage_is_ours(pod, r.cause))
            goto out; /* pending only for its claims, and none asks for a GPU */
        if (r.cause == CAUSE_OK && !current)
            goto out; /* bound and starting, never blocked: nothing to say */
        if (r.cause == CAUSE_GPU_FITS && pod->scheduled.status != COND_FALSE)
            goto out; /* not blocked yet: the scheduler has not tried, or is binding it */
        if (r.cause == CAUSE_BINDING && !r.binding_waits && !current)
            goto out; /* binding with nothing to wait for takes moments: nothing to say yet */
        int64_t wait = autoscaler_wait(env, pod, &r);
        if (wait > 0) {
            if (out->recheck_after_ms <= 0 || wait * 1000 < out->recheck_after_ms)
                out->recheck_after_ms = wait * 1000;
            goto out;
        }
        if (current && strcmp(current, cause_word(r.cause)) == 0 && !detail_moved(pod, &r))
            goto out;
        out->kind = RECONCILE_WRITE;
        out->cause = r.cause;
        snprintf(out->detail, sizeof(out->detail), "%s", r.detail);
        out->event_type = cause_is_blocking(r.cause) ? "Warning" : "Normal";
        out->event_reason = cause_event_reason(r.cause);
    } else if (pod->node_name && !pod_is_terminal(pod) && current &&
               strcmp(current, cause_word(CAUSE_OK)) != 0) {
        out->kind = RECONCILE_WRITE;
        out->cause = CAUSE_OK;
        snprintf(out->detail, sizeof(out->detail), "bound to node %s", pod->node_name);
        out->event_type = "Normal";
        out->event_reason = cause_event_reason(CAUSE_OK);
    }
out:
    store_read_unlock(s);
    return K_OK;
}

int reconcile_apply(const struct reconcile_plan *plan, const struct pod_writer *w,
                    struct kube_error *err, bool *annotated)
{
    if (annotated)
        *annotated = false;
    if (plan->kind != RECONCILE_WRITE)
        return K_OK;
    int rc = w->annotate(w->ctx, plan->ns, plan->name, cause_word(plan->cause), plan->detail, err);
    if (rc)
        return rc;
    if (annotated)
        *annotated = true;
    rc = w->event(w->ctx, plan, err);
    return reconcile_event_hopeless(rc, err) ? K_OK : rc; /* the pod was annotated */
}

bool reconcile_event_hopeless(int rc, const struct kube_error *err)
{
    /* kubernetes/kubernetes: plugin/pkg/admission/namespace/lifecycle/admission.go refuses new
     * objects in a terminating namespace with 403 "... because it is being terminated" */
    return rc == K_ENOTFOUND ||
           (rc == K_EFORBIDDEN && err && strstr(err->message, "being terminated") != NULL);
}

static int kube_annotate(void *ctx, const char *ns, const char *name, const char *cause,
                         const char *detail, struct kube_error *err)
{
    struct kube_pod_writer *kw = ctx;
    char path[KUBE_POD_PATH_MAX + 64];
    if (kube_pod_path(ns, name, path, KUBE_POD_PATH_MAX))
        return K_ETOOBIG;
    /* named, so `gputri triage` can tell when the annotations were written (cli/answer.h,
     * metadata.managedFields) */
    strcat(path, "?fieldManager=" POD_ANNOTATION_MANAGER);
    json_object *body = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, POD_ANNOTATION_CAUSE, json_object_new_string(cause));
    json_object_object_add(ann, POD_ANNOTATION_DETAIL, json_object_new_string(detail));
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(body, "metadata", meta);
    int rc = kube_patch_merge(kw->client, path, body, NULL, err);
    json_object_put(body);
    return rc;
}

static int kube_event(void *ctx, const struct reconcile_plan *plan, struct kube_error *err)
{
    struct kube_pod_writer *kw = ctx;
    struct kube_event_spec e = {
        .ns = plan->ns,
        .kind = "Pod",
        .api_version = "v1",
        .name = plan->name,
        .uid = plan->uid[0] ? plan->uid : NULL,
        .type = plan->event_type,
        .reason = plan->event_reason,
        .message = plan->detail,
        .component = "gputri",
        .instance = kw->instance,
    };
    return event_recorder_record(kw->events, kw->client, &e, NULL, err);
}

struct pod_writer pod_writer_kube(struct kube_pod_writer *kw)
{
    struct pod_writer w = {kw, kube_annotate, kube_event};
    return w;
}
