/* usage.c - the nodes whose pods a one-shot classification reads, and the LISTs for them. */
#include "usage.h"

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

int usage_fetch(struct kube_client *c, const struct usage_nodes *u,
                const struct informer_handlers *h, struct kube_error *err)
{
    if (u->all)
        return informer_list_once(c, "/api/v1/pods?fieldSelector=" USAGE_NON_TERMINAL, 500, h, NULL,
                                  0, err);
    for (size_t i = 0; i < u->n; i++) {
        char esc[512], path[1024];
        if (kube_path_escape(u->names[i], esc, sizeof(esc)) != K_OK)
            return K_EINVAL;
        /* node names are DNS subdomains: nothing in them needs a selector escape */
        snprintf(path, sizeof(path),
                 "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s%%2C%s&resourceVersion=0", esc,
                 USAGE_NON_TERMINAL);
        /* one page: a continue token may not come with resourceVersion=0; a node holds at most
         * its status.allocatable pods (110 by default) */
        int rc = informer_list_once(c, path, 0, h, NULL, 0, err);
        if (rc)
            return rc;
    }
    return K_OK;
}
