/*
 * project_event.c - a core/v1 Event (json-c) into the fixed-size record of model/event.h: every
 * string a bounded copy (util/utf8.h utf8_copy), nothing allocated.
 */
#include <stdint.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "util/clock.h"
#include "util/result.h"
#include "util/utf8.h"

/* Copy the string member `key` of `o` into dst (cap bytes); note a cut in out->cut. */
static void copy_str(struct kevent *out, char *dst, size_t cap, json_object *o, const char *key)
{
    json_object *v = kube_json_get(o, key, json_type_string);
    if (!v)
        return;
    size_t len = (size_t)json_object_get_string_len(v);
    if (!utf8_copy(dst, cap, json_object_get_string(v), len))
        out->cut = true;
}

/* The time string member `key` of `o` in whole seconds, 0 when absent or malformed. */
static int64_t get_time(json_object *o, const char *key)
{
    int64_t t = 0;
    const char *s = kube_json_str(o, key);
    if (!s || !clock_parse_rfc3339(s, &t) || t < 0)
        return 0;
    return t;
}

static int32_t clamp_count(int64_t v)
{
    return v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

int project_event(json_object *ev, struct kevent *out)
{
    memset(out, 0, sizeof(*out));
    if (!ev || !json_object_is_type(ev, json_type_object))
        return K_EPARSE;
    json_object *meta = kube_json_get(ev, "metadata", json_type_object);
    copy_str(out, out->ns, sizeof(out->ns), meta, "namespace");
    copy_str(out, out->name, sizeof(out->name), meta, "name");
    json_object *inv = kube_json_get(ev, "involvedObject", json_type_object);
    copy_str(out, out->obj_kind, sizeof(out->obj_kind), inv, "kind");
    copy_str(out, out->obj_ns, sizeof(out->obj_ns), inv, "namespace");
    copy_str(out, out->obj_name, sizeof(out->obj_name), inv, "name");
    copy_str(out, out->obj_uid, sizeof(out->obj_uid), inv, "uid");
    copy_str(out, out->reason, sizeof(out->reason), ev, "reason");
    copy_str(out, out->message, sizeof(out->message), ev, "message");
    copy_str(out, out->type, sizeof(out->type), ev, "type");
    copy_str(out, out->component, sizeof(out->component),
             kube_json_get(ev, "source", json_type_object), "component");
    copy_str(out, out->reporting, sizeof(out->reporting), ev, "reportingComponent");
    json_object *series = kube_json_get(ev, "series", json_type_object);
    out->count = clamp_count(kube_json_int(ev, "count", 0));
    if (out->count == 0)
        out->count = clamp_count(kube_json_int(series, "count", 0));
    out->first_timestamp = get_time(ev, "firstTimestamp");
    out->last_timestamp = get_time(ev, "lastTimestamp");
    out->event_time = get_time(ev, "eventTime");
    out->series_last = get_time(series, "lastObservedTime");
    return K_OK;
}
