/*
 * dra_layout.c - a DRA object read at an older API version, in the layout of v1 (dra_api.h): the
 * differences the projection sees are v1beta1's, where a request's fields are not wrapped in
 * `exactly` and a device's are wrapped in `basic`
 * (kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1beta1/types.go DeviceRequest,
 * Device, BasicDevice; v1/types.go DeviceRequest, ExactDeviceRequest, Device), and a 1.33/1.34
 * v1alpha3 DeviceTaintRule's selector by class or CEL (rule_spec_as_v1).
 * Nothing is copied but the objects on the way to a changed member; the rest are references.
 */
#include <stdbool.h>
#include <string.h>

#include "kube/dra_api.h"
#include "kube/json.h"
#include "util/result.h"

/* Add `val` (owned; put when it cannot be added) to `o` under `key`. */
static int add(json_object *o, const char *key, json_object *val)
{
    if (json_object_object_add(o, key, val) != 0) {
        json_object_put(val);
        return K_ENOMEM;
    }
    return K_OK;
}

/*
 * A new object with the members of `o` (references) except `skip` (NULL: none), in their order.
 * NULL on ENOMEM.
 */
static json_object *copy_members(json_object *o, const char *skip)
{
    json_object *c = json_object_new_object();
    if (!c)
        return NULL;
    json_object_object_foreach(o, key, val)
    {
        if (skip && strcmp(key, skip) == 0)
            continue;
        if (add(c, key, json_object_get(val)) != K_OK) {
            json_object_put(c);
            return NULL;
        }
    }
    return c;
}

/*
 * *out = a copy of object `o` whose member `key` is `val` (owned: given to the copy, or put on
 * failure), the other members references. K_OK or K_ENOMEM.
 */
static int with_member(json_object *o, const char *key, json_object *val, json_object **out)
{
    *out = copy_members(o, NULL);
    if (!*out) {
        json_object_put(val);
        return K_ENOMEM;
    }
    int rc = add(*out, key, val); /* replaces the reference in place, keeping the order */
    if (rc != K_OK) {
        json_object_put(*out);
        *out = NULL;
    }
    return rc;
}

/* A new array of `convert` applied to each element of `arr`. */
static int map_array(json_object *arr, json_object *(*convert)(json_object *), json_object **out)
{
    size_t n = json_object_array_length(arr);
    *out = json_object_new_array_ext((int)n);
    if (!*out)
        return K_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_object *e = convert(json_object_array_get_idx(arr, i));
        if (!e || json_object_array_add(*out, e) != 0) {
            json_object_put(e);
            json_object_put(*out);
            *out = NULL;
            return K_ENOMEM;
        }
    }
    return K_OK;
}

/* A v1beta1 DeviceRequest as a v1 one: its fields but `name` in `exactly`, unless it is already
 * wrapped or is a firstAvailable request (the same in both). A new reference; NULL on ENOMEM. */
static json_object *request_as_v1(json_object *req)
{
    if (!json_object_is_type(req, json_type_object) || kube_json_field(req, "exactly") ||
        kube_json_field(req, "firstAvailable"))
        return json_object_get(req);
    json_object *r = json_object_new_object();
    json_object *exactly = copy_members(req, "name");
    json_object *name = kube_json_field(req, "name");
    if (!r || !exactly || (name && add(r, "name", json_object_get(name)) != K_OK)) {
        json_object_put(exactly);
        json_object_put(r);
        return NULL;
    }
    if (add(r, "exactly", exactly) != K_OK) { /* add() put exactly */
        json_object_put(r);
        return NULL;
    }
    return r;
}

/* A v1beta1 Device as a v1 one: the members of `basic` on the device. A new reference; NULL on
 * ENOMEM. */
static json_object *device_as_v1(json_object *dev)
{
    json_object *basic = kube_json_get(dev, "basic", json_type_object);
    if (!basic)
        return json_object_get(dev);
    json_object *d = copy_members(dev, "basic");
    if (!d)
        return NULL;
    json_object_object_foreach(basic, key, val)
    {
        if (add(d, key, json_object_get(val)) != K_OK) {
            json_object_put(d);
            return NULL;
        }
    }
    return d;
}

/*
 * *out = `o` with the array at o.outer.inner mapped by `convert` (o itself, referenced, when
 * there is no such array). K_OK or K_ENOMEM.
 */
static int map_nested(json_object *o, const char *outer, const char *inner,
                      json_object *(*convert)(json_object *), json_object **out)
{
    json_object *mid = inner ? kube_json_get(o, outer, json_type_object) : o;
    json_object *arr = kube_json_get(mid, inner ? inner : outer, json_type_array);
    if (!arr) {
        *out = json_object_get(o);
        return K_OK;
    }
    json_object *mapped;
    int rc = map_array(arr, convert, &mapped);
    if (rc != K_OK)
        return rc;
    if (!inner)
        return with_member(o, outer, mapped, out);
    json_object *mid2;
    rc = with_member(mid, inner, mapped, &mid2);
    return rc != K_OK ? rc : with_member(o, outer, mid2, out);
}

/* A ResourceClaimSpec (a claim's spec, a template's spec.spec) in the layout of v1. */
static int claim_spec_as_v1(enum dra_api_version v, json_object *spec, json_object **out)
{
    if (v != DRA_API_V1BETA1 || !json_object_is_type(spec, json_type_object)) {
        *out = json_object_get(spec);
        return K_OK;
    }
    return map_nested(spec, "devices", "requests", request_as_v1, out);
}

/* *out = `o` with its member `key` (an object) replaced by what `convert` makes of it (`o`
 * itself when that is the member itself). */
static int with_converted(json_object *o, const char *key, enum dra_api_version v,
                          int (*convert)(enum dra_api_version, json_object *, json_object **),
                          json_object **out)
{
    json_object *m = kube_json_get(o, key, json_type_object);
    if (!m) {
        *out = json_object_get(o);
        return K_OK;
    }
    json_object *c;
    int rc = convert(v, m, &c);
    if (rc == K_OK && c == m) { /* unchanged: o itself */
        json_object_put(c);
        *out = json_object_get(o);
        return K_OK;
    }
    return rc != K_OK ? rc : with_member(o, key, c, out);
}

/* A template's spec ({metadata, spec}) with its spec.spec in the layout of v1. */
static int template_spec_as_v1(enum dra_api_version v, json_object *tspec, json_object **out)
{
    return with_converted(tspec, "spec", v, claim_spec_as_v1, out);
}

static int slice_spec_as_v1(enum dra_api_version v, json_object *spec, json_object **out)
{
    (void)v;
    return map_nested(spec, "devices", NULL, device_as_v1, out);
}

/*
 * A DeviceTaintRule's spec at v1alpha3: 1.33's and 1.34's selector may narrow the devices by a
 * class (deviceClassName) or CEL (selectors[]), which gputri does not evaluate: such a rule loses
 * its deviceSelector (selects nothing); any other spec is the same as v1's
 * (kubernetes/kubernetes: staging/src/k8s.io/api/resource/v1alpha3/types.go DeviceTaintSelector).
 */
static int rule_spec_as_v1(enum dra_api_version v, json_object *spec, json_object **out)
{
    (void)v;
    json_object *sel = kube_json_get(spec, "deviceSelector", json_type_object);
    json_object *cls = kube_json_field(sel, "deviceClassName");
    json_object *cel = kube_json_get(sel, "selectors", json_type_array);
    if (!cls && (!cel || json_object_array_length(cel) == 0)) {
        *out = json_object_get(spec);
        return K_OK;
    }
    *out = copy_members(spec, "deviceSelector");
    return *out ? K_OK : K_ENOMEM;
}

int dra_json_as_v1(enum dra_kind k, enum dra_api_version v, json_object *obj, json_object **out)
{
    *out = NULL;
    if (v == DRA_API_V1ALPHA3 && k == DRA_KIND_TAINT_RULE &&
        json_object_is_type(obj, json_type_object))
        return with_converted(obj, "spec", v, rule_spec_as_v1, out);
    if (v != DRA_API_V1BETA1 || !json_object_is_type(obj, json_type_object)) {
        *out = json_object_get(obj);
        return K_OK;
    }
    switch (k) {
    case DRA_KIND_CLAIM:
        return with_converted(obj, "spec", v, claim_spec_as_v1, out);
    case DRA_KIND_TEMPLATE:
        return with_converted(obj, "spec", v, template_spec_as_v1, out);
    case DRA_KIND_SLICE:
        return with_converted(obj, "spec", v, slice_spec_as_v1, out);
    default:
        *out = json_object_get(obj);
        return K_OK;
    }
}
