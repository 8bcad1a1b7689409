/* admission.c - AdmissionReview v1 decode, checks, encode. */
#include "admission.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"

#define REVIEW_API_VERSION "admission.k8s.io/v1"

/* Short names for the shared getters (kube/json.h). */
static json_object *jget(json_object *o, const char *key, json_type type)
{
    return kube_json_get(o, key, type);
}

static const char *jstr(json_object *o, const char *key)
{
    return kube_json_str(o, key);
}

/* A replica count from an int field, `def` when absent; negative values read as 0. */
static int64_t jcount(json_object *o, const char *key, int64_t def)
{
    int64_t n = kube_json_int(o, key, def);
    return n < 0 ? 0 : n;
}

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static int encode(const char *uid, const struct warn_list *w, struct admission_result *out)
{
    json_object *root = json_object_new_object();
    json_object *resp = json_object_new_object();
    if (!root || !resp) {
        json_object_put(root);
        json_object_put(resp);
        return K_ENOMEM;
    }
    json_object_object_add(root, "apiVersion", json_object_new_string(REVIEW_API_VERSION));
    json_object_object_add(root, "kind", json_object_new_string("AdmissionReview"));
    json_object_object_add(resp, "uid", json_object_new_string(uid));
    json_object_object_add(resp, "allowed", json_object_new_boolean(1));
    if (w && w->n) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; arr && i < w->n; i++)
            json_object_array_add(arr, json_object_new_string(w->items[i].text));
        json_object_object_add(resp, "warnings", arr);
    }
    json_object_object_add(root, "response", resp);
    size_t n = 0;
    const char *s = json_object_to_json_string_length(
        root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    int rc = K_ENOMEM;
    if (s && (out->response = malloc(n + 1))) {
        memcpy(out->response, s, n + 1);
        out->response_len = n;
        rc = K_OK;
    }
    json_object_put(root);
    return rc;
}

static json_object *parse(const char *body, size_t len, char *err, size_t errlen)
{
    if (len > (size_t)0x7fffffff) {
        snprintf(err, errlen, "body too large");
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(ADMISSION_MAX_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    json_object *root = json_tokener_parse_ex(tok, body, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success) {
        snprintf(err, errlen, "malformed JSON: %s",
                 jerr == json_tokener_continue ? "unexpected end of input"
                                               : json_tokener_error_desc(jerr));
        json_object_put(root);
        return NULL;
    }
    for (size_t i = end; i < len; i++) {
        if (body[i] != ' ' && body[i] != '\n' && body[i] != '\r' && body[i] != '\t') {
            snprintf(err, errlen, "malformed JSON: trailing data after the object");
            json_object_put(root);
            return NULL;
        }
    }
    return root;
}

/* Finds the pod spec of a supported kind. Returns false for kinds we do not check. */
static bool pod_spec_of(const char *group, const char *kind, json_object *obj, struct wh_object *o)
{
    json_object *spec = jget(obj, "spec", json_type_object);
    json_object *tmpl = NULL;
    o->is_pod = false;
    o->replicas = 1;
    if (!*group && strcmp(kind, "Pod") == 0) {
        o->spec = spec;
        o->meta = jget(obj, "metadata", json_type_object);
        o->spec_path = "spec";
        o->is_pod = true;
        return o->spec != NULL;
    }
    if (strcmp(group, "apps") == 0 &&
        (strcmp(kind, "Deployment") == 0 || strcmp(kind, "StatefulSet") == 0 ||
         strcmp(kind, "ReplicaSet") == 0 || strcmp(kind, "DaemonSet") == 0)) {
        tmpl = jget(spec, "template", json_type_object);
        o->spec_path = "spec.template.spec";
        o->replicas = strcmp(kind, "DaemonSet") == 0 ? -1 : jcount(spec, "replicas", 1);
    } else if (strcmp(group, "batch") == 0 && strcmp(kind, "Job") == 0) {
        tmpl = jget(spec, "template", json_type_object);
        o->spec_path = "spec.template.spec";
        o->replicas = jcount(spec, "parallelism", 1);
    } else if (strcmp(group, "batch") == 0 && strcmp(kind, "CronJob") == 0) {
        json_object *jspec =
            jget(jget(spec, "jobTemplate", json_type_object), "spec", json_type_object);
        tmpl = jget(jspec, "template", json_type_object);
        o->spec_path = "spec.jobTemplate.spec.template.spec";
        o->replicas = jcount(jspec, "parallelism", 1);
    } else {
        return false;
    }
    o->spec = jget(tmpl, "spec", json_type_object);
    o->meta = jget(tmpl, "metadata", json_type_object);
    return o->spec != NULL;
}

int admission_handle(const char *body, size_t len, const struct wh_snapshot *snap,
                     struct admission_result *out)
{
    memset(out, 0, sizeof(*out));
    warn_list_init(&out->warnings);
    json_object *root = parse(body ? body : "", body ? len : 0, out->error, sizeof(out->error));
    if (!root)
        return K_EPARSE;
    int rc = K_EPARSE;
    const char *api_version = jstr(root, "apiVersion"), *kind = jstr(root, "kind");
    json_object *req = jget(root, "request", json_type_object);
    const char *uid = jstr(req, "uid");
    if (!api_version || strcmp(api_version, REVIEW_API_VERSION) != 0) {
        snprintf(out->error, sizeof(out->error), "apiVersion must be %s", REVIEW_API_VERSION);
        goto done;
    }
    if (!kind || strcmp(kind, "AdmissionReview") != 0) {
        snprintf(out->error, sizeof(out->error), "kind must be AdmissionReview");
        goto done;
    }
    /* The API server sends a UUID; anything else cannot be echoed faithfully as JSON text. */
    json_object *uid_obj = jget(req, "uid", json_type_string);
    size_t uid_len = uid ? strspn(uid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_.:")
                         : 0;
    if (uid && *uid &&
        (uid[uid_len] != '\0' || uid_len > 128 ||
         (size_t)json_object_get_string_len(uid_obj) != uid_len)) {
        snprintf(out->error, sizeof(out->error), "request.uid is not a UID");
        goto done;
    }
    if (!req || !uid || !*uid) {
        snprintf(out->error, sizeof(out->error), "request.uid is missing");
        goto done;
    }

    json_object *gvk = jget(req, "kind", json_type_object);
    const char *group = jstr(gvk, "group"), *version = jstr(gvk, "version"),
               *okind = jstr(gvk, "kind"), *op = jstr(req, "operation"),
               *sub = jstr(req, "subResource");
    json_object *obj = jget(req, "object", json_type_object);
    json_object *meta = jget(obj, "metadata", json_type_object);
    json_object *dry = jget(req, "dryRun", json_type_boolean);
    out->dry_run = dry && json_object_get_boolean(dry);
    copy(out->operation, sizeof(out->operation), op);
    copy(out->kind, sizeof(out->kind), okind);
    copy(out->ns, sizeof(out->ns),
         jstr(req, "namespace") ? jstr(req, "namespace") : jstr(meta, "namespace"));
    const char *name = jstr(req, "name");
    if (!name || !*name)
        name = jstr(meta, "name");
    if (!name || !*name)
        name = jstr(meta, "generateName");
    copy(out->name, sizeof(out->name), name);
    copy(out->uid, sizeof(out->uid), jstr(meta, "uid"));
    if (group && *group)
        snprintf(out->api_version, sizeof(out->api_version), "%s/%s", group,
                 version ? version : "v1");
    else
        copy(out->api_version, sizeof(out->api_version), version ? version : "v1");

    bool checkable = okind && op && obj && (!sub || !*sub) &&
                     (strcmp(op, "CREATE") == 0 || strcmp(op, "UPDATE") == 0);
    if (checkable) {
        if (!group)
            group = "";
        struct wh_object o = {
            .ns = out->ns[0] ? out->ns : NULL,
            .create = strcmp(op, "CREATE") == 0,
        };
        if (!*group && strcmp(okind, "ResourceQuota") == 0) {
            wh_check_quota_object(obj, snap->gpus, &out->warnings);
        } else if (pod_spec_of(group, okind, obj, &o)) {
            int crc = wh_check_pod_spec(snap, &o, &out->warnings);
            if (crc == K_ENOMEM) {
                rc = K_ENOMEM;
                goto done;
            }
            /* K_EPARSE (an unparsable GPU quantity): the API server rejects the object itself;
             * allow without warnings */
        }
    }
    rc = encode(uid, &out->warnings, out);
done:
    json_object_put(root);
    return rc;
}

void admission_result_cleanup(struct admission_result *r)
{
    if (!r)
        return;
    free(r->response);
    r->response = NULL;
    r->response_len = 0;
}
