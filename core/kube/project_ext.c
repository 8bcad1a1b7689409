/*
 * project_ext.c - the fields of extended resources served by DRA (KEP-5004) from API JSON: a
 * DeviceClass's spec.extendedResourceName, a pod's per-container extended-resource requests and
 * its status.extendedResourceClaimStatus (project.h). Field names: kubernetes/kubernetes:
 * staging/src/k8s.io/api/resource/v1/types.go (DeviceClassSpec), staging/src/k8s.io/api/core/v1/
 * types.go (PodExtendedResourceClaimStatus, ContainerExtendedResourceRequest).
 */
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/dra.h"
#include "model/quantity.h"
#include "util/clock.h"
#include "util/result.h"

int project_class_extended(json_object *cls, struct dra_class *out)
{
    json_object *spec = kube_json_get(cls, "spec", json_type_object);
    const char *name = kube_json_str(spec, "extendedResourceName");
    if (kube_json_dup_opt(name && *name ? name : NULL, &out->extended_resource_name) != K_OK)
        return K_ENOMEM;
    int64_t created;
    if (clock_parse_rfc3339(kube_json_meta_str(cls, "creationTimestamp"), &created))
        out->created = created;
    return K_OK;
}

static bool ext_candidate(const struct gpu_set *gpus, const char *name)
{
    return gpu_set_contains(gpus, name) ||
           strncmp(name, DRA_EXTENDED_CLASS_PREFIX, strlen(DRA_EXTENDED_CLASS_PREFIX)) == 0;
}

static struct pod_ext *ext_of(struct kpod *pod)
{
    if (!pod->ext)
        pod->ext = calloc(1, sizeof(*pod->ext));
    return pod->ext;
}

/* The number of names in the container's defaulted requests (requests, plus the limits that
 * requests does not name) that sort before `name` (Go compares strings bytewise). */
static uint32_t name_index(json_object *requests, json_object *limits, const char *name)
{
    uint32_t k = 0;
    if (requests) {
        json_object_object_foreach(requests, key, val)
        {
            (void)val;
            k += strcmp(key, name) < 0;
        }
    }
    if (limits) {
        json_object_object_foreach(limits, key, val)
        {
            (void)val;
            k += strcmp(key, name) < 0 && !kube_json_field(requests, key);
        }
    }
    return k;
}

/* One request of `name` (its quantity `val`) from the container's defaulted requests; its index
 * (name_index, linear in the container's names) is taken only for a request that is kept, so a
 * container of many names costs POD_EXT_MAX_REQUESTS passes over them, not one per name. */
static int add_request(struct kpod *pod, const char *name, json_object *val, json_object *requests,
                       json_object *limits, uint32_t container, bool short_lived)
{
    const char *text = json_object_is_type(val, json_type_string)
                           ? json_object_get_string(val)
                           : json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN);
    int64_t milli;
    int rc = quantity_parse_milli(text, &milli);
    if (rc == K_EINVAL)
        return K_EPARSE;
    if (rc != K_OK)
        return rc;
    if (milli <= 0 || milli % 1000 != 0) /* Quantity.AsInt64 fails, or 0: no request */
        return K_OK;
    struct pod_ext *e = ext_of(pod);
    if (!e)
        return K_ENOMEM;
    if (e->n_requests >= POD_EXT_MAX_REQUESTS)
        return K_OK;
    size_t n = e->n_requests;
    if ((n & (n - 1)) == 0) { /* full: room for 1, 2, 4, ... POD_EXT_MAX_REQUESTS entries */
        struct pod_ext_request *grown = realloc(e->requests, (n ? 2 * n : 1) * sizeof(*grown));
        if (!grown)
            return K_ENOMEM;
        e->requests = grown;
    }
    struct pod_ext_request *r = &e->requests[e->n_requests];
    if (!(r->resource = strdup(name)))
        return K_ENOMEM;
    r->container = container;
    r->index = name_index(requests, limits, name);
    r->short_lived = short_lived;
    r->count = milli / 1000;
    e->n_requests++;
    return K_OK;
}

static int container_ext(json_object *c, const struct gpu_set *gpus, uint32_t container, bool init,
                         struct kpod *pod)
{
    json_object *resources = kube_json_get(c, "resources", json_type_object);
    json_object *requests = kube_json_get(resources, "requests", json_type_object);
    json_object *limits = kube_json_get(resources, "limits", json_type_object);
    const char *policy = kube_json_str(c, "restartPolicy");
    bool short_lived = init && !(policy && strcmp(policy, "Always") == 0);
    int rc = K_OK;
    if (requests) {
        json_object_object_foreach(requests, key, val)
        {
            if (rc == K_OK && ext_candidate(gpus, key))
                rc = add_request(pod, key, val, requests, limits, container, short_lived);
        }
    }
    if (limits) {
        json_object_object_foreach(limits, key, val)
        {
            if (rc == K_OK && ext_candidate(gpus, key) && !kube_json_field(requests, key))
                rc = add_request(pod, key, val, requests, limits, container, short_lived);
        }
    }
    return rc;
}

static int request_cmp(const void *pa, const void *pb)
{
    const struct pod_ext_request *a = pa, *b = pb;
    int c = strcmp(a->resource, b->resource);
    if (c)
        return c;
    return a->container < b->container ? -1 : a->container > b->container;
}

static int status_ext(json_object *st, struct kpod *pod)
{
    if (!st || !json_object_is_type(st, json_type_object))
        return K_OK;
    struct pod_ext *e = ext_of(pod);
    if (!e)
        return K_ENOMEM;
    const char *claim = kube_json_str(st, "resourceClaimName");
    if (kube_json_dup_opt(claim && *claim ? claim : NULL, &e->claim_name) != K_OK)
        return K_ENOMEM;
    json_object *arr = kube_json_get(st, "requestMappings", json_type_array);
    size_t n = arr ? json_object_array_length(arr) : 0;
    if (n > POD_EXT_MAX_REQUESTS)
        n = POD_EXT_MAX_REQUESTS;
    if (n == 0)
        return K_OK;
    if (!(e->mappings = calloc(n, sizeof(*e->mappings))))
        return K_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(arr, i);
        struct pod_ext_mapping *x = &e->mappings[e->n_mappings++];
        if (kube_json_dup_opt(kube_json_str(m, "containerName"), &x->container) != K_OK ||
            kube_json_dup_opt(kube_json_str(m, "resourceName"), &x->resource) != K_OK ||
            kube_json_dup_opt(kube_json_str(m, "requestName"), &x->request) != K_OK)
            return K_ENOMEM;
    }
    return K_OK;
}

int project_pod_ext(json_object *spec, json_object *status, const struct gpu_set *gpus,
                    struct kpod *pod)
{
    int rc = K_OK;
    json_object *inits = kube_json_get(spec, "initContainers", json_type_array);
    json_object *containers = kube_json_get(spec, "containers", json_type_array);
    size_t n_init = inits ? json_object_array_length(inits) : 0;
    size_t n = containers ? json_object_array_length(containers) : 0;
    for (size_t i = 0; i < n_init && rc == K_OK; i++)
        rc = container_ext(json_object_array_get_idx(inits, i), gpus, (uint32_t)i, true, pod);
    for (size_t i = 0; i < n && rc == K_OK; i++)
        rc = container_ext(json_object_array_get_idx(containers, i), gpus, (uint32_t)(n_init + i),
                           false, pod);
    if (rc == K_OK)
        rc =
            status_ext(kube_json_get(status, "extendedResourceClaimStatus", json_type_object), pod);
    if (pod->ext && pod->ext->n_requests > 1)
        qsort(pod->ext->requests, pod->ext->n_requests, sizeof(*pod->ext->requests), request_cmp);
    return rc;
}
