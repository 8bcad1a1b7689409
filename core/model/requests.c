/* requests.c - the scheduler's aggregation of container requests (requests.h). */
#include "model/requests.h"

#include <string.h>

#include "model/quantity.h"
#include "util/result.h"

static bool lists(const struct resource_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return true;
    return false;
}

/* l[name] = max(l[name], v), inserting it when absent */
static int list_max(struct resource_list *l, const char *name, int64_t v)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].name, name) == 0) {
            if (v > l->items[i].value)
                l->items[i].value = v;
            return K_OK;
        }
    }
    return resource_list_add(l, name, v);
}

static int list_add_all(struct resource_list *dst, const struct resource_list *src)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = resource_list_add(dst, src->items[i].name, src->items[i].value);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

static int list_max_all(struct resource_list *dst, const struct resource_list *src)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = list_max(dst, src->items[i].name, src->items[i].value);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

int container_requests_default(const struct resource_list *requests,
                               const struct resource_list *limits, struct resource_list *out)
{
    int rc = requests ? list_add_all(out, requests) : K_OK;
    for (size_t i = 0; rc == K_OK && limits && i < limits->n; i++)
        if (!requests || !lists(requests, limits->items[i].name))
            rc = resource_list_add(out, limits->items[i].name, limits->items[i].value);
    return rc;
}

int pod_requests_add_container(struct pod_requests *pr, const struct resource_list *one)
{
    return list_add_all(&pr->reqs, one);
}

int pod_requests_add_init(struct pod_requests *pr, const struct resource_list *one,
                          bool restartable)
{
    int rc;
    if (restartable) {
        rc = list_add_all(&pr->reqs, one);
        if (rc == K_OK)
            rc = list_add_all(&pr->sidecars, one);
        return rc == K_OK ? list_max_all(&pr->init_max, &pr->sidecars) : rc;
    }
    /* its request + the sidecars started before it */
    struct resource_list sum = {0};
    rc = list_add_all(&sum, one);
    if (rc == K_OK)
        rc = list_add_all(&sum, &pr->sidecars);
    if (rc == K_OK)
        rc = list_max_all(&pr->init_max, &sum);
    resource_list_cleanup(&sum);
    return rc;
}

int pod_requests_finish(struct pod_requests *pr, const struct resource_list *overhead,
                        struct resource_list *out)
{
    int rc = list_max_all(&pr->reqs, &pr->init_max);
    if (rc == K_OK && overhead)
        rc = list_add_all(&pr->reqs, overhead);
    for (size_t j = 0; rc == K_OK && j < pr->reqs.n; j++) {
        int64_t v = quantity_milli_to_value(pr->reqs.items[j].value);
        if (v > 0) /* zero (or invalid negative) amounts ask for no GPU */
            rc = resource_list_add(out, pr->reqs.items[j].name, v);
    }
    pod_requests_cleanup(pr);
    return rc;
}

void pod_requests_cleanup(struct pod_requests *pr)
{
    if (!pr)
        return;
    resource_list_cleanup(&pr->reqs);
    resource_list_cleanup(&pr->sidecars);
    resource_list_cleanup(&pr->init_max);
}
