/* admission.c - AdmissionReview v1 decode, checks, encode. */
#include "admission.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/tree.h"
#include "kube/json.h"
#include "model/model.h"
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

/* Appends s[0, n) to buf at *at, escaped as json-c escapes a string with
 * JSON_C_TO_STRING_NOSLASHESCAPE; false when it does not fit in cap. Runs of bytes that stand
 * for themselves are copied whole. */
static bool put(char *buf, size_t cap, size_t *at, const char *s, size_t n, bool escape)
{
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        if (!escape)
            run = n;
        else
            while (run < n && (unsigned char)s[run] >= 0x20 && s[run] != '"' && s[run] != '\\')
                run++;
        if (run > i) {
            if (cap - *at < run - i + 1)
                return false;
            memcpy(buf + *at, s + i, run - i);
            *at += run - i;
            i = run;
            continue;
        }
        unsigned char c = (unsigned char)s[i++];
        char esc[8];
        size_t wn = 2;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
        } else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            wn = 6;
        }
        if (cap - *at < wn + 1)
            return false;
        memcpy(buf + *at, esc, wn);
        *at += wn;
    }
    buf[*at] = 0;
    return true;
}

/*
 * The answer, byte for byte what json-c printed before (JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE): built in a buffer on the stack, then one allocation of its
 * size. The uid was checked to need no escaping; a warning escapes to at most 6 bytes a byte.
 */
static int encode(const char *uid, const struct warn_list *w, struct admission_result *out)
{
    char buf[ADMISSION_RESPONSE_MAX];
    size_t at = 0;
    static const char head[] = "{\"apiVersion\":\"" REVIEW_API_VERSION
                               "\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"";
    bool ok = put(buf, sizeof(buf), &at, head, sizeof(head) - 1, false) &&
              put(buf, sizeof(buf), &at, uid, strlen(uid), true) &&
              put(buf, sizeof(buf), &at, "\",\"allowed\":true", 16, false);
    for (size_t i = 0; ok && w && i < w->n; i++)
        ok = put(buf, sizeof(buf), &at, i ? "\",\"" : ",\"warnings\":[\"", i ? 3 : 14, false) &&
             put(buf, sizeof(buf), &at, w->items[i].text, strlen(w->items[i].text), true);
    if (ok && w && w->n)
        ok = put(buf, sizeof(buf), &at, "\"]", 2, false);
    if (ok)
        ok = put(buf, sizeof(buf), &at, "}}", 2, false);
    if (!ok)
        return K_ENOMEM; /* cannot happen: ADMISSION_RESPONSE_MAX covers the limits */
    if (!(out->response = malloc(at + 1)))
        return K_ENOMEM;
    memcpy(out->response, buf, at + 1);
    out->response_len = at;
    return K_OK;
}

/* ------------------------------------------------------------------ what is parsed */

/*
 * What the checks read, as a schema of member names (core/json/scan.h; admission.h "Parsing
 * only what the checks read"): per node, the members kept and the node their values follow;
 * every other member of that node is cut. An array takes the node of its member, for each of
 * its elements. Kept in step with admission_handle(), pod_spec_of(), warnings.c,
 * warnings_dra.c and core/kube/project*.c.
 */
enum schema_node {
    S_ROOT = JSON_NODE_ALL + 1, /* the AdmissionReview */
    S_REQUEST,                  /* request */
    S_OBJECT,                   /* request.object */
    S_META,                     /* metadata of the object or of a pod template */
    S_SPEC,                     /* spec of every kind checked (union) */
    S_TEMPLATE,                 /* spec.template, spec.jobTemplate */
    S_CONTAINER,                /* containers[], initContainers[] */
    S_AFFINITY,                 /* spec.affinity */
    S_ANNOTATIONS,              /* metadata.annotations */
    S_N
};

/* The regions priced apart (admission.h): request.object, and request.oldObject, never read. */
enum { REGION_ENVELOPE, REGION_OBJECT, REGION_OLD_OBJECT };

/* {name, node, region, unique, label}: JSON_NODE_ALL keeps the whole value */
static const struct json_member_rule ROOT_MEMBERS[] = {
    {"apiVersion", JSON_NODE_ALL, 0, false, NULL},
    {"kind", JSON_NODE_ALL, 0, false, NULL},
    {"request", S_REQUEST, 0, true, NULL},
};
static const struct json_member_rule REQUEST_MEMBERS[] = {
    {"uid", JSON_NODE_ALL, 0, false, NULL},
    {"kind", JSON_NODE_ALL, 0, false, NULL},
    {"subResource", JSON_NODE_ALL, 0, false, NULL},
    {"name", JSON_NODE_ALL, 0, false, NULL},
    {"namespace", JSON_NODE_ALL, 0, false, NULL},
    {"operation", JSON_NODE_ALL, 0, false, NULL},
    {"dryRun", JSON_NODE_ALL, 0, false, NULL},
    {"object", S_OBJECT, REGION_OBJECT, true, "request.object"},
    {"oldObject", JSON_NODE_ALL, REGION_OLD_OBJECT, true, "request.oldObject"},
};
static const struct json_member_rule OBJECT_MEMBERS[] = {
    {"apiVersion", JSON_NODE_ALL, 0, false, NULL},
    {"kind", JSON_NODE_ALL, 0, false, NULL},
    {"metadata", S_META, 0, false, NULL},
    {"spec", S_SPEC, 0, false, NULL},
};
/* admission_handle() and core/kube/project.c project_meta() */
static const struct json_member_rule META_MEMBERS[] = {
    {"name", JSON_NODE_ALL, 0, false, NULL},
    {"namespace", JSON_NODE_ALL, 0, false, NULL},
    {"generateName", JSON_NODE_ALL, 0, false, NULL},
    {"uid", JSON_NODE_ALL, 0, false, NULL},
    {"annotations", S_ANNOTATIONS, 0, false, NULL},
    {"deletionTimestamp", JSON_NODE_ALL, 0, false, NULL},
    {"creationTimestamp", JSON_NODE_ALL, 0, false, NULL},
    {"ownerReferences", JSON_NODE_ALL, 0, false, NULL},
};
/* project_meta(), core/kube/project_dra.c (a kubectl last-applied-configuration is cut) */
static const struct json_member_rule ANNOTATIONS_MEMBERS[] = {
    {POD_ANNOTATION_CAUSE, JSON_NODE_ALL, 0, false, NULL},
    {POD_ANNOTATION_DETAIL, JSON_NODE_ALL, 0, false, NULL},
    {"resource.kubernetes.io/pod-claim-name", JSON_NODE_ALL, 0, false, NULL},
};
static const struct json_member_rule SPEC_MEMBERS[] = {
    /* PodSpec (core/kube/project.c project_pod_spec, warnings.c) */
    {"containers", S_CONTAINER, 0, false, NULL},
    {"initContainers", S_CONTAINER, 0, false, NULL},
    {"overhead", JSON_NODE_ALL, 0, false, NULL},
    {"affinity", S_AFFINITY, 0, false, NULL},
    {"tolerations", JSON_NODE_ALL, 0, false, NULL},
    {"nodeSelector", JSON_NODE_ALL, 0, false, NULL},
    {"nodeName", JSON_NODE_ALL, 0, false, NULL},
    {"schedulerName", JSON_NODE_ALL, 0, false, NULL},
    {"runtimeClassName", JSON_NODE_ALL, 0, false, NULL},
    {"resourceClaims", JSON_NODE_ALL, 0, false, NULL},
    {"schedulingGates", JSON_NODE_ALL, 0, false, NULL},
    /* workloads (pod_spec_of) */
    {"replicas", JSON_NODE_ALL, 0, false, NULL},
    {"parallelism", JSON_NODE_ALL, 0, false, NULL},
    {"template", S_TEMPLATE, 0, false, NULL},
    {"jobTemplate", S_TEMPLATE, 0, false, NULL},
    /* ResourceQuota, ResourceClaim, ResourceClaimTemplate (spec.spec) */
    {"hard", JSON_NODE_ALL, 0, false, NULL},
    {"devices", JSON_NODE_ALL, 0, false, NULL},
    {"spec", S_SPEC, 0, false, NULL},
};
static const struct json_member_rule TEMPLATE_MEMBERS[] = {
    {"metadata", S_META, 0, false, NULL},
    {"spec", S_SPEC, 0, false, NULL},
};
static const struct json_member_rule CONTAINER_MEMBERS[] = {
    {"name", JSON_NODE_ALL, 0, false, NULL},
    {"resources", JSON_NODE_ALL, 0, false, NULL},
    {"restartPolicy", JSON_NODE_ALL, 0, false, NULL},
};
static const struct json_member_rule AFFINITY_MEMBERS[] = {
    {"nodeAffinity", JSON_NODE_ALL, 0, false, NULL},
};

#define MEMBERS(a) JSON_NODE_CUT, a, sizeof(a) / sizeof(a[0])
static const struct json_schema_node SCHEMA_NODES[S_N] = {
    [S_ROOT] = {MEMBERS(ROOT_MEMBERS)},
    [S_REQUEST] = {MEMBERS(REQUEST_MEMBERS)},
    [S_OBJECT] = {MEMBERS(OBJECT_MEMBERS)},
    [S_META] = {MEMBERS(META_MEMBERS)},
    [S_ANNOTATIONS] = {MEMBERS(ANNOTATIONS_MEMBERS)},
    [S_SPEC] = {MEMBERS(SPEC_MEMBERS)},
    [S_TEMPLATE] = {MEMBERS(TEMPLATE_MEMBERS)},
    [S_CONTAINER] = {MEMBERS(CONTAINER_MEMBERS)},
    [S_AFFINITY] = {MEMBERS(AFFINITY_MEMBERS)},
};
static const struct json_schema SCHEMA = {SCHEMA_NODES, S_N, S_ROOT};

/*
 * Validates the body and builds the tree (admission.h): without request.oldObject (never
 * read), without request.object when it is above its budget (t->region_null), and, unless
 * ADMISSION_PARSE_FULL, without the members the checks do not read. Returns K_OK or, with the
 * reason in err, anything else.
 */
static int parse(struct json_tree *t, const char *body, size_t len, unsigned flags, char *err,
                 size_t errlen)
{
    struct json_tree_opts opts = {
        .schema = &SCHEMA,
        .max_depth = ADMISSION_MAX_DEPTH,
        .region = {[REGION_ENVELOPE] = {.max_cost = ADMISSION_MAX_ENVELOPE_COST},
                   [REGION_OBJECT] = {.max_cost = ADMISSION_MAX_OBJECT_COST,
                                      .null_when_over = true},
                   [REGION_OLD_OBJECT] = {.skip = true}},
        .flags = JSON_TREE_OBJECT |
                 (flags & ADMISSION_PARSE_FULL ? JSON_TREE_KEEP_ALL | JSON_TREE_TOKENER : 0),
    };
    int rc = json_tree_parse(t, body, len, &opts, err, errlen);
    if (rc == K_ETOOBIG && t->cost[REGION_ENVELOPE] <= ADMISSION_MAX_ENVELOPE_COST)
        snprintf(err, errlen, "body too large"); /* above INT_MAX bytes, not scanned */
    else if (rc == K_ETOOBIG)
        snprintf(err, errlen,
                 "the AdmissionReview outside request.object is too large to parse (%" PRIu64
                 " KiB estimated, limit %u KiB)",
                 t->cost[REGION_ENVELOPE] >> 10, ADMISSION_MAX_ENVELOPE_COST >> 10);
    return rc;
}

/* The kinds pod_spec_of() and the ResourceQuota check look at. */
static bool checked_kind(const char *group, const char *kind)
{
    static const char *const kinds[][2] = {
        {"", "Pod"},
        {"", "ResourceQuota"},
        {"apps", "Deployment"},
        {"apps", "StatefulSet"},
        {"apps", "ReplicaSet"},
        {"apps", "DaemonSet"},
        {"batch", "Job"},
        {"batch", "CronJob"},
        {"resource.k8s.io", "ResourceClaim"},
        {"resource.k8s.io", "ResourceClaimTemplate"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(group, kinds[i][0]) == 0 && strcmp(kind, kinds[i][1]) == 0)
            return true;
    return false;
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

int admission_check_object(const char *group, const char *version, const char *kind, const char *ns,
                           enum admission_check_as as, json_object *obj,
                           const struct wh_snapshot *snap, struct warn_list *out)
{
    /* wh_object.create: the checks reading current usage (warnings.h) */
    struct wh_object o = {.ns = ns, .create = as == ADMISSION_CHECK_CREATE};
    /* at any version gputri reads (core/kube/dra_api.h) */
    enum dra_api_version dra_version = dra_api_version_parse(version);
    bool dra_kind =
        strcmp(group, DRA_API_GROUP) == 0 && dra_version != DRA_API_NONE &&
        (strcmp(kind, "ResourceClaim") == 0 || strcmp(kind, "ResourceClaimTemplate") == 0);
    if (!obj)
        return K_OK;
    if (!*group && strcmp(kind, "ResourceQuota") == 0) {
        wh_check_quota_object(obj, snap->gpus, out);
    } else if (dra_kind) {
        /* the spec is immutable: only CREATE says something new */
        if (as != ADMISSION_CHECK_UPDATE &&
            wh_check_dra_object(snap, ns, obj, strcmp(kind, "ResourceClaimTemplate") == 0,
                                dra_version, out) == K_ENOMEM)
            return K_ENOMEM;
    } else if (pod_spec_of(group, kind, obj, &o)) {
        /* K_EPARSE (an unparsable GPU quantity): the API server rejects the object itself;
         * allow without warnings */
        if (wh_check_pod_spec(snap, &o, out) == K_ENOMEM)
            return K_ENOMEM;
    }
    return K_OK;
}

int admission_handle(const char *body, size_t len, const struct wh_snapshot *snap,
                     struct admission_result *out)
{
    return admission_handle_ex(body, len, snap, 0, out);
}

int admission_handle_ex(const char *body, size_t len, const struct wh_snapshot *snap,
                        unsigned flags, struct admission_result *out)
{
    memset(out, 0, sizeof(*out));
    warn_list_init(&out->warnings);
    struct json_tree tree; /* holds the text the tree borrows its member names from */
    if (parse(&tree, body ? body : "", body ? len : 0, flags, out->error, sizeof(out->error)) !=
        K_OK) {
        json_tree_free(&tree);
        return K_EPARSE;
    }
    json_object *root = tree.root;
    uint64_t object_cost = tree.cost[REGION_OBJECT];
    bool too_large = tree.region_null[REGION_OBJECT];
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
    copy(out->created, sizeof(out->created), jstr(meta, "creationTimestamp"));
    if (group && *group)
        snprintf(out->api_version, sizeof(out->api_version), "%s/%s", group,
                 version ? version : "v1");
    else
        copy(out->api_version, sizeof(out->api_version), version ? version : "v1");

    bool checkable =
        okind && op && (!sub || !*sub) && (strcmp(op, "CREATE") == 0 || strcmp(op, "UPDATE") == 0);
    if (checkable && too_large && checked_kind(group ? group : "", okind))
        warn_add(&out->warnings, WARN_REASON_NOT_CHECKED,
                 "%s too large to check: about %" PRIu64
                 " MiB as a JSON tree, above gputri-webhook's %u MiB per request; GPU checks "
                 "skipped",
                 okind, (object_cost + (1u << 20) - 1) >> 20, ADMISSION_MAX_OBJECT_COST >> 20);
    if (checkable && obj &&
        admission_check_object(group ? group : "", version, okind, out->ns[0] ? out->ns : NULL,
                               strcmp(op, "CREATE") == 0 ? ADMISSION_CHECK_CREATE
                                                         : ADMISSION_CHECK_UPDATE,
                               obj, snap, &out->warnings) == K_ENOMEM) {
        rc = K_ENOMEM;
        goto done;
    }
    rc = encode(uid, &out->warnings, out);
done:
    json_tree_free(&tree);
    /* give a large tree's pages back to the system instead of keeping them in this thread's
     * arena (glibc keeps freed memory below the top of each heap) */
    if (tree.built_cost > ADMISSION_TRIM_ABOVE)
        malloc_trim(0);
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
