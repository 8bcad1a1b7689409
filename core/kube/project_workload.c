/* project_workload.c - a Kueue Workload's JSON into struct kworkload, bounded. */
#include "kube/project_workload.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"
#include "util/utf8.h"

/* A bounded copy of s (NULL stays NULL): at most WORKLOAD_MAX_TEXT bytes of valid UTF-8. */
static int dup_text(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return K_OK;
    size_t len = strnlen(s, WORKLOAD_MAX_TEXT);
    char *d = malloc(len + 1);
    if (!d)
        return K_ENOMEM;
    utf8_copy(d, len + 1, s, len);
    *out = d;
    return K_OK;
}

static int read_condition(json_object *c, struct pod_condition *out)
{
    if (out->status != COND_ABSENT) /* the first of a type counts */
        return K_OK;
    out->status = cond_status_parse(kube_json_str(c, "status"));
    if (out->status == COND_ABSENT)
        out->status = COND_UNKNOWN;
    if (dup_text(kube_json_str(c, "reason"), &out->reason) != K_OK ||
        dup_text(kube_json_str(c, "message"), &out->message) != K_OK)
        return K_ENOMEM;
    return K_OK;
}

static int read_owners(json_object *meta, struct kworkload *out)
{
    json_object *owners = kube_json_get(meta, "ownerReferences", json_type_array);
    size_t n = owners ? json_object_array_length(owners) : 0;
    for (size_t i = 0; i < n && out->n_owners < WORKLOAD_MAX_OWNERS; i++) {
        json_object *o = json_object_array_get_idx(owners, i);
        const char *uid = kube_json_str(o, "uid");
        if (!uid)
            continue;
        struct workload_owner *w = &out->owners[out->n_owners++];
        if (dup_text(kube_json_str(o, "kind"), &w->kind) != K_OK ||
            dup_text(kube_json_str(o, "name"), &w->name) != K_OK || dup_text(uid, &w->uid) != K_OK)
            return K_ENOMEM;
    }
    return K_OK;
}

static int read_status(json_object *status, struct kworkload *out)
{
    json_object *adm = kube_json_get(status, "admission", json_type_object);
    if (dup_text(kube_json_str(adm, "clusterQueue"), &out->cluster_queue) != K_OK)
        return K_ENOMEM;
    json_object *conds = kube_json_get(status, "conditions", json_type_array);
    size_t n = conds ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n && i < WORKLOAD_MAX_CONDITIONS; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *type = kube_json_str(c, "type");
        int rc = K_OK;
        if (!type)
            continue;
        if (strcmp(type, "QuotaReserved") == 0)
            rc = read_condition(c, &out->quota_reserved);
        else if (strcmp(type, "Admitted") == 0)
            rc = read_condition(c, &out->admitted);
        else if (strcmp(type, "Finished") == 0)
            out->finished =
                out->finished || cond_status_parse(kube_json_str(c, "status")) == COND_TRUE;
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

int project_workload(json_object *obj, struct kworkload *out)
{
    memset(out, 0, sizeof(*out));
    json_object *meta = kube_json_get(obj, "metadata", json_type_object);
    const char *ns = kube_json_str(meta, "namespace"), *name = kube_json_str(meta, "name");
    if (!ns || !name || !*ns || !*name)
        return K_EINVAL;
    json_object *del = kube_json_field(meta, "deletionTimestamp");
    out->deleting = del != NULL;
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    int rc = K_OK;
    if (dup_text(ns, &out->ns) != K_OK || dup_text(name, &out->name) != K_OK ||
        dup_text(kube_json_str(meta, "uid"), &out->uid) != K_OK ||
        dup_text(kube_json_str(spec, "queueName"), &out->queue_name) != K_OK)
        rc = K_ENOMEM;
    if (rc == K_OK)
        rc = read_owners(meta, out);
    if (rc == K_OK)
        rc = read_status(kube_json_get(obj, "status", json_type_object), out);
    if (rc != K_OK)
        workload_cleanup(out);
    return rc;
}
