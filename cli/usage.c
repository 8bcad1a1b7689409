/* usage.c - the nodes whose pods a one-shot classification reads, and the LISTs for them. */
#include "usage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int usage_nodes_collect(struct store *s, const struct kpod *pod, const struct dra_view *dra,
                        int64_t now, int64_t no_scheduler_grace, struct usage_nodes *u)
{
    if (!pod)
        return K_OK;
    if (pod->nominated_node && *pod->nominated_node && !pod->node_name) {
        int rc = usage_nodes_add(u, pod->nominated_node);
        if (rc)
            return rc;
    }
    size_t n_nodes;
    const struct knode *const *nodes = store_nodes(s, &n_nodes);
    struct recorder r = {.nodes = nodes, .n_nodes = n_nodes, .u = u};
    struct classify_input in = {.pod = pod,
                                .nodes = nodes,
                                .n_nodes = n_nodes,
                                .usage = record_usage,
                                .usage_ctx = &r,
                                .dra = dra,
                                .no_scheduler_grace = no_scheduler_grace};
    struct store_facts *facts = malloc(sizeof(*facts));
    struct classify_result *res = malloc(sizeof(*res));
    if (!facts || !res) {
        free(facts);
        free(res);
        return K_ENOMEM;
    }
    store_classify_facts(s, pod, now, facts, &in);
    res->verdicts = NULL;
    int rc = classify(&in, res);
    free(facts);
    free(res);
    return rc ? rc : r.rc;
}

/* One node's non-terminal pods, one response: a node holds at most its status.allocatable pods
 * (110 by default), and a continue token may not come with resourceVersion=0. */
static int fetch_node(struct kube_client *c, const char *node, const struct informer_handlers *h,
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
    snprintf(path, sizeof(path),
             "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s%%2C%s&resourceVersion=0", esc,
             USAGE_NON_TERMINAL);
    return informer_list_once(c, path, 0, h, NULL, 0, err);
}

/* The nodes of `u` read by several threads: they take the next node under `mu`, which also
 * serializes the caller's upsert and guards the first error. */
struct fetch_shared {
    const struct usage_nodes *u;
    const struct informer_handlers *h;
    pthread_mutex_t mu;
    size_t next;
    int rc;
    struct kube_error err;
};

struct fetch_worker {
    struct fetch_shared *sh;
    struct kube_client *c;
};

static void locked_upsert(void *ctx, json_object *obj)
{
    struct fetch_shared *sh = ctx;
    pthread_mutex_lock(&sh->mu);
    sh->h->upsert(sh->h->ctx, obj);
    pthread_mutex_unlock(&sh->mu);
}

static void *fetch_worker_main(void *arg)
{
    struct fetch_worker *w = arg;
    struct fetch_shared *sh = w->sh;
    const struct informer_handlers lh = {.ctx = sh, .upsert = locked_upsert};
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        size_t i = sh->rc ? sh->u->n : sh->next++;
        pthread_mutex_unlock(&sh->mu);
        if (i >= sh->u->n)
            return NULL;
        struct kube_error e = {0};
        int rc = fetch_node(w->c, sh->u->names[i], &lh, &e);
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

static int fetch_parallel(struct kube_client *c, const struct usage_nodes *u,
                          const struct informer_handlers *h, struct kube_error *err)
{
    struct fetch_shared sh = {.u = u, .h = h};
    pthread_mutex_init(&sh.mu, NULL);
    struct fetch_worker w[USAGE_WORKERS];
    pthread_t t[USAGE_WORKERS];
    size_t want = u->n < USAGE_WORKERS ? u->n : USAGE_WORKERS, started = 0;
    w[0] = (struct fetch_worker){&sh, c}; /* the caller's thread and client */
    for (size_t k = 1; k < want; k++) {
        struct kube_client *clone = kube_client_clone(c);
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
    pthread_mutex_destroy(&sh.mu);
    if (sh.rc && err)
        *err = sh.err;
    return sh.rc;
}

int usage_fetch(struct kube_client *c, const struct usage_nodes *u,
                const struct informer_handlers *h, struct kube_error *err)
{
    if (u->all)
        return informer_list_once(c, "/api/v1/pods?fieldSelector=" USAGE_NON_TERMINAL, 500, h, NULL,
                                  0, err);
    const struct informer_handlers only_upsert = {.ctx = h->ctx, .upsert = h->upsert};
    if (u->n > USAGE_SEQUENTIAL_MAX)
        return fetch_parallel(c, u, &only_upsert, err);
    for (size_t i = 0; i < u->n; i++) {
        int rc = fetch_node(c, u->names[i], &only_upsert, err);
        if (rc)
            return rc;
    }
    return K_OK;
}
