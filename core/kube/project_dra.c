/*
 * project_dra.c - resource.k8s.io/v1 JSON (json-c) to the compact DRA records of model/dra.h.
 *
 * Strict and bounded: a list longer than the API allows is K_ETOOBIG (the object could not have
 * passed validation), a required field of the wrong type K_EPARSE. json-c getters return
 * borrowed references; every string kept is a copy owned by the record.
 * Field names: kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1/types.go (1.37 for
 * sharedCounters, consumesCounters, allowMultipleAllocations, requestPolicy, capacity.requests,
 * shareID and consumedCapacity; devices[].taints, tolerations and DeviceTaintRule).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

/*
 * The JSON array `arr` (NULL reads as empty): *n its length; K_EPARSE when not an array,
 * K_ETOOBIG above max. *items is a zeroed array of *n records of `size` bytes (NULL when *n is
 * 0; K_ENOMEM when it cannot be had), owned by the caller.
 */
static int array_items(json_object *arr, size_t max, size_t size, void **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (!arr)
        return K_OK;
    if (!json_object_is_type(arr, json_type_array))
        return K_EPARSE;
    *n = json_object_array_length(arr);
    if (*n > max)
        return K_ETOOBIG;
    if (*n == 0)
        return K_OK;
    *items = calloc(*n, size);
    return *items ? K_OK : K_ENOMEM;
}

/* array_items() of the member `key` of `o`, which *arr names (borrowed). */
static int get_array(json_object *o, const char *key, size_t max, size_t size, void **items,
                     json_object **arr, size_t *n)
{
    *arr = kube_json_field(o, key);
    return array_items(*arr, max, size, items, n);
}

int project_dra_array(json_object *o, const char *key, size_t max, size_t size, void **items,
                      json_object **arr, size_t *n)
{
    return get_array(o, key, max, size, items, arr, n);
}

/* A quantity as the API serialises it (a string, or a bare integer) into *out (new string). */
static int dup_quantity(json_object *v, char **out)
{
    if (!v || !(json_object_is_type(v, json_type_string) || json_object_is_type(v, json_type_int)))
        return K_EPARSE;
    return kube_json_dup_opt(json_object_get_string(v), out) == K_OK ? K_OK : K_ENOMEM;
}

/*
 * The JSON object `map` ({<name>: <quantity>}, or {<name>: {"value": <quantity>}} when
 * `wrapped`; NULL reads as empty) into *out / *n: K_EPARSE when not of that form, K_ETOOBIG
 * above max entries. On error the entries read so far stay in *out for the caller to free.
 */
static int project_quantities(json_object *map, size_t max, bool wrapped, struct dra_quantity **out,
                              size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!map)
        return K_OK;
    if (!json_object_is_type(map, json_type_object))
        return K_EPARSE;
    size_t len = (size_t)json_object_object_length(map);
    if (len > max)
        return K_ETOOBIG;
    if (len == 0)
        return K_OK;
    *out = calloc(len, sizeof(**out));
    if (!*out)
        return K_ENOMEM;
    json_object_object_foreach(map, key, val)
    {
        struct dra_quantity *q = &(*out)[(*n)++];
        if (kube_json_dup_opt(key, &q->name) != K_OK)
            return K_ENOMEM;
        int rc = dup_quantity(wrapped ? kube_json_field(val, "value") : val, &q->value);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

/* selectors[].cel.expression into a new string vector. */
static int project_selectors(json_object *o, char ***out, size_t *n_out)
{
    json_object *arr;
    size_t n;
    void *items;
    *n_out = 0;
    int rc = get_array(o, "selectors", DRA_MAX_SELECTORS, sizeof(**out), &items, &arr, &n);
    *out = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const char *expr =
            kube_json_str(kube_json_get(json_object_array_get_idx(arr, i), "cel", json_type_object),
                          "expression");
        if (!expr)
            return K_EPARSE;
        (*out)[i] = strdup(expr);
        if (!(*out)[i])
            return K_ENOMEM;
        (*n_out)++;
    }
    return K_OK;
}

int project_dra_class(json_object *obj, struct dra_class *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    const char *name = kube_json_meta_str(obj, "name");
    if (!name)
        goto out;
    rc = kube_json_dup_opt(name, &out->name);
    if (rc != K_OK)
        goto out;
    rc = project_selectors(kube_json_get(obj, "spec", json_type_object), &out->selectors,
                           &out->n_selectors);
    if (rc != K_OK)
        goto out;
    for (size_t i = 0; i < out->n_selectors && !out->driver; i++)
        out->driver = dra_selector_driver(out->selectors[i]);
    rc = project_class_extended(obj, out);
out:
    if (rc != K_OK)
        dra_class_cleanup(out);
    return rc;
}

/* One DeviceAttribute ({"string": ...} | {"int": ...} | {"bool": ...} | {"version": ...}). */
static int project_attribute(json_object *val, struct dra_attribute *a)
{
    json_object *v;
    if (!val || !json_object_is_type(val, json_type_object))
        return K_EPARSE;
    if ((v = kube_json_field(val, "string")) && json_object_is_type(v, json_type_string)) {
        a->kind = DRA_ATTR_STRING;
        return kube_json_dup_opt(json_object_get_string(v), &a->s);
    }
    if ((v = kube_json_field(val, "version")) && json_object_is_type(v, json_type_string)) {
        a->kind = DRA_ATTR_VERSION;
        return kube_json_dup_opt(json_object_get_string(v), &a->s);
    }
    if ((v = kube_json_field(val, "int")) && json_object_is_type(v, json_type_int)) {
        a->kind = DRA_ATTR_INT;
        a->i = json_object_get_int64(v);
        return K_OK;
    }
    if ((v = kube_json_field(val, "bool")) && json_object_is_type(v, json_type_boolean)) {
        a->kind = DRA_ATTR_BOOL;
        a->b = json_object_get_boolean(v);
        return K_OK;
    }
    a->kind = DRA_ATTR_OTHER;
    return K_OK;
}

/* capacity.<name>.requestPolicy{default, validValues[], validRange{min, max, step}}. */
static int project_request_policy(json_object *pol, struct dra_capacity *c)
{
    if (!pol)
        return K_OK;
    if (!json_object_is_type(pol, json_type_object))
        return K_EPARSE;
    c->has_policy = true;
    json_object *v;
    int rc;
    if ((v = kube_json_field(pol, "default")) && (rc = dup_quantity(v, &c->policy_default)) != K_OK)
        return rc;
    json_object *arr;
    size_t n;
    void *items;
    rc = get_array(pol, "validValues", DRA_MAX_VALID_VALUES, sizeof(*c->valid_values), &items, &arr,
                   &n);
    c->valid_values = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        rc = dup_quantity(json_object_array_get_idx(arr, i), &c->valid_values[i]);
        if (rc != K_OK)
            return rc;
        c->n_valid_values++;
    }
    json_object *range = kube_json_field(pol, "validRange");
    if (!range)
        return K_OK;
    if (!json_object_is_type(range, json_type_object))
        return K_EPARSE;
    if ((v = kube_json_field(range, "min")) && (rc = dup_quantity(v, &c->range_min)) != K_OK)
        return rc;
    if ((v = kube_json_field(range, "max")) && (rc = dup_quantity(v, &c->range_max)) != K_OK)
        return rc;
    if ((v = kube_json_field(range, "step")) && (rc = dup_quantity(v, &c->range_step)) != K_OK)
        return rc;
    return K_OK;
}

/* {<key>: <name>, counters{<c>: {value}}}: a counter set, or what a device consumes of one. */
static int project_counters(json_object *o, const char *key, char **name,
                            struct dra_quantity **counters, size_t *n)
{
    const char *s = kube_json_str(o, key);
    if (!s)
        return K_EPARSE;
    if (kube_json_dup_opt(s, name) != K_OK)
        return K_ENOMEM;
    return project_quantities(kube_json_field(o, "counters"), DRA_MAX_COUNTERS_PER_SET, true,
                              counters, n);
}

/* devices[].consumesCounters[]{counterSet, counters{<c>: {value}}}. */
static int project_consumes(json_object *arr, struct dra_device *d)
{
    void *items;
    size_t n;
    int rc = array_items(arr, DRA_MAX_CONSUMES, sizeof(*d->consumes), &items, &n);
    d->consumes = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        struct dra_counter_use *u = &d->consumes[d->n_consumes++];
        rc = project_counters(json_object_array_get_idx(arr, i), "counterSet", &u->counter_set,
                              &u->counters, &u->n_counters);
    }
    return rc;
}

/* One DeviceTaint {key, value, effect, timeAdded}; key is required. */
static int project_taint(json_object *o, struct dra_taint *t)
{
    const char *key = kube_json_str(o, "key");
    if (!key)
        return K_EPARSE;
    const char *value = kube_json_str(o, "value");
    if (kube_json_dup_opt(key, &t->key) != K_OK ||
        kube_json_dup_opt(value && *value ? value : NULL, &t->value) != K_OK ||
        kube_json_dup_opt(kube_json_str(o, "timeAdded"), &t->time_added) != K_OK)
        return K_ENOMEM;
    t->effect = dra_taint_effect_parse(kube_json_str(o, "effect"));
    return K_OK;
}

/* devices[].taints[] (types.go DeviceTaintsMaxLength). */
static int project_taints(json_object *dev, struct dra_device *d)
{
    json_object *arr;
    size_t n;
    void *items;
    int rc = get_array(dev, "taints", DRA_MAX_TAINTS, sizeof(*d->taints), &items, &arr, &n);
    d->taints = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        d->n_taints++;
        rc = project_taint(json_object_array_get_idx(arr, i), &d->taints[i]);
    }
    return rc;
}

/* spec.sharedCounters[]{name, counters{<c>: {value}}}. */
static int project_counter_sets(json_object *arr, struct dra_slice *out)
{
    void *items;
    size_t n;
    int rc = array_items(arr, DRA_MAX_COUNTER_SETS, sizeof(*out->counter_sets), &items, &n);
    out->counter_sets = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        struct dra_counter_set *cs = &out->counter_sets[out->n_counter_sets++];
        rc = project_counters(json_object_array_get_idx(arr, i), "name", &cs->name, &cs->counters,
                              &cs->n_counters);
    }
    return rc;
}

/* tolerations[] of a request or sub-request (types.go DeviceTolerationsMaxLength). */
static int project_tolerations(json_object *o, struct dra_exact *e)
{
    json_object *arr;
    size_t n;
    void *items;
    int rc =
        get_array(o, "tolerations", DRA_MAX_TOLERATIONS, sizeof(*e->tolerations), &items, &arr, &n);
    e->tolerations = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        json_object *t = json_object_array_get_idx(arr, i);
        struct dra_toleration *tol = &e->tolerations[e->n_tolerations++];
        if (!t || !json_object_is_type(t, json_type_object))
            return K_EPARSE;
        const char *key = kube_json_str(t, "key"), *value = kube_json_str(t, "value");
        const char *op = kube_json_str(t, "operator"), *effect = kube_json_str(t, "effect");
        if (kube_json_dup_opt(key && *key ? key : NULL, &tol->key) != K_OK ||
            kube_json_dup_opt(value && *value ? value : NULL, &tol->value) != K_OK)
            return K_ENOMEM;
        tol->op = !op || !*op || strcmp(op, "Equal") == 0 ? DRA_TOL_EQUAL
                  : strcmp(op, "Exists") == 0             ? DRA_TOL_EXISTS
                                                          : DRA_TOL_OTHER;
        tol->any_effect = !effect || !*effect;
        tol->effect = dra_taint_effect_parse(effect);
    }
    return rc;
}

static int project_device(json_object *dev, const char *driver, struct dra_device *d)
{
    const char *name = kube_json_str(dev, "name");
    if (!name)
        return K_EPARSE;
    if (kube_json_dup_opt(name, &d->name) != K_OK)
        return K_ENOMEM;
    json_object *attrs = kube_json_field(dev, "attributes"),
                *caps = kube_json_field(dev, "capacity");
    if ((attrs && !json_object_is_type(attrs, json_type_object)) ||
        (caps && !json_object_is_type(caps, json_type_object)))
        return K_EPARSE;
    int brc = project_dra_binding(dev, &d->binding);
    if (brc != K_OK)
        return brc;
    size_t na = attrs ? (size_t)json_object_object_length(attrs) : 0;
    size_t nc = caps ? (size_t)json_object_object_length(caps) : 0;
    if (na + nc > DRA_MAX_ATTRS_PER_DEVICE)
        return K_ETOOBIG;
    if (na) {
        d->attrs = calloc(na, sizeof(*d->attrs));
        if (!d->attrs)
            return K_ENOMEM;
        json_object_object_foreach(attrs, key, val)
        {
            struct dra_attribute *a = &d->attrs[d->n_attrs++];
            a->name = dra_qualify(driver, key);
            if (!a->name)
                return K_ENOMEM;
            int rc = project_attribute(val, a);
            if (rc != K_OK)
                return rc;
        }
    }
    if (nc) {
        d->caps = calloc(nc, sizeof(*d->caps));
        if (!d->caps)
            return K_ENOMEM;
        json_object_object_foreach(caps, key, val)
        {
            struct dra_capacity *c = &d->caps[d->n_caps++];
            c->name = dra_qualify(driver, key);
            if (!c->name)
                return K_ENOMEM;
            json_object *v = kube_json_field(val, "value");
            if (!v || !(json_object_is_type(v, json_type_string) ||
                        json_object_is_type(v, json_type_int)))
                return K_EPARSE;
            if (kube_json_dup_opt(json_object_get_string(v), &c->value) != K_OK)
                return K_ENOMEM;
            int rc = project_request_policy(kube_json_field(val, "requestPolicy"), c);
            if (rc != K_OK)
                return rc;
        }
    }
    json_object *multi = kube_json_field(dev, "allowMultipleAllocations");
    d->allow_multiple =
        multi && json_object_is_type(multi, json_type_boolean) && json_object_get_boolean(multi);
    int rc = project_consumes(kube_json_field(dev, "consumesCounters"), d);
    if (rc != K_OK)
        return rc;
    return project_taints(dev, d);
}

int project_dra_slice(json_object *obj, struct dra_slice *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    json_object *pool = kube_json_get(spec, "pool", json_type_object);
    const char *driver = kube_json_str(spec, "driver");
    const char *pool_name = kube_json_str(pool, "name");
    if (!kube_json_meta_str(obj, "name") || !driver || !*driver || !pool_name)
        goto out;
    rc = K_ENOMEM;
    if (kube_json_dup_opt(kube_json_meta_str(obj, "name"), &out->name) != K_OK ||
        kube_json_dup_opt(driver, &out->driver) != K_OK ||
        kube_json_dup_opt(pool_name, &out->pool) != K_OK)
        goto out;
    out->generation = kube_json_int(pool, "generation", 0);
    out->slice_count = kube_json_int(pool, "resourceSliceCount", 0);
    const char *node = kube_json_str(spec, "nodeName");
    if (node && *node && kube_json_dup_opt(node, &out->node_name) != K_OK)
        goto out;
    json_object *all = kube_json_field(spec, "allNodes");
    out->all_nodes =
        all && json_object_is_type(all, json_type_boolean) && json_object_get_boolean(all);
    json_object *per = kube_json_field(spec, "perDeviceNodeSelection");
    out->per_device_nodes =
        per && json_object_is_type(per, json_type_boolean) && json_object_get_boolean(per);
    rc = project_node_selector(kube_json_get(spec, "nodeSelector", json_type_object),
                               DRA_MAX_SELECTOR_TERMS, &out->nodes);
    if (rc != K_OK)
        goto out;
    json_object *devs;
    size_t n;
    void *items;
    rc = get_array(spec, "devices", DRA_MAX_DEVICES_PER_SLICE, sizeof(*out->devices), &items, &devs,
                   &n);
    out->devices = items;
    if (rc != K_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        out->n_devices++;
        rc = project_device(json_object_array_get_idx(devs, i), out->driver, &out->devices[i]);
        if (rc != K_OK)
            goto out;
    }
    rc = project_counter_sets(kube_json_field(spec, "sharedCounters"), out);
out:
    if (rc != K_OK)
        dra_slice_cleanup(out);
    return rc;
}

/* ExactDeviceRequest / DeviceSubRequest fields. */
static int project_exact(json_object *o, struct dra_exact *e)
{
    if (!o || !json_object_is_type(o, json_type_object))
        return K_EPARSE;
    if (kube_json_dup_opt(kube_json_str(o, "name"), &e->name) != K_OK ||
        kube_json_dup_opt(kube_json_str(o, "deviceClassName"), &e->class_name) != K_OK)
        return K_ENOMEM;
    int rc = project_selectors(o, &e->selectors, &e->n_selectors);
    if (rc != K_OK)
        return rc;
    const char *mode = kube_json_str(o, "allocationMode");
    if (mode && strcmp(mode, "All") == 0) {
        e->mode = DRA_MODE_ALL;
        e->count = 0;
    } else if (!mode || !*mode || strcmp(mode, "ExactCount") == 0) {
        e->mode = DRA_MODE_EXACT_COUNT;
        e->count = kube_json_int(o, "count", 1);
        if (e->count < 1)
            return K_EPARSE;
    } else {
        return K_EPARSE;
    }
    json_object *admin = kube_json_field(o, "adminAccess");
    e->admin_access =
        admin && json_object_is_type(admin, json_type_boolean) && json_object_get_boolean(admin);
    json_object *cap = kube_json_field(o, "capacity");
    if (cap && !json_object_is_type(cap, json_type_object))
        return K_EPARSE;
    rc = project_quantities(kube_json_field(cap, "requests"), DRA_MAX_CAPACITY_REQUESTS, false,
                            &e->capacity, &e->n_capacity);
    if (rc != K_OK)
        return rc;
    return project_tolerations(o, e);
}

static int project_request(json_object *o, struct dra_request *r)
{
    const char *name = kube_json_str(o, "name");
    if (!name)
        return K_EPARSE;
    if (kube_json_dup_opt(name, &r->name) != K_OK)
        return K_ENOMEM;
    json_object *exactly = kube_json_field(o, "exactly");
    if (exactly) {
        r->has_exactly = true;
        return project_exact(exactly, &r->exactly);
    }
    json_object *arr;
    size_t n;
    void *items;
    int rc = get_array(o, "firstAvailable", DRA_MAX_FIRST_AVAILABLE, sizeof(*r->first_available),
                       &items, &arr, &n);
    r->first_available = items;
    if (rc != K_OK)
        return rc;
    if (n == 0)
        return K_EPARSE; /* exactly one of exactly / firstAvailable */
    for (size_t i = 0; i < n; i++) {
        r->n_first_available++;
        rc = project_exact(json_object_array_get_idx(arr, i), &r->first_available[i]);
        if (rc != K_OK)
            return rc;
        if (!r->first_available[i].name)
            return K_EPARSE;
    }
    return K_OK;
}

static int project_constraint(json_object *o, struct dra_constraint *c)
{
    json_object *arr;
    size_t n;
    void *items;
    int rc = get_array(o, "requests", DRA_MAX_REQUESTS, sizeof(*c->requests), &items, &arr, &n);
    c->requests = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!v || !json_object_is_type(v, json_type_string))
            return K_EPARSE;
        c->requests[i] = strdup(json_object_get_string(v));
        if (!c->requests[i])
            return K_ENOMEM;
        c->n_requests++;
    }
    return kube_json_dup_opt(kube_json_str(o, "matchAttribute"), &c->match_attribute);
}

int project_dra_claim_spec(json_object *spec, struct dra_claim_spec *out)
{
    memset(out, 0, sizeof(*out));
    json_object *devices = kube_json_get(spec, "devices", json_type_object);
    json_object *arr;
    size_t n;
    void *items;
    int rc =
        get_array(devices, "requests", DRA_MAX_REQUESTS, sizeof(*out->requests), &items, &arr, &n);
    out->requests = items;
    if (rc != K_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        out->n_requests++;
        rc = project_request(json_object_array_get_idx(arr, i), &out->requests[i]);
        if (rc != K_OK)
            goto out;
    }
    rc = get_array(devices, "constraints", DRA_MAX_CONSTRAINTS, sizeof(*out->constraints), &items,
                   &arr, &n);
    out->constraints = items;
    if (rc != K_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        out->n_constraints++;
        rc = project_constraint(json_object_array_get_idx(arr, i), &out->constraints[i]);
        if (rc != K_OK)
            goto out;
    }
out:
    if (rc != K_OK)
        dra_claim_spec_cleanup(out);
    return rc;
}

/* A pod's name as the API server validates it (a DNS-1123 subdomain): an ownerReference's name
 * is not validated, and the claim's author, any user of its namespace, writes it; gputri's lines
 * name the owner of a device's holder to the pods of other namespaces. */
static bool pod_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && ((c != '-' && c != '.') || i == 0 || i == n - 1))
            return false;
    }
    return true;
}

static int project_owner(json_object *meta, struct dra_claim *out)
{
    json_object *arr = kube_json_get(meta, "ownerReferences", json_type_array);
    size_t n = arr ? json_object_array_length(arr) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *ref = json_object_array_get_idx(arr, i);
        const char *kind = kube_json_str(ref, "kind");
        json_object *ctl = kube_json_field(ref, "controller");
        if (kind && strcmp(kind, "Pod") == 0 && ctl &&
            json_object_is_type(ctl, json_type_boolean) && json_object_get_boolean(ctl))
            return kube_json_dup_opt(kube_json_str(ref, "uid"), &out->owner_pod_uid) != K_OK ||
                           (pod_name_ok(kube_json_str(ref, "name")) &&
                            kube_json_dup_opt(kube_json_str(ref, "name"), &out->owner_pod_name) !=
                                K_OK)
                       ? K_ENOMEM
                       : K_OK;
    }
    return K_OK;
}

static int project_allocation(json_object *alloc, struct dra_claim *out)
{
    if (!alloc)
        return K_OK;
    if (!json_object_is_type(alloc, json_type_object))
        return K_EPARSE;
    out->allocated = true;
    json_object *arr;
    size_t n;
    void *items;
    int rc = get_array(kube_json_get(alloc, "devices", json_type_object), "results",
                       DRA_MAX_RESULTS, sizeof(*out->results), &items, &arr, &n);
    out->results = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(arr, i);
        struct dra_result *res = &out->results[out->n_results++];
        if (!kube_json_str(r, "driver") || !kube_json_str(r, "pool") || !kube_json_str(r, "device"))
            return K_EPARSE;
        if (kube_json_dup_opt(kube_json_str(r, "request"), &res->request) != K_OK ||
            kube_json_dup_opt(kube_json_str(r, "driver"), &res->driver) != K_OK ||
            kube_json_dup_opt(kube_json_str(r, "pool"), &res->pool) != K_OK ||
            kube_json_dup_opt(kube_json_str(r, "device"), &res->device) != K_OK)
            return K_ENOMEM;
        json_object *admin = kube_json_field(r, "adminAccess");
        res->admin_access = admin && json_object_is_type(admin, json_type_boolean) &&
                            json_object_get_boolean(admin);
        rc = project_dra_binding(r, &res->binding);
        if (rc != K_OK)
            return rc;
        if (kube_json_dup_opt(kube_json_str(r, "shareID"), &res->share_id) != K_OK)
            return K_ENOMEM;
        rc = project_quantities(kube_json_field(r, "consumedCapacity"), DRA_MAX_CAPACITY_REQUESTS,
                                false, &res->consumed, &res->n_consumed);
        if (rc != K_OK)
            return rc;
    }
    return project_node_selector(kube_json_get(alloc, "nodeSelector", json_type_object),
                                 DRA_MAX_SELECTOR_TERMS, &out->alloc_nodes);
}

static int project_reserved_for(json_object *status, struct dra_claim *out)
{
    json_object *arr;
    size_t n;
    void *items;
    int rc = get_array(status, "reservedFor", DRA_MAX_RESERVED_FOR, sizeof(*out->reserved_for),
                       &items, &arr, &n);
    out->reserved_for = items;
    if (rc != K_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(arr, i);
        struct dra_consumer *c = &out->reserved_for[out->n_reserved_for++];
        if (kube_json_dup_opt(kube_json_str(r, "resource"), &c->resource) != K_OK ||
            kube_json_dup_opt(kube_json_str(r, "name"), &c->name) != K_OK ||
            kube_json_dup_opt(kube_json_str(r, "uid"), &c->uid) != K_OK)
            return K_ENOMEM;
    }
    return K_OK;
}

int project_dra_claim(json_object *obj, struct dra_claim *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    json_object *meta = kube_json_get(obj, "metadata", json_type_object);
    if (!kube_json_str(meta, "name"))
        goto out;
    rc = K_ENOMEM;
    if (kube_json_dup_opt(kube_json_str(meta, "namespace"), &out->ns) != K_OK ||
        kube_json_dup_opt(kube_json_str(meta, "name"), &out->name) != K_OK ||
        kube_json_dup_opt(kube_json_str(meta, "uid"), &out->uid) != K_OK ||
        kube_json_dup_opt(kube_json_annotation(obj, "resource.kubernetes.io/pod-claim-name"),
                          &out->pod_claim_name) != K_OK)
        goto out;
    json_object *del = kube_json_field(meta, "deletionTimestamp");
    out->deleting = del != NULL;
    const char *ext = kube_json_annotation(obj, DRA_EXTENDED_CLAIM_ANNOTATION);
    out->extended = ext && strcmp(ext, "true") == 0;
    rc = project_owner(meta, out);
    if (rc != K_OK)
        goto out;
    rc = project_dra_claim_spec(kube_json_get(obj, "spec", json_type_object), &out->spec);
    if (rc != K_OK)
        goto out;
    json_object *status = kube_json_get(obj, "status", json_type_object);
    rc = project_allocation(kube_json_field(status, "allocation"), out);
    if (rc != K_OK)
        goto out;
    rc = project_reserved_for(status, out);
    if (rc != K_OK)
        goto out;
    rc = project_dra_claim_binding(status, out);
out:
    if (rc != K_OK)
        dra_claim_cleanup(out);
    return rc;
}

int project_dra_template(json_object *obj, struct dra_template *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    if (!kube_json_meta_str(obj, "name"))
        goto out;
    rc = K_ENOMEM;
    if (kube_json_dup_opt(kube_json_meta_str(obj, "namespace"), &out->ns) != K_OK ||
        kube_json_dup_opt(kube_json_meta_str(obj, "name"), &out->name) != K_OK)
        goto out;
    rc = project_dra_claim_spec(
        kube_json_get(kube_json_get(obj, "spec", json_type_object), "spec", json_type_object),
        &out->spec);
out:
    if (rc != K_OK)
        dra_template_cleanup(out);
    return rc;
}

int project_dra_taint_rule(json_object *obj, struct dra_taint_rule *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    json_object *taint = kube_json_get(spec, "taint", json_type_object);
    if (!kube_json_meta_str(obj, "name") || !taint)
        goto out;
    rc = K_ENOMEM;
    if (kube_json_dup_opt(kube_json_meta_str(obj, "name"), &out->name) != K_OK)
        goto out;
    json_object *sel = kube_json_field(spec, "deviceSelector");
    if (sel && !json_object_is_type(sel, json_type_null)) {
        rc = K_EPARSE;
        if (!json_object_is_type(sel, json_type_object))
            goto out;
        out->has_selector = true;
        rc = K_ENOMEM;
        if (kube_json_dup_opt(kube_json_str(sel, "driver"), &out->driver) != K_OK ||
            kube_json_dup_opt(kube_json_str(sel, "pool"), &out->pool) != K_OK ||
            kube_json_dup_opt(kube_json_str(sel, "device"), &out->device) != K_OK)
            goto out;
    }
    rc = project_taint(taint, &out->taint);
out:
    if (rc != K_OK)
        dra_taint_rule_cleanup(out);
    return rc;
}

/* name and resourceClaimName of a pod's claim entry (spec or status); name is required. */
static int project_claim_names(json_object *c, char **name, char **claim_name)
{
    const char *n = kube_json_str(c, "name");
    if (!n)
        return K_EPARSE;
    if (kube_json_dup_opt(n, name) != K_OK ||
        kube_json_dup_opt(kube_json_str(c, "resourceClaimName"), claim_name) != K_OK)
        return K_ENOMEM;
    return K_OK;
}

int project_pod_claims(json_object *arr, struct kpod *pod)
{
    if (!json_object_is_type(arr, json_type_array))
        return K_OK;
    void *items;
    size_t n;
    int rc = array_items(arr, DRA_MAX_POD_CLAIMS, sizeof(*pod->claims), &items, &n);
    pod->claims = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        json_object *c = json_object_array_get_idx(arr, i);
        struct pod_claim_ref *r = &pod->claims[pod->n_claims++];
        rc = project_claim_names(c, &r->name, &r->claim_name);
        if (rc == K_OK && kube_json_dup_opt(kube_json_str(c, "resourceClaimTemplateName"),
                                            &r->template_name) != K_OK)
            rc = K_ENOMEM;
    }
    return rc;
}

int project_pod_claim_statuses(json_object *arr, struct kpod *pod)
{
    if (!json_object_is_type(arr, json_type_array))
        return K_OK;
    void *items;
    size_t n;
    int rc = array_items(arr, DRA_MAX_POD_CLAIMS, sizeof(*pod->claim_statuses), &items, &n);
    pod->claim_statuses = items;
    for (size_t i = 0; rc == K_OK && i < n; i++) {
        struct pod_claim_status *s = &pod->claim_statuses[pod->n_claim_statuses++];
        rc = project_claim_names(json_object_array_get_idx(arr, i), &s->name, &s->claim_name);
    }
    return rc;
}
