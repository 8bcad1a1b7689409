/* requeue_model.c - see requeue_model.h. */
#include "requeue_model.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/dra_store.h"
#include "cache/key.h"
#include "cache/store.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "triage/requeue.h"
#include "triage/triage.h"
#include "util/result.h"

static const char *const resources[2] = {"nvidia.com/gpu", "amd.com/gpu"};

struct mnode {
    bool exists;
    int pool;   /* 0 no label, 1 pool=a, 2 pool=b */
    bool accel; /* label accel=yes */
    unsigned
        taints;    /* 1 gpu=present:NoSchedule, 2 dedicated=x:NoExecute, 4 soft:PreferNoSchedule */
    bool cordoned; /* spec.unschedulable */
    int cap[2], al[2]; /* -1: absent */
};

struct mpod {
    bool exists;
    int phase;     /* 0 Pending, 1 Running, 2 Succeeded */
    int node;      /* -1 unbound */
    int req[2];    /* 0: not asked */
    int selector;  /* 0 none, 1 pool=a, 2 pool=b, 3 affinity accel Exists, 4 pool=a + affinity */
    unsigned tols; /* 1 gpu, 2 dedicated, 4 every taint (operator Exists), 8 unschedulable */
    bool gated;
    int nominated; /* -1 none */
    bool claim;    /* spec.resourceClaims names a claim */
    unsigned gen;  /* uid generation */
    unsigned msg;  /* 0: no PodScheduled condition; else its message's number */
};

/* DRA: pod i names ResourceClaim c<i>; holder claims h<j> hold devices on node j. */
struct mclaim {
    bool exists;
    int count;     /* devices asked, 1 or 2 */
    int alloc;     /* -1: not allocated; else the node (pool) its devices are on */
    int alloc_dev; /* the first device it holds there (gpu-<alloc_dev>, and the next for 2) */
};

struct rq_model {
    struct gpu_set gpus, dra_gpus;
    struct store *s;
    struct dra_store *dra;
    bool class_exists;
    int slice_devices[RQ_NODES]; /* 0: no slice on the node */
    struct mclaim claims[RQ_PODS], holders[RQ_NODES];
    struct mnode nodes[RQ_NODES];
    struct mpod pods[RQ_PODS];
    struct requeue_record rec[RQ_PODS];
    unsigned uid_gen;
    size_t targeted, all, steps;
    char why[512];
};

static void die(const char *what)
{
    fprintf(stderr, "requeue_model: %s\n", what);
    abort();
}

struct rq_model *rq_model_new(void)
{
    struct rq_model *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    if (gpu_set_parse(&m->gpus, GPU_SET_DEFAULT) != K_OK ||
        gpu_set_parse(&m->dra_gpus, DRA_GPU_SET_DEFAULT) != K_OK || !(m->s = store_new(&m->gpus)) ||
        !(m->dra = dra_store_new())) {
        store_free(m->s);
        gpu_set_cleanup(&m->gpus);
        gpu_set_cleanup(&m->dra_gpus);
        free(m);
        return NULL;
    }
    store_keep_gpu_pods_only(m->s);
    return m;
}

void rq_model_free(struct rq_model *m)
{
    if (!m)
        return;
    store_free(m->s);
    dra_store_free(m->dra);
    gpu_set_cleanup(&m->gpus);
    gpu_set_cleanup(&m->dra_gpus);
    free(m);
}

const char *rq_model_why(const struct rq_model *m)
{
    return m->why;
}

void rq_model_counts(const struct rq_model *m, size_t *targeted, size_t *all, size_t *steps)
{
    *targeted = m->targeted;
    *all = m->all;
    *steps = m->steps;
}

/* ---- JSON of the model's objects ------------------------------------------------------------ */

struct text {
    char b[4096];
    size_t n;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->b + t->n, sizeof(t->b) - t->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof(t->b) - t->n)
        die("JSON too long");
    t->n += (size_t)k;
}

static void put_resources(struct text *t, const int v[2])
{
    put(t, "{");
    bool first = true;
    for (int r = 0; r < 2; r++) {
        if (v[r] < 0)
            continue;
        put(t, "%s\"%s\":\"%d\"", first ? "" : ",", resources[r], v[r]);
        first = false;
    }
    put(t, "}");
}

static json_object *node_json(int i, const struct mnode *n)
{
    struct text t = {.n = 0};
    put(&t, "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"kubernetes.io/hostname\":\"n%d\"", i, i);
    if (n->pool)
        put(&t, ",\"pool\":\"%s\"", n->pool == 1 ? "a" : "b");
    if (n->accel)
        put(&t, ",\"accel\":\"yes\"");
    put(&t, "}},\"spec\":{\"unschedulable\":%s,\"taints\":[", n->cordoned ? "true" : "false");
    static const char *const taints[3] = {
        "{\"key\":\"gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}",
        "{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoExecute\"}",
        "{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}",
    };
    bool first = true;
    for (int k = 0; k < 3; k++)
        if (n->taints & (1u << k)) {
            put(&t, "%s%s", first ? "" : ",", taints[k]);
            first = false;
        }
    put(&t, "]},\"status\":{\"capacity\":");
    put_resources(&t, n->cap);
    put(&t, ",\"allocatable\":");
    put_resources(&t, n->al);
    put(&t, "}}");
    json_object *o = json_tokener_parse(t.b);
    if (!o)
        die("node JSON");
    return o;
}

static json_object *pod_json(int i, const struct mpod *p)
{
    static const char *const phases[3] = {"Pending", "Running", "Succeeded"};
    struct text t = {.n = 0};
    put(&t, "{\"metadata\":{\"namespace\":\"t\",\"name\":\"p%d\",\"uid\":\"u%d-%u\"},\"spec\":{", i,
        i, p->gen);
    if (p->node >= 0)
        put(&t, "\"nodeName\":\"n%d\",", p->node);
    if (p->selector == 1 || p->selector == 4)
        put(&t, "\"nodeSelector\":{\"pool\":\"a\"},");
    else if (p->selector == 2)
        put(&t, "\"nodeSelector\":{\"pool\":\"b\"},");
    if (p->selector >= 3)
        put(&t,
            "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
            "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"accel\",\"operator\":"
            "\"Exists\"}]}]}}},");
    put(&t, "\"tolerations\":[");
    static const char *const tols[4] = {
        "{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}",
        "{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\"}",
        "{\"operator\":\"Exists\"}",
        ("{\"key\":\"node.kubernetes.io/unschedulable\",\"operator\":\"Exists\","
         "\"effect\":\"NoSchedule\"}"),
    };
    bool first = true;
    for (int k = 0; k < 4; k++)
        if (p->tols & (1u << k)) {
            put(&t, "%s%s", first ? "" : ",", tols[k]);
            first = false;
        }
    put(&t, "],");
    if (p->gated)
        put(&t, "\"schedulingGates\":[{\"name\":\"example.com/wait\"}],");
    if (p->claim)
        put(&t, "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"c%d\"}],", i);
    put(&t, "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":");
    int req[2] = {p->req[0] > 0 ? p->req[0] : -1, p->req[1] > 0 ? p->req[1] : -1};
    put_resources(&t, req);
    put(&t, "}}]},\"status\":{\"phase\":\"%s\"", phases[p->phase]);
    if (p->nominated >= 0 && p->node < 0)
        put(&t, ",\"nominatedNodeName\":\"n%d\"", p->nominated);
    if (p->msg && p->node < 0)
        put(&t,
            ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
            "\"Unschedulable\",\"message\":\"0/%d nodes are available: attempt %u.\"}]",
            RQ_NODES, p->msg);
    put(&t, "}}");
    json_object *o = json_tokener_parse(t.b);
    if (!o)
        die("pod JSON");
    return o;
}

/* ---- the two policies ----------------------------------------------------------------------- */

/* The classifier's word for pod `i` now (the store's read lock held); -1 when it is not a
 * pending GPU pod. */
static int classify_now(struct rq_model *m, int i)
{
    char name[16];
    snprintf(name, sizeof(name), "p%d", i);
    const struct kpod *pod = store_pod_get(m->s, "t", name);
    if (!pod || !store_is_pending_gpu_pod(pod))
        return -1;
    struct triage_source src = {.store = m->s, .dra = m->dra, .dra_classes = &m->dra_gpus};
    struct classify_result r;
    r.verdicts = NULL;
    if (triage_pod(&src, pod, &r) != K_OK)
        die("triage_pod");
    return (int)r.cause;
}

static void record(struct rq_model *m, int i)
{
    char name[16];
    snprintf(name, sizeof(name), "p%d", i);
    const struct kpod *pod = store_pod_get(m->s, "t", name);
    int word = classify_now(m, i);
    m->rec[i].valid = word >= 0;
    m->rec[i].word = word >= 0 ? (enum cause)word : CAUSE_NO_REQUEST;
    snprintf(m->rec[i].uid, sizeof(m->rec[i].uid), "%s", pod && pod->uid ? pod->uid : "");
    m->targeted++;
}

/* Every pending GPU pod's record against its classification from scratch (store read lock
 * held); 0 when all agree. */
static int compare(struct rq_model *m, const char *node, unsigned what, unsigned changed)
{
    for (int i = 0; i < RQ_PODS; i++) {
        int word = classify_now(m, i);
        if (word < 0)
            continue;
        if (!m->rec[i].valid || (int)m->rec[i].word != word) {
            snprintf(m->why, sizeof(m->why),
                     "step %zu: pod p%d recorded %s, classified from scratch %s (change: node "
                     "\"%s\" what 0x%x changed 0x%x)",
                     m->steps, i, m->rec[i].valid ? cause_word(m->rec[i].word) : "(none)",
                     cause_word((enum cause)word), node, what, changed);
            return -1;
        }
    }
    return 0;
}

/* After a write described by `d` (own: the pod written, -1 for a node): what the controller
 * does, then the comparison. */
static int settle(struct rq_model *m, struct store_delta *d, int own)
{
    m->steps++;
    store_read_lock(m->s);
    const struct knode *now_node = d->node[0] ? store_node_get(m->s, d->node) : NULL;
    bool wide = d->changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES);
    int rc = 0;
    for (int i = 0; i < RQ_PODS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        const struct kpod *pod = store_pod_get(m->s, "t", name);
        if (!pod || !store_is_pending_gpu_pod(pod))
            continue;
        if (wide || (own == i && (d->changed & STORE_CHANGED_POD)))
            m->all++;
        const struct requeue_record *rec = m->rec[i].valid ? &m->rec[i] : NULL;
        if (own == i && (d->changed & STORE_CHANGED_POD)) {
            if (requeue_after_own_change(pod->uid, rec, d)) /* its own key */
                record(m, i);
        } else if (requeue_store_change_reaches(pod, d, now_node) &&
                   (!rec ||
                    requeue_after_store_change(pod, rec, d, now_node, store_node_usage, m->s)))
            record(m, i);
    }
    rc = compare(m, d->node, d->what, d->changed);
    store_read_unlock(m->s);
    store_delta_cleanup(d);
    return rc;
}

static int write_pod(struct rq_model *m, int i)
{
    struct store_delta d;
    char name[16];
    snprintf(name, sizeof(name), "p%d", i);
    int rc;
    if (!m->pods[i].exists) {
        rc = store_pod_delete_delta(m->s, "t", name, &d);
    } else {
        json_object *o = pod_json(i, &m->pods[i]);
        struct kpod pod;
        rc = project_pod(o, &m->gpus, &pod);
        json_object_put(o);
        if (rc != K_OK)
            die("project_pod");
        rc = store_pod_upsert_delta(m->s, &pod, &d);
    }
    if (rc != K_OK)
        die("pod write");
    return settle(m, &d, i);
}

static int write_node(struct rq_model *m, int i)
{
    struct store_delta d;
    json_object *o = node_json(i, &m->nodes[i]);
    int rc = store_node_apply_json_delta(m->s, o, !m->nodes[i].exists, NULL, &d);
    json_object_put(o);
    if (rc != K_OK)
        die("node write");
    return settle(m, &d, -1);
}

/* ---- DRA objects -------------------------------------------------------------------------- */

static json_object *parse(const struct text *t)
{
    json_object *o = json_tokener_parse(t->b);
    if (!o)
        die("DRA JSON");
    return o;
}

static json_object *class_json(void)
{
    struct text t = {.n = 0};
    put(&t, "{\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{\"selectors\":[{\"cel\":{"
            "\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}");
    return parse(&t);
}

static json_object *slice_json(int node, int devices)
{
    struct text t = {.n = 0};
    put(&t,
        "{\"metadata\":{\"name\":\"s%d\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":"
        "\"n%d\",\"pool\":{\"name\":\"n%d\",\"generation\":1,\"resourceSliceCount\":1},"
        "\"devices\":[",
        node, node, node);
    for (int k = 0; k < devices; k++)
        put(&t, "%s{\"name\":\"gpu-%d\"}", k ? "," : "", k);
    put(&t, "]}}");
    return parse(&t);
}

static json_object *claim_json(const char *name, const struct mclaim *c)
{
    struct text t = {.n = 0};
    put(&t,
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{"
        "\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
        "\"gpu.example.com\",\"count\":%d}}]}}",
        name, name, c->count);
    if (c->alloc >= 0) {
        put(&t, ",\"status\":{\"allocation\":{\"devices\":{\"results\":[");
        for (int k = 0; k < c->count; k++)
            put(&t,
                "%s{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"n%d\","
                "\"device\":\"gpu-%d\"}",
                k ? "," : "", c->alloc, c->alloc_dev + k);
        put(&t,
            "]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
            "\"metadata.name\",\"operator\":\"In\",\"values\":[\"n%d\"]}]}]}}}",
            c->alloc);
    }
    put(&t, "}");
    return parse(&t);
}

/* A DRA write and what the controller's handler does after it (controller/handlers.c
 * dra_event), then the comparison. */
static int write_dra(struct rq_model *m, enum dra_kind kind, json_object *o, bool deleted)
{
    struct requeue_dra_change ev = {.kind = kind};
    json_object *meta = NULL, *v = NULL;
    if (json_object_object_get_ex(o, "metadata", &meta)) {
        if (json_object_object_get_ex(meta, "namespace", &v))
            ev.ns = json_object_get_string(v);
        if (json_object_object_get_ex(meta, "name", &v))
            ev.name = json_object_get_string(v);
    }
    if (kind == DRA_KIND_CLAIM) {
        json_object *st = NULL;
        ev.holds_devices = json_object_object_get_ex(o, "status", &st) &&
                           json_object_object_get_ex(st, "allocation", &v);
        dra_store_read_lock(m->dra);
        const struct dra_claim *old = dra_store_claim(m->dra, ev.ns, ev.name);
        ev.holds_devices = ev.holds_devices || (old && old->allocated);
        dra_store_read_unlock(m->dra);
    }
    if (dra_store_apply_json(m->dra, kind, o, deleted) != K_OK)
        die("DRA write");
    m->steps++;
    store_read_lock(m->s);
    dra_store_read_lock(m->dra);
    for (int i = 0; i < RQ_PODS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        const struct kpod *pod = store_pod_get(m->s, "t", name);
        if (!pod || !store_is_pending_gpu_pod(pod) || pod->n_claims == 0)
            continue;
        m->all++;
        if (requeue_after_dra_event(pod, m->rec[i].valid ? &m->rec[i] : NULL, &ev, m->dra)) {
            dra_store_read_unlock(m->dra); /* triage_pod takes it itself */
            record(m, i);
            dra_store_read_lock(m->dra);
        }
    }
    dra_store_read_unlock(m->dra);
    int rc = compare(m, "DRA", (unsigned)kind, 0);
    store_read_unlock(m->s);
    json_object_put(o);
    return rc;
}

/* Small values from a byte: -1 (absent) or 0..4. */
static int amount(uint8_t v)
{
    int k = v % 6;
    return k == 5 ? -1 : k;
}

int rq_model_step(struct rq_model *m, uint8_t op, uint8_t a, uint8_t b, uint8_t c)
{
    m->why[0] = '\0';
    int pi = a % RQ_PODS, ni = a % RQ_NODES, nb = b % RQ_NODES;
    struct mpod *p = &m->pods[pi];
    struct mnode *n = &m->nodes[ni];
    switch (op % 20) {
    case 0: /* a pending pod, new or respecified */
    case 1:
        p->exists = true;
        p->phase = 0;
        p->node = -1;
        p->req[0] = b % 4;
        p->req[1] = (b / 4) % 3 == 2 ? 1 + (b / 16) % 2 : 0;
        if (p->req[0] == 0 && p->req[1] == 0 && c % 4 != 0)
            p->req[0] = 1;
        p->selector = c % 5;
        p->tols = (c / 5) % 16;
        p->gated = (b / 32) % 8 == 0;
        p->nominated = (b / 32) % 8 == 1 ? (int)(c % RQ_NODES) : -1;
        p->claim = (c / 80) % 3 == 0;
        if (op % 20 == 0)
            p->gen = ++m->uid_gen; /* a new pod under the name */
        return write_pod(m, pi);
    case 2: /* a pending pod is bound (the scheduler placed it) */
    case 3: /* a GPU holder is placed */
        if (op % 20 == 3 || !p->exists || p->node >= 0) {
            p->exists = true;
            p->gen = ++m->uid_gen;
            p->req[0] = 1 + c % 3;
            p->req[1] = (c / 3) % 3 == 0 ? 1 : 0;
            p->selector = 0;
            p->tols = 0;
            p->gated = false;
            p->nominated = -1;
            p->claim = false;
        }
        p->node = nb;
        p->phase = 1;
        return write_pod(m, pi);
    case 4: /* a pod is deleted */
    case 5:
        p->exists = false;
        return write_pod(m, pi);
    case 6: /* a pod finishes */
        if (!p->exists)
            return 0;
        p->phase = 2;
        return write_pod(m, pi);
    case 7: /* a node appears or is rewritten whole */
        n->exists = true;
        n->pool = b % 3;
        n->accel = (b / 3) % 2;
        n->taints = (b / 6) % 8;
        n->cordoned = (b / 48) % 4 == 0;
        n->cap[0] = amount(c);
        n->al[0] = amount(c / 6);
        n->cap[1] = amount(c / 36);
        n->al[1] = n->cap[1] < 0 ? -1 : amount((uint8_t)(c + b));
        return write_node(m, ni);
    case 8: /* a node vanishes */
        if (!n->exists)
            return 0;
        n->exists = false;
        return write_node(m, ni);
    case 9: /* a label changes */
        if (!n->exists)
            return 0;
        if (b % 2)
            n->pool = (n->pool + 1 + c % 2) % 3;
        else
            n->accel = !n->accel;
        return write_node(m, ni);
    case 10: /* a taint comes or goes */
        if (!n->exists)
            return 0;
        n->taints ^= 1u << (b % 3);
        return write_node(m, ni);
    case 11: /* cordon or uncordon */
        if (!n->exists)
            return 0;
        n->cordoned = !n->cordoned;
        return write_node(m, ni);
    case 12: /* capacity of one resource */
        if (!n->exists)
            return 0;
        n->cap[b % 2] = amount(c);
        return write_node(m, ni);
    case 13: /* allocatable of one resource */
        if (!n->exists)
            return 0;
        n->al[b % 2] = amount(c);
        return write_node(m, ni);
    case 14: /* the DeviceClass comes or goes */
        m->class_exists = !m->class_exists;
        return write_dra(m, DRA_KIND_CLASS, class_json(), !m->class_exists);
    case 15: { /* a node's ResourceSlice: 0 to 3 devices (0: gone) */
        int k = b % 4;
        bool gone = k == 0;
        json_object *o = slice_json(ni, gone ? m->slice_devices[ni] : k);
        m->slice_devices[ni] = k;
        return write_dra(m, DRA_KIND_SLICE, o, gone);
    }
    case 16:   /* pod i's claim: created, allocated, released, or deleted */
    case 17: { /* a holder claim on node j */
        bool holder = op % 20 == 17;
        struct mclaim *cl = holder ? &m->holders[ni] : &m->claims[pi];
        char name[16];
        snprintf(name, sizeof(name), holder ? "h%d" : "c%d", holder ? ni : pi);
        if (b % 5 == 0) {
            if (!cl->exists)
                return 0;
            json_object *o = claim_json(name, cl);
            cl->exists = false;
            return write_dra(m, DRA_KIND_CLAIM, o, true);
        }
        if (!cl->exists || b % 5 == 1) { /* (re)created, not allocated */
            cl->exists = true;
            cl->count = 1 + (c % 2);
            cl->alloc = -1;
        } else if (b % 5 == 2) {
            cl->alloc = -1; /* released */
        } else {
            cl->alloc = holder ? ni : (int)(c % RQ_NODES);
            cl->alloc_dev = (c / 8) % 2;
        }
        return write_dra(m, DRA_KIND_CLAIM, claim_json(name, cl), false);
    }
    case 19: /* kube-scheduler retries a pending pod: its PodScheduled message changes */
        if (!p->exists || p->node >= 0)
            return 0;
        p->msg = p->msg % 7 + 1;
        return write_pod(m, pi);
    case 18: /* a template is named by no pod: it concerns none */
    default: {
        struct text t = {.n = 0};
        put(&t, "{\"metadata\":{\"namespace\":\"t\",\"name\":\"tmpl\"},\"spec\":{\"spec\":{"
                "\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
                "\"deviceClassName\":\"gpu.example.com\"}}]}}}}");
        return write_dra(m, DRA_KIND_TEMPLATE, parse(&t), b % 2);
    }
    }
}
