/* pods.c - the GPU pods that have not started, from annotations or classified on the spot. */
#include "pods.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "answer.h"
#include "cache/informer.h"
#include "cache/key.h"
#include "classify/classify.h"
#include "table.h"
#include "triage/triage.h"
#include "usage.h"
#include "util/escape.h"
#include "util/result.h"

/* Every pod that has not Succeeded: the rows come from these (Pending and Unknown pods, Failed
 * ones: a pod its kubelet rejected is Failed, and Running ones: a GPU container that cannot
 * start leaves its pod Running, kubernetes/kubernetes: pkg/kubelet/kubelet_pods.go getPhase),
 * and so do the other rejected pods of a rejected pod's controller
 * (classify_input.rejected_siblings). */
#define NOT_SUCCEEDED "fieldSelector=status.phase%21%3DSucceeded"

const char *pod_phase_name(enum pod_phase p)
{
    switch (p) {
    case POD_PHASE_PENDING:
        return "Pending";
    case POD_PHASE_RUNNING:
        return "Running";
    case POD_PHASE_SUCCEEDED:
        return "Succeeded";
    case POD_PHASE_FAILED:
        return "Failed";
    case POD_PHASE_UNKNOWN:
    default:
        return "Unknown";
    }
}

int pods_format_requests(const struct resource_list *l, struct buf *out)
{
    int rc = buf_append(out, "", 0);
    for (size_t i = 0; i < l->n && rc == K_OK; i++)
        rc = buf_printf(out, "%s%s=%" PRId64, i ? "," : "", l->items[i].name, l->items[i].value);
    return rc;
}

int pods_query_init(struct pods_query *q, const struct gpu_set *gpus, const char *ns)
{
    memset(q, 0, sizeof(*q));
    q->ns = ns;
    q->store = store_new(gpus);
    return q->store ? K_OK : K_ENOMEM;
}

/* A GPU pod not running, or a pod with claims (which may ask for GPUs: DRA) not running; one
 * its kubelet rejected; or one bound whose GPU containers have not all started, whatever its
 * phase (store_is_starting_gpu_pod). */
static bool is_candidate(const struct kpod *p)
{
    return ((p->gpu_requests.n > 0 || p->n_claims > 0 || pod_has_ext_requests(p)) &&
            !pod_is_terminal(p) && p->phase != POD_PHASE_RUNNING) ||
           store_is_rejected_gpu_pod(p) || store_is_starting_gpu_pod(p);
}

static int remember(struct pods_query *q, const char *key)
{
    if (q->n_keys == q->cap_keys) {
        size_t cap = q->cap_keys ? q->cap_keys * 2 : 64;
        char **grown = realloc(q->keys, cap * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        q->keys = grown;
        q->cap_keys = cap;
    }
    q->keys[q->n_keys] = strdup(key);
    if (!q->keys[q->n_keys])
        return K_ENOMEM;
    q->n_keys++;
    return K_OK;
}

void pods_query_observe(struct pods_query *q, json_object *obj)
{
    char key[STORE_KEY_MAX];
    unsigned changed = 0;
    int rc = store_pod_apply_json(q->store, obj, 0, key, &changed);
    if (rc) {
        if (rc == K_ENOMEM && !q->error)
            q->error = rc;
        else if (rc != K_ENOMEM)
            q->skipped++;
        return;
    }
    store_read_lock(q->store);
    char ns[META_KEY_MAX], name[META_KEY_MAX];
    const struct kpod *p = split_meta_namespace_key(key, ns, sizeof(ns), name, sizeof(name)) == K_OK
                               ? store_pod_get(q->store, ns, name)
                               : NULL;
    bool take = p && is_candidate(p) && (!q->ns || strcmp(ns, q->ns) == 0);
    bool live = take && !pod_annotation_usable(p);
    store_read_unlock(q->store);
    if (!take)
        return;
    rc = remember(q, key);
    if (rc && !q->error)
        q->error = rc;
    if (rc == K_OK && live)
        q->n_unannotated++;
    /* p is still valid: only this thread writes */
    if (rc == K_OK && live && (p->n_claims > 0 || pod_asks_class_name(p)))
        q->n_claim_pods++;
    else if (rc == K_OK && live && pod_has_ext_requests(p))
        q->n_ext_pods++; /* extended resources a DeviceClass may serve (KEP-5004) */
}

/* Where the query's live classifications read from. */
static struct triage_source query_source(const struct pods_query *q)
{
    return (struct triage_source){.store = q->store,
                                  .dra = q->dra,
                                  .dra_classes = q->dra_classes,
                                  .events = q->events,
                                  .now = (int64_t)time(NULL),
                                  .no_scheduler_grace = q->no_scheduler_grace,
                                  .workloads = q->workloads,
                                  .gangs = q->gangs};
}

void pods_query_set_dra(struct pods_query *q, struct dra_store *dra,
                        const struct gpu_set *dra_classes)
{
    dra_store_free(q->dra);
    q->dra = dra_classes ? dra : NULL;
    q->dra_classes = dra_classes;
    if (!dra_classes)
        dra_store_free(dra);
}

void pods_query_add_node(struct pods_query *q, json_object *obj)
{
    unsigned changed = 0;
    int rc = store_node_apply_json(q->store, obj, 0, NULL, &changed);
    if (rc == K_ENOMEM && !q->error)
        q->error = rc;
}

bool pods_query_needs_live(const struct pods_query *q)
{
    return q->n_unannotated > 0;
}

static int cmp_rows(const void *a, const void *b)
{
    const struct pod_row *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static void row_cleanup(struct pod_row *r)
{
    free(r->ns);
    free(r->name);
    resource_list_cleanup(&r->gpus);
    free(r->cause);
    free(r->detail);
    free(r->node);
    free(r->phase);
    memset(r, 0, sizeof(*r));
}

/*
 * Fill r from p, classifying when the annotation is missing or stale. Read lock held. Returns
 * K_OK, K_ENOTFOUND when the pod is no GPU pod after all (only non-GPU claims: no row), K_ENOMEM.
 */
static int make_row(struct pods_query *q, const struct kpod *p, struct pod_row *r)
{
    memset(r, 0, sizeof(*r));
    r->ns = strdup(p->ns ? p->ns : "");
    r->name = strdup(p->name ? p->name : "");
    r->phase = strdup(pod_phase_name(p->phase));
    r->node = p->node_name ? strdup(p->node_name) : NULL;
    if (!r->ns || !r->name || !r->phase || (p->node_name && !r->node))
        goto nomem;
    /* the GPU column holds what fits (RESOURCE_LIST_MAX names): a pod naming more is shown,
       not an error of the whole listing */
    int grc = K_OK;
    for (size_t i = 0; i < p->gpu_requests.n && grc == K_OK; i++)
        grc = resource_list_add(&r->gpus, p->gpu_requests.items[i].name,
                                p->gpu_requests.items[i].value);
    /* a DeviceClass's implicit name (KEP-5004) is no GPU resource name: its long-lived
       containers' requests stand for it */
    for (size_t i = 0; p->ext && i < p->ext->n_requests && grc == K_OK; i++) {
        const struct pod_ext_request *e = &p->ext->requests[i];
        if (!e->short_lived && resource_list_get(&p->gpu_requests, e->resource) == 0)
            grc = resource_list_add(&r->gpus, e->resource, e->count);
    }
    if (grc != K_OK && grc != K_ETOOBIG)
        goto nomem;
    if (pod_annotation_usable(p)) {
        r->source = POD_ROW_ANNOTATION;
        r->cause = strdup(p->cause);
        r->detail = strdup(p->detail ? p->detail : "");
    } else if (q->no_live) { /* never a word that was not decided */
        r->source = POD_ROW_NONE;
        r->cause = strdup("-");
        r->detail = strdup("no answer from gputri-controller on the pod, and a live "
                           "classification needs read access to nodes");
    } else {
        struct triage_source src = query_source(q);
        struct classify_result res;
        res.verdicts = NULL;
        if (triage_pod(&src, p, &res) != K_OK)
            goto nomem; /* K_ENOMEM, or K_EINVAL for a NULL pod, which cannot happen here */
        if (!triage_is_ours(p, res.cause)) {
            row_cleanup(r);
            return K_ENOTFOUND; /* its claims ask for no GPU */
        }
        r->source = POD_ROW_LIVE;
        r->cause = strdup(cause_word(res.cause));
        struct buf d;
        buf_init(&d, sizeof(res.detail) + 64);
        if (buf_append_str(&d, res.detail) != K_OK ||
            (res.cause == CAUSE_OK && buf_printf(&d, "; phase %s", r->phase) != K_OK)) {
            buf_cleanup(&d);
            goto nomem;
        }
        r->detail = buf_take(&d);
    }
    if (!r->cause || !r->detail)
        goto nomem;
    return K_OK;
nomem:
    row_cleanup(r);
    return K_ENOMEM;
}

int pods_query_rows(struct pods_query *q, struct pod_rows *out)
{
    memset(out, 0, sizeof(*out));
    if (q->error)
        return q->error;
    out->items = calloc(q->n_keys ? q->n_keys : 1, sizeof(*out->items));
    if (!out->items)
        return K_ENOMEM;
    out->cap = q->n_keys;
    int rc = K_OK;
    store_read_lock(q->store);
    for (size_t i = 0; i < q->n_keys && rc == K_OK; i++) {
        char *slash = strchr(q->keys[i], '/');
        *slash = '\0';
        const struct kpod *p = store_pod_get(q->store, q->keys[i], slash + 1);
        *slash = '/';
        if (!p)
            continue;
        rc = make_row(q, p, &out->items[out->n]);
        if (rc == K_OK)
            out->n++;
        else if (rc == K_ENOTFOUND)
            rc = K_OK;
    }
    store_read_unlock(q->store);
    if (rc) {
        pod_rows_cleanup(out);
        return rc;
    }
    qsort(out->items, out->n, sizeof(*out->items), cmp_rows);
    return K_OK;
}

void pods_query_cleanup(struct pods_query *q)
{
    store_free(q->store);
    dra_store_free(q->dra);
    pod_events_free(q->events);
    workload_store_free(q->workloads);
    gang_store_free(q->gangs);
    for (size_t i = 0; i < q->n_keys; i++)
        free(q->keys[i]);
    free(q->keys);
    memset(q, 0, sizeof(*q));
}

void pod_rows_cleanup(struct pod_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        row_cleanup(&rows->items[i]);
    free(rows->items);
    memset(rows, 0, sizeof(*rows));
}

/* ---- I/O ----------------------------------------------------------------------------------- */

static void observe_cb(void *ctx, json_object *obj)
{
    pods_query_observe(ctx, obj);
}

/* The nodes whose pods classifying the candidates without a usable annotation reads. */
static int live_usage_nodes(struct pods_query *q, struct usage_nodes *u)
{
    struct triage_source src = query_source(q);
    int rc = K_OK;
    store_read_lock(q->store);
    for (size_t i = 0; i < q->n_keys && rc == K_OK && !u->all; i++) {
        char *slash = strchr(q->keys[i], '/');
        *slash = '\0';
        const struct kpod *p = store_pod_get(q->store, q->keys[i], slash + 1);
        *slash = '/';
        if (p && !pod_annotation_usable(p))
            rc = usage_nodes_collect(&src, p, u);
    }
    store_read_unlock(q->store);
    return rc;
}

/*
 * The gangs of the candidates classified live (core/triage triage_read_gang): each group once,
 * the pods of each namespace with such a candidate once (the members that run are not among the
 * candidates the query listed).
 */
static int read_gangs(struct kube_client *c, struct pods_query *q, struct kube_error *err)
{
    char **listed = NULL; /* namespaces whose pods were listed */
    size_t n_listed = 0;
    int rc = K_OK;
    for (size_t i = 0; i < q->n_keys && rc == K_OK; i++) {
        char *slash = strchr(q->keys[i], '/');
        *slash = '\0';
        store_read_lock(q->store);
        const struct kpod *p = store_pod_get(q->store, q->keys[i], slash + 1);
        bool want = p && p->gang && !p->node_name && !pod_annotation_usable(p);
        store_read_unlock(q->store); /* p stays valid: only this thread writes */
        bool members = want;
        for (size_t j = 0; want && j < n_listed && members; j++)
            members = strcmp(listed[j], q->keys[i]) != 0;
        if (want && !q->gangs && !(q->gangs = gang_store_new()))
            rc = K_ENOMEM;
        if (rc == K_OK && want && members) {
            char **grown = realloc(listed, (n_listed + 1) * sizeof(*listed));
            if (!grown || !(grown[n_listed] = strdup(q->keys[i]))) {
                rc = K_ENOMEM;
                if (grown)
                    listed = grown;
            } else {
                listed = grown;
                n_listed++;
            }
        }
        if (rc == K_OK && want)
            rc = triage_read_gang(c, q->store, q->gangs, p, members, err);
        *slash = '/';
    }
    for (size_t j = 0; j < n_listed; j++)
        free(listed[j]);
    free(listed);
    return rc;
}

int pods_fetch(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, struct pod_rows *out,
               struct kube_error *err)
{
    memset(out, 0, sizeof(*out));
    char path[512], ns_esc[256];
    if (ns) {
        if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK)
            return K_EINVAL;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?%s", ns_esc, NOT_SUCCEEDED);
    } else {
        snprintf(path, sizeof(path), "/api/v1/pods?%s", NOT_SUCCEEDED);
    }
    struct pods_query q;
    int rc = pods_query_init(&q, gpus, ns);
    if (rc)
        return rc;
    q.no_scheduler_grace = no_scheduler_grace;
    struct informer_handlers ph = {.ctx = &q, .upsert = observe_cb};
    rc = informer_list_once(c, path, 500, &ph, NULL, 0, err);
    if (rc == K_OK && !q.error && pods_query_needs_live(&q)) {
        rc = usage_list_nodes(c, q.store, err);
        if (rc == K_EFORBIDDEN) { /* the `view` ClusterRole: the annotations are the answer */
            out->live_forbidden = q.no_live = true;
            answer_forbidden_resource(err->message, out->forbidden, sizeof(out->forbidden));
            memset(err, 0, sizeof(*err));
            rc = K_OK;
            goto rows;
        }
        if (rc == K_OK && (q.n_claim_pods > 0 || q.n_ext_pods > 0) && dra_classes) {
            struct dra_store *dra = NULL;
            rc = usage_list_dra(c, q.n_claim_pods > 0, &dra, err);
            if (rc == K_OK && dra)
                pods_query_set_dra(&q, dra, dra_classes);
        }
        /* GPU usage: the pods of the nodes the ladder reads (usage.h), of every namespace */
        struct usage_nodes u = {0};
        if (rc == K_OK)
            rc = live_usage_nodes(&q, &u);
        if (rc == K_OK)
            rc = usage_fetch(c, &u, q.store, err);
        usage_nodes_cleanup(&u);
        if (rc == K_OK)
            rc = read_gangs(c, &q, err);
        /* the autoscalers' word: evidence, not a must (a user may not list Events) */
        if (rc == K_OK && (q.events = pod_events_new(0)) != NULL) {
            struct kube_error ev_err = {0};
            if (triage_read_pod_events(c, q.events, ns, NULL, &ev_err) != K_OK) {
                pod_events_free(q.events);
                q.events = NULL;
            }
        }
        /* Kueue's word (queue-waiting): evidence too (Kueue absent, or no leave to list) */
        if (rc == K_OK && (q.workloads = workload_store_new()) != NULL) {
            struct kube_error wl_err = {0};
            if (triage_read_workloads(c, q.workloads, ns, NULL, 0, &wl_err) != K_OK) {
                workload_store_free(q.workloads);
                q.workloads = NULL;
            }
        }
    }
rows:
    if (rc == K_OK) {
        bool lf = out->live_forbidden;
        char forbidden[sizeof(out->forbidden)];
        memcpy(forbidden, out->forbidden, sizeof(forbidden));
        rc = pods_query_rows(&q, out); /* fills `out` afresh */
        out->live_forbidden = lf;
        memcpy(out->forbidden, forbidden, sizeof(forbidden));
    }
    /* owners without pods, refused by a quota: evidence, not a must (a user may not list
       Events) */
    if (rc == K_OK) {
        struct kube_error own_err = {0};
        size_t before = out->n;
        int orc = pods_fetch_owner_rows(c, gpus, dra_classes, ns, out, &own_err);
        if (orc == K_ENOMEM)
            rc = orc;
        else if (out->n > before)
            qsort(out->items, out->n, sizeof(*out->items), cmp_rows);
    }
    if (rc == K_OK && q.skipped) { /* the rows, and the error that says they are not all */
        out->skipped = q.skipped;
        informer_list_skipped(path, q.skipped, err);
    }
    pods_query_cleanup(&q);
    return rc;
}

/* ---- rendering ----------------------------------------------------------------------------- */

static const char *source_word(enum pod_row_source s)
{
    return s == POD_ROW_ANNOTATION ? "annotation"
           : s == POD_ROW_EVENTS   ? "events"
           : s == POD_ROW_NONE     ? "none"
                                   : "live";
}

int pods_render_table(const struct pod_rows *rows, bool wide, struct buf *out)
{
    if (rows->n == 0)
        return K_OK;
    struct table t;
    table_init(&t, wide ? 8 : 6);
    int rc = wide ? table_addf(&t, "NAMESPACE", "POD", "GPU REQUESTS", "PHASE", "NODE", "CAUSE",
                               "SOURCE", "DETAIL")
                  : table_addf(&t, "NAMESPACE", "POD", "GPU REQUESTS", "CAUSE", "SOURCE", "DETAIL");
    struct buf req;
    buf_init(&req, 1u << 16);
    for (size_t i = 0; i < rows->n && rc == K_OK; i++) {
        const struct pod_row *r = &rows->items[i];
        buf_reset(&req);
        rc = pods_format_requests(&r->gpus, &req);
        if (rc)
            break;
        const char *detail = r->detail[0] ? r->detail : "<none>";
        if (wide)
            rc = table_addf(&t, r->ns, r->name, buf_cstr(&req), r->phase,
                            r->node ? r->node : "<none>", r->cause, source_word(r->source), detail);
        else
            rc = table_addf(&t, r->ns, r->name, buf_cstr(&req), r->cause, source_word(r->source),
                            detail);
    }
    if (rc == K_OK)
        rc = table_render(&t, 0, out);
    buf_cleanup(&req);
    table_cleanup(&t);
    return rc;
}

int pods_render_json(const struct pod_rows *rows, struct buf *out)
{
    json_object *list = json_object_new_object();
    json_object *items = json_object_new_array();
    if (!list || !items) {
        json_object_put(list);
        json_object_put(items);
        return K_ENOMEM;
    }
    json_object_object_add(list, "kind", json_object_new_string("GPUPodList"));
    json_object_object_add(list, "items", items);
    for (size_t i = 0; i < rows->n; i++) {
        const struct pod_row *r = &rows->items[i];
        json_object *o = json_object_new_object(), *g = json_object_new_object();
        if (!o || !g) {
            json_object_put(o);
            json_object_put(g);
            json_object_put(list);
            return K_ENOMEM;
        }
        for (size_t j = 0; j < r->gpus.n; j++)
            json_object_object_add(g, r->gpus.items[j].name,
                                   json_object_new_int64(r->gpus.items[j].value));
        json_object_object_add(o, "namespace", json_object_new_string(r->ns));
        json_object_object_add(o, "name", json_object_new_string(r->name));
        json_object_object_add(o, "gpuRequests", g);
        json_object_object_add(o, "phase", json_object_new_string(r->phase));
        json_object_object_add(o, "node", r->node ? json_object_new_string(r->node) : NULL);
        json_object_object_add(o, "cause", json_object_new_string(r->cause));
        json_object_object_add(o, "detail", json_object_new_string(r->detail));
        json_object_object_add(o, "source", json_object_new_string(source_word(r->source)));
        json_object_array_add(items, o);
    }
    const char *text = json_object_to_json_string_ext(
        list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    /* json-c escapes C0 in strings, not DEL, C1 or bytes that are not UTF-8 (util/escape.h) */
    int rc = text ? text_escape_buf(out, text, strlen(text), TEXT_ESCAPE_JSON_TEXT) : K_ENOMEM;
    if (rc == K_OK)
        rc = buf_append(out, "\n", 1);
    json_object_put(list);
    return rc;
}
