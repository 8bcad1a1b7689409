/*
 * warnings_ext.c - what the admission checks need of extended resources served by DRA
 * (KEP-5004): which class serves a resource, and the ResourceQuota keys a pod counts against
 * (warnings.h wh_quota_items). Upstream: kubernetes/kubernetes pkg/quota/v1/evaluator/core/
 * pods.go and resource_claims.go (1.37).
 */
#include <stdio.h>
#include <string.h>

#include "cache/dra_store.h"
#include "classify/dra_ext.h"
#include "warnings.h"

/* The quota key of a DeviceClass's devices (resource_claims.go V1ResourceByDeviceClass). */
#define CLASS_DEVICES_SUFFIX ".deviceclass.resource.k8s.io/devices"

const struct dra_class *wh_served_by_dra(const struct wh_snapshot *snap, const char *resource)
{
    if (!snap->dra || !snap->dra_gpus || !dra_store_synced(snap->dra, DRA_KIND_CLASS))
        return NULL;
    return dra_store_extended_class(snap->dra, resource);
}

bool wh_quota_key(const struct gpu_set *gpus, const char *key)
{
    size_t n = strlen(key), s = strlen(CLASS_DEVICES_SUFFIX);
    if (n > s && strcmp(key + n - s, CLASS_DEVICES_SUFFIX) == 0)
        return true;
    if (strncmp(key, "requests.", 9) != 0)
        return false;
    return gpu_set_contains(gpus, key + 9) ||
           strncmp(key + 9, DRA_EXTENDED_CLASS_PREFIX, strlen(DRA_EXTENDED_CLASS_PREFIX)) == 0;
}

/* Add (key, per_pod) unless the key is there; false when out is full. */
static bool add(struct wh_quota_item *out, size_t max, size_t *n, const char *key,
                const char *resource, const char *via, int64_t per_pod)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(out[i].key, key) == 0)
            return true;
    if (*n >= max || per_pod <= 0 || strlen(key) >= sizeof(out[0].key))
        return *n < max;
    struct wh_quota_item *it = &out[(*n)++];
    snprintf(it->key, sizeof(it->key), "%s", key);
    it->resource = resource;
    it->via_class = via;
    it->per_pod = per_pod;
    return true;
}

/* The pod's effective request of an extended resource from its per-container requests: the sum
 * of the long-lived containers', or the largest init container's when larger (requests.h has
 * the exact rule; sidecars before an init container are not added here). */
static int64_t effective(const struct pod_ext *e, const char *resource)
{
    int64_t sum = 0, init = 0;
    for (size_t i = 0; i < e->n_requests; i++) {
        if (strcmp(e->requests[i].resource, resource) != 0)
            continue;
        if (e->requests[i].short_lived)
            init = e->requests[i].count > init ? e->requests[i].count : init;
        else
            sum = int64_add_sat(sum, e->requests[i].count);
    }
    return sum > init ? sum : init;
}

size_t wh_quota_items(const struct wh_snapshot *snap, const struct kpod *pod,
                      struct wh_quota_item *out, size_t max)
{
    size_t n = 0;
    char key[320];
    for (size_t i = 0; i < pod->gpu_requests.n; i++) {
        snprintf(key, sizeof(key), "requests.%s", pod->gpu_requests.items[i].name);
        if (!add(out, max, &n, key, pod->gpu_requests.items[i].name, NULL,
                 pod->gpu_requests.items[i].value))
            return n;
    }
    if (!pod_has_ext_requests(pod))
        return n;
    const struct pod_ext *e = pod->ext;
    for (size_t i = 0; i < e->n_requests; i++) {
        const char *r = e->requests[i].resource;
        if ((i > 0 && strcmp(r, e->requests[i - 1].resource) == 0) ||
            strncmp(r, DRA_EXTENDED_CLASS_PREFIX, strlen(DRA_EXTENDED_CLASS_PREFIX)) != 0)
            continue;
        snprintf(key, sizeof(key), "requests.%s", r);
        if (!add(out, max, &n, key, r, NULL, effective(e, r)))
            return n;
    }
    if (!snap->dra || !snap->dra_gpus || !dra_store_synced(snap->dra, DRA_KIND_CLASS))
        return n;
    /* the claim kube-scheduler creates: its devices per class (resource_claims.go Usage), and
       the implicit name of the class, less what the pod counts already (addExtendedResourceQuota)
     */
    struct dra_view view = wh_snapshot_dra_view(snap);
    struct dra_ext_req reqs[POD_EXT_MAX_REQUESTS];
    size_t nr = dra_ext_build(pod, &view, reqs, POD_EXT_MAX_REQUESTS);
    for (size_t i = 0; i < nr; i++) {
        const struct dra_class *c = reqs[i].cls;
        bool first = true;
        int64_t devices = 0;
        for (size_t j = 0; j < nr; j++) {
            if (reqs[j].cls != c)
                continue;
            first = first && j >= i;
            devices = int64_add_sat(devices, reqs[j].count);
        }
        if (!first)
            continue;
        snprintf(key, sizeof(key), "%s%s", c->name, CLASS_DEVICES_SUFFIX);
        if (!add(out, max, &n, key, reqs[i].resource, c->name, devices))
            return n;
        snprintf(key, sizeof(key), "requests.%s%s", DRA_EXTENDED_CLASS_PREFIX, c->name);
        if (!add(out, max, &n, key, reqs[i].resource, c->name, devices))
            return n;
    }
    return n;
}
