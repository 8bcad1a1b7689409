/*
 * watch.c - incremental splitter for Kubernetes watch streams (see watch.h).
 *
 * Bytes go straight into one json_tokener that keeps its own partial state between chunks, so an
 * event split at any byte is parsed once, without re-scanning or copying the stream. The client
 * (client.c) feeds it from curl's write callback.
 */
#include "kube/watch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

/*
 * Kubernetes objects nest deeper than json-c's default of 32 levels once managedFields and CRD
 * schemas are involved; the tokener's stack costs a few dozen bytes per level.
 */
#define WATCH_JSON_DEPTH 128

struct kube_watch_parser {
    struct json_tokener *tok;
    kube_watch_fn fn;
    void *ctx;
    size_t max_event;
    size_t event_bytes;     /* bytes of the current, incomplete event given to the tokener */
    int failed;             /* a K_* error was returned; refuse further input */
    unsigned char carry[4]; /* an incomplete UTF-8 sequence held back from the last chunk */
    size_t carry_len;
    char *last_rv; /* owned; NULL means "" */
};

struct kube_watch_parser *kube_watch_parser_new(size_t max_event, kube_watch_fn fn, void *ctx)
{
    struct kube_watch_parser *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->tok = json_tokener_new_ex(WATCH_JSON_DEPTH);
    if (!p->tok) {
        free(p);
        return NULL;
    }
    /*
     * The stream is untrusted: accept only strict JSON (no trailing commas, single quotes or
     * NaN) and valid UTF-8. Trailing characters are allowed because the next event follows.
     */
    json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                       JSON_TOKENER_VALIDATE_UTF8);
    p->fn = fn;
    p->ctx = ctx;
    p->max_event = max_event;
    return p;
}

void kube_watch_parser_free(struct kube_watch_parser *p)
{
    if (!p)
        return;
    json_tokener_free(p->tok);
    free(p->last_rv);
    free(p);
}

const char *kube_watch_parser_last_rv(const struct kube_watch_parser *p)
{
    return p->last_rv ? p->last_rv : "";
}

int kube_watch_error_code(json_object *status)
{
    json_object *code;

    if (!status || !json_object_is_type(status, json_type_object))
        return 0;
    if (!json_object_object_get_ex(status, "code", &code) ||
        !json_object_is_type(code, json_type_int))
        return 0;
    int64_t v = json_object_get_int64(code);
    if (v < 0 || v > 999)
        return 0;
    return (int)v;
}

static int parse_type(const char *s, enum kube_event_type *out)
{
    static const struct {
        const char *name;
        enum kube_event_type type;
    } types[] = {
        {"ADDED", KUBE_EVENT_ADDED},     {"MODIFIED", KUBE_EVENT_MODIFIED},
        {"DELETED", KUBE_EVENT_DELETED}, {"BOOKMARK", KUBE_EVENT_BOOKMARK},
        {"ERROR", KUBE_EVENT_ERROR},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(s, types[i].name) == 0) {
            *out = types[i].type;
            return K_OK;
        }
    }
    return K_EPARSE;
}

/* Remember object.metadata.resourceVersion when it is present and a string. */
static int remember_rv(struct kube_watch_parser *p, json_object *object)
{
    json_object *meta, *rv;

    if (!json_object_object_get_ex(object, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "resourceVersion", &rv) ||
        !json_object_is_type(rv, json_type_string))
        return K_OK;
    char *copy = strdup(json_object_get_string(rv));
    if (!copy)
        return K_ENOMEM;
    free(p->last_rv);
    p->last_rv = copy;
    return K_OK;
}

/* One complete top-level JSON value: check it is an event and hand it to the handler. */
static int dispatch(struct kube_watch_parser *p, json_object *ev)
{
    json_object *type, *object;
    enum kube_event_type t;
    int rc;

    if (!json_object_is_type(ev, json_type_object) ||
        !json_object_object_get_ex(ev, "type", &type) ||
        !json_object_is_type(type, json_type_string) ||
        !json_object_object_get_ex(ev, "object", &object) ||
        !json_object_is_type(object, json_type_object))
        return K_EPARSE;
    rc = parse_type(json_object_get_string(type), &t);
    if (rc)
        return rc;
    if (p->fn(p->ctx, t, object) != 0)
        return K_ECANCELED;
    /*
     * The resourceVersion only advances once the handler has taken the event, so that a caller
     * resuming from it never skips an event it did not see through.
     */
    if (t != KUBE_EVENT_ERROR)
        return remember_rv(p, object);
    return K_OK;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Run `len` bytes through the tokener, dispatching every event that completes. */
static int parse_bytes(struct kube_watch_parser *p, const char *data, size_t len)
{
    int rc = K_OK;

    while (len > 0) {
        if (p->event_bytes == 0) {
            /* Between events: skip the newlines the server writes after each one. */
            while (len > 0 && is_space(*data)) {
                data++;
                len--;
            }
            if (len == 0)
                break;
        }
        /*
         * Give the tokener at most one byte more than the event may still grow, so an oversize
         * event is caught after max_event + 1 bytes whatever the chunk size.
         */
        size_t room = p->max_event - p->event_bytes;
        size_t n = len;
        if (n > room)
            n = room + 1;
        if (n > INT32_MAX)
            n = INT32_MAX;

        json_object *ev = json_tokener_parse_ex(p->tok, data, (int)n);
        enum json_tokener_error jerr = json_tokener_get_error(p->tok);
        size_t used = json_tokener_get_parse_end(p->tok);
        if (used > n)
            used = n;

        if (!ev) {
            if (jerr != json_tokener_continue)
                return K_EPARSE;
            /* The tokener consumed all n bytes and wants more. */
            p->event_bytes += n;
            if (p->event_bytes > p->max_event)
                return K_ETOOBIG;
            data += n;
            len -= n;
            continue;
        }
        /* The tokener also eats the whitespace after a value; that is not part of the event. */
        size_t body = used;
        while (body > 0 && is_space(data[body - 1]))
            body--;
        p->event_bytes += body;
        json_tokener_reset(p->tok);
        if (p->event_bytes > p->max_event) {
            json_object_put(ev);
            return K_ETOOBIG;
        }
        p->event_bytes = 0;
        data += used;
        len -= used;
        rc = dispatch(p, ev);
        json_object_put(ev);
        if (rc)
            return rc;
    }
    return K_OK;
}

/* The length of the UTF-8 sequence started by lead byte c, 0 when c does not start one. */
static size_t utf8_seq_len(unsigned char c)
{
    if (c >= 0xc0 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf7)
        return 4;
    return 0;
}

/*
 * How many bytes at the end of data form the start of a multi-byte UTF-8 sequence that the next
 * chunk completes. json-c 0.16 validates UTF-8 per call and rejects a sequence cut by a chunk
 * boundary, so those bytes are held back and fed together with the rest.
 */
static size_t utf8_incomplete_tail(const char *data, size_t len)
{
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        unsigned char c = (unsigned char)data[len - back];
        if (c < 0x80)
            return 0;
        if (c >= 0xc0) {
            size_t need = utf8_seq_len(c);
            return need > back ? back : 0;
        }
    }
    return 0;
}

int kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len)
{
    int rc = K_OK;

    if (p->failed)
        return p->failed;
    /*
     * A NUL byte can never be part of valid JSON text, and json-c treats it as end of input;
     * refuse it here rather than let it cut an event short.
     */
    if (len && memchr(data, '\0', len)) {
        rc = K_EPARSE;
        goto out;
    }
    if (p->carry_len > 0) {
        size_t need = utf8_seq_len(p->carry[0]) - p->carry_len;
        size_t take = need < len ? need : len;
        memcpy(p->carry + p->carry_len, data, take);
        p->carry_len += take;
        data += take;
        len -= take;
        if (take < need)
            goto out; /* still incomplete: wait for more */
        size_t n = p->carry_len;
        p->carry_len = 0;
        rc = parse_bytes(p, (const char *)p->carry, n);
        if (rc)
            goto out;
    }
    size_t tail = utf8_incomplete_tail(data, len);
    rc = parse_bytes(p, data, len - tail);
    if (rc)
        goto out;
    memcpy(p->carry, data + len - tail, tail);
    p->carry_len = tail;
out:
    if (rc)
        p->failed = rc;
    return rc;
}

int kube_watch_parser_finish(struct kube_watch_parser *p)
{
    if (p->failed)
        return p->failed;
    return p->event_bytes || p->carry_len ? K_EPARSE : K_OK;
}
