/* usage.c - the nodes whose pods a one-shot classification reads, and the LISTs for them. */
#include "usage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/project.h"
#include "util/result.h"

int usage_nodes_add(struct usage_nodes *u, const char *node)
{
    if (u->all || !node)
        return K_OK;
    for (size_t i = u->n; i > 0; i--) /* the last added first: a node asked for per resource */
        if (strcmp(u->names[i - 1], node) == 0)
            return K_OK;
    if (u->n == USAGE_PER_NODE_MAX) {
        u->all = true;
        return K_OK;
    }
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 8;
        char **grown = realloc(u->names, cap * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        u->names = grown;
        u->cap = cap;
    }
    u->names[u->n] = strdup(node);
    if (!u->names[u->n])
        return K_ENOMEM;
    u->n++;
    return K_OK;
}

void usage_nodes_cleanup(struct usage_nodes *u)
{
    for (size_t i = 0; i < u->n; i++)
        free(u->names[i]);
    free(u->names);
    memset(u, 0, sizeof(*u));
}

/* The store could not take a pod: the LIST was stopped for it. */
static int sink_failed(int rc, struct kube_error *err)
{
    if (err) {
        err->code = rc;
        snprintf(err->message, sizeof(err->message), "out of memory while reading pods");
    }
    return rc;
}

struct recorder {
    const struct knode *const *nodes; /* sorted by name (store_nodes) */
    size_t n_nodes;
    struct usage_nodes *u;
    int rc;
};

static int cmp_name(const void *key, const void *elem)
{
    const struct knode *n = *(const struct knode *const *)elem;
    return strcmp(key, n->name ? n->name : "");
}

/* classify()'s usage callback in the dry run: note the node when the usage can matter there. */
static int64_t record_usage(void *ctx, const char *node, const char *resource)
{
    struct recorder *r = ctx;
    if (r->rc)
        return 0;
    const struct knode *const *hit =
        bsearch(node, r->nodes, r->n_nodes, sizeof(*r->nodes), cmp_name);
    if (hit && resource_list_get(&(*hit)->capacity, resource) > 0)
        r->rc = usage_nodes_add(r->u, node);
    return 0;
}

int usage_nodes_collect(const struct triage_source *src, const struct kpod *pod,
                        struct usage_nodes *u)
{
    if (!pod)
        return K_OK;
    if (pod->nominated_node && *pod->nominated_node && !pod->node_name) {
        int rc = usage_nodes_add(u, pod->nominated_node);
        if (rc)
            return rc;
    }
    struct recorder r = {.u = u};
    r.nodes = store_nodes(src->store, &r.n_nodes);
    struct triage_source dry = *src;
    dry.usage = record_usage;
    dry.usage_ctx = &r;
    struct classify_result *res = malloc(sizeof(*res));
    if (!res)
        return K_ENOMEM;
    res->verdicts = NULL;
    int rc = triage_pod(&dry, pod, res);
    free(res);
    return rc ? rc : r.rc;
}

/*
 * Where the listed pods go: the caller's store. Items are projected outside `mu` (in the worker
 * threads, in parallel) and written to the store under it. A pod the store already holds keeps
 * its record: the caller read it whole, and a protobuf item is projected for usage only.
 */
struct pod_sink {
    struct store *s;
    pthread_mutex_t *mu; /* NULL: one thread */
    int rc;              /* K_ENOMEM once the store could not take a pod */
    size_t skipped;      /* items that did not project or passed a bound */
};

static void sink_lock(struct pod_sink *k)
{
    if (k->mu)
        pthread_mutex_lock(k->mu);
}

static void sink_unlock(struct pod_sink *k)
{
    if (k->mu)
        pthread_mutex_unlock(k->mu);
}

/* A pod the server answered in JSON. */
static int sink_json(void *ctx, json_object *obj)
{
    struct pod_sink *k = ctx;
    unsigned changed = 0;
    sink_lock(k);
    int rc = store_pod_apply_json(k->s, obj, 0, NULL, &changed);
    if (rc == K_ENOMEM && !k->rc)
        k->rc = rc;
    else if (rc)
        k->skipped++; /* counted: the LIST fails after it (informer_list_skipped) */
    sink_unlock(k);
    return rc == K_ENOMEM;
}

/* A pod the server answered in protobuf. */
static int sink_proto(void *ctx, const uint8_t *bytes, size_t len)
{
    struct pod_sink *k = ctx;
    struct kpod pod;
    int rc = project_pod_usage_proto(bytes, len, store_gpus(k->s), &pod);
    if (rc == K_ENOMEM)
        goto out;
    if (rc) { /* counted, as a JSON item that does not project */
        sink_lock(k);
        k->skipped++;
        sink_unlock(k);
        return 0;
    }
    unsigned changed = 0;
    sink_lock(k);
    store_read_lock(k->s);
    bool held = store_pod_get(k->s, pod.ns ? pod.ns : "", pod.name) != NULL;
    store_read_unlock(k->s);
    rc = held ? K_OK : store_pod_upsert(k->s, &pod, &changed);
    sink_unlock(k);
    pod_cleanup(&pod);
out:
    if (rc == K_ENOMEM) {
        sink_lock(k);
        if (!k->rc)
            k->rc = rc;
        sink_unlock(k);
    }
    return rc == K_ENOMEM;
}

/* A node the server answered in JSON or in protobuf: the whole node either way. */
static int node_json(void *ctx, json_object *obj)
{
    struct pod_sink *k = ctx;
    unsigned changed = 0;
    int rc = store_node_apply_json(k->s, obj, 0, NULL, &changed);
    if (rc == K_ENOMEM && !k->rc)
        k->rc = rc;
    else if (rc)
        k->skipped++;
    return rc == K_ENOMEM;
}

static int node_proto(void *ctx, const uint8_t *bytes, size_t len)
{
    struct pod_sink *k = ctx;
    struct knode node;
    int rc = project_node_proto(bytes, len, store_gpus(k->s), &node);
    if (rc == K_OK) {
        unsigned changed = 0;
        rc = store_node_upsert(k->s, &node, &changed);
        node_cleanup(&node);
    }
    if (rc == K_ENOMEM && !k->rc)
        k->rc = rc;
    else if (rc)
        k->skipped++;
    return rc == K_ENOMEM;
}

int usage_list_nodes(struct kube_client *c, struct store *s, struct kube_error *err)
{
    return usage_list_nodes_selected(c, s, NULL, err);
}

int usage_list_nodes_selected(struct kube_client *c, struct store *s, const char *label_selector,
                              struct kube_error *err)
{
    char path[1024] = "/api/v1/nodes";
    if (label_selector && *label_selector) {
        char esc[768];
        if (kube_path_escape(label_selector, esc, sizeof(esc)) != K_OK) {
            if (err) {
                err->code = K_EINVAL;
                snprintf(err->message, sizeof(err->message),
                         "label selector \"%.80s...\" is too long", label_selector);
            }
            return K_EINVAL;
        }
        snprintf(path, sizeof(path), "/api/v1/nodes?labelSelector=%s", esc);
    }
    struct pod_sink k = {.s = s};
    const struct kube_list_options opts = {.page_size = 500, .proto_item = node_proto};
    int rc = kube_list(c, path, &opts, node_json, &k, NULL, 0, err);
    if (k.rc)
        return sink_failed(k.rc, err);
    return rc == K_OK && k.skipped ? informer_list_skipped(path, k.skipped, err) : rc;
}

/* One node's non-terminal pods, one response: a node holds at most its status.allocatable pods
 * (110 by default), and a continue token may not come with resourceVersion=0. */
static int fetch_node(struct kube_client *c, const char *node, struct pod_sink *k,
                      struct kube_error *err)
{
    char esc[512], path[1024];
    if (kube_path_escape(node, esc, sizeof(esc)) != K_OK) {
        if (err) {
            err->code = K_EINVAL;
            snprintf(err->message, sizeof(err->message),
                     "node name \"%.80s...\" is too long for a field selector", node);
        }
        return K_EINVAL;
    }
    /* node names are DNS subdomains: nothing in them needs a selector escape */
    snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s%%2C%s", esc,
             USAGE_NON_TERMINAL);
    const struct kube_list_options opts = {.resource_version = "0", .proto_item = sink_proto};
    return kube_list(c, path, &opts, sink_json, k, NULL, 0, err);
}

/* The nodes of `u` read by several threads: they take the next node under `mu`, which also
 * serializes the writes to the store and guards the first error. */
struct fetch_shared {
    const struct usage_nodes *u;
    struct pod_sink sink;
    pthread_mutex_t mu;
    size_t next;
    int rc;
    struct kube_error err;
};

struct fetch_worker {
    struct fetch_shared *sh;
    struct kube_client *c;
};

static void *fetch_worker_main(void *arg)
{
    struct fetch_worker *w = arg;
    struct fetch_shared *sh = w->sh;
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        size_t i = sh->rc || sh->sink.rc ? sh->u->n : sh->next++;
        pthread_mutex_unlock(&sh->mu);
        if (i >= sh->u->n)
            return NULL;
        struct kube_error e = {0};
        int rc = fetch_node(w->c, sh->u->names[i], &sh->sink, &e);
        if (rc) {
            pthread_mutex_lock(&sh->mu);
            if (!sh->rc) {
                sh->rc = rc;
                sh->err = e;
            }
            pthread_mutex_unlock(&sh->mu);
            return NULL;
        }
    }
}

static int fetch_parallel(struct kube_client *c, const struct usage_nodes *u, struct store *s,
                          struct kube_error *err)
{
    struct fetch_shared sh = {.u = u, .sink = {.s = s}};
    pthread_mutex_init(&sh.mu, NULL);
    sh.sink.mu = &sh.mu;
    struct fetch_worker w[USAGE_WORKERS];
    pthread_t t[USAGE_WORKERS];
    size_t want = u->n < USAGE_WORKERS ? u->n : USAGE_WORKERS, started = 0;
    /* Every worker, the caller's thread too, on a clone speaking HTTP/1.1 (client.h
     * kube_client_set_http1); the caller's own client, as it is, when no clone can be made. */
    struct kube_client *own = kube_client_clone(c);
    if (own)
        kube_client_set_http1(own, true);
    w[0] = (struct fetch_worker){&sh, own ? own : c};
    for (size_t k = 1; k < want; k++) {
        struct kube_client *clone = own ? kube_client_clone(own) : NULL;
        if (!clone)
            break; /* fewer threads do the same work */
        w[started + 1] = (struct fetch_worker){&sh, clone};
        if (pthread_create(&t[started + 1], NULL, fetch_worker_main, &w[started + 1]) != 0) {
            kube_client_free(clone);
            break;
        }
        started++;
    }
    fetch_worker_main(&w[0]);
    for (size_t k = 1; k <= started; k++) {
        pthread_join(t[k], NULL);
        kube_client_free(w[k].c);
    }
    kube_client_free(own);
    pthread_mutex_destroy(&sh.mu);
    if (sh.sink.rc)
        return sink_failed(sh.sink.rc, err);
    if (sh.rc && err)
        *err = sh.err;
    if (sh.rc == K_OK && sh.sink.skipped)
        return informer_list_skipped("/api/v1/pods", sh.sink.skipped, err);
    return sh.rc;
}

int usage_fetch(struct kube_client *c, const struct usage_nodes *u, struct store *s,
                struct kube_error *err)
{
    struct pod_sink k = {.s = s};
    int rc = K_OK;
    if (u->all) {
        const struct kube_list_options opts = {.page_size = 500, .proto_item = sink_proto};
        rc = kube_list(c, "/api/v1/pods?fieldSelector=" USAGE_NON_TERMINAL, &opts, sink_json, &k,
                       NULL, 0, err);
    } else if (u->n > USAGE_SEQUENTIAL_MAX) {
        return fetch_parallel(c, u, s, err);
    } else {
        for (size_t i = 0; i < u->n && rc == K_OK; i++)
            rc = fetch_node(c, u->names[i], &k, err);
    }
    if (k.rc)
        return sink_failed(k.rc, err);
    return rc == K_OK && k.skipped ? informer_list_skipped("/api/v1/pods", k.skipped, err) : rc;
}

int usage_list_dra(struct kube_client *c, bool claims, struct dra_store **out,
                   struct kube_error *err)
{
    *out = NULL;
    struct dra_store *dra = dra_store_new();
    if (!dra)
        return K_ENOMEM;
    int rc;
    if (claims) {
        rc = dra_store_list(c, dra, err);
    } else {
        rc = dra_store_discover(c, dra, err); /* the DRA API version served */
        if (rc == K_OK)
            rc = dra_store_list_kind(c, dra, DRA_KIND_CLASS, err);
        bool served = false;
        if (rc == K_OK) {
            dra_store_read_lock(dra);
            served = dra_store_any_extended(dra);
            dra_store_read_unlock(dra);
        }
        if (rc == K_OK && !served) {
            dra_store_free(dra); /* no class serves an extended resource: no DRA for these */
            return K_OK;
        }
        for (int k = 0; rc == K_OK && k < DRA_KIND_COUNT; k++)
            if (k != DRA_KIND_CLASS)
                rc = dra_store_list_kind(c, dra, (enum dra_kind)k, err);
    }
    /* no DRA version served: no DRA; for pods with extended resources only, also when
       the user may not read the DRA objects: they are classified as before KEP-5004 */
    if (rc == K_ENOTFOUND || (!claims && rc == K_EFORBIDDEN)) {
        memset(err, 0, sizeof(*err));
        rc = K_OK;
        dra_store_free(dra);
        return rc;
    }
    if (rc) {
        dra_store_free(dra);
        return rc;
    }
    *out = dra;
    return K_OK;
}
