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
#include "util/clock.h"
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

static int remember(struct pods_query *q, const char *key, json_object *obj)
{
    if (q->n_keys == q->cap_keys) {
        size_t cap = q->cap_keys ? q->cap_keys * 2 : 64;
        char **grown = realloc(q->keys, cap * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        q->keys = grown;
        json_object **lg = realloc(q->labels, cap * sizeof(*lg));
        if (!lg)
            return K_ENOMEM;
        q->labels = lg;
        q->cap_keys = cap;
    }
    q->keys[q->n_keys] = strdup(key);
    if (!q->keys[q->n_keys])
        return K_ENOMEM;
    json_object *meta, *labels = NULL;
    if (json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "labels", &labels) &&
        json_object_is_type(labels, json_type_object) && json_object_object_length(labels) > 0)
        q->labels[q->n_keys] = json_object_get(labels);
    else
        q->labels[q->n_keys] = NULL;
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
    rc = remember(q, key, obj);
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
    json_object_put(r->labels);
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
    r->since = p->created;
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
        if (rc == K_OK && q->labels)
            out->items[out->n].labels = json_object_get(q->labels[i]);
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
    for (size_t i = 0; i < q->n_keys; i++) {
        free(q->keys[i]);
        json_object_put(q->labels[i]);
    }
    free(q->keys);
    free(q->labels);
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

int pods_path(const char *ns, const struct pods_selectors *sel, char *path, size_t len)
{
    char ns_esc[256], fs[2048], ls[2048];
    fs[0] = ls[0] = '\0';
    if (ns && kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK)
        return K_EINVAL;
    if (sel && sel->field_selector && *sel->field_selector) {
        memcpy(fs, "%2C", 4);
        if (kube_path_escape(sel->field_selector, fs + 3, sizeof(fs) - 3) != K_OK)
            return K_ETOOBIG;
    }
    if (sel && sel->label_selector && *sel->label_selector) {
        memcpy(ls, "&labelSelector=", 16);
        if (kube_path_escape(sel->label_selector, ls + 15, sizeof(ls) - 15) != K_OK)
            return K_ETOOBIG;
    }
    int n = snprintf(path, len, "%s%s%s?%s%s%s", ns ? "/api/v1/namespaces/" : "/api/v1/pods",
                     ns ? ns_esc : "", ns ? "/pods" : "", NOT_SUCCEEDED, fs, ls);
    return n < 0 || (size_t)n >= len ? K_ETOOBIG : K_OK;
}

int pods_fetch(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, struct pod_rows *out,
               struct kube_error *err)
{
    return pods_fetch_sel(c, gpus, dra_classes, no_scheduler_grace, ns, NULL, out, err);
}

int pods_fetch_sel(struct kube_client *c, const struct gpu_set *gpus,
                   const struct gpu_set *dra_classes, int64_t no_scheduler_grace, const char *ns,
                   struct pods_selectors *sel, struct pod_rows *out, struct kube_error *err)
{
    memset(out, 0, sizeof(*out));
    char path[4608];
    int rc = pods_path(ns, sel, path, sizeof(path));
    if (rc)
        return rc;
    bool owner_rows =
        !sel || (!sel->no_owner_rows && !(sel->label_selector && *sel->label_selector) &&
                 !(sel->field_selector && *sel->field_selector));
    struct pods_query q;
    rc = pods_query_init(&q, gpus, ns);
    if (rc)
        return rc;
    q.no_scheduler_grace = no_scheduler_grace;
    struct informer_handlers ph = {.ctx = &q, .upsert = observe_cb};
    rc = informer_list_once(c, path, 500, &ph, sel ? sel->resource_version : NULL,
                            sel ? sizeof(sel->resource_version) : 0, err);
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
    if (rc == K_OK && owner_rows) {
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

/* ---- the list -------------------------------------------------------------------------- */

static const char *source_word(enum pod_row_source s)
{
    return s == POD_ROW_ANNOTATION ? "annotation"
           : s == POD_ROW_EVENTS   ? "events"
           : s == POD_ROW_NONE     ? "none"
                                   : "live";
}

static void add_str(json_object *o, const char *k, const char *v)
{
    if (v)
        json_object_object_add(o, k, json_object_new_string(v));
}

json_object *pods_item(const struct pod_row *r)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *st = json_object_new_object(), *g = json_object_new_object();
    if (!o || !meta || !st || !g) {
        json_object_put(o);
        json_object_put(meta);
        json_object_put(st);
        json_object_put(g);
        return NULL;
    }
    char when[CLOCK_RFC3339_MAX] = "";
    if (r->since > 0)
        clock_format_rfc3339(r->since * 1000, false, when, sizeof(when));
    const char *name = r->name, *slash = strchr(r->name, '/');
    char kind[64] = "";
    if (r->source == POD_ROW_EVENTS && slash) { /* "ReplicaSet/x": the owner's kind and name */
        snprintf(kind, sizeof(kind), "%.*s", (int)(slash - r->name), r->name);
        name = slash + 1;
    }
    add_str(o, "apiVersion", PODS_API_VERSION);
    add_str(o, "kind", "GPUPod");
    json_object_object_add(o, "metadata", meta);
    add_str(meta, "name", name);
    add_str(meta, "namespace", r->ns);
    if (r->source != POD_ROW_EVENTS && when[0])
        add_str(meta, "creationTimestamp", when);
    if (r->labels)
        json_object_object_add(meta, "labels", json_object_get(r->labels));
    json_object_object_add(o, "status", st);
    if (kind[0])
        add_str(st, "ownerKind", kind);
    add_str(st, "phase", r->phase);
    add_str(st, "nodeName", r->node);
    for (size_t j = 0; j < r->gpus.n; j++)
        json_object_object_add(g, r->gpus.items[j].name,
                               json_object_new_int64(r->gpus.items[j].value));
    json_object_object_add(st, "gpuRequests", g);
    add_str(st, "cause", r->cause);
    if (r->detail && *r->detail)
        add_str(st, "detail", r->detail);
    add_str(st, "source", source_word(r->source));
    if (when[0])
        add_str(st, "blockedSince", when);
    return o;
}

int pods_list(const struct pod_rows *rows, json_object **out)
{
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    if (!list || !items) {
        json_object_put(list);
        json_object_put(items);
        return K_ENOMEM;
    }
    json_object_object_add(list, "apiVersion", json_object_new_string(PODS_API_VERSION));
    json_object_object_add(list, "kind", json_object_new_string("GPUPodList"));
    json_object_object_add(list, "metadata", json_object_new_object());
    json_object_object_add(list, "items", items);
    for (size_t i = 0; i < rows->n; i++) {
        json_object *o = pods_item(&rows->items[i]);
        if (!o || json_object_array_add(items, o) != 0) {
            json_object_put(o);
            json_object_put(list);
            return K_ENOMEM;
        }
    }
    *out = list;
    return K_OK;
}

/* NAME: metadata.name, "Kind/name" for an owner without pods */
static int name_cell(json_object *item, struct buf *out)
{
    json_object *st, *kind, *meta, *name;
    const char *n = json_object_object_get_ex(item, "metadata", &meta) &&
                            json_object_object_get_ex(meta, "name", &name)
                        ? json_object_get_string(name)
                        : "";
    if (json_object_object_get_ex(item, "status", &st) &&
        json_object_object_get_ex(st, "ownerKind", &kind))
        return buf_printf(out, "%s/%s", json_object_get_string(kind), n);
    return buf_append_str(out, n);
}

/* GPU: "nvidia.com/gpu=2", entries joined by ',' */
static int gpu_cell(json_object *item, struct buf *out)
{
    json_object *st, *g;
    int rc = buf_append(out, "", 0);
    size_t i = 0;
    if (json_object_object_get_ex(item, "status", &st) &&
        json_object_object_get_ex(st, "gpuRequests", &g) &&
        json_object_is_type(g, json_type_object)) {
        json_object_object_foreach(g, k, v)
        {
            if (rc == K_OK)
                rc = buf_printf(out, "%s%s=%" PRId64, i++ ? "," : "", k, json_object_get_int64(v));
        }
    }
    return rc == K_OK && i == 0 ? buf_append_str(out, "<none>") : rc;
}

static const char *pods_resource(json_object *item)
{
    json_object *st, *kind;
    if (!json_object_object_get_ex(item, "status", &st) ||
        !json_object_object_get_ex(st, "ownerKind", &kind))
        return "pod";
    const char *k = json_object_get_string(kind);
    return strcmp(k, "ReplicaSet") == 0    ? "replicaset.apps"
           : strcmp(k, "StatefulSet") == 0 ? "statefulset.apps"
           : strcmp(k, "Job") == 0         ? "job.batch"
                                           : "pod";
}

static const struct printer_column pods_columns[] = {
    {"NAMESPACE", ".metadata.namespace", PRINTER_CELL_TEXT, PRINTER_COL_NAMESPACE, NULL},
    {"NAME", NULL, PRINTER_CELL_TEXT, 0, name_cell},
    {"GPU", NULL, PRINTER_CELL_TEXT, 0, gpu_cell},
    {"CAUSE", ".status.cause", PRINTER_CELL_TEXT, 0, NULL},
    {"AGE", ".status.blockedSince", PRINTER_CELL_AGE, 0, NULL},
    {"PHASE", ".status.phase", PRINTER_CELL_TEXT, PRINTER_COL_WIDE, NULL},
    {"NODE", ".status.nodeName", PRINTER_CELL_TEXT, PRINTER_COL_WIDE, NULL},
    {"SOURCE", ".status.source", PRINTER_CELL_TEXT, PRINTER_COL_WIDE, NULL},
    {"DETAIL", ".status.detail", PRINTER_CELL_TEXT, PRINTER_COL_WIDE, NULL},
};

const struct printer_table pods_table = {
    pods_columns, sizeof(pods_columns) / sizeof(pods_columns[0]), pods_resource};

/* ---- watch --------------------------------------------------------------------------------- */

struct tracked {
    char *key;   /* "ns/name" */
    char *cause; /* the cause last printed */
};

struct watch_state {
    struct kube_client *c; /* for the reads an event needs (the watch's own client streams) */
    const struct gpu_set *gpus, *dra_classes;
    int64_t grace;
    const char *ns;
    const struct pods_selectors *sel;
    pods_row_fn fn;
    void *ctx;
    struct tracked *t;
    size_t n, cap;
    char rv[128];
    int rc;
    struct kube_error *err;
};

static struct tracked *find_tracked(struct watch_state *w, const char *key)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->t[i].key, key) == 0)
            return &w->t[i];
    return NULL;
}

static void untrack(struct watch_state *w, struct tracked *t)
{
    free(t->key);
    free(t->cause);
    *t = w->t[--w->n];
}

/* Remember (or update) that `key` was printed with `cause`; past PODS_WATCH_MAX_TRACKED pods new
 * ones are printed but not remembered. */
static int track(struct watch_state *w, const char *key, const char *cause)
{
    struct tracked *t = find_tracked(w, key);
    char *c = strdup(cause);
    if (!c)
        return K_ENOMEM;
    if (t) {
        free(t->cause);
        t->cause = c;
        return K_OK;
    }
    if (w->n == PODS_WATCH_MAX_TRACKED) {
        free(c);
        return K_OK;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        struct tracked *grown = realloc(w->t, cap * sizeof(*grown));
        if (!grown) {
            free(c);
            return K_ENOMEM;
        }
        w->t = grown;
        w->cap = cap;
    }
    if (!(w->t[w->n].key = strdup(key))) {
        free(c);
        return K_ENOMEM;
    }
    w->t[w->n++].cause = c;
    return K_OK;
}

/* A row for a pod that left the set (started, or deleted): its last cause is now `cause`. */
static int emit_gone(struct watch_state *w, const char *ns, const char *name, const char *cause,
                     const char *phase, const char *detail)
{
    struct pod_row r = {0};
    r.ns = (char *)ns;
    r.name = (char *)name;
    r.cause = (char *)cause;
    r.phase = (char *)phase;
    r.detail = (char *)detail;
    r.source = POD_ROW_ANNOTATION;
    return w->fn(w->ctx, &r);
}

/* The row of one pod now, as the listing gives it (one LIST of that pod by name). */
static int pod_row_now(struct watch_state *w, const char *ns, const char *name,
                       struct pod_rows *rows)
{
    char fs[600];
    snprintf(fs, sizeof(fs), "metadata.name=%s", name);
    struct pods_selectors one = {.field_selector = fs, .no_owner_rows = true};
    return pods_fetch_sel(w->c, w->gpus, w->dra_classes, w->grace, ns, &one, rows, w->err);
}

static int on_pod_event(void *ctx, enum kube_event_type type, json_object *obj)
{
    struct watch_state *w = ctx;
    if (type == KUBE_EVENT_ERROR)
        return 0;
    json_object *meta = NULL, *v;
    if (!json_object_object_get_ex(obj, "metadata", &meta) || !meta)
        return 0;
    if (json_object_object_get_ex(meta, "resourceVersion", &v) && json_object_get_string(v))
        snprintf(w->rv, sizeof(w->rv), "%s", json_object_get_string(v));
    if (type == KUBE_EVENT_BOOKMARK)
        return 0;
    const char *ns =
        json_object_object_get_ex(meta, "namespace", &v) ? json_object_get_string(v) : NULL;
    const char *name =
        json_object_object_get_ex(meta, "name", &v) ? json_object_get_string(v) : NULL;
    if (!ns || !name)
        return 0;
    char key[STORE_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    struct tracked *t = find_tracked(w, key);
    if (type == KUBE_EVENT_DELETED) {
        if (t) {
            w->rc = emit_gone(w, ns, name, t->cause, "Gone",
                              "deleted, or no longer selected (Succeeded, or the selectors)");
            untrack(w, t);
        }
        return w->rc;
    }
    /* a candidate still? (no I/O: the event's object alone) */
    struct pods_query q;
    if ((w->rc = pods_query_init(&q, w->gpus, w->ns)) != K_OK)
        return w->rc;
    pods_query_observe(&q, obj);
    bool candidate = q.n_keys > 0;
    char cause[64] = "ok", phase[32] = "Unknown";
    store_read_lock(q.store);
    const struct kpod *p = store_pod_get(q.store, ns, name);
    if (p && p->cause && *p->cause)
        snprintf(cause, sizeof(cause), "%s", p->cause);
    if (p)
        snprintf(phase, sizeof(phase), "%s", pod_phase_name(p->phase));
    store_read_unlock(q.store);
    pods_query_cleanup(&q);
    if (!candidate) {
        if (t) { /* started, or no longer a GPU pod */
            char detail[96];
            snprintf(detail, sizeof(detail), "no longer waiting: phase %s", phase);
            w->rc = emit_gone(w, ns, name, cause, phase, detail);
            untrack(w, t);
        }
        return w->rc;
    }
    struct pod_rows rows;
    w->rc = pod_row_now(w, ns, name, &rows);
    /* no row (deleted meanwhile: its DELETED event follows; or claims that ask for no GPU): it
       stays remembered, so the DELETED event still prints its last row */
    for (size_t i = 0; i < rows.n && w->rc == K_OK; i++) {
        struct pod_row *r = &rows.items[i];
        if (t && strcmp(t->cause, r->cause) == 0)
            continue; /* no change of cause: no row */
        w->rc = w->fn(w->ctx, r);
        if (w->rc == K_OK)
            w->rc = track(w, key, r->cause);
    }
    pod_rows_cleanup(&rows);
    return w->rc;
}

int pods_watch(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, const struct pods_selectors *sel,
               const struct pod_rows *initial, pods_row_fn fn, void *ctx, const atomic_int *cancel,
               struct kube_error *err)
{
    char path[4608];
    int rc = pods_path(ns, sel, path, sizeof(path));
    if (rc)
        return rc;
    struct watch_state w = {.gpus = gpus,
                            .dra_classes = dra_classes,
                            .grace = no_scheduler_grace,
                            .ns = ns,
                            .sel = sel,
                            .fn = fn,
                            .ctx = ctx,
                            .err = err};
    snprintf(w.rv, sizeof(w.rv), "%s", sel ? sel->resource_version : "");
    w.c = kube_client_clone(c);
    if (!w.c)
        return K_ENOMEM;
    kube_client_set_cancel(w.c, cancel);
    for (size_t i = 0; i < initial->n && rc == K_OK; i++) {
        char key[STORE_KEY_MAX];
        snprintf(key, sizeof(key), "%s/%s", initial->items[i].ns, initial->items[i].name);
        if (initial->items[i].source != POD_ROW_EVENTS)
            rc = track(&w, key, initial->items[i].cause);
    }
    while (rc == K_OK && !(cancel && atomic_load(cancel))) {
        w.rc = K_OK;
        rc = kube_watch(c, path, w.rv, PODS_WATCH_TIMEOUT, on_pod_event, &w, err);
        if (w.rc)
            rc = w.rc;
        if (rc == K_EGONE) { /* the version is gone: list again, print what changed */
            struct pods_selectors again = sel ? *sel : (struct pods_selectors){0};
            again.no_owner_rows = true;
            struct pod_rows rows;
            rc = pods_fetch_sel(c, gpus, dra_classes, no_scheduler_grace, ns, &again, &rows, err);
            for (size_t i = 0; i < rows.n && rc == K_OK; i++) {
                char key[STORE_KEY_MAX];
                snprintf(key, sizeof(key), "%s/%s", rows.items[i].ns, rows.items[i].name);
                struct tracked *t = find_tracked(&w, key);
                if (t && strcmp(t->cause, rows.items[i].cause) == 0)
                    continue;
                rc = fn(ctx, &rows.items[i]);
                if (rc == K_OK)
                    rc = track(&w, key, rows.items[i].cause);
            }
            if (rc == K_OK)
                snprintf(w.rv, sizeof(w.rv), "%s", again.resource_version);
            pod_rows_cleanup(&rows);
        }
    }
    if (rc == K_ECANCELED && cancel && atomic_load(cancel))
        rc = K_OK; /* interrupted: a clean end */
    for (size_t i = 0; i < w.n; i++) {
        free(w.t[i].key);
        free(w.t[i].cause);
    }
    free(w.t);
    kube_client_free(w.c);
    return rc;
}
