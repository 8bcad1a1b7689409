/* dra_api.c - the DRA API version the API server serves, and the collection paths at it. */
#include "kube/dra_api.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "util/log.h"
#include "util/result.h"

static const char *const kind_names[DRA_KIND_COUNT] = {
    "resourceclaims", "resourceclaimtemplates", "deviceclasses",
    "resourceslices", "devicetaintrules",
};

static const char *const version_names[DRA_API_VERSION_COUNT] = {
    "none",
    "v1beta1",
    "v1beta2",
    "v1",
};

#define PATH(v, k) DRA_API_GROUP_PATH "/" v "/" k
#define PATHS(v)                                                                                   \
    {                                                                                              \
        PATH(v, "resourceclaims"), PATH(v, "resourceclaimtemplates"), PATH(v, "deviceclasses"),    \
            PATH(v, "resourceslices"), PATH(v, "devicetaintrules")                                 \
    }
static const char *const kind_paths[DRA_API_VERSION_COUNT][DRA_KIND_COUNT] = {
    {"", "", "", "", ""},
    PATHS("v1beta1"),
    PATHS("v1beta2"),
    PATHS("v1"),
};

const char *dra_kind_name(enum dra_kind k)
{
    return k < DRA_KIND_COUNT ? kind_names[k] : "";
}

const char *dra_kind_path(enum dra_kind k, enum dra_api_version v)
{
    return k < DRA_KIND_COUNT && v < DRA_API_VERSION_COUNT ? kind_paths[v][k] : "";
}

const char *dra_api_version_name(enum dra_api_version v)
{
    return v < DRA_API_VERSION_COUNT ? version_names[v] : "none";
}

enum dra_api_version dra_api_version_parse(const char *s)
{
    for (int v = DRA_API_V1BETA1; s && v < DRA_API_VERSION_COUNT; v++)
        if (strcmp(s, version_names[v]) == 0)
            return (enum dra_api_version)v;
    return DRA_API_NONE;
}

unsigned dra_api_served(json_object *group)
{
    const char *name = kube_json_str(group, "name");
    if (!name || strcmp(name, DRA_API_GROUP) != 0)
        return 0;
    json_object *versions = kube_json_get(group, "versions", json_type_array);
    size_t n = versions ? json_object_array_length(versions) : 0;
    unsigned served = 0;
    for (size_t i = 0; i < n; i++) {
        enum dra_api_version v =
            dra_api_version_parse(kube_json_str(json_object_array_get_idx(versions, i), "version"));
        if (v != DRA_API_NONE)
            served |= 1u << v;
    }
    return served;
}

enum dra_api_version dra_api_choose(unsigned served)
{
    for (int v = DRA_API_VERSION_COUNT - 1; v > DRA_API_NONE; v--)
        if (served & (1u << v))
            return (enum dra_api_version)v;
    return DRA_API_NONE;
}

char *dra_api_describe(unsigned served, char *buf, size_t len)
{
    size_t at = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int v = DRA_API_V1BETA1; v < DRA_API_VERSION_COUNT; v++) {
        if (!(served & (1u << v)))
            continue;
        int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", version_names[v]);
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, len, "none");
    return buf;
}

int dra_api_discover(struct kube_client *client, unsigned *served, struct kube_error *err)
{
    json_object *doc = NULL;
    int rc = kube_get(client, DRA_API_GROUP_PATH, &doc, err);
    if (rc == K_OK)
        *served = dra_api_served(doc);
    else if (rc == K_ENOTFOUND)
        *served = 0;
    json_object_put(doc);
    return rc == K_ENOTFOUND ? K_OK : rc;
}

bool dra_api_probe_step(struct kube_client *client, struct dra_api_probe *p)
{
    struct kube_error err = {0};
    unsigned served = p->served;
    int rc = dra_api_discover(client, &served, &err);
    if (rc == K_ECANCELED)
        return false; /* shutting down */
    if (rc != K_OK) {
        if (p->checked)
            log_info(p->failure_said ? 2 : 0,
                     "DRA API " DRA_API_GROUP ": discovery failed (%s%s%s): keeping %s; asking "
                     "again later",
                     k_strerror(rc), err.message[0] ? ": " : "", err.message,
                     p->version != DRA_API_NONE ? dra_api_version_name(p->version)
                                                : "running without DRA");
        else
            log_info(p->failure_said ? 2 : 0,
                     "DRA API " DRA_API_GROUP ": discovery failed (%s%s%s): running without DRA "
                     "until it answers",
                     k_strerror(rc), err.message[0] ? ": " : "", err.message);
        p->failure_said = true;
        return false;
    }
    p->failure_said = false;
    enum dra_api_version v = dra_api_choose(served);
    bool changed = !p->checked || v != p->version;
    char desc[64];
    if (changed && v != DRA_API_NONE)
        log_info(0, "DRA API " DRA_API_GROUP ": reading %s (served: %s)", dra_api_version_name(v),
                 dra_api_describe(served, desc, sizeof(desc)));
    else if (changed)
        log_info(0,
                 "DRA API " DRA_API_GROUP " is not served%s (none of v1, v1beta2, v1beta1): "
                 "running without DRA; asking again later",
                 p->checked ? " any more" : "");
    p->checked = true;
    p->version = v;
    p->served = served;
    return changed;
}
