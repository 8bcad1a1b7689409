/* nodes.c - the GPUs of each node: capacity, use, holders, and what keeps new pods off them. */
#include "nodes.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "classify/line.h"
#include "classify/node_state.h"
#include "table.h"
#include "triage/triage.h"
#include "usage.h"
#include "util/escape.h"
#include "util/result.h"

int nodes_query_init(struct nodes_query *q, const struct gpu_set *gpus, const char *resource)
{
    memset(q, 0, sizeof(*q));
    q->resource = resource && *resource ? resource : NULL;
    q->store = store_new(gpus);
    if (!q->store)
        return K_ENOMEM;
    store_keep_gpu_pods_only(q->store); /* usage and holders are GPU pods; the rest is memory */
    return K_OK;
}

/* A store write's result: K_ENOMEM kept, an object that does not project counted. */
static void note_write(struct nodes_query *q, int rc)
{
    if (rc == K_ENOMEM && !q->error)
        q->error = rc;
    else if (rc && rc != K_ENOMEM)
        q->skipped++;
}

void nodes_query_add_node(struct nodes_query *q, json_object *node)
{
    unsigned changed = 0;
    note_write(q, store_node_apply_json(q->store, node, 0, NULL, &changed));
}

void nodes_query_add_pod(struct nodes_query *q, json_object *pod)
{
    unsigned changed = 0;
    note_write(q, store_pod_apply_json(q->store, pod, 0, NULL, &changed));
}

void nodes_query_cleanup(struct nodes_query *q)
{
    store_free(q->store);
    dra_store_free(q->dra);
    memset(q, 0, sizeof(*q));
}

static void row_cleanup(struct node_row *r)
{
    free(r->node);
    free(r->resource);
    free(r->driver);
    for (size_t i = 0; i < r->n_holders; i++) {
        free(r->holders[i].ns);
        free(r->holders[i].name);
    }
    free(r->holders);
    for (size_t i = 0; i < r->n_why; i++)
        free(r->why[i]);
    memset(r, 0, sizeof(*r));
}

void node_rows_cleanup(struct node_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        row_cleanup(&rows->items[i]);
    free(rows->items);
    free(rows->note);
    memset(rows, 0, sizeof(*rows));
}

/* A new row at the end of `rows` (zeroed), or NULL on ENOMEM. */
static struct node_row *row_new(struct node_rows *rows, const char *node, const char *resource,
                                enum node_row_type type)
{
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? rows->cap * 2 : 64;
        struct node_row *grown = realloc(rows->items, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        rows->items = grown;
        rows->cap = cap;
    }
    struct node_row *r = &rows->items[rows->n];
    memset(r, 0, sizeof(*r));
    r->type = type;
    r->node = strdup(node);
    r->resource = strdup(resource);
    if (!r->node || !r->resource) {
        row_cleanup(r);
        return NULL;
    }
    rows->n++;
    return r;
}

__attribute__((format(printf, 2, 3))) static int row_why(struct node_row *r, const char *fmt, ...)
{
    if (r->n_why == NODES_MAX_WHY)
        return K_OK;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return K_ENOMEM;
    r->why[r->n_why++] = s;
    return K_OK;
}

/*
 * Add `count` to the holder (claim, ns, name) of r, appending it when new; `merge`: look for an
 * equal holder first (class rows: one pod may hold several devices; a pod holds a resource of
 * one node once).
 */
static int row_hold(struct node_row *r, bool claim, const char *ns, const char *name, int64_t count,
                    bool merge)
{
    for (size_t i = 0; merge && i < r->n_holders; i++) {
        struct node_holder *h = &r->holders[i];
        if (h->claim == claim && strcmp(h->ns, ns) == 0 && strcmp(h->name, name) == 0) {
            h->count = int64_add_sat(h->count, count);
            return K_OK;
        }
    }
    if (r->n_holders == NODES_MAX_HOLDERS) {
        r->more_holders++;
        r->pods += !claim;
        return K_OK;
    }
    if ((r->n_holders & (r->n_holders - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to twice */
        size_t cap = r->n_holders ? r->n_holders * 2 : 1;
        struct node_holder *grown = realloc(r->holders, cap * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        r->holders = grown;
    }
    struct node_holder *h = &r->holders[r->n_holders];
    *h = (struct node_holder){
        .ns = strdup(ns), .name = strdup(name), .claim = claim, .count = count};
    if (!h->ns || !h->name) {
        free(h->ns);
        free(h->name);
        return K_ENOMEM;
    }
    r->n_holders++;
    r->pods += !claim;
    return K_OK;
}

/* ---- what keeps new pods off a node ------------------------------------------------------- */

/* The taints the node lifecycle controller (and the cloud node manager) write, by what they
 * say: kubernetes/api core/v1 well_known_taints.go. */
static const struct {
    const char *key, *says;
} known_taints[] = {
    {"node.kubernetes.io/not-ready", "not ready"},
    {"node.kubernetes.io/unreachable", "unreachable (node status unknown)"},
    {"node.kubernetes.io/memory-pressure", "memory pressure"},
    {"node.kubernetes.io/disk-pressure", "disk pressure"},
    {"node.kubernetes.io/pid-pressure", "PID pressure"},
    {"node.kubernetes.io/network-unavailable", "network unavailable"},
    {"node.kubernetes.io/unschedulable", "cordoned"},
    {"node.kubernetes.io/out-of-service", "out of service"},
    {"node.cloudprovider.kubernetes.io/uninitialized", "not initialized by its cloud provider"},
    {"karpenter.sh/disrupted", "being disrupted by Karpenter"},
};

static const char *taint_says(const char *key)
{
    for (size_t i = 0; i < sizeof(known_taints) / sizeof(known_taints[0]); i++)
        if (strcmp(known_taints[i].key, key) == 0)
            return known_taints[i].says;
    return NULL;
}

/* The node's reasons for row r; `own_key`: the resource's own taint key, named with what
 * tolerates it (the pods that ask for the resource, once the ExtendedResourceToleration admission
 * plugin gave them the toleration: not every API server runs it, and triage reads the pod's own
 * tolerations). */
static int node_reasons(const struct knode *n, const char *own_key, struct node_row *r)
{
    int rc = K_OK;
    if (n->unschedulable)
        rc = row_why(r, "cordoned (spec.unschedulable)");
    for (size_t i = 0; i < n->n_taints && rc == K_OK; i++) {
        const struct taint *t = &n->taints[i];
        if (!t->key || !t->effect ||
            (strcmp(t->effect, "NoSchedule") != 0 && strcmp(t->effect, "NoExecute") != 0))
            continue;
        const char *value = t->value && *t->value ? t->value : NULL;
        if (own_key && strcmp(t->key, own_key) == 0) {
            rc = row_why(r,
                         "taint %s%s%s:%s (the resource's own: a pod asking for it needs a "
                         "toleration, which the ExtendedResourceToleration admission plugin adds "
                         "where it runs)",
                         t->key, value ? "=" : "", value ? value : "", t->effect);
            continue;
        }
        if (n->unschedulable && strcmp(t->key, "node.kubernetes.io/unschedulable") == 0)
            continue; /* the cordon's own taint, said above */
        const char *says = taint_says(t->key);
        rc = row_why(r, "%s%staint %s%s%s:%s%s", says ? says : "", says ? " (" : "", t->key,
                     value ? "=" : "", value ? value : "", t->effect, says ? ")" : "");
    }
    if (rc == K_OK && node_autoscaler_joining(n))
        rc = row_why(r, "still joining: an autoscaler is adding it (Karpenter)");
    struct gpu_stack_state st;
    if (rc == K_OK && node_gpu_stack_state(n, &st)) {
        char text[512];
        struct line l = {.buf = text, .cap = sizeof(text)};
        gpu_stack_state_put(&l, n->name, &st);
        line_finish(&l);
        rc = row_why(r, "%s", text);
    }
    return rc;
}

/* ---- extended resources -------------------------------------------------------------------- */

static bool wanted(const struct nodes_query *q, const char *name, bool class_row)
{
    if (!q->resource)
        return true;
    if (strcmp(q->resource, name) == 0)
        return true;
    size_t p = strlen(NODES_CLASS_PREFIX);
    return class_row && strncmp(q->resource, NODES_CLASS_PREFIX, p) == 0 &&
           strcmp(q->resource + p, name) == 0;
}

static int resource_row(struct nodes_query *q, const struct knode *n, const char *res,
                        struct node_rows *rows)
{
    struct node_row *r = row_new(rows, n->name, res, NODE_ROW_RESOURCE);
    if (!r)
        return K_ENOMEM;
    r->capacity = resource_list_get(&n->capacity, res);
    r->allocatable = resource_list_get(&n->allocatable, res);
    r->in_use = store_node_usage(q->store, n->name, res);
    int64_t free_ = int64_sub_sat(r->allocatable, r->in_use);
    r->free = free_ > 0 ? free_ : 0;
    int64_t unhealthy = int64_sub_sat(r->capacity, r->allocatable);
    r->unhealthy = unhealthy > 0 ? unhealthy : 0;
    int rc = K_OK;
    if (r->unhealthy)
        rc = row_why(r, "%" PRId64 " unhealthy (capacity %" PRId64 ", allocatable %" PRId64 ")",
                     r->unhealthy, r->capacity, r->allocatable);
    return rc == K_OK ? node_reasons(n, res, r) : rc;
}

/* Per node, its rows' range in `rows` (rows of one node are contiguous before sorting). */
struct node_span {
    const struct knode *const *nodes; /* sorted by name (store_nodes) */
    size_t n_nodes;
    size_t *first, *count;
    struct node_rows *rows;
    int rc;
};

static int cmp_node_name(const void *key, const void *elem)
{
    const struct knode *n = *(const struct knode *const *)elem;
    return strcmp(key, n->name ? n->name : "");
}

static void hold_pod(void *ctx, const struct kpod *p)
{
    struct node_span *sp = ctx;
    if (sp->rc)
        return;
    const struct knode *const *hit =
        bsearch(p->node_name, sp->nodes, sp->n_nodes, sizeof(*sp->nodes), cmp_node_name);
    if (!hit)
        return; /* a node not selected, or gone */
    size_t i = (size_t)(hit - sp->nodes);
    for (size_t k = 0; k < sp->count[i] && sp->rc == K_OK; k++) {
        struct node_row *r = &sp->rows->items[sp->first[i] + k];
        if (r->type != NODE_ROW_RESOURCE)
            continue;
        int64_t v = resource_list_get(&p->gpu_requests, r->resource);
        if (v > 0)
            sp->rc = row_hold(r, false, p->ns ? p->ns : "", p->name ? p->name : "", v, false);
    }
}

/* ---- DRA device classes -------------------------------------------------------------------- */

#define NODES_TAINTS_NAMED 4 /* tainted devices named per row; the rest counted */

struct class_tally {
    struct nodes_query *q;
    struct node_row *r;
    size_t tainted_named;
    int rc;
};

/* The pods (or the claim) holding one device through claim c. */
static int hold_claim(struct node_row *r, const struct dra_claim *c)
{
    const char *ns = c->ns ? c->ns : "";
    if (c->extended && c->owner_pod_name)
        return row_hold(r, false, ns, c->owner_pod_name, 1, true);
    int rc = K_OK;
    size_t pods = 0;
    for (size_t i = 0; i < c->n_reserved_for && rc == K_OK; i++) {
        const struct dra_consumer *u = &c->reserved_for[i];
        if (!u->resource || strcmp(u->resource, "pods") != 0 || !u->name)
            continue;
        rc = row_hold(r, false, ns, u->name, 1, true);
        pods++;
    }
    if (rc == K_OK && pods == 0)
        rc = row_hold(r, true, ns, c->name ? c->name : "", 1, true);
    return rc;
}

static void tally_device(void *ctx, const struct dra_device_seen *s)
{
    struct class_tally *t = ctx;
    struct node_row *r = t->r;
    if (t->rc || s->match != 1)
        return;
    r->capacity++;
    const struct dra_slice *sl = s->slice;
    const char *dev = s->device->name ? s->device->name : "";
    if (s->taint) {
        r->tainted++;
        if (t->tainted_named++ < NODES_TAINTS_NAMED) {
            const struct dra_taint *tt = s->taint;
            t->rc = row_why(r, "device %s (pool %s): taint %s%s%s:%s (%s %s)", dev,
                            sl->pool ? sl->pool : "", tt->key ? tt->key : "", tt->value ? "=" : "",
                            tt->value ? tt->value : "", dra_taint_effect_word(tt->effect),
                            s->taint_rule ? "DeviceTaintRule" : "ResourceSlice",
                            s->taint_rule ? (s->taint_rule->name ? s->taint_rule->name : "")
                                          : (sl->name ? sl->name : ""));
        }
    }
    if (s->free_) {
        r->free += s->taint == NULL;
        return;
    }
    r->in_use++;
    const struct dra_claim *c = dra_store_device_holder(t->q->dra, sl->driver, sl->pool, dev);
    if (c) {
        t->rc = hold_claim(r, c);
        return;
    }
    const struct dra_claim *shares[8];
    size_t n = dra_store_device_shares(t->q->dra, sl->driver, sl->pool, dev, shares, 8);
    for (size_t i = 0; i < n && i < 8 && t->rc == K_OK; i++)
        t->rc = hold_claim(r, shares[i]);
}

#define NODES_MAX_CLASSES 256

/* The class rows of node n. DRA read lock held. */
static int class_rows(struct nodes_query *q, const struct dra_view *view,
                      const struct dra_class *const *classes, size_t n_classes,
                      const struct knode *n, struct node_rows *rows)
{
    int rc = K_OK;
    for (size_t i = 0; i < n_classes && rc == K_OK; i++) {
        const struct dra_class *cls = classes[i];
        if (!cls->name || !wanted(q, cls->name, true))
            continue;
        struct node_row *r = row_new(rows, n->name, cls->name, NODE_ROW_DEVICE_CLASS);
        if (!r)
            return K_ENOMEM;
        struct class_tally t = {.q = q, .r = r};
        rc = dra_class_devices(view, cls, n, tally_device, &t);
        if (rc == K_OK)
            rc = t.rc;
        if (rc == K_OK && t.tainted_named > NODES_TAINTS_NAMED)
            rc = row_why(r, "%zu more tainted devices", t.tainted_named - NODES_TAINTS_NAMED);
        if (rc == K_OK && r->capacity == 0) { /* no device of the class reaches the node */
            row_cleanup(r);
            rows->n--;
            continue;
        }
        r->allocatable = r->capacity - r->tainted;
        if (rc == K_OK && cls->driver && !(r->driver = strdup(cls->driver)))
            rc = K_ENOMEM;
        if (rc == K_OK)
            rc = node_reasons(n, NULL, r);
    }
    return rc;
}

/* The GPU classes of the DRA store (dra_exact_is_gpu, as the ladder tells GPU claims), at most
 * NODES_MAX_CLASSES. DRA read lock held. */
static size_t gpu_classes(const struct dra_view *view, struct dra_store *dra,
                          const struct dra_class **out)
{
    size_t n = dra_store_classes(dra, out, NODES_MAX_CLASSES);
    if (n > NODES_MAX_CLASSES)
        n = NODES_MAX_CLASSES;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct dra_exact e = {.class_name = out[i]->name};
        if (dra_exact_is_gpu(view, &e, out[i]))
            out[k++] = out[i];
    }
    return k;
}

/* ---- rows ---------------------------------------------------------------------------------- */

static int cmp_holders(const void *a, const void *b)
{
    const struct node_holder *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    if (c == 0)
        c = strcmp(x->name, y->name);
    return c ? c : (int)x->claim - (int)y->claim;
}

static int cmp_rows(const void *a, const void *b)
{
    const struct node_row *x = a, *y = b;
    if (x->free != y->free)
        return x->free > y->free ? -1 : 1;
    int c = strcmp(x->node, y->node);
    if (c)
        return c;
    if (x->type != y->type)
        return x->type == NODE_ROW_RESOURCE ? -1 : 1;
    return strcmp(x->resource, y->resource);
}

int nodes_query_rows(struct nodes_query *q, struct node_rows *out)
{
    memset(out, 0, sizeof(*out));
    if (q->error)
        return q->error;
    int rc = K_OK;
    store_read_lock(q->store);
    size_t n_nodes = 0;
    const struct knode *const *nodes = store_nodes(q->store, &n_nodes);
    struct node_span sp = {.nodes = nodes, .n_nodes = n_nodes, .rows = out};
    sp.first = calloc(n_nodes ? n_nodes : 1, sizeof(*sp.first));
    sp.count = calloc(n_nodes ? n_nodes : 1, sizeof(*sp.count));
    const struct dra_class **classes = q->dra ? calloc(NODES_MAX_CLASSES, sizeof(*classes)) : NULL;
    if (!sp.first || !sp.count || (q->dra && !classes))
        rc = K_ENOMEM;
    struct dra_view view = {0};
    size_t n_classes = 0;
    bool dra_locked = rc == K_OK && q->dra;
    if (dra_locked) {
        dra_store_read_lock(q->dra);
        view = triage_dra_view(q->dra, q->dra_classes);
        n_classes = gpu_classes(&view, q->dra, classes);
    }
    for (size_t i = 0; i < n_nodes && rc == K_OK; i++) {
        const struct knode *n = nodes[i];
        sp.first[i] = out->n;
        /* status.capacity's resources, then any only status.allocatable names */
        for (size_t k = 0; k < n->capacity.n && rc == K_OK; k++)
            if (wanted(q, n->capacity.items[k].name, false))
                rc = resource_row(q, n, n->capacity.items[k].name, out);
        for (size_t k = 0; k < n->allocatable.n && rc == K_OK; k++) {
            const char *res = n->allocatable.items[k].name;
            bool listed = false;
            for (size_t j = 0; j < n->capacity.n && !listed; j++)
                listed = strcmp(n->capacity.items[j].name, res) == 0;
            if (!listed && wanted(q, res, false))
                rc = resource_row(q, n, res, out);
        }
        if (rc == K_OK && n_classes)
            rc = class_rows(q, &view, classes, n_classes, n, out);
        sp.count[i] = out->n - sp.first[i];
    }
    if (dra_locked)
        dra_store_read_unlock(q->dra);
    if (rc == K_OK) {
        store_for_each_bound_gpu_pod(q->store, hold_pod, &sp);
        rc = sp.rc;
    }
    store_read_unlock(q->store);
    free(sp.first);
    free(sp.count);
    free(classes);
    if (rc) {
        node_rows_cleanup(out);
        return rc;
    }
    for (size_t i = 0; i < out->n; i++)
        if (out->items[i].n_holders > 1)
            qsort(out->items[i].holders, out->items[i].n_holders, sizeof(struct node_holder),
                  cmp_holders);
    if (out->n > 1)
        qsort(out->items, out->n, sizeof(*out->items), cmp_rows);
    return K_OK;
}

/* ---- I/O ----------------------------------------------------------------------------------- */

/* The DRA objects for the class rows into q (nothing when resource.k8s.io is not served or no
 * class is a GPU class); a user who may not list them gets a note instead. */
static int read_dra(struct kube_client *c, struct nodes_query *q, const struct gpu_set *dra_classes,
                    struct node_rows *out, struct kube_error *err)
{
    struct dra_store *dra = dra_store_new();
    if (!dra)
        return K_ENOMEM;
    int rc = dra_store_discover(c, dra, err);
    if (rc == K_OK)
        rc = dra_store_list_kind(c, dra, DRA_KIND_CLASS, err);
    bool any = false;
    if (rc == K_OK) {
        const struct dra_class **classes = calloc(NODES_MAX_CLASSES, sizeof(*classes));
        if (!classes) {
            dra_store_free(dra);
            return K_ENOMEM;
        }
        dra_store_read_lock(dra);
        struct dra_view view = triage_dra_view(dra, dra_classes);
        any = gpu_classes(&view, dra, classes) > 0;
        dra_store_read_unlock(dra);
        free(classes);
    }
    static const enum dra_kind kinds[] = {DRA_KIND_SLICE, DRA_KIND_CLAIM, DRA_KIND_TAINT_RULE};
    for (size_t k = 0; rc == K_OK && any && k < sizeof(kinds) / sizeof(kinds[0]); k++)
        rc = dra_store_list_kind(c, dra, kinds[k], err);
    if (rc == K_ENOTFOUND || rc == K_EFORBIDDEN || (rc == K_OK && !any)) {
        if (rc == K_EFORBIDDEN) {
            char msg[sizeof(err->message) * 4];
            text_escape(msg, sizeof(msg), err->message, strlen(err->message), TEXT_ESCAPE_TERMINAL);
            if (asprintf(&out->note, "DRA devices left out: %s", msg) < 0)
                out->note = NULL;
        }
        memset(err, 0, sizeof(*err));
        dra_store_free(dra);
        return K_OK;
    }
    if (rc) {
        dra_store_free(dra);
        return rc;
    }
    q->dra = dra;
    q->dra_classes = dra_classes;
    return K_OK;
}

int nodes_fetch(struct kube_client *c, const struct gpu_set *gpus,
                const struct gpu_set *dra_classes, const char *label_selector, const char *resource,
                struct node_rows *out, struct kube_error *err)
{
    memset(out, 0, sizeof(*out));
    struct nodes_query q;
    int rc = nodes_query_init(&q, gpus, resource);
    if (rc)
        return rc;
    rc = usage_list_nodes_selected(c, q.store, label_selector, err);
    struct usage_nodes u = {0};
    size_t n_nodes = 0;
    if (rc == K_OK) {
        store_read_lock(q.store);
        const struct knode *const *nodes = store_nodes(q.store, &n_nodes);
        /* a few selected nodes: their pods, one LIST each; else every pod in one LIST */
        if (label_selector && *label_selector && n_nodes <= USAGE_SEQUENTIAL_MAX)
            for (size_t i = 0; i < n_nodes && rc == K_OK; i++)
                rc = usage_nodes_add(&u, nodes[i]->name);
        else
            u.all = n_nodes > 0;
        store_read_unlock(q.store);
    }
    if (rc == K_OK)
        rc = usage_fetch(c, &u, q.store, err);
    usage_nodes_cleanup(&u);
    struct node_rows note = {0};
    if (rc == K_OK && dra_classes && n_nodes > 0)
        rc = read_dra(c, &q, dra_classes, &note, err);
    if (rc == K_OK)
        rc = nodes_query_rows(&q, out);
    if (rc == K_OK)
        out->note = note.note;
    else
        free(note.note);
    nodes_query_cleanup(&q);
    return rc;
}

/* ---- rendering ----------------------------------------------------------------------------- */

#define NODES_HOLDERS_CELL_MAX 600 /* bytes of the HOLDERS cell before ",+N more" */

static int holders_cell(const struct node_row *r, struct buf *b)
{
    int rc = buf_append(b, "", 0);
    size_t left = 0;
    for (size_t i = 0; i < r->n_holders && rc == K_OK; i++) {
        const struct node_holder *h = &r->holders[i];
        if (b->len >= NODES_HOLDERS_CELL_MAX) {
            left = r->n_holders - i;
            break;
        }
        rc = buf_printf(b, "%s%s%s/%s=%" PRId64, i ? "," : "", h->claim ? "claim:" : "", h->ns,
                        h->name, h->count);
    }
    left += r->more_holders;
    if (rc == K_OK && left)
        rc = buf_printf(b, ",+%zu more", left);
    if (rc == K_OK && b->len == 0)
        rc = buf_append_str(b, "<none>");
    return rc;
}

static int why_cell(const struct node_row *r, struct buf *b)
{
    int rc = buf_append(b, "", 0);
    for (size_t i = 0; i < r->n_why && rc == K_OK; i++)
        rc = buf_printf(b, "%s%s", i ? "; " : "", r->why[i]);
    if (rc == K_OK && b->len == 0)
        rc = buf_append_str(b, "<none>");
    return rc;
}

int nodes_render_table(const struct node_rows *rows, bool wide, struct buf *out)
{
    if (rows->n == 0)
        return K_OK;
    struct table t;
    table_init(&t, wide ? 11 : 8);
    int rc = wide ? table_addf(&t, "NODE", "RESOURCE", "CAPACITY", "ALLOCATABLE", "IN USE", "FREE",
                               "UNHEALTHY", "TAINTED", "PODS", "HOLDERS", "WHY")
                  : table_addf(&t, "NODE", "RESOURCE", "CAPACITY", "ALLOCATABLE", "IN USE", "FREE",
                               "PODS", "WHY");
    struct buf res, held, why;
    buf_init(&res, 1024);
    buf_init(&held, 1u << 16);
    buf_init(&why, 1u << 16);
    for (size_t i = 0; i < rows->n && rc == K_OK; i++) {
        const struct node_row *r = &rows->items[i];
        buf_reset(&res);
        buf_reset(&held);
        buf_reset(&why);
        rc = buf_printf(&res, "%s%s", r->type == NODE_ROW_DEVICE_CLASS ? NODES_CLASS_PREFIX : "",
                        r->resource);
        if (rc == K_OK)
            rc = holders_cell(r, &held);
        if (rc == K_OK)
            rc = why_cell(r, &why);
        if (rc)
            break;
        char cap[24], alloc[24], use[24], fr[24], unh[24], tnt[24], pods[24];
        snprintf(cap, sizeof(cap), "%" PRId64, r->capacity);
        snprintf(alloc, sizeof(alloc), "%" PRId64, r->allocatable);
        snprintf(use, sizeof(use), "%" PRId64, r->in_use);
        snprintf(fr, sizeof(fr), "%" PRId64, r->free);
        snprintf(unh, sizeof(unh), "%" PRId64, r->unhealthy);
        snprintf(tnt, sizeof(tnt), "%" PRId64, r->tainted);
        snprintf(pods, sizeof(pods), "%zu", r->pods);
        if (wide)
            rc = table_addf(&t, r->node, buf_cstr(&res), cap, alloc, use, fr, unh, tnt, pods,
                            buf_cstr(&held), buf_cstr(&why));
        else
            rc = table_addf(&t, r->node, buf_cstr(&res), cap, alloc, use, fr, pods, buf_cstr(&why));
    }
    if (rc == K_OK)
        rc = table_render(&t, 0, out);
    buf_cleanup(&res);
    buf_cleanup(&held);
    buf_cleanup(&why);
    table_cleanup(&t);
    return rc;
}

/* json-c's adds ignore a NULL value; a failed allocation is found by checking each object. */
static json_object *row_json(const struct node_row *r)
{
    json_object *o = json_object_new_object(), *holders = json_object_new_array(),
                *why = json_object_new_array();
    json_object *meta = json_object_new_object();
    if (!o || !holders || !why || !meta) {
        json_object_put(meta);
        goto nomem;
    }
    json_object_object_add(o, "apiVersion", json_object_new_string(NODES_API_VERSION));
    json_object_object_add(o, "kind", json_object_new_string(NODES_ITEM_KIND));
    json_object_object_add(meta, "name", json_object_new_string(r->node));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(o, "node", json_object_new_string(r->node));
    json_object_object_add(o, "resource", json_object_new_string(r->resource));
    json_object_object_add(
        o, "type",
        json_object_new_string(r->type == NODE_ROW_DEVICE_CLASS ? "deviceClass" : "resource"));
    json_object_object_add(o, "driver", r->driver ? json_object_new_string(r->driver) : NULL);
    json_object_object_add(o, "capacity", json_object_new_int64(r->capacity));
    json_object_object_add(o, "allocatable", json_object_new_int64(r->allocatable));
    json_object_object_add(o, "inUse", json_object_new_int64(r->in_use));
    json_object_object_add(o, "free", json_object_new_int64(r->free));
    json_object_object_add(o, "unhealthy", json_object_new_int64(r->unhealthy));
    json_object_object_add(o, "tainted", json_object_new_int64(r->tainted));
    json_object_object_add(o, "pods", json_object_new_int64((int64_t)r->pods));
    for (size_t i = 0; i < r->n_holders; i++) {
        const struct node_holder *h = &r->holders[i];
        json_object *ho = json_object_new_object();
        if (!ho)
            goto nomem;
        json_object_object_add(ho, "namespace", json_object_new_string(h->ns));
        json_object_object_add(ho, "name", json_object_new_string(h->name));
        json_object_object_add(ho, "kind",
                               json_object_new_string(h->claim ? "ResourceClaim" : "Pod"));
        json_object_object_add(ho, "count", json_object_new_int64(h->count));
        json_object_array_add(holders, ho);
    }
    json_object_object_add(o, "holders", holders);
    holders = NULL;
    json_object_object_add(o, "moreHolders", json_object_new_int64((int64_t)r->more_holders));
    for (size_t i = 0; i < r->n_why; i++)
        json_object_array_add(why, json_object_new_string(r->why[i]));
    json_object_object_add(o, "why", why);
    return o;
nomem:
    json_object_put(o);
    json_object_put(holders);
    json_object_put(why);
    return NULL;
}

json_object *nodes_rows_json(const struct node_rows *rows)
{
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    if (!list || !items) {
        json_object_put(list);
        json_object_put(items);
        return NULL;
    }
    json_object_object_add(list, "apiVersion", json_object_new_string(NODES_API_VERSION));
    json_object_object_add(list, "kind", json_object_new_string(NODES_LIST_KIND));
    json_object_object_add(list, "metadata", json_object_new_object());
    json_object_object_add(list, "items", items);
    for (size_t i = 0; i < rows->n; i++) {
        json_object *o = row_json(&rows->items[i]);
        if (!o) {
            json_object_put(list);
            return NULL;
        }
        json_object_array_add(items, o);
    }
    return list;
}
