/*
 * project_dra_binding.c - binding conditions of DRA devices (KEP-5007) from resource.k8s.io/v1
 * JSON: a device's or an allocation result's bindsToNode / bindingConditions /
 * bindingFailureConditions, and a claim's status.allocation.allocationTimestamp and
 * status.devices[] conditions (project.h). Field names: kubernetes/kubernetes:
 * staging/src/k8s.io/api/resource/v1/types.go.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/clock.h"
#include "util/result.h"

/* A JSON array of strings `key` of `o` into names[] (at most `max`). */
static int string_list(json_object *o, const char *key, size_t max, char **names, size_t *n)
{
    json_object *arr = kube_json_field(o, key);
    if (!arr)
        return K_OK;
    if (!json_object_is_type(arr, json_type_array))
        return K_EPARSE;
    size_t len = json_object_array_length(arr);
    if (len > max)
        return K_ETOOBIG;
    for (size_t i = 0; i < len; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!v || !json_object_is_type(v, json_type_string))
            return K_EPARSE;
        names[*n] = strdup(json_object_get_string(v));
        if (!names[*n])
            return K_ENOMEM;
        (*n)++;
    }
    return K_OK;
}

int project_dra_binding(json_object *o, struct dra_binding *out)
{
    json_object *b = kube_json_field(o, "bindsToNode");
    out->binds_to_node =
        b && json_object_is_type(b, json_type_boolean) && json_object_get_boolean(b);
    int rc = string_list(o, "bindingConditions", DRA_MAX_BINDING_CONDITIONS, out->conditions,
                         &out->n_conditions);
    if (rc != K_OK)
        return rc;
    return string_list(o, "bindingFailureConditions", DRA_MAX_BINDING_CONDITIONS,
                       out->failure_conditions, &out->n_failure_conditions);
}

static int project_conditions(json_object *o, struct dra_device_status *s)
{
    json_object *arr;
    size_t n;
    void *items;
    int rc = project_dra_array(o, "conditions", DRA_MAX_DEVICE_CONDITIONS, sizeof(*s->conditions),
                               &items, &arr, &n);
    s->conditions = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        json_object *c = json_object_array_get_idx(arr, i);
        struct dra_condition *d = &s->conditions[s->n_conditions++];
        if (!kube_json_str(c, "type"))
            return K_EPARSE;
        d->status = cond_status_parse(kube_json_str(c, "status"));
        if (kube_json_dup_opt(kube_json_str(c, "type"), &d->type) != K_OK ||
            kube_json_dup_opt(kube_json_str(c, "reason"), &d->reason) != K_OK ||
            kube_json_dup_opt(kube_json_str(c, "message"), &d->message) != K_OK)
            return K_ENOMEM;
    }
    return rc;
}

int project_dra_claim_binding(json_object *status, struct dra_claim *out)
{
    out->allocation_timestamp = 0;
    out->device_statuses = NULL;
    out->n_device_statuses = 0;
    json_object *alloc = kube_json_get(status, "allocation", json_type_object);
    int64_t ts;
    if (clock_parse_rfc3339(kube_json_str(alloc, "allocationTimestamp"), &ts))
        out->allocation_timestamp = ts;
    json_object *arr;
    size_t n;
    void *items;
    int rc = project_dra_array(status, "devices", DRA_MAX_DEVICE_STATUSES,
                               sizeof(*out->device_statuses), &items, &arr, &n);
    out->device_statuses = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(arr, i);
        struct dra_device_status *s = &out->device_statuses[out->n_device_statuses++];
        if (!kube_json_str(d, "driver") || !kube_json_str(d, "pool") || !kube_json_str(d, "device"))
            return K_EPARSE;
        if (kube_json_dup_opt(kube_json_str(d, "driver"), &s->driver) != K_OK ||
            kube_json_dup_opt(kube_json_str(d, "pool"), &s->pool) != K_OK ||
            kube_json_dup_opt(kube_json_str(d, "device"), &s->device) != K_OK ||
            kube_json_dup_opt(kube_json_str(d, "shareID"), &s->share_id) != K_OK)
            return K_ENOMEM;
        rc = project_conditions(d, s);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}
