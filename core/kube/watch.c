/*
 * watch.c - incremental splitter for Kubernetes watch streams (see watch.h).
 *
 * A small scanner follows strings, escapes and nesting to find where each top-level object ends,
 * collects the event's bytes (at most max_event) and parses the complete event in one call,
 * within its memory budget (kube/read_budget.h). json-c's own incremental parsing is not used
 * because its result depends on where the chunks are cut: a number split across calls is checked
 * piece by piece (`1-2` fed byte by byte reads as 1), and with UTF-8 validation on it drops a
 * finished value when the byte after it is bad. Parsing whole events makes the events delivered
 * independent of the chunking. The client (client.c) feeds the parser from curl's write callback.
 */
#include "kube/watch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/read_budget.h"
#include "util/buf.h"
#include "util/result.h"
#include "util/utf8.h"

struct kube_watch_parser {
    kube_watch_fn fn;
    void *ctx;
    struct buf event; /* the bytes of the current, incomplete event; limit max_event */
    int failed;       /* a K_* error was returned; refuse further input */
    /* the scanner, inside an event */
    bool in_event;
    bool in_string;
    bool escape;             /* the previous byte in a string was a backslash */
    size_t depth;            /* open objects and arrays */
    bool deep;               /* the event nests deeper than KUBE_READ_MAX_DEPTH */
    struct utf8_stream utf8; /* UTF-8 check across chunks */
    char *last_rv;           /* owned; NULL means "" */
    size_t over_budget;
};

struct kube_watch_parser *kube_watch_parser_new(size_t max_event, kube_watch_fn fn, void *ctx)
{
    struct kube_watch_parser *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    /* UTF-8 is checked across chunks (utf8_stream_valid_prefix); strict JSON by the parse. */
    p->fn = fn;
    p->ctx = ctx;
    utf8_stream_init(&p->utf8);
    /* json_tokener_parse_ex takes an int length */
    buf_init(&p->event, max_event < INT32_MAX ? max_event : INT32_MAX);
    return p;
}

void kube_watch_parser_free(struct kube_watch_parser *p)
{
    if (!p)
        return;
    buf_cleanup(&p->event);
    free(p->last_rv);
    free(p);
}

size_t kube_watch_parser_over_budget(const struct kube_watch_parser *p)
{
    return p->over_budget;
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

/* The collected event is complete: parse it in one call and hand it on. */
static int finish_event(struct kube_watch_parser *p)
{
    struct json_tree t;
    char err[160];
    int rc = K_OK;
    /* The scanner ends the event at the brace that closes it; the parse checks every byte. An
     * event nested deeper than the tree takes is valid JSON: skipped as one over its budget, so
     * that one object (a CustomResource that keeps unknown fields) cannot end every watch. */
    if (p->deep) {
        kube_read_too_deep("a watch event", p->event.len);
        p->over_budget++;
        goto done;
    }
    rc = kube_read_parse(&t, KUBE_READ_EVENT, p->event.data, p->event.len, err, sizeof(err));
    if (rc == K_OK) {
        rc = dispatch(p, t.root);
    } else if (rc == K_ETOOBIG) {
        /* Skipped: the store keeps what it had (a relist drops the object), and the
         * resourceVersion does not advance past it. */
        kube_read_over_budget("a watch event", t.cost[0], p->event.len);
        p->over_budget++;
        rc = K_OK;
    }
    json_tree_free(&t);
done:
    kube_read_trim(p->event.len);
    p->in_event = false;
    /* Keep a small buffer for the next event; give back what a large one needed. */
    if (p->event.cap > (1u << 20))
        buf_cleanup(&p->event);
    else
        buf_reset(&p->event);
    return rc;
}

/* Scan `len` bytes for event boundaries, collecting and dispatching every event that completes. */
static int parse_bytes(struct kube_watch_parser *p, const char *data, size_t len)
{
    while (len > 0) {
        if (!p->in_event) {
            /* Between events: skip the newlines the server writes after each one. */
            while (len > 0 && is_space(*data)) {
                data++;
                len--;
            }
            if (len == 0)
                break;
            if (*data != '{')
                return K_EPARSE; /* an event is a JSON object */
            p->in_event = true;
            p->in_string = false;
            p->escape = false;
            p->depth = 0;
            p->deep = false;
        }
        size_t i = 0;
        bool complete = false;
        for (; i < len && !complete; i++) {
            char c = data[i];
            if (p->in_string) {
                if (p->escape)
                    p->escape = false;
                else if (c == '\\')
                    p->escape = true;
                else if (c == '"')
                    p->in_string = false;
            } else if (c == '"') {
                p->in_string = true;
            } else if (c == '{' || c == '[') {
                if (++p->depth > KUBE_READ_MAX_DEPTH)
                    p->deep = true;
            } else if (c == '}' || c == ']') {
                complete = --p->depth == 0;
            }
        }
        /* Refused without growing when the event would pass max_event. */
        int rc = buf_append(&p->event, data, i);
        if (rc)
            return rc;
        data += i;
        len -= i;
        if (complete) {
            rc = finish_event(p);
            if (rc)
                return rc;
        }
    }
    return K_OK;
}

int kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len)
{
    if (p->failed)
        return p->failed;
    /*
     * Everything before the first bad byte is parsed, so the events it completes are delivered
     * exactly as when the bad byte arrives in a later chunk; then the stream is refused.
     */
    size_t good = utf8_stream_valid_prefix(&p->utf8, data, len);
    int rc = parse_bytes(p, data, good);
    if (rc == K_OK && good < len)
        rc = K_EPARSE;
    if (rc)
        p->failed = rc;
    return rc;
}

int kube_watch_parser_finish(struct kube_watch_parser *p)
{
    if (p->failed)
        return p->failed;
    return p->in_event || !utf8_stream_complete(&p->utf8) ? K_EPARSE : K_OK;
}
