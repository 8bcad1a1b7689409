/* triage.c - one-shot classification of a pod, and the explain report. */
#include "triage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/informer.h"
#include "classify/dra_share.h"
#include "classify/match.h"
#include "pods.h"
#include "table.h"
#include "triage/triage.h"
#include "usage.h"
#include "util/result.h"

static int from_stores(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                       int64_t no_scheduler_grace, struct pod_events *events,
                       struct workload_store *workloads, struct gang_store *gangs, const char *ns,
                       const char *name, struct triage *t);

static void free_usage(struct usage_nodes *u)
{
    if (u)
        usage_nodes_cleanup(u);
    free(u);
}

bool triage_usage_read(const struct triage *t, const char *node)
{
    if (!t->usage_read)
        return true;
    for (size_t i = 0; i < t->usage_read->n; i++)
        if (strcmp(t->usage_read->names[i], node) == 0)
            return true;
    return false;
}

int triage_run(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, const char *name, struct triage *t,
               struct kube_error *err)
{
    memset(t, 0, sizeof(*t));
    struct usage_nodes *u = NULL; /* the nodes whose pods are read, kept for explain */
    char path[KUBE_POD_PATH_MAX];
    if (kube_pod_path(ns, name, path, sizeof(path)))
        return K_EINVAL;
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
    if (rc && rc != K_ENOMEM) { /* no verdict from a pod that could not be read */
        err->code = rc = K_EPARSE;
        snprintf(err->message, sizeof(err->message),
                 "GET %.400s: the pod could not be read (malformed, or past a bound)", path);
    }
    if (rc)
        goto fail;
    struct dra_store *dra = NULL;
    const struct kpod *p = store_pod_get(t->store, ns, name);
    /* also when bound: whether it is a GPU pod at all; extended resources a DeviceClass may
       serve (KEP-5004) need the classes too */
    if (p && (p->n_claims > 0 || pod_has_ext_requests(p)) && dra_classes) {
        rc = usage_list_dra(c, p->n_claims > 0 || pod_asks_class_name(p), &dra, err);
        if (rc)
            goto fail_dra;
    }
    if (store_is_pending_gpu_pod(store_pod_get(t->store, ns, name))) {
        rc = usage_list_nodes(c, t->store, err);
        if (rc)
            goto fail_dra;
        /* only the pods of the nodes whose usage the ladder reads (usage.h) */
        u = calloc(1, sizeof(*u));
        if (!u) {
            rc = K_ENOMEM;
            goto fail_dra;
        }
        struct triage_source src = {.store = t->store,
                                    .dra = dra,
                                    .dra_classes = dra_classes,
                                    .now = (int64_t)time(NULL),
                                    .no_scheduler_grace = no_scheduler_grace};
        store_read_lock(t->store);
        rc = usage_nodes_collect(&src, store_pod_get(t->store, ns, name), u);
        store_read_unlock(t->store);
        if (rc == K_OK)
            rc = usage_fetch(c, u, t->store, err);
        if (rc)
            goto fail_dra;
    }
    /* bound, GPU containers not started: its node's labels (the driver version) */
    bool starting = store_is_starting_gpu_pod(store_pod_get(t->store, ns, name));
    if (starting) {
        rc = usage_list_nodes(c, t->store, err);
        if (rc)
            goto fail_dra;
    }
    struct pod_events *events = NULL;
    if (starting || store_is_pending_gpu_pod(store_pod_get(t->store, ns, name))) {
        /* evidence, not a must: a user who may not list Events still gets the nodes' word (the
           autoscalers' for a pending pod, the kubelet's for a starting one) */
        const struct kpod *pending = store_pod_get(t->store, ns, name);
        struct kube_error ev_err = {0};
        events = pending->uid ? pod_events_new(1) : NULL;
        if (events && triage_read_pod_events(c, events, ns, pending->uid, &ev_err) != K_OK) {
            pod_events_free(events);
            events = NULL;
        }
    }
    struct workload_store *workloads = NULL;
    const struct kpod *waiting = store_pod_get(t->store, ns, name);
    if (store_is_pending_gpu_pod(waiting) && waiting->uid) {
        /* evidence, not a must: without Kueue, or leave to list Workloads, the other words */
        const char *uids[] = {waiting->uid, waiting->owner_uid};
        struct kube_error wl_err = {0};
        workloads = workload_store_new();
        if (workloads && triage_read_workloads(c, workloads, ns, uids, 2, &wl_err) != K_OK) {
            workload_store_free(workloads);
            workloads = NULL;
        }
    }
    /* the pod's gang: its group, the group's Events, the namespace's pods (its members) */
    struct gang_store *gangs = NULL;
    if (store_is_pending_gpu_pod(store_pod_get(t->store, ns, name)) &&
        store_pod_get(t->store, ns, name)->gang) {
        gangs = gang_store_new();
        rc = gangs ? triage_read_gang(c, t->store, gangs, store_pod_get(t->store, ns, name), true,
                                      err)
                   : K_ENOMEM;
        if (rc) {
            gang_store_free(gangs);
            workload_store_free(workloads);
            pod_events_free(events);
            goto fail_dra;
        }
    }
    struct store *s = t->store;
    t->store = NULL;
    rc =
        from_stores(s, dra, dra_classes, no_scheduler_grace, events, workloads, gangs, ns, name, t);
    if (rc == K_OK && u && !u->all) {
        t->usage_read = u;
        u = NULL;
    }
    free_usage(u);
    return rc;
fail_dra:
    free_usage(u);
    dra_store_free(dra);
fail:
    triage_cleanup(t);
    t->pod_read = true; /* the error came after the GET of the pod */
    return rc;
}

int triage_from_store(struct store *s, const char *ns, const char *name, struct triage *t)
{
    return triage_from_stores(s, NULL, NULL, ns, name, t);
}

int triage_from_stores(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                       const char *ns, const char *name, struct triage *t)
{
    return triage_from_stores_grace(s, dra, dra_classes, 0, NULL, NULL, ns, name, t);
}

int triage_from_stores_grace(struct store *s, struct dra_store *dra,
                             const struct gpu_set *dra_classes, int64_t no_scheduler_grace,
                             struct pod_events *events, struct workload_store *workloads,
                             const char *ns, const char *name, struct triage *t)
{
    return from_stores(s, dra, dra_classes, no_scheduler_grace, events, workloads, NULL, ns, name,
                       t);
}

/* triage_from_stores_grace() with the pod's gang (owned by t from here on; NULL: none). */
static int from_stores(struct store *s, struct dra_store *dra, const struct gpu_set *dra_classes,
                       int64_t no_scheduler_grace, struct pod_events *events,
                       struct workload_store *workloads, struct gang_store *gangs, const char *ns,
                       const char *name, struct triage *t)
{
    memset(t, 0, sizeof(*t));
    t->store = s;
    t->events = events;
    t->workloads = workloads;
    t->gangs = gangs;
    if (dra && !dra_classes) { /* no GPU classes: no DRA */
        dra_store_free(dra);
        dra = NULL;
    }
    t->dra = dra;
    t->dra_classes = dra_classes;
    int rc;
    t->pod = store_pod_get(t->store, ns, name);
    if (!t->pod) { /* deleted between the GET and the LIST */
        rc = K_ENOTFOUND;
        goto fail;
    }
    size_t n_nodes = store_node_count(t->store);
    t->verdicts = calloc(n_nodes ? n_nodes : 1, sizeof(*t->verdicts));
    if (!t->verdicts) {
        rc = K_ENOMEM;
        goto fail;
    }
    struct triage_source src = {.store = t->store,
                                .dra = dra,
                                .dra_classes = dra_classes,
                                .events = events,
                                .now = (int64_t)time(NULL),
                                .no_scheduler_grace = no_scheduler_grace,
                                .workloads = workloads,
                                .gangs = gangs};
    t->result.verdicts = t->verdicts;
    store_read_lock(t->store); /* no writer here; the contract of triage_pod */
    rc = triage_pod(&src, t->pod, &t->result);
    store_read_unlock(t->store);
    if (rc)
        goto fail;
    return K_OK;
fail:
    triage_cleanup(t);
    return rc;
}

/* ---- explain ------------------------------------------------------------------------------ */

#define EXPLAIN_HOLDER_NODES 3        /* exhausted nodes whose GPU holders are listed */
#define DRA_MAX_DEVICE_RULES_SHOWN 16 /* DeviceTaintRules listed per device */
/* a GPU requests cell: RESOURCE_LIST_MAX names of at most 317 bytes, each "=<int64>," */
#define EXPLAIN_REQUESTS_MAX 32768

/* Closest first by the ladder's ranking; among equally close nodes more free GPUs first, then
 * by node name, for a stable order. */
static int cmp_verdicts(const void *a, const void *b)
{
    int c = node_verdict_cmp(a, b);
    if (c)
        return c;
    const struct node_verdict *x = a, *y = b;
    int64_t gx = node_verdict_free(x), gy = node_verdict_free(y);
    if (gx != gy)
        return gx > gy ? -1 : 1;
    return strcmp(x->node->name ? x->node->name : "", y->node->name ? y->node->name : "");
}

static void why(const struct node_verdict *v, char *out, size_t len)
{
    const char *res = v->resource ? v->resource : "";
    switch (v->step) {
    case CAUSE_TAINT:
        if (v->taint)
            snprintf(out, len, "untolerated taint %s%s%s:%s", v->taint->key,
                     v->taint->value && v->taint->value[0] ? "=" : "",
                     v->taint->value ? v->taint->value : "", v->taint->effect);
        else
            snprintf(out, len, "cordoned (spec.unschedulable)");
        break;
    case CAUSE_NO_GPU_NODE:
        snprintf(out, len, "%s not in status.capacity", res);
        break;
    case CAUSE_ALLOCATABLE_ZERO:
        snprintf(out, len, "capacity %" PRId64 " but allocatable 0", v->capacity);
        break;
    case CAUSE_EXHAUSTED:
        snprintf(out, len, "free %" PRId64 " < request %" PRId64, node_verdict_free(v),
                 v->requested);
        break;
    case CAUSE_DRA_NO_DRIVER:
        snprintf(out, len, "no device of driver %s reaches the node",
                 v->dra_driver ? v->dra_driver : "?");
        break;
    case CAUSE_DRA_NO_MATCH:
        snprintf(out, len, "none of %zu %s devices matches request %s", v->dra_devices,
                 v->dra_driver ? v->dra_driver : "?", v->dra_request ? v->dra_request : "?");
        break;
    case CAUSE_DRA_TAINTED:
        snprintf(out, len, "request %s: %zu matching %s devices carry an untolerated taint",
                 v->dra_request ? v->dra_request : "?", v->dra_tainted,
                 v->dra_driver ? v->dra_driver : "?");
        break;
    case CAUSE_DRA_EXHAUSTED:
        if (v->dra_wanted > 0)
            snprintf(out, len, "request %s: free matching %zu < %" PRId64,
                     v->dra_request ? v->dra_request : "?", v->dra_free, v->dra_wanted);
        else
            snprintf(out, len, "request %s (all devices): %zu of %zu matching in use",
                     v->dra_request ? v->dra_request : "?", v->dra_matching - v->dra_free,
                     v->dra_matching);
        break;
    case CAUSE_GPU_FITS:
        if (v->requested == 0 && v->dra_driver)
            snprintf(out, len, "fits: request %s has %zu free matching %s devices",
                     v->dra_request ? v->dra_request : "?", v->dra_free, v->dra_driver);
        else
            snprintf(out, len, "fits: free %" PRId64 " >= request %" PRId64, node_verdict_free(v),
                     v->requested);
        break;
    default:
        out[0] = '\0';
    }
}

struct holders {
    struct table *t;
    const char *node;
    const struct kpod **pods;
    size_t n, cap;
    int rc;
};

static void collect_holder(void *ctx, const struct kpod *p)
{
    struct holders *h = ctx;
    if (h->rc)
        return;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        const struct kpod **grown = realloc(h->pods, cap * sizeof(*grown));
        if (!grown) {
            h->rc = K_ENOMEM;
            return;
        }
        h->pods = grown;
        h->cap = cap;
    }
    h->pods[h->n++] = p;
}

static int cmp_holders(const void *a, const void *b)
{
    const struct kpod *x = *(const struct kpod *const *)a, *y = *(const struct kpod *const *)b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

/* ---- explain: DRA devices ----------------------------------------------------------------- */

#define EXPLAIN_DRA_NODES 8      /* candidate nodes whose DRA pools are listed */
#define EXPLAIN_DRA_HELD_MAX 600 /* bytes of the HELD BY cell */

/* Whether slice `sl` reaches `node` (GatherPools: nodeName, allNodes, nodeSelector). */
static bool slice_reaches(const struct dra_slice *sl, const struct knode *node)
{
    if (sl->per_device_nodes)
        return false;
    if (sl->node_name)
        return node->name && strcmp(sl->node_name, node->name) == 0;
    return sl->all_nodes || (sl->nodes.present && node_affinity_matches(&sl->nodes, node));
}

static void append_claim(struct buf *held, const struct dra_claim *c);

/* "device: ns/name (pods a, b)" of the holder of one device, appended to `held`. */
static void append_holder(struct buf *held, const char *device, const struct dra_claim *c)
{
    if (held->len >= EXPLAIN_DRA_HELD_MAX) {
        if (held->len && held->data[held->len - 1] != '.')
            buf_append_str(held, "; ...");
        return;
    }
    buf_printf(held, "%s%s: ", held->len ? "; " : "", device);
    append_claim(held, c);
}

/* "ns/name (pod a, b)" of claim c, appended to b; the special claim of a pod's extended
 * resources names that pod (KEP-5004). */
static void append_claim(struct buf *held, const struct dra_claim *c)
{
    buf_printf(held, "%s/%s", c->ns ? c->ns : "", c->name ? c->name : "");
    if (c->extended && c->owner_pod_name) {
        buf_printf(held, " (extended resources of pod %s)", c->owner_pod_name);
        return;
    }
    size_t pods = 0;
    for (size_t i = 0; i < c->n_reserved_for; i++)
        if (c->reserved_for[i].resource && strcmp(c->reserved_for[i].resource, "pods") == 0)
            buf_printf(held, "%s%s", pods++ ? ", " : " (pod ",
                       c->reserved_for[i].name ? c->reserved_for[i].name : "?");
    if (pods)
        buf_append_str(held, ")");
}

/* The devices of `pool` that match the deciding alternative, as dra_pool_counts() gave them;
 * "-" when no alternative decides or the pool was not counted. */
static void pool_matching(const struct dra_pool_count *counts, size_t n, const char *pool,
                          bool counted, char *out, size_t len)
{
    snprintf(out, len, counted ? "0" : "-");
    for (size_t i = 0; counted && i < n; i++)
        if (strcmp(counts[i].pool, pool) == 0)
            snprintf(out, len, "%zu", counts[i].matching);
}

/* One row per taint on a device of `sl` (the device's own, then DeviceTaintRules'), and
 * whether it keeps the deciding request off the device (model/dra.h dra_taint_blocks). */
static int explain_taints(const struct triage *t, const struct node_verdict *v,
                          const struct dra_slice *sl, struct table *taints)
{
    int rc = K_OK;
    for (size_t d = 0; d < sl->n_devices && rc == K_OK; d++) {
        const struct dra_device *dev = &sl->devices[d];
        const struct dra_taint_rule *rules[DRA_MAX_DEVICE_RULES_SHOWN];
        size_t nr = dra_store_device_taint_rules(t->dra, sl->driver, sl->pool, dev->name, rules,
                                                 DRA_MAX_DEVICE_RULES_SHOWN);
        if (nr > DRA_MAX_DEVICE_RULES_SHOWN)
            nr = DRA_MAX_DEVICE_RULES_SHOWN;
        for (size_t i = 0; i < dev->n_taints + nr && rc == K_OK; i++) {
            const struct dra_taint *tt =
                i < dev->n_taints ? &dev->taints[i] : &rules[i - dev->n_taints]->taint;
            char taint[640], from[320];
            snprintf(taint, sizeof(taint), "%s%s%s:%s", tt->key ? tt->key : "",
                     tt->value ? "=" : "", tt->value ? tt->value : "",
                     dra_taint_effect_word(tt->effect));
            if (i < dev->n_taints)
                snprintf(from, sizeof(from), "ResourceSlice %s", sl->name ? sl->name : "");
            else
                snprintf(from, sizeof(from), "DeviceTaintRule %s",
                         rules[i - dev->n_taints]->name ? rules[i - dev->n_taints]->name : "");
            const char *blocks = "-";
            if (v->dra_exact)
                blocks =
                    dra_taint_blocks(tt, v->dra_exact->tolerations, v->dra_exact->n_tolerations)
                        ? "yes"
                        : "no";
            rc = table_addf(taints, v->node->name, sl->pool, dev->name, taint, from, blocks);
        }
    }
    return rc;
}

/* One row per pool of `driver` reaching the verdict's node: devices, those matching the
 * deciding request, allocated, free, holders. */
static int explain_pools(const struct triage *t, const struct node_verdict *v,
                         const struct dra_slice **slices, struct dra_pool_count *counts,
                         struct table *pools, struct table *taints)
{
    size_t n_counts = 0;
    bool counted = false;
    /* a request the scheduler builds for an extended resource served by DRA: ExactCount of
       the serving class (classify.h node_verdict.dra_resource) */
    struct dra_exact ext = {.class_name = v->dra_cls ? v->dra_cls->name : NULL,
                            .mode = DRA_MODE_EXACT_COUNT,
                            .count = v->dra_wanted};
    const struct dra_exact *exact = v->dra_exact ? v->dra_exact : v->dra_resource ? &ext : NULL;
    if (exact && v->dra_cls) {
        struct dra_view view = triage_dra_view(t->dra, t->dra_classes);
        if (dra_pool_counts(&view, exact, v->dra_cls, v->node, counts, DRA_MAX_NODE_SLICES,
                            &n_counts) != K_OK)
            return K_ENOMEM;
        counted = true;
    }
    size_t n =
        dra_store_node_slices(t->dra, v->node->name, v->dra_driver, slices, DRA_MAX_NODE_SLICES);
    if (n > DRA_MAX_NODE_SLICES)
        n = DRA_MAX_NODE_SLICES;
    int rc = K_OK, rows = 0;
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        const struct dra_slice *sl = slices[i];
        if (!slice_reaches(sl, v->node))
            continue;
        /* the pool's first slice of its highest generation stands for the pool */
        bool first = true;
        for (size_t j = 0; j < n && first; j++) {
            const struct dra_slice *o = slices[j];
            if (j == i || !slice_reaches(o, v->node) || strcmp(o->pool, sl->pool) != 0)
                continue;
            if (o->generation > sl->generation || (o->generation == sl->generation && j < i))
                first = false;
        }
        if (!first)
            continue;
        size_t devices = 0, allocated = 0, present = 0;
        struct buf held;
        buf_init(&held, EXPLAIN_DRA_HELD_MAX + 512);
        for (size_t j = 0; j < n; j++) {
            const struct dra_slice *o = slices[j];
            if (!slice_reaches(o, v->node) || strcmp(o->pool, sl->pool) != 0 ||
                o->generation != sl->generation)
                continue;
            present++;
            int trc = explain_taints(t, v, o, taints);
            if (trc != K_OK)
                return trc;
            for (size_t d = 0; d < o->n_devices; d++) {
                devices++;
                const struct dra_claim *c =
                    dra_store_device_holder(t->dra, o->driver, o->pool, o->devices[d].name);
                if (c) {
                    allocated++;
                    append_holder(&held, o->devices[d].name, c);
                }
            }
        }
        char pool[320], dev[24], match[24], al[24], fr[24];
        snprintf(pool, sizeof(pool), "%s%s", sl->pool,
                 sl->slice_count > (int64_t)present ? " (incomplete)" : "");
        snprintf(dev, sizeof(dev), "%zu", devices);
        pool_matching(counts, n_counts, sl->pool, counted, match, sizeof(match));
        snprintf(al, sizeof(al), "%zu", allocated);
        snprintf(fr, sizeof(fr), "%zu", devices - allocated);
        rc = table_addf(pools, v->node->name, sl->driver, pool, dev, match, al, fr,
                        held.len ? buf_cstr(&held) : "-");
        buf_cleanup(&held);
        rows++;
    }
    if (rc == K_OK && rows == 0)
        rc = table_addf(pools, v->node->name, v->dra_driver, "<none>", "0", "0", "0", "0", "-");
    return rc;
}

/* "set: memory 5Gi, multiprocessors 14" of what device d consumes ("-" when nothing). */
static void device_consumes(const struct dra_device *d, struct buf *b)
{
    for (size_t i = 0; i < d->n_consumes; i++) {
        const struct dra_counter_use *u = &d->consumes[i];
        buf_printf(b, "%s%s:", i ? "; " : "", u->counter_set ? u->counter_set : "?");
        for (size_t j = 0; j < u->n_counters; j++)
            buf_printf(b, "%s %s %s", j ? "," : "", u->counters[j].name ? u->counters[j].name : "?",
                       u->counters[j].value ? u->counters[j].value : "?");
    }
    if (b->len == 0)
        buf_append_str(b, "-");
}

/* The capacities of d; for a device that allows multiple allocations what its shares use. */
static void device_capacity(const struct dra_slice *sl, const struct dra_device *d,
                            const struct dra_claim *const *shares, size_t n_shares, struct buf *b)
{
    for (size_t k = 0; k < d->n_caps; k++) {
        const struct dra_capacity *c = &d->caps[k];
        const char *name = strrchr(c->name, '/');
        name = name ? name + 1 : c->name;
        int64_t used = 0, v;
        bool known = true;
        for (size_t j = 0; d->allow_multiple && j < n_shares; j++) {
            known =
                known && dra_share_consumed(shares[j], sl->driver, sl->pool, d->name, c->name, &v);
            used += known ? v : 0;
        }
        char u[32];
        if (d->allow_multiple)
            buf_printf(b, "%s%s %s of %s used", k ? ", " : "", name,
                       known ? dra_milli_str(used, u, sizeof(u)) : "?", c->value ? c->value : "?");
        else
            buf_printf(b, "%s%s %s", k ? ", " : "", name, c->value ? c->value : "?");
    }
    if (b->len == 0)
        buf_append_str(b, "-");
}

/*
 * Rows of the devices of the node's pools that draw on shared counters or allow multiple
 * allocations (devs: NODE POOL DEVICE CONSUMES CAPACITY STATE), and the counters of those pools
 * as the ladder counts them (ctrs: NODE POOL COUNTER-SET COUNTER TOTAL LEFT HELD BY).
 */
static int explain_shares(const struct triage *t, const struct node_verdict *v,
                          const struct dra_slice **slices, struct dra_counters *ctr,
                          struct table *devs, struct table *ctrs)
{
    struct dra_view view = triage_dra_view(t->dra, t->dra_classes);
    int rc = dra_node_counters(&view, v->node, v->dra_driver, ctr);
    char a[32], b[32];
    for (size_t i = 0; rc == K_OK && i < ctr->n; i++) {
        const struct dra_counter_left *e = &ctr->e[i];
        struct buf held;
        buf_init(&held, EXPLAIN_DRA_HELD_MAX + 512);
        for (size_t h = 0; h < e->n_holders && held.len < EXPLAIN_DRA_HELD_MAX; h++) {
            if (h)
                buf_append_str(&held, "; ");
            append_claim(&held, e->holders[h]);
        }
        rc = table_addf(ctrs, v->node->name, e->pool, e->set, e->counter,
                        e->unknown ? "?" : dra_milli_str(e->total, a, sizeof(a)),
                        e->unknown ? "?" : dra_milli_str(e->left < 0 ? 0 : e->left, b, sizeof(b)),
                        held.len ? buf_cstr(&held) : "-");
        buf_cleanup(&held);
    }
    size_t n =
        dra_store_node_slices(t->dra, v->node->name, v->dra_driver, slices, DRA_MAX_NODE_SLICES);
    if (n > DRA_MAX_NODE_SLICES)
        n = DRA_MAX_NODE_SLICES;
    static const struct dra_exact whole; /* a request asking no capacity */
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        const struct dra_slice *sl = slices[i];
        if (!slice_reaches(sl, v->node))
            continue;
        bool newest = true;
        for (size_t j = 0; j < n && newest; j++)
            newest =
                !(slice_reaches(slices[j], v->node) && strcmp(slices[j]->pool, sl->pool) == 0 &&
                  strcmp(slices[j]->driver, sl->driver) == 0 &&
                  slices[j]->generation > sl->generation);
        for (size_t k = 0; newest && k < sl->n_devices && rc == K_OK; k++) {
            const struct dra_device *d = &sl->devices[k];
            if (d->n_consumes == 0 && !d->allow_multiple)
                continue;
            const struct dra_claim *shares[DRA_MAX_SHARES];
            size_t n_sh = dra_store_device_shares(t->dra, sl->driver, sl->pool, d->name, shares,
                                                  DRA_MAX_SHARES);
            const struct dra_claim *holder =
                dra_store_device_holder(t->dra, sl->driver, sl->pool, d->name);
            struct buf cons, cap, state;
            buf_init(&cons, 512);
            buf_init(&cap, 512);
            buf_init(&state, EXPLAIN_DRA_HELD_MAX + 512);
            device_consumes(d, &cons);
            device_capacity(sl, d, shares, n_sh < DRA_MAX_SHARES ? n_sh : DRA_MAX_SHARES, &cap);
            struct dra_fit_why why;
            if (holder) {
                buf_append_str(&state, "allocated to ");
                append_claim(&state, holder);
            } else if (d->allow_multiple && n_sh > 0) {
                buf_printf(&state, "shared by %zu claim%s", n_sh, n_sh == 1 ? "" : "s");
            } else if (d->n_consumes > 0 &&
                       dra_share_fit(ctr, sl, d, &whole, NULL, 0, &why) == DRA_FIT_HELD &&
                       why.counter) {
                buf_printf(
                    &state, "blocked: %s has %s of %s left, needs %s", why.counter->set,
                    dra_milli_str(why.counter->left < 0 ? 0 : why.counter->left, a, sizeof(a)),
                    why.counter->counter, dra_milli_str(why.need, b, sizeof(b)));
            } else {
                buf_append_str(&state, "free");
            }
            rc = table_addf(devs, v->node->name, sl->pool, d->name, buf_cstr(&cons), buf_cstr(&cap),
                            buf_cstr(&state));
            buf_cleanup(&cons);
            buf_cleanup(&cap);
            buf_cleanup(&state);
        }
    }
    return rc;
}

/*
 * For a pod with claims: per candidate node (closest first, at most EXPLAIN_DRA_NODES), the
 * request that decides there and its devices, matching and free counts; then the driver's
 * pools on those nodes with their devices, allocated, free, and who holds them.
 */
static int explain_dra(const struct triage *t, const struct node_verdict *sorted, size_t n,
                       FILE *out)
{
    size_t with = 0;
    for (size_t i = 0; i < n; i++)
        with += sorted[i].dra_driver != NULL;
    if (!t->dra || with == 0)
        return K_OK;
    const struct dra_slice **slices = calloc(DRA_MAX_NODE_SLICES, sizeof(*slices));
    struct dra_pool_count *counts = calloc(DRA_MAX_NODE_SLICES, sizeof(*counts));
    if (!slices || !counts) {
        free(slices);
        free(counts);
        return K_ENOMEM;
    }
    struct dra_counters *ctr = malloc(sizeof(*ctr));
    if (!ctr) {
        free(slices);
        free(counts);
        return K_ENOMEM;
    }
    struct table req, pools, devs, ctrs, taints;
    table_init(&req, 7);
    table_init(&pools, 8);
    table_init(&devs, 6);
    table_init(&ctrs, 7);
    table_init(&taints, 6);
    int rc = table_addf(&req, "NODE", "REQUEST", "CLASS", "DRIVER", "DEVICES", "MATCHING", "FREE");
    if (rc == K_OK)
        rc = table_addf(&pools, "NODE", "DRIVER", "POOL", "DEVICES", "MATCHING", "ALLOCATED",
                        "FREE", "HELD BY (CLAIM, RESERVED FOR)");
    if (rc == K_OK)
        rc = table_addf(&devs, "NODE", "POOL", "DEVICE", "CONSUMES COUNTERS", "CAPACITY", "STATE");
    if (rc == K_OK)
        rc = table_addf(&ctrs, "NODE", "POOL", "COUNTER SET", "COUNTER", "TOTAL", "LEFT",
                        "HELD BY (CLAIM, RESERVED FOR)");
    if (rc == K_OK)
        rc = table_addf(&taints, "NODE", "POOL", "DEVICE", "TAINT", "FROM", "BLOCKS REQUEST");
    dra_store_read_lock(t->dra);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < EXPLAIN_DRA_NODES && rc == K_OK; i++) {
        const struct node_verdict *v = &sorted[i];
        if (!v->dra_driver)
            continue;
        shown++;
        char dev[24], match[24], fr[24];
        snprintf(dev, sizeof(dev), "%zu", v->dra_devices);
        snprintf(match, sizeof(match), "%zu", v->dra_matching);
        snprintf(fr, sizeof(fr), "%zu", v->dra_free);
        rc = table_addf(&req, v->node->name, v->dra_request ? v->dra_request : "-",
                        v->dra_class ? v->dra_class : "-", v->dra_driver, dev, match, fr);
        if (rc == K_OK)
            rc = explain_pools(t, v, slices, counts, &pools, &taints);
        if (rc == K_OK)
            rc = explain_shares(t, v, slices, ctr, &devs, &ctrs);
    }
    dra_store_read_unlock(t->dra);
    if (rc == K_OK) {
        fprintf(out,
                "\nDRA: the request that decides on each candidate node (devices of its driver "
                "there,\nthose matching the class and request selectors, and of those the free "
                "ones):\n");
        rc = table_print(&req, 2, out);
    }
    if (rc == K_OK) {
        fprintf(out, "\nDRA pools of the driver on those nodes (MATCHING: devices that satisfy "
                     "the deciding\nrequest's class and selectors):\n");
        rc = table_print(&pools, 2, out);
    }
    if (rc == K_OK && ctrs.nrows > 1) {
        fprintf(out, "\nDRA shared counters of those pools (LEFT: after every allocated device "
                     "that draws on them;\na whole GPU and its partitions draw on one set):\n");
        rc = table_print(&ctrs, 2, out);
    }
    if (rc == K_OK && devs.nrows > 1) {
        fprintf(out, "\nDRA devices that draw on shared counters or allow multiple "
                     "allocations:\n");
        rc = table_print(&devs, 2, out);
    }
    if (rc == K_OK && taints.nrows > 1) {
        fprintf(out, "\nDRA device taints on those pools (BLOCKS REQUEST: a NoSchedule/NoExecute "
                     "taint the\ndeciding request does not tolerate; such a device is never "
                     "allocated to it):\n");
        rc = table_print(&taints, 2, out);
    }
    table_cleanup(&req);
    table_cleanup(&pools);
    table_cleanup(&devs);
    table_cleanup(&ctrs);
    table_cleanup(&taints);
    free(ctr);
    free(slices);
    free(counts);
    return rc;
}

/* The verdicts in the explain's order: the deciding node first, then the rest closest first
 * (cmp_verdicts). *out is new (free it), NULL with n 0 for none. Returns K_OK or K_ENOMEM. */
static int sorted_verdicts(const struct triage *t, struct node_verdict **out, size_t *n)
{
    const struct classify_result *r = &t->result;
    *out = NULL;
    *n = 0;
    if (r->n_verdicts == 0)
        return K_OK;
    struct node_verdict *sorted = malloc(r->n_verdicts * sizeof(*sorted));
    if (!sorted)
        return K_ENOMEM;
    for (size_t i = 0; i < r->n_verdicts; i++)
        if (t->verdicts[i].node == r->closest.node)
            sorted[(*n)++] = t->verdicts[i];
    size_t first_rest = *n;
    for (size_t i = 0; i < r->n_verdicts; i++)
        if (t->verdicts[i].node != r->closest.node)
            sorted[(*n)++] = t->verdicts[i];
    qsort(sorted + first_rest, *n - first_rest, sizeof(*sorted), cmp_verdicts);
    *out = sorted;
    return K_OK;
}

/* fn(ctx, node, pod) for each pod holding GPUs on the EXPLAIN_HOLDER_NODES closest exhausted
 * nodes of sorted[0..n), by namespace and name, the explained pod left out; pod NULL once for a
 * node with none. *shown: how many nodes. Read lock held. Returns K_OK, fn's value or K_ENOMEM. */
static int for_each_holder(const struct triage *t, const struct node_verdict *sorted, size_t n,
                           int (*fn)(void *ctx, const char *node, const struct kpod *p), void *ctx,
                           size_t *shown)
{
    const struct kpod *pod = t->pod;
    int rc = K_OK;
    *shown = 0;
    for (size_t i = 0; i < n && *shown < EXPLAIN_HOLDER_NODES && rc == K_OK; i++) {
        if (sorted[i].step != CAUSE_EXHAUSTED)
            continue;
        (*shown)++;
        struct holders h = {.node = sorted[i].node->name};
        store_for_each_gpu_pod_on_node(t->store, h.node, collect_holder, &h);
        rc = h.rc;
        if (rc == K_OK && h.n > 1)
            qsort(h.pods, h.n, sizeof(*h.pods), cmp_holders);
        for (size_t j = 0; j < h.n && rc == K_OK; j++) {
            const struct kpod *p = h.pods[j];
            if (p == t->pod || (strcmp(p->ns, pod->ns) == 0 && strcmp(p->name, pod->name) == 0))
                continue;
            rc = fn(ctx, h.node, p);
        }
        if (rc == K_OK && h.n == 0)
            rc = fn(ctx, h.node, NULL);
        free(h.pods);
    }
    return rc;
}

struct held_table {
    struct table *t;
    struct buf *req;
};

static int held_row(void *ctx, const char *node, const struct kpod *p)
{
    struct held_table *h = ctx;
    if (!p)
        return table_addf(h->t, node, "<none>", "-", "-");
    char line[1024];
    snprintf(line, sizeof(line), "%s/%s", p->ns, p->name);
    buf_reset(h->req);
    int rc = pods_format_requests(&p->gpu_requests, h->req);
    return rc == K_OK ? table_addf(h->t, node, line, buf_cstr(h->req), pod_phase_name(p->phase))
                      : rc;
}

static void print_kv(struct table *t, const char *k, const char *v)
{
    table_addf(t, k, v && *v ? v : "<none>");
}

int triage_print_explain(const struct triage *t, FILE *out)
{
    const struct classify_result *r = &t->result;
    const struct kpod *pod = t->pod;
    char line[2048];
    struct buf req;
    buf_init(&req, EXPLAIN_REQUESTS_MAX);
    struct table head;
    table_init(&head, 2);
    snprintf(line, sizeof(line), "%s/%s", pod->ns, pod->name);
    print_kv(&head, "Pod:", line);
    if (pod->node_name)
        snprintf(line, sizeof(line), "%s, bound to node %s", pod_phase_name(pod->phase),
                 pod->node_name);
    else
        snprintf(line, sizeof(line), "%s, not bound to a node", pod_phase_name(pod->phase));
    print_kv(&head, "Phase:", line);
    int rc = pods_format_requests(&pod->gpu_requests, &req);
    print_kv(&head, "GPU requests:", buf_cstr(&req));
    if (rc == K_OK && pod->n_claims) {
        buf_reset(&req);
        for (size_t i = 0; i < pod->n_claims && rc == K_OK; i++) {
            const struct pod_claim_ref *c = &pod->claims[i];
            const char *made = NULL;
            for (size_t j = 0; j < pod->n_claim_statuses; j++)
                if (pod->claim_statuses[j].name && c->name &&
                    strcmp(pod->claim_statuses[j].name, c->name) == 0)
                    made = pod->claim_statuses[j].claim_name;
            if (c->claim_name)
                rc = buf_printf(&req, "%s%s (claim %s)", i ? ", " : "", c->name, c->claim_name);
            else
                rc = buf_printf(&req, "%s%s (template %s%s%s)", i ? ", " : "", c->name,
                                c->template_name ? c->template_name : "?",
                                made ? ", claim " : ", no claim yet", made ? made : "");
        }
        print_kv(&head, "Claims:", buf_cstr(&req));
    }
    if (rc == K_OK && pod->ext && pod->ext->claim_name) {
        /* the claim kube-scheduler made for the extended resources DRA serves (KEP-5004) */
        buf_reset(&req);
        rc = buf_printf(&req, "%s", pod->ext->claim_name);
        for (size_t i = 0; i < pod->ext->n_mappings && rc == K_OK; i++) {
            const struct pod_ext_mapping *m = &pod->ext->mappings[i];
            rc = buf_printf(&req, "%s%s %s: %s", i ? ", " : " (", m->container ? m->container : "?",
                            m->resource ? m->resource : "?", m->request ? m->request : "?");
        }
        if (rc == K_OK && pod->ext->n_mappings)
            rc = buf_printf(&req, ")");
        print_kv(&head, "Extended resource claim:", buf_cstr(&req));
    }
    buf_cleanup(&req);
    print_kv(&head, "Cause:", cause_word(r->cause));
    print_kv(&head, "Detail:", r->detail);
    if (pod->cause)
        snprintf(line, sizeof(line), "gputri/cause=%s%s", pod->cause,
                 strcmp(pod->cause, cause_word(r->cause)) == 0 ? ""
                                                               : " (differs: written earlier)");
    else if (r->cause == CAUSE_NO_REQUEST)
        snprintf(line, sizeof(line),
                 "none (gputri-controller never annotates a pod without a GPU request)");
    else
        snprintf(line, sizeof(line), "none (gputri-controller has not annotated the pod)");
    print_kv(&head, "Annotation:", line);
    if (pod->scheduled.status == COND_FALSE && pod->scheduled.message) {
        snprintf(line, sizeof(line), "%s: %s", pod->scheduled.reason ? pod->scheduled.reason : "",
                 pod->scheduled.message);
        print_kv(&head, "Scheduler:", line);
    }
    if (rc == K_OK)
        rc = table_print(&head, 0, out);
    table_cleanup(&head);
    /* the words decided before the scheduler's node filtering have no per-node view */
    if (rc || cause_rank(r->cause) < cause_rank(CAUSE_DRA_TEMPLATE_MISSING))
        return rc;

    store_read_lock(t->store);
    size_t n_nodes;
    store_nodes(t->store, &n_nodes);
    fprintf(out,
            "\nNode selection: %zu of %zu nodes match the pod's nodeSelector and required "
            "node affinity.\n",
            r->n_candidates, n_nodes);
    if (r->n_verdicts == 0) {
        store_read_unlock(t->store);
        return ferror(out) ? K_EIO : K_OK;
    }
    struct node_verdict *sorted;
    size_t n;
    if (sorted_verdicts(t, &sorted, &n) != K_OK) {
        store_read_unlock(t->store);
        return K_ENOMEM;
    }

    fprintf(out, "\nLadder: where each candidate node stops (taint, no-gpu-node, "
                 "allocatable-zero, exhausted;\ngpu-fits when the GPUs fit), closest first:\n");
    fprintf(out, " ");
    for (int c = CAUSE_TAINT; c <= CAUSE_GPU_FITS; c++)
        fprintf(out, " %s %zu%s", cause_word((enum cause)c), r->counts[c],
                c < CAUSE_GPU_FITS ? "," : "");
    static const enum cause dra_steps[] = {CAUSE_DRA_NO_DRIVER, CAUSE_DRA_NO_MATCH,
                                           CAUSE_DRA_TAINTED, CAUSE_DRA_EXHAUSTED};
    bool dra = pod->n_claims || pod_has_ext_requests(pod);
    for (size_t i = 0; i < sizeof(dra_steps) / sizeof(dra_steps[0]) && dra; i++)
        fprintf(out, ", %s %zu", cause_word(dra_steps[i]), r->counts[dra_steps[i]]);
    fprintf(out, "\n\n");
    struct table nodes;
    size_t unread = 0;
    table_init(&nodes, 9);
    rc = table_addf(&nodes, "NODE", "STOPS AT", "RESOURCE", "CAPACITY", "ALLOCATABLE", "IN USE",
                    "FREE", "REQUEST", "WHY");
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        const struct node_verdict *v = &sorted[i];
        char cap[24], alloc[24], used[24], fr[24], rq[24], w[600];
        snprintf(cap, sizeof(cap), "%" PRId64, v->capacity);
        snprintf(alloc, sizeof(alloc), "%" PRId64, v->allocatable);
        /* never a number that was not measured: the pods of this node may not have been read */
        bool read = triage_usage_read(t, v->node->name);
        unread += !read;
        if (read)
            snprintf(used, sizeof(used), "%" PRId64, v->allocated);
        else
            snprintf(used, sizeof(used), "-");
        if (read || v->allocatable <= 0)
            snprintf(fr, sizeof(fr), "%" PRId64, node_verdict_free(v));
        else
            snprintf(fr, sizeof(fr), "-");
        snprintf(rq, sizeof(rq), "%" PRId64, v->requested);
        why(v, w, sizeof(w) - 16);
        if (v->node == r->closest.node)
            strcat(w, " (closest)");
        rc = table_addf(&nodes, v->node->name, cause_word(v->step), v->resource ? v->resource : "-",
                        cap, alloc, used, fr, rq, w);
    }
    if (rc == K_OK)
        rc = table_print(&nodes, 2, out);
    table_cleanup(&nodes);
    if (rc == K_OK && unread)
        fprintf(out,
                "  (IN USE and FREE \"-\": the pods of %zu node%s were not read; the ladder "
                "reads the usage only where it can change the step, cli/usage.h)\n",
                unread, unread == 1 ? "" : "s");
    if (rc == K_OK)
        rc = explain_dra(t, sorted, n, out);

    if (rc == K_OK && r->cause == CAUSE_EXHAUSTED) {
        struct table held;
        table_init(&held, 4);
        rc = table_addf(&held, "NODE", "POD", "GPU REQUESTS", "PHASE");
        buf_init(&req, EXPLAIN_REQUESTS_MAX);
        struct held_table ht = {&held, &req};
        size_t shown = 0;
        if (rc == K_OK)
            rc = for_each_holder(t, sorted, n, held_row, &ht, &shown);
        buf_cleanup(&req);
        if (rc == K_OK) {
            fprintf(out, "\nPods holding the GPUs on the %zu closest exhausted node%s:\n", shown,
                    shown == 1 ? "" : "s");
            rc = table_print(&held, 2, out);
        }
        table_cleanup(&held);
    }
    free(sorted);
    store_read_unlock(t->store);
    if (rc == K_OK && ferror(out))
        rc = K_EIO;
    return rc;
}

void triage_cleanup(struct triage *t)
{
    store_free(t->store);
    dra_store_free(t->dra);
    pod_events_free(t->events);
    workload_store_free(t->workloads);
    gang_store_free(t->gangs);
    free(t->verdicts);
    free_usage(t->usage_read);
    memset(t, 0, sizeof(*t));
}

void triage_print_causes(FILE *out)
{
    fprintf(out, "Causes, checked in this order (docs/causes.md says what each means):\n ");
    int col = 1;
    for (int rank = 0; rank < CAUSE_COUNT; rank++)
        for (int c = 0; c < CAUSE_COUNT; c++) {
            if (cause_rank((enum cause)c) != rank || c == CAUSE_GPU_FITS)
                continue;
            const char *w = cause_word((enum cause)c);
            int len = (int)strlen(w) + 1;
            if (col + len > 78) {
                fprintf(out, "\n ");
                col = 1;
            }
            fprintf(out, " %s", w);
            col += len;
        }
    fprintf(out, ";\n  %s when the GPUs fit and something else blocks the pod.\n",
            cause_word(CAUSE_GPU_FITS));
}

/* ---- explain -o json|yaml ------------------------------------------------------------------ */

static void jadd_str(json_object *o, const char *k, const char *v)
{
    if (v && *v)
        json_object_object_add(o, k, json_object_new_string(v));
}

static json_object *requests_json(const struct resource_list *l)
{
    json_object *g = json_object_new_object();
    for (size_t i = 0; g && i < l->n; i++)
        json_object_object_add(g, l->items[i].name, json_object_new_int64(l->items[i].value));
    return g;
}

/* One candidate node's row of the ladder; `read`: the node's pods were read (triage_usage_read),
 * else inUse is null, and free too where allocatable leaves room (never a number not measured). */
static json_object *verdict_json(const struct node_verdict *v, bool closest, bool read)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    char w[600];
    why(v, w, sizeof(w));
    jadd_str(o, "node", v->node->name);
    jadd_str(o, "stopsAt", cause_word(v->step));
    jadd_str(o, "resource", v->resource);
    json_object_object_add(o, "capacity", json_object_new_int64(v->capacity));
    json_object_object_add(o, "allocatable", json_object_new_int64(v->allocatable));
    json_object_object_add(o, "inUse", read ? json_object_new_int64(v->allocated) : NULL);
    json_object_object_add(o, "free",
                           read || v->allocatable <= 0 ? json_object_new_int64(node_verdict_free(v))
                                                       : NULL);
    json_object_object_add(o, "request", json_object_new_int64(v->requested));
    jadd_str(o, "why", w);
    json_object_object_add(o, "closest", json_object_new_boolean(closest));
    if (v->dra_driver) {
        json_object *d = json_object_new_object();
        if (d) {
            jadd_str(d, "step", cause_word(v->dra_step));
            jadd_str(d, "request", v->dra_request);
            jadd_str(d, "deviceClass", v->dra_class);
            jadd_str(d, "driver", v->dra_driver);
            json_object_object_add(d, "devices", json_object_new_int64((int64_t)v->dra_devices));
            json_object_object_add(d, "matching", json_object_new_int64((int64_t)v->dra_matching));
            json_object_object_add(d, "free", json_object_new_int64((int64_t)v->dra_free));
            json_object_object_add(d, "tainted", json_object_new_int64((int64_t)v->dra_tainted));
            json_object_object_add(d, "wanted", json_object_new_int64(v->dra_wanted));
            json_object_object_add(o, "dra", d);
        }
    }
    return o;
}

static int held_json(void *ctx, const char *node, const struct kpod *p)
{
    if (!p)
        return K_OK;
    json_object *hp = json_object_new_object();
    if (!hp)
        return K_ENOMEM;
    jadd_str(hp, "node", node);
    jadd_str(hp, "namespace", p->ns);
    jadd_str(hp, "name", p->name);
    json_object_object_add(hp, "gpuRequests", requests_json(&p->gpu_requests));
    jadd_str(hp, "phase", pod_phase_name(p->phase));
    if (json_object_array_add(ctx, hp) != 0) {
        json_object_put(hp);
        return K_ENOMEM;
    }
    return K_OK;
}

int triage_explain_json(const struct triage *t, json_object **out)
{
    const struct classify_result *r = &t->result;
    const struct kpod *pod = t->pod;
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *st = json_object_new_object(), *nodes = json_object_new_array(),
                *counts = json_object_new_object(), *held = json_object_new_array();
    struct node_verdict *sorted = NULL;
    int rc = K_ENOMEM;
    if (!o || !meta || !st || !nodes || !counts || !held) {
        json_object_put(meta);
        json_object_put(st);
        meta = st = NULL;
        goto out;
    }
    jadd_str(o, "apiVersion", PODS_API_VERSION);
    jadd_str(o, "kind", "GPUPodExplanation");
    json_object_object_add(o, "metadata", meta);
    jadd_str(meta, "name", pod->name);
    jadd_str(meta, "namespace", pod->ns);
    json_object_object_add(o, "status", st);
    jadd_str(st, "phase", pod_phase_name(pod->phase));
    jadd_str(st, "nodeName", pod->node_name);
    json_object_object_add(st, "gpuRequests", requests_json(&pod->gpu_requests));
    jadd_str(st, "cause", cause_word(r->cause));
    jadd_str(st, "detail", r->detail);
    jadd_str(st, "annotationCause", pod->cause);
    jadd_str(st, "annotationDetail", pod->detail);
    if (pod->scheduled.status == COND_FALSE && pod->scheduled.message) {
        jadd_str(st, "schedulerReason", pod->scheduled.reason);
        jadd_str(st, "schedulerMessage", pod->scheduled.message);
    }
    /* the words decided before the scheduler's node filtering have no per-node view */
    bool per_node = cause_rank(r->cause) >= cause_rank(CAUSE_DRA_TEMPLATE_MISSING);
    store_read_lock(t->store);
    size_t n_nodes = 0;
    store_nodes(t->store, &n_nodes);
    if (per_node) {
        json_object *sel = json_object_new_object();
        if (sel) {
            json_object_object_add(sel, "candidates",
                                   json_object_new_int64((int64_t)r->n_candidates));
            json_object_object_add(sel, "nodes", json_object_new_int64((int64_t)n_nodes));
            json_object_object_add(o, "nodeSelection", sel);
        }
        for (int c = 0; c < CAUSE_COUNT; c++)
            if (r->counts[c])
                json_object_object_add(counts, cause_word((enum cause)c),
                                       json_object_new_int64((int64_t)r->counts[c]));
        json_object_object_add(o, "counts", json_object_get(counts));
        json_object_object_add(o, "nodes", json_object_get(nodes));
    }
    size_t n = 0;
    if (per_node && sorted_verdicts(t, &sorted, &n) != K_OK) {
        store_read_unlock(t->store);
        goto out;
    }
    rc = K_OK;
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        json_object *v = verdict_json(&sorted[i], sorted[i].node == r->closest.node,
                                      triage_usage_read(t, sorted[i].node->name));
        if (!v || json_object_array_add(nodes, v) != 0) {
            json_object_put(v);
            rc = K_ENOMEM;
        }
    }
    /* exhausted: the pods holding the GPUs on the closest exhausted nodes */
    size_t shown = 0;
    if (rc == K_OK && r->cause == CAUSE_EXHAUSTED)
        rc = for_each_holder(t, sorted, n, held_json, held, &shown);
    store_read_unlock(t->store);
    if (rc == K_OK && r->cause == CAUSE_EXHAUSTED)
        json_object_object_add(o, "holders", json_object_get(held));
out:
    free(sorted);
    json_object_put(nodes);
    json_object_put(counts);
    json_object_put(held);
    if (rc) {
        json_object_put(o);
        return rc;
    }
    *out = o;
    return K_OK;
}
