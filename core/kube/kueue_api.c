/* kueue_api.c - the Kueue API version the API server serves, and the Workloads' path at it. */
#include "kube/kueue_api.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "util/log.h"
#include "util/result.h"

static const char *const version_names[KUEUE_API_VERSION_COUNT] = {"none", "v1beta1", "v1beta2"};

const char *kueue_api_version_name(enum kueue_api_version v)
{
    return v < KUEUE_API_VERSION_COUNT ? version_names[v] : "none";
}

char *kueue_workloads_path(enum kueue_api_version v, const char *ns, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    buf[0] = '\0';
    if (v == KUEUE_API_NONE || v >= KUEUE_API_VERSION_COUNT)
        return buf;
    if (ns)
        snprintf(buf, len, "%s/%s/namespaces/%s/workloads", KUEUE_API_GROUP_PATH, version_names[v],
                 ns);
    else
        snprintf(buf, len, "%s/%s/workloads", KUEUE_API_GROUP_PATH, version_names[v]);
    return buf;
}

enum kueue_api_version kueue_api_choose(json_object *group)
{
    const char *name = kube_json_str(group, "name");
    if (!name || strcmp(name, KUEUE_API_GROUP) != 0)
        return KUEUE_API_NONE;
    json_object *versions = kube_json_get(group, "versions", json_type_array);
    size_t n = versions ? json_object_array_length(versions) : 0;
    enum kueue_api_version best = KUEUE_API_NONE;
    for (size_t i = 0; i < n; i++) {
        const char *s = kube_json_str(json_object_array_get_idx(versions, i), "version");
        for (int v = KUEUE_API_V1BETA1; s && v < KUEUE_API_VERSION_COUNT; v++)
            if (strcmp(s, version_names[v]) == 0 && v > (int)best)
                best = (enum kueue_api_version)v;
    }
    return best;
}

int kueue_api_discover(struct kube_client *client, enum kueue_api_version *v,
                       struct kube_error *err)
{
    json_object *doc = NULL;
    int rc = kube_get(client, KUEUE_API_GROUP_PATH, &doc, err);
    if (rc == K_OK)
        *v = kueue_api_choose(doc);
    else if (rc == K_ENOTFOUND)
        *v = KUEUE_API_NONE;
    json_object_put(doc);
    return rc == K_ENOTFOUND ? K_OK : rc;
}

bool kueue_api_probe_step(struct kube_client *client, struct kueue_api_probe *p)
{
    struct kube_error err = {0};
    enum kueue_api_version v = p->version;
    int rc = kueue_api_discover(client, &v, &err);
    if (rc == K_ECANCELED)
        return false;
    if (rc != K_OK) {
        log_info_kv(p->failure_said ? 2 : 0,
                    "Kueue API " KUEUE_API_GROUP ": discovery failed; asking again later",
                    LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message[0] ? err.message : NULL),
                    LOG_STR("keeping", p->version != KUEUE_API_NONE ? "the version read"
                                                                    : "no Workloads read"));
        p->failure_said = true;
        return false;
    }
    p->failure_said = false;
    bool changed = !p->checked || v != p->version;
    if (changed && v != KUEUE_API_NONE)
        log_info_kv(0, "Kueue API " KUEUE_API_GROUP ": reading Workloads",
                    LOG_STR("version", kueue_api_version_name(v)));
    else if (changed)
        log_info_kv(0,
                    "Kueue API " KUEUE_API_GROUP " is not served: no Kueue Workloads; asking "
                    "again later",
                    LOG_BOOL("anyMore", p->checked));
    p->checked = true;
    p->version = v;
    return changed;
}
