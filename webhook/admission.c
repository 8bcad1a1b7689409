/* admission.c - AdmissionReview v1 decode, checks, encode. */
#include "admission.h"

#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"
#include "util/strconv.h"
#include "util/utf8.h"

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

/* ------------------------------------------------------------------ pre-scan */

/* Where a value sits: request.object, request.oldObject, or anywhere else (the envelope). */
enum region { REGION_ENVELOPE, REGION_OBJECT, REGION_OLD_OBJECT, REGION_N };

struct span {
    size_t start, end; /* [start, end) of the value's bytes */
    bool seen;
};

struct scan {
    const unsigned char *s;
    size_t len, pos;
    int depth;                           /* open containers */
    bool is_object[ADMISSION_MAX_DEPTH]; /* per open container: object (true) or array */
    bool in_request;                     /* the current root member is "request" */
    bool request_seen;
    enum region pending; /* region of the next value (after its key) */
    enum region region;  /* region of the value being scanned */
    struct span spans[REGION_N];
    uint64_t cost[REGION_N];
    size_t values;
    char *err;
    size_t errlen;
};

static bool scan_fail(struct scan *sc, const char *what)
{
    snprintf(sc->err, sc->errlen, "malformed JSON: %s at byte %zu", what, sc->pos);
    return false;
}

static void skip_ws(struct scan *sc)
{
    while (sc->pos < sc->len && (sc->s[sc->pos] == ' ' || sc->s[sc->pos] == '\t' ||
                                 sc->s[sc->pos] == '\n' || sc->s[sc->pos] == '\r'))
        sc->pos++;
}

/*
 * A string at sc->pos (the opening quote). Its bytes go into *bytes; when key is non-NULL, its
 * decoded text (up to keylen - 1 ASCII characters) goes there, "" when longer or not ASCII.
 */
static bool scan_string(struct scan *sc, size_t *bytes, char *key, size_t keylen)
{
    size_t start = ++sc->pos, k = 0;
    bool ascii = true;
    for (;;) {
        if (sc->pos >= sc->len)
            return scan_fail(sc, "unterminated string");
        unsigned char c = sc->s[sc->pos];
        unsigned cp = c;
        if (c == '"')
            break;
        if (c < 0x20)
            return scan_fail(sc, "control character in string");
        if (c == '\\') {
            if (sc->pos + 1 >= sc->len)
                return scan_fail(sc, "unterminated string");
            unsigned char e = sc->s[sc->pos + 1];
            static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
            const char *hit = e ? strchr(esc_in, e) : NULL;
            if (hit) {
                cp = (unsigned char)esc_out[hit - esc_in];
                sc->pos += 2;
            } else if (e == 'u') {
                cp = 0;
                for (size_t i = 0; i < 4; i++) {
                    int h =
                        sc->pos + 2 + i < sc->len ? strconv_hex_digit(sc->s[sc->pos + 2 + i]) : -1;
                    if (h < 0)
                        return scan_fail(sc, "invalid \\u escape");
                    cp = cp << 4 | (unsigned)h;
                }
                sc->pos += 6;
            } else {
                return scan_fail(sc, "invalid escape in string");
            }
        } else {
            size_t n = utf8_decode(sc->s + sc->pos, sc->len - sc->pos, &cp);
            if (n == 0)
                return scan_fail(sc, "invalid UTF-8 in string");
            sc->pos += n;
        }
        if (key) {
            if (cp >= 0x80 || k + 1 >= keylen)
                ascii = false;
            else
                key[k++] = (char)cp;
        }
    }
    *bytes = sc->pos - start;
    sc->pos++; /* closing quote */
    if (key)
        key[ascii ? k : 0] = 0;
    return true;
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (no NaN, no Infinity). */
static bool scan_number(struct scan *sc)
{
    const unsigned char *s = sc->s;
    size_t p = sc->pos, len = sc->len;
    if (p < len && s[p] == '-')
        p++;
    if (p < len && s[p] == '0') {
        p++;
    } else if (p < len && s[p] >= '1' && s[p] <= '9') {
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
    } else {
        sc->pos = p;
        return scan_fail(sc, "invalid number");
    }
    if (p < len && s[p] == '.') {
        size_t d = ++p;
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
        if (p == d) {
            sc->pos = p;
            return scan_fail(sc, "invalid number");
        }
    }
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < len && (s[p] == '+' || s[p] == '-'))
            p++;
        size_t d = p;
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
        if (p == d) {
            sc->pos = p;
            return scan_fail(sc, "invalid number");
        }
    }
    sc->pos = p;
    return true;
}

static bool scan_literal(struct scan *sc, const char *lit)
{
    size_t n = strlen(lit);
    if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, lit, n) != 0)
        return scan_fail(sc, "unexpected character");
    sc->pos += n;
    return true;
}

/* A value starts at sc->pos, inside `depth` open containers. */
static void value_begin(struct scan *sc)
{
    sc->values++;
    if (sc->depth > 0 && !sc->is_object[sc->depth - 1])
        sc->cost[sc->region] += ADMISSION_COST_ELEMENT;
    if (sc->depth == 2 && sc->pending != REGION_ENVELOPE) {
        sc->region = sc->pending;
        sc->spans[sc->region].start = sc->pos;
        sc->spans[sc->region].seen = true;
        sc->pending = REGION_ENVELOPE;
    }
}

/* A value ended at sc->pos (after a scalar, or after the closing bracket with depth popped). */
static void value_end(struct scan *sc)
{
    if (sc->depth == 2 && sc->region != REGION_ENVELOPE) {
        sc->spans[sc->region].end = sc->pos;
        sc->region = REGION_ENVELOPE;
    }
}

/* A member name was read inside the container at depth sc->depth. */
static bool member_name(struct scan *sc, const char *key)
{
    if (sc->depth == 1) {
        sc->in_request = strcmp(key, "request") == 0;
        if (sc->in_request && sc->request_seen)
            return scan_fail(sc, "duplicate member \"request\"");
        sc->request_seen |= sc->in_request;
    } else if (sc->depth == 2 && sc->in_request) {
        enum region r = strcmp(key, "object") == 0      ? REGION_OBJECT
                        : strcmp(key, "oldObject") == 0 ? REGION_OLD_OBJECT
                                                        : REGION_ENVELOPE;
        if (r != REGION_ENVELOPE && sc->spans[r].seen)
            return scan_fail(sc, r == REGION_OBJECT ? "duplicate member \"request.object\""
                                                    : "duplicate member \"request.oldObject\"");
        sc->pending = r;
    }
    return true;
}

/*
 * Validates `len` bytes as one RFC 8259 JSON text (strict: UTF-8 without overlong forms or
 * surrogates, no control characters in strings, no NaN/Infinity, no trailing commas, nothing but
 * whitespace after the value) with at most ADMISSION_MAX_DEPTH nested containers, and estimates
 * per region what json-c would allocate for it. One pass, no allocation.
 */
static bool scan_json(struct scan *sc)
{
    enum { VALUE, VALUE_OR_CLOSE, NAME, NAME_OR_CLOSE, AFTER } st = VALUE;
    for (;;) {
        skip_ws(sc);
        if (st == AFTER && sc->depth == 0) {
            if (sc->pos != sc->len)
                return scan_fail(sc, "trailing data after the value");
            return true;
        }
        if (sc->pos >= sc->len)
            return scan_fail(sc, "unexpected end of input");
        unsigned char c = sc->s[sc->pos];
        size_t bytes;
        switch (st) {
        case VALUE_OR_CLOSE:
        case NAME_OR_CLOSE:
            if (c == (st == VALUE_OR_CLOSE ? ']' : '}')) {
                sc->pos++;
                sc->depth--;
                value_end(sc);
                st = AFTER;
                continue;
            }
            if (st == NAME_OR_CLOSE) {
                st = NAME;
                continue;
            }
            __attribute__((fallthrough)); /* a value */
        case VALUE:
            value_begin(sc);
            if (c == '{' || c == '[') {
                if (sc->depth >= ADMISSION_MAX_DEPTH)
                    return scan_fail(sc, "nesting too deep");
                sc->is_object[sc->depth++] = c == '{';
                sc->cost[sc->region] += c == '{' ? ADMISSION_COST_OBJECT : ADMISSION_COST_ARRAY;
                sc->pos++;
                st = c == '{' ? NAME_OR_CLOSE : VALUE_OR_CLOSE;
                continue;
            }
            if (c == '"') {
                if (!scan_string(sc, &bytes, NULL, 0))
                    return false;
                sc->cost[sc->region] += ADMISSION_COST_SCALAR + bytes;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                if (!scan_number(sc))
                    return false;
                sc->cost[sc->region] += ADMISSION_COST_SCALAR;
            } else if (c == 't' || c == 'f' || c == 'n') {
                if (!scan_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null"))
                    return false;
                sc->cost[sc->region] += ADMISSION_COST_SCALAR;
            } else {
                return scan_fail(sc, "unexpected character");
            }
            value_end(sc);
            st = AFTER;
            continue;
        case NAME: {
            char key[16];
            if (c != '"')
                return scan_fail(sc, "expected a member name");
            if (!scan_string(sc, &bytes, key, sizeof(key)))
                return false;
            sc->cost[sc->region] += ADMISSION_COST_MEMBER + bytes;
            skip_ws(sc);
            if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
                return scan_fail(sc, "expected ':'");
            sc->pos++;
            if (!member_name(sc, key))
                return false;
            st = VALUE;
            continue;
        }
        case AFTER: {
            bool obj = sc->is_object[sc->depth - 1];
            sc->pos++;
            if (c == ',') {
                st = obj ? NAME : VALUE;
            } else if (c == (obj ? '}' : ']')) {
                sc->depth--;
                value_end(sc);
            } else {
                sc->pos--;
                return scan_fail(sc, obj ? "expected ',' or '}'" : "expected ',' or ']'");
            }
            continue;
        }
        }
    }
}

/* ------------------------------------------------------------------ parse */

/*
 * Builds the json-c tree of body[0, len) with the values at the spans in `skip` (sorted, not
 * overlapping, up to 2) read as null. The body was validated by scan_json().
 */
static json_object *parse_skipping(const char *body, size_t len, const struct span *skip,
                                   size_t n_skip, char *err, size_t errlen)
{
    json_tokener *tok = json_tokener_new_ex(ADMISSION_MAX_DEPTH + 1);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = NULL;
    size_t at = 0;
    enum json_tokener_error jerr = json_tokener_continue;
    for (size_t i = 0; i <= n_skip && jerr == json_tokener_continue; i++) {
        size_t end = i < n_skip ? skip[i].start : len;
        root = json_tokener_parse_ex(tok, body + at, (int)(end - at));
        jerr = json_tokener_get_error(tok);
        if (i < n_skip && jerr == json_tokener_continue) {
            root = json_tokener_parse_ex(tok, "null", 4);
            jerr = json_tokener_get_error(tok);
            at = skip[i].end;
        }
    }
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success) {
        snprintf(err, errlen, "malformed JSON: %s",
                 jerr == json_tokener_continue ? "unexpected end of input"
                                               : json_tokener_error_desc(jerr));
        json_object_put(root);
        return NULL;
    }
    return root;
}

/*
 * Validates the body, then builds the tree without request.oldObject (never read) and, when
 * request.object is above its budget, without it either (*object_cost set, *too_large true).
 */
static json_object *parse(const char *body, size_t len, uint64_t *object_cost, bool *too_large,
                          uint64_t *total_cost, char *err, size_t errlen)
{
    if (len > (size_t)INT_MAX) {
        snprintf(err, errlen, "body too large");
        return NULL;
    }
    struct scan sc = {.s = (const unsigned char *)body, .len = len, .err = err, .errlen = errlen};
    if (!scan_json(&sc))
        return NULL;
    if (!sc.is_object[0]) {
        snprintf(err, errlen, "malformed JSON: not an object");
        return NULL;
    }
    if (sc.cost[REGION_ENVELOPE] > ADMISSION_MAX_ENVELOPE_COST) {
        snprintf(err, errlen,
                 "the AdmissionReview outside request.object is too large to parse (%" PRIu64
                 " KiB estimated, limit %u KiB)",
                 sc.cost[REGION_ENVELOPE] >> 10, ADMISSION_MAX_ENVELOPE_COST >> 10);
        return NULL;
    }
    *object_cost = sc.cost[REGION_OBJECT];
    *too_large = sc.cost[REGION_OBJECT] > ADMISSION_MAX_OBJECT_COST;
    struct span skip[2];
    size_t n = 0;
    if (*too_large)
        skip[n++] = sc.spans[REGION_OBJECT];
    if (sc.spans[REGION_OLD_OBJECT].seen)
        skip[n++] = sc.spans[REGION_OLD_OBJECT];
    if (n == 2 && skip[0].start > skip[1].start) {
        struct span t = skip[0];
        skip[0] = skip[1];
        skip[1] = t;
    }
    *total_cost = sc.cost[REGION_ENVELOPE] + (*too_large ? 0 : sc.cost[REGION_OBJECT]);
    return parse_skipping(body, len, skip, n, err, errlen);
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

int admission_handle(const char *body, size_t len, const struct wh_snapshot *snap,
                     struct admission_result *out)
{
    memset(out, 0, sizeof(*out));
    warn_list_init(&out->warnings);
    uint64_t object_cost = 0, total_cost = 0;
    bool too_large = false;
    json_object *root = parse(body ? body : "", body ? len : 0, &object_cost, &too_large,
                              &total_cost, out->error, sizeof(out->error));
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

    bool checkable =
        okind && op && (!sub || !*sub) && (strcmp(op, "CREATE") == 0 || strcmp(op, "UPDATE") == 0);
    if (checkable && too_large && checked_kind(group ? group : "", okind))
        warn_add(&out->warnings, WARN_REASON_NOT_CHECKED,
                 "%s too large to check: about %" PRIu64
                 " MiB as a JSON tree, above gputri-webhook's %u MiB per request; GPU checks "
                 "skipped",
                 okind, (object_cost + (1u << 20) - 1) >> 20, ADMISSION_MAX_OBJECT_COST >> 20);
    if (checkable && obj) {
        if (!group)
            group = "";
        struct wh_object o = {
            .ns = out->ns[0] ? out->ns : NULL,
            .create = strcmp(op, "CREATE") == 0,
        };
        bool dra_kind =
            strcmp(group, "resource.k8s.io") == 0 && version && strcmp(version, "v1") == 0 &&
            (strcmp(okind, "ResourceClaim") == 0 || strcmp(okind, "ResourceClaimTemplate") == 0);
        if (!*group && strcmp(okind, "ResourceQuota") == 0) {
            wh_check_quota_object(obj, snap->gpus, &out->warnings);
        } else if (dra_kind) {
            /* the spec is immutable: only CREATE says something new */
            if (o.create &&
                wh_check_dra_object(snap, o.ns, obj, strcmp(okind, "ResourceClaimTemplate") == 0,
                                    &out->warnings) == K_ENOMEM) {
                rc = K_ENOMEM;
                goto done;
            }
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
    /* give a large tree's pages back to the system instead of keeping them in this thread's
     * arena (glibc keeps freed memory below the top of each heap) */
    if (total_cost > ADMISSION_TRIM_ABOVE)
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
