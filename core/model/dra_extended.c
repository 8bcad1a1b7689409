/* dra_extended.c - the records of extended resources served by DRA (model/dra.h, KEP-5004). */
#include <stdlib.h>
#include <string.h>

#include "model/dra.h"
#include "model/model.h"

void pod_ext_free(struct pod_ext *e)
{
    if (!e)
        return;
    for (size_t i = 0; e->requests && i < e->n_requests; i++)
        free(e->requests[i].resource);
    free(e->requests);
    free(e->claim_name);
    for (size_t i = 0; e->mappings && i < e->n_mappings; i++) {
        free(e->mappings[i].container);
        free(e->mappings[i].resource);
        free(e->mappings[i].request);
    }
    free(e->mappings);
    free(e);
}

bool pod_ext_equal(const struct pod_ext *a, const struct pod_ext *b)
{
    if (!a || !b)
        return a == b;
    if (a->n_requests != b->n_requests || a->n_mappings != b->n_mappings ||
        !model_str_equal(a->claim_name, b->claim_name))
        return false;
    for (size_t i = 0; i < a->n_requests; i++) {
        const struct pod_ext_request *x = &a->requests[i], *y = &b->requests[i];
        if (!model_str_equal(x->resource, y->resource) || x->container != y->container ||
            x->index != y->index || x->short_lived != y->short_lived || x->count != y->count)
            return false;
    }
    for (size_t i = 0; i < a->n_mappings; i++) {
        const struct pod_ext_mapping *x = &a->mappings[i], *y = &b->mappings[i];
        if (!model_str_equal(x->container, y->container) ||
            !model_str_equal(x->resource, y->resource) || !model_str_equal(x->request, y->request))
            return false;
    }
    return true;
}

bool dra_extended_class_serves(const struct dra_class *c, const char *resource)
{
    if (!c || !c->name || !resource)
        return false;
    if (c->extended_resource_name && strcmp(c->extended_resource_name, resource) == 0)
        return true;
    size_t n = strlen(DRA_EXTENDED_CLASS_PREFIX);
    return strncmp(resource, DRA_EXTENDED_CLASS_PREFIX, n) == 0 &&
           strcmp(resource + n, c->name) == 0;
}

bool dra_extended_class_wins(const struct dra_class *a, const struct dra_class *b)
{
    if (!b)
        return true;
    if (!a)
        return false;
    if (a->created != b->created)
        return a->created < b->created;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "") < 0;
}

bool pod_has_ext_requests(const struct kpod *p)
{
    return p && p->ext && p->ext->n_requests > 0;
}

bool pod_asks_class_name(const struct kpod *p)
{
    size_t n = strlen(DRA_EXTENDED_CLASS_PREFIX);
    for (size_t i = 0; p && p->ext && i < p->ext->n_requests; i++)
        if (strncmp(p->ext->requests[i].resource, DRA_EXTENDED_CLASS_PREFIX, n) == 0)
            return true;
    return false;
}
