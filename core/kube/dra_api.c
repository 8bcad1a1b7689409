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
    "none", "v1alpha3", "v1beta1", "v1beta2", "v1",
};

#define PATH(v, k) DRA_API_GROUP_PATH "/" v "/" k
#define PATHS(v)                                                                                   \
    {                                                                                              \
        PATH(v, "resourceclaims"), PATH(v, "resourceclaimtemplates"), PATH(v, "deviceclasses"),    \
            PATH(v, "resourceslices"), PATH(v, "devicetaintrules")                                 \
    }
static const char *const kind_paths[DRA_API_VERSION_COUNT][DRA_KIND_COUNT] = {
    {"", "", "", "", ""}, PATHS("v1alpha3"), PATHS("v1beta1"), PATHS("v1beta2"), PATHS("v1"),
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

#define BIT(v) (1u << (v))
#define CORE_VERSIONS (BIT(DRA_API_V1) | BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1BETA1))
#define RULE_VERSIONS (BIT(DRA_API_V1) | BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1ALPHA3))

unsigned dra_kind_versions(enum dra_kind k)
{
    if (k < DRA_KIND_CORE_COUNT)
        return CORE_VERSIONS;
    return k == DRA_KIND_TAINT_RULE ? RULE_VERSIONS : 0;
}

bool dra_kind_served(json_object *doc, enum dra_kind k)
{
    if (!doc || k >= DRA_KIND_COUNT)
        return false;
    if (k < DRA_KIND_CORE_COUNT)
        return true;
    json_object *res = kube_json_get(doc, "resources", json_type_array);
    size_t n = res ? json_object_array_length(res) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = kube_json_str(json_object_array_get_idx(res, i), "name");
        if (name && strcmp(name, dra_kind_name(k)) == 0)
            return true;
    }
    return false;
}

enum dra_api_version dra_api_version_parse(const char *s)
{
    for (int v = DRA_API_NONE + 1; s && v < DRA_API_VERSION_COUNT; v++)
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

/* The newest version in `bits`, or DRA_API_NONE. */
static enum dra_api_version newest(unsigned bits)
{
    for (int v = DRA_API_VERSION_COUNT - 1; v > DRA_API_NONE; v--)
        if (bits & BIT(v))
            return (enum dra_api_version)v;
    return DRA_API_NONE;
}

enum dra_api_version dra_api_choose(unsigned served)
{
    return newest(served & CORE_VERSIONS);
}

char *dra_api_describe(unsigned served, char *buf, size_t len)
{
    size_t at = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int v = DRA_API_NONE + 1; v < DRA_API_VERSION_COUNT; v++) {
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

int dra_api_discover_kind(struct kube_client *client, enum dra_kind k, unsigned served,
                          enum dra_api_version *out, struct kube_error *err)
{
    if (k < DRA_KIND_CORE_COUNT) {
        *out = dra_api_choose(served);
        return K_OK;
    }
    unsigned left = served & dra_kind_versions(k);
    enum dra_api_version found = DRA_API_NONE;
    for (enum dra_api_version v = newest(left); v != DRA_API_NONE; v = newest(left)) {
        left &= ~BIT(v);
        char path[96];
        snprintf(path, sizeof(path), "%s/%s", DRA_API_GROUP_PATH, dra_api_version_name(v));
        json_object *doc = NULL;
        int rc = kube_get(client, path, &doc, err);
        bool listed = rc == K_OK && dra_kind_served(doc, k);
        json_object_put(doc);
        if (rc != K_OK && rc != K_ENOTFOUND)
            return rc;
        if (listed) {
            found = v;
            break;
        }
    }
    *out = found;
    return K_OK;
}

int dra_api_discover_kinds(struct kube_client *client, unsigned optional, struct dra_api_found *out,
                           struct kube_error *err)
{
    struct dra_api_found f = {0};
    int rc = dra_api_discover(client, &f.served, err);
    if (rc != K_OK)
        return rc;
    enum dra_api_version core = dra_api_choose(f.served);
    for (int k = 0; k < DRA_KIND_CORE_COUNT; k++)
        f.kind[k] = core;
    for (int k = DRA_KIND_CORE_COUNT; core != DRA_API_NONE && k < DRA_KIND_COUNT; k++)
        if (optional & BIT(k)) {
            rc = dra_api_discover_kind(client, (enum dra_kind)k, f.served, &f.kind[k], err);
            if (rc != K_OK)
                return rc;
        }
    *out = f;
    return K_OK;
}

/* ", devicetaintrules at v1beta2" or "; devicetaintrules: ... alone" for each optional kind
 * (p->optional) into buf (len bytes, always terminated), from `kinds`. */
static void describe_optional(const struct dra_api_probe *p, const enum dra_api_version *kinds,
                              bool only_changed, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = DRA_KIND_CORE_COUNT; k < DRA_KIND_COUNT; k++) {
        if (!(p->optional & BIT(k)) || (only_changed && kinds[k] == p->kinds[k]))
            continue;
        int n;
        if (kinds[k] != DRA_API_NONE)
            n = snprintf(buf + at, len - at, "; %s at %s", dra_kind_name((enum dra_kind)k),
                         dra_api_version_name(kinds[k]));
        else
            n = snprintf(buf + at, len - at, "; %s served at none of v1, v1beta2, v1alpha3%s",
                         dra_kind_name((enum dra_kind)k),
                         k == DRA_KIND_TAINT_RULE
                             ? ": device taints come from the ResourceSlices alone"
                             : "");
        if (n < 0 || (size_t)n >= len - at)
            break;
        at += (size_t)n;
    }
}

bool dra_api_probe_step(struct kube_client *client, struct dra_api_probe *p)
{
    struct kube_error err = {0};
    struct dra_api_found f;
    int rc = dra_api_discover_kinds(client, p->optional, &f, &err);
    if (rc == K_ECANCELED)
        return false; /* shutting down */
    if (rc != K_OK) {
        if (p->checked)
            log_info_kv(p->failure_said ? 2 : 0,
                        "DRA API " DRA_API_GROUP ": discovery failed; asking again later",
                        LOG_STR("err", k_strerror(rc)),
                        LOG_STR("detail", err.message[0] ? err.message : NULL),
                        LOG_STR("keeping", p->version != DRA_API_NONE
                                               ? dra_api_version_name(p->version)
                                               : "running without DRA"));
        else
            log_info_kv(p->failure_said ? 2 : 0,
                        "DRA API " DRA_API_GROUP ": discovery failed: running without DRA until "
                        "it answers",
                        LOG_STR("err", k_strerror(rc)),
                        LOG_STR("detail", err.message[0] ? err.message : NULL));
        p->failure_said = true;
        return false;
    }
    p->failure_said = false;
    enum dra_api_version v = f.kind[DRA_KIND_CLAIM];
    bool changed = !p->checked || v != p->version;
    bool optional_changed = false;
    for (int k = DRA_KIND_CORE_COUNT; k < DRA_KIND_COUNT; k++)
        optional_changed = optional_changed || f.kind[k] != p->kinds[k];
    char desc[64], opt[256];
    if (changed && v != DRA_API_NONE) {
        describe_optional(p, f.kind, false, opt, sizeof(opt));
        log_info_kv(0, "DRA API " DRA_API_GROUP ": reading",
                    LOG_STR("version", dra_api_version_name(v)),
                    LOG_STR("served", dra_api_describe(f.served, desc, sizeof(desc))),
                    LOG_STR("optional", opt[0] ? opt + 2 : NULL)); /* "; x at v" -> "x at v" */
    } else if (changed) {
        log_info_kv(0,
                    "DRA API " DRA_API_GROUP " is not served (none of v1, v1beta2, v1beta1): "
                    "running without DRA; asking again later",
                    LOG_BOOL("anyMore", p->checked));
    } else if (optional_changed) {
        describe_optional(p, f.kind, true, opt, sizeof(opt));
        log_info_kv(0,
                    "DRA API " DRA_API_GROUP ": reading the same version, optional kinds changed",
                    LOG_STR("version", dra_api_version_name(v)),
                    LOG_STR("optional", opt[0] ? opt + 2 : "")); /* "; x at v" -> "x at v" */
    }
    p->checked = true;
    p->version = v;
    memcpy(p->kinds, f.kind, sizeof(p->kinds));
    p->served = f.served;
    return changed || optional_changed;
}
