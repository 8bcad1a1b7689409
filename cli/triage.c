/* triage.c - one-shot classification of a pod, and the explain report. */
#include "triage.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cache/informer.h"
#include "util/result.h"

static void upsert_pod(void *ctx, json_object *obj)
{
    unsigned changed = 0;
    store_pod_apply_json(ctx, obj, 0, NULL, &changed);
}

static void upsert_node(void *ctx, json_object *obj)
{
    unsigned changed = 0;
    store_node_apply_json(ctx, obj, 0, NULL, &changed);
}

int triage_run(struct kube_client *c, const struct gpu_set *gpus, const char *ns,
               const char *name, struct triage *t, struct kube_error *err)
{
    memset(t, 0, sizeof(*t));
    char path[1024], ns_esc[256], name_esc[512];
    if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) ||
        kube_path_escape(name, name_esc, sizeof(name_esc)))
        return K_EINVAL;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns_esc, name_esc);
    json_object *pod = NULL;
    int rc = kube_get(c, path, &pod, err);
    if (rc)
        return rc;
    t->store = store_new(gpus);
    if (!t->store) {
        json_object_put(pod);
        return K_ENOMEM;
    }
    unsigned changed = 0;
    rc = store_pod_apply_json(t->store, pod, 0, NULL, &changed);
    json_object_put(pod);
    if (rc)
        goto fail;
    t->pod = store_pod_get(t->store, ns, name);
    if (store_is_pending_gpu_pod(t->pod)) {
        struct informer_handlers nh = {.ctx = t->store, .upsert = upsert_node};
        struct informer_handlers ph = {.ctx = t->store, .upsert = upsert_pod};
        rc = informer_list_once(c, "/api/v1/nodes", 500, &nh, NULL, 0, err);
        if (rc)
            goto fail;
        rc = informer_list_once(c,
                                "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2C"
                                "status.phase%21%3DFailed",
                                500, &ph, NULL, 0, err);
        if (rc)
            goto fail;
        t->pod = store_pod_get(t->store, ns, name);
        if (!t->pod) { /* deleted between the GET and the LIST */
            rc = K_ENOTFOUND;
            goto fail;
        }
    }
    size_t n_nodes;
    const struct knode *const *nodes = store_nodes(t->store, &n_nodes);
    t->verdicts = calloc(n_nodes ? n_nodes : 1, sizeof(*t->verdicts));
    if (!t->verdicts) {
        rc = K_ENOMEM;
        goto fail;
    }
    struct classify_input in = {t->pod, nodes, n_nodes, store_node_usage, t->store};
    t->result.verdicts = t->verdicts;
    rc = classify(&in, &t->result);
    if (rc)
        goto fail;
    return K_OK;
fail:
    triage_cleanup(t);
    return rc;
}

static void print_verdict(const struct node_verdict *v, FILE *out)
{
    fprintf(out, "  %-30s %-17s", v->node->name, cause_word(v->step));
    switch (v->step) {
    case CAUSE_TAINT:
        if (v->taint)
            fprintf(out, "untolerated taint %s%s%s:%s", v->taint->key,
                    v->taint->value[0] ? "=" : "", v->taint->value, v->taint->effect);
        else
            fprintf(out, "cordoned (spec.unschedulable)");
        break;
    case CAUSE_NO_GPU_NODE:
        fprintf(out, "%s not in status.capacity", v->resource ? v->resource : "");
        break;
    case CAUSE_ALLOCATABLE_ZERO:
        fprintf(out, "%s capacity %" PRId64 ", allocatable %" PRId64, v->resource, v->capacity,
                v->allocatable);
        break;
    case CAUSE_EXHAUSTED:
    case CAUSE_GPU_FITS: {
        int64_t free_ = v->allocatable - v->allocated;
        fprintf(out, "%s allocatable %" PRId64 ", allocated %" PRId64 ", free %" PRId64
                     ", requested %" PRId64,
                v->resource ? v->resource : "", v->allocatable, v->allocated,
                free_ < 0 ? 0 : free_, v->requested);
        break;
    }
    default:
        break;
    }
    fputc('\n', out);
}

static void print_holder(void *ctx, const struct kpod *p)
{
    FILE *out = ctx;
    fprintf(out, "  %s/%s", p->ns, p->name);
    for (size_t i = 0; i < p->gpu_requests.n; i++)
        fprintf(out, " %s=%" PRId64, p->gpu_requests.items[i].name, p->gpu_requests.items[i].value);
    fputc('\n', out);
}

void triage_print_explain(const struct triage *t, FILE *out)
{
    const struct classify_result *r = &t->result;
    fprintf(out, "%s/%s: %s\n  %s\n", t->pod->ns, t->pod->name, cause_word(r->cause), r->detail);
    if (t->pod->gpu_requests.n) {
        fprintf(out, "requests:");
        for (size_t i = 0; i < t->pod->gpu_requests.n; i++)
            fprintf(out, " %s=%" PRId64, t->pod->gpu_requests.items[i].name,
                    t->pod->gpu_requests.items[i].value);
        fputc('\n', out);
    }
    if (r->cause == CAUSE_NO_REQUEST || r->cause == CAUSE_OK)
        return;
    size_t n_nodes;
    store_nodes(t->store, &n_nodes);
    fprintf(out, "candidate nodes: %zu of %zu match node selection\n", r->n_candidates, n_nodes);
    for (size_t i = 0; i < r->n_verdicts; i++)
        print_verdict(&t->verdicts[i], out);
    if (r->cause == CAUSE_EXHAUSTED && r->closest.node) {
        fprintf(out, "pods holding GPUs on %s:\n", r->closest.node->name);
        store_for_each_gpu_pod_on_node(t->store, r->closest.node->name, print_holder, out);
    }
    if (t->pod->scheduled.status == COND_FALSE && t->pod->scheduled.message)
        fprintf(out, "scheduler: %s: %s\n", t->pod->scheduled.reason ? t->pod->scheduled.reason : "",
                t->pod->scheduled.message);
}

void triage_cleanup(struct triage *t)
{
    store_free(t->store);
    free(t->verdicts);
    memset(t, 0, sizeof(*t));
}
