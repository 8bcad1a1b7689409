/* json.c - typed field reads of API objects (see json.h). */
#include "kube/json.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

json_object *kube_json_field(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v;
}

json_object *kube_json_get(json_object *o, const char *key, json_type type)
{
    json_object *v = kube_json_field(o, key);
    return v && json_object_is_type(v, type) ? v : NULL;
}

const char *kube_json_str(json_object *o, const char *key)
{
    json_object *v = kube_json_get(o, key, json_type_string);
    return v ? json_object_get_string(v) : NULL;
}

int64_t kube_json_int(json_object *o, const char *key, int64_t def)
{
    json_object *v = kube_json_get(o, key, json_type_int);
    return v ? json_object_get_int64(v) : def;
}

const char *kube_json_meta_str(json_object *o, const char *field)
{
    return kube_json_str(kube_json_get(o, "metadata", json_type_object), field);
}

const char *kube_json_annotation(json_object *o, const char *name)
{
    json_object *meta = kube_json_get(o, "metadata", json_type_object);
    return kube_json_str(kube_json_get(meta, "annotations", json_type_object), name);
}

int kube_json_dup_opt(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return K_OK;
    *out = strdup(s);
    return *out ? K_OK : K_ENOMEM;
}
