/* owner_alive.c - does a refused owner still exist (owner_alive.h). */
#include "owner_alive.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"

int triage_owner_alive(struct kube_client *c, const struct quota_owner *o, struct kube_error *err)
{
    char ns[256], name[512], path[1024];
    if (kube_path_escape(o->ns, ns, sizeof(ns)) != K_OK ||
        kube_path_escape(o->name, name, sizeof(name)) != K_OK)
        return K_EINVAL;
    snprintf(path, sizeof(path), "/apis/%s/namespaces/%s/%s/%s", quota_owner_api_version(o->kind),
             ns, quota_owner_resource(o->kind), name);
    json_object *obj = NULL;
    int rc = kube_get(c, path, &obj, err);
    if (rc != K_OK)
        return rc;
    const char *uid = kube_json_meta_str(obj, "uid");
    rc = uid && strcmp(uid, o->uid) != 0 ? K_ENOTFOUND : K_OK;
    json_object_put(obj);
    return rc;
}
