/* event.c - the body of a core/v1 Event. */
#include "event.h"

#include <stdio.h>
#include <string.h>

#define NOTE_LIMIT 1024 /* validation.NoteLengthLimit */

json_object *kube_event_body(const struct kube_event_spec *e, const char *name, const char *now)
{
    char msg[NOTE_LIMIT + 1], gen[300];
    snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "");
    json_object *ev = json_object_new_object();
    json_object *meta = json_object_new_object();
    if (!ev || !meta) {
        json_object_put(ev);
        json_object_put(meta);
        return NULL;
    }
    if (name) {
        json_object_object_add(meta, "name", json_object_new_string(name));
    } else {
        snprintf(gen, sizeof(gen), "%.240s.", e->name);
        json_object_object_add(meta, "generateName", json_object_new_string(gen));
    }
    json_object_object_add(meta, "namespace", json_object_new_string(e->ns));
    json_object_object_add(ev, "metadata", meta);
    json_object *inv = json_object_new_object();
    json_object_object_add(inv, "apiVersion", json_object_new_string(e->api_version));
    json_object_object_add(inv, "kind", json_object_new_string(e->kind));
    json_object_object_add(inv, "namespace", json_object_new_string(e->ns));
    json_object_object_add(inv, "name", json_object_new_string(e->name));
    if (e->uid)
        json_object_object_add(inv, "uid", json_object_new_string(e->uid));
    json_object_object_add(ev, "involvedObject", inv);
    json_object_object_add(ev, "reason", json_object_new_string(e->reason));
    json_object_object_add(ev, "message", json_object_new_string(msg));
    json_object_object_add(ev, "type", json_object_new_string(e->type));
    json_object *src = json_object_new_object();
    json_object_object_add(src, "component", json_object_new_string(e->component));
    json_object_object_add(ev, "source", src);
    json_object_object_add(ev, "reportingComponent", json_object_new_string(e->component));
    if (e->instance)
        json_object_object_add(ev, "reportingInstance", json_object_new_string(e->instance));
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(now));
    json_object_object_add(ev, "count", json_object_new_int(1));
    return ev;
}
