/*
 * list_parser.c - a LIST response split into items as it streams in (see list_parser.h).
 *
 * Two levels. The outer state machine reads the skeleton of the response itself: the top-level
 * object's braces, its keys, colons and commas, and the brackets and commas of the "items" array.
 * Every value it meets (a key, a member's value, one item) is handed to the collector, which copies
 * the value's bytes into one buffer, following strings, escapes and nesting only to find where the
 * value ends, and then parses that buffer alone with json-c. So the largest thing ever held is one
 * item (its text and its tree), whatever the size of the response, and the result does not depend
 * on where the chunks are cut (json-c sees each value whole, as the watch parser does).
 */
#include "kube/list_parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/read_budget.h"
#include "util/buf.h"
#include "util/result.h"
#include "util/utf8.h"

/* Where the outer state machine is. */
enum state {
    ST_DOC,         /* before the top-level '{' */
    ST_KEY_OR_END,  /* after '{': a key or '}' */
    ST_KEY,         /* after ',' between members: a key */
    ST_COLON,       /* after a key: ':' */
    ST_VALUE,       /* after ':': the member's value */
    ST_NEXT,        /* after a member: ',' or '}' */
    ST_ITEM_OR_END, /* after "items": '[': an item or ']' */
    ST_ITEM,        /* after ',' between items: an item */
    ST_ITEM_NEXT,   /* after an item: ',' or ']' */
    ST_END,         /* after the closing '}': whitespace only */
    ST_COLLECT,     /* inside a value the collector is copying */
};

/* What the value being collected is. */
enum what {
    W_KEY,        /* a member name */
    W_META,       /* the value of "metadata" */
    W_ITEMS_NULL, /* the value of "items" when it is not an array: only null is allowed */
    W_OTHER,      /* the value of any other member: checked, dropped */
    W_ITEM,       /* one element of "items" */
};

enum member { M_OTHER, M_META, M_ITEMS };

struct kube_list_parser {
    kube_list_item_fn fn;
    void *ctx;
    size_t max_item;
    int failed; /* a K_* error was returned; refuse further input */
    enum state state;
    enum member member; /* the member whose value comes next (after W_KEY) */
    bool seen_meta, seen_items;
    struct utf8_stream utf8;
    /* the collector */
    enum what what;
    struct buf val; /* the value's bytes; its limit is set per value */
    bool in_string, escape, scalar;
    size_t depth;
    bool deep; /* the item nests deeper than KUBE_LIST_MAX_DEPTH: skipped once complete */
    /* results */
    char *rv, *cont; /* owned; NULL when absent */
    size_t items, over_budget;
};

struct kube_list_parser *kube_list_parser_new(size_t max_item, kube_list_item_fn fn, void *ctx)
{
    struct kube_list_parser *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->fn = fn;
    p->ctx = ctx;
    /* json_tree_parse takes at most INT_MAX bytes */
    p->max_item = max_item < INT32_MAX - 1 ? max_item : INT32_MAX - 1;
    p->state = ST_DOC;
    utf8_stream_init(&p->utf8);
    buf_init(&p->val, KUBE_LIST_MAX_FIELD);
    return p;
}

void kube_list_parser_free(struct kube_list_parser *p)
{
    if (!p)
        return;
    buf_cleanup(&p->val);
    free(p->rv);
    free(p->cont);
    free(p);
}

const char *kube_list_parser_resource_version(const struct kube_list_parser *p)
{
    return p->rv;
}

const char *kube_list_parser_continue(const struct kube_list_parser *p)
{
    return p->cont;
}

size_t kube_list_parser_items(const struct kube_list_parser *p)
{
    return p->items;
}

size_t kube_list_parser_over_budget(const struct kube_list_parser *p)
{
    return p->over_budget;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Start collecting a value whose first byte is c (not consumed here). */
static void collect(struct kube_list_parser *p, enum what what, char c)
{
    p->what = what;
    p->state = ST_COLLECT;
    p->in_string = false;
    p->escape = false;
    p->depth = 0;
    p->deep = false;
    p->scalar = c != '"' && c != '{' && c != '[';
    /* Keep a small buffer for the next value; give back what a large one needed. */
    if (p->val.cap > (1u << 20))
        buf_cleanup(&p->val);
    else
        buf_reset(&p->val);
    p->val.limit = what == W_ITEM ? p->max_item : KUBE_LIST_MAX_FIELD;
}

/* A copy of string member `key` of object o, or NULL (*rc = K_ENOMEM when the copy failed). */
static char *dup_member(json_object *o, const char *key, int *rc)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    char *s = strdup(json_object_get_string(v));
    if (!s)
        *rc = K_ENOMEM;
    return s;
}

/* As a C string, the way json-c's objects key their members: a name with an escaped NUL reads as
 * what comes before it, as it would for a json-c tree of the whole response. */
static bool key_is(json_object *k, const char *name)
{
    return strcmp(json_object_get_string(k), name) == 0;
}

/*
 * A complete item: built within its budget (kube/read_budget.h) and handed on, or, over the
 * budget, counted and skipped: the rest of the LIST is still read.
 */
static int finish_item(struct kube_list_parser *p)
{
    if (p->deep) { /* valid JSON the tree would refuse: skipped like one over its budget */
        kube_read_too_deep("a LIST item", p->val.len);
        p->over_budget++;
        kube_read_trim(p->val.len);
        p->state = ST_ITEM_NEXT;
        return K_OK;
    }
    struct json_tree t;
    char err[160];
    int rc = kube_read_parse(&t, KUBE_READ_OBJECT, p->val.data, p->val.len, err, sizeof(err));
    if (rc == K_OK) {
        p->items++;
        if (p->fn(p->ctx, t.root) != 0)
            rc = K_ECANCELED;
    } else if (rc == K_ETOOBIG) {
        kube_read_over_budget("a LIST item", t.cost[0], p->val.len);
        p->over_budget++;
        rc = K_OK;
    }
    json_tree_free(&t);
    kube_read_trim(p->val.len);
    p->state = ST_ITEM_NEXT;
    return rc;
}

/* The collected value is complete: parse it alone and act on it. */
static int finish_value(struct kube_list_parser *p)
{
    if (p->what == W_ITEM)
        return finish_item(p);
    /* within a tree budget too: 1 MiB of "[{},{},...]" would be some 280 MiB of tree */
    struct json_tree t;
    char err[160];
    int rc = kube_read_parse_value(&t, p->val.data, p->val.len, err, sizeof(err));
    if (rc != K_OK) {
        json_tree_free(&t);
        return rc == K_ENOMEM ? K_ENOMEM : rc == K_ETOOBIG ? K_ETOOBIG : K_EPARSE;
    }
    json_object *v = t.root;
    switch (p->what) {
    case W_KEY:
        if (!json_object_is_type(v, json_type_string)) {
            rc = K_EPARSE;
            break;
        }
        p->member = key_is(v, "metadata") ? M_META : key_is(v, "items") ? M_ITEMS : M_OTHER;
        if ((p->member == M_META && p->seen_meta) || (p->member == M_ITEMS && p->seen_items)) {
            rc = K_EPARSE; /* twice: which one would count? */
            break;
        }
        p->seen_meta |= p->member == M_META;
        p->seen_items |= p->member == M_ITEMS;
        p->state = ST_COLON;
        break;
    case W_META:
        if (!json_object_is_type(v, json_type_object)) {
            rc = K_EPARSE;
            break;
        }
        p->rv = dup_member(v, "resourceVersion", &rc);
        p->cont = dup_member(v, "continue", &rc);
        p->state = ST_NEXT;
        break;
    case W_ITEMS_NULL:
        if (v) /* null parses to NULL; anything else is not a list */
            rc = K_EPARSE;
        p->state = ST_NEXT;
        break;
    case W_OTHER:
        p->state = ST_NEXT;
        break;
    case W_ITEM:
        break; /* finish_item */
    }
    json_tree_free(&t);
    return rc;
}

/*
 * Copy bytes of the value being collected, up to and including the byte that ends it (a scalar
 * ends before the delimiter that follows it). Returns K_OK with *used bytes consumed and *done set
 * when the value is complete; K_ETOOBIG at the byte past the value's limit; K_EPARSE at the byte
 * past the nesting bound; K_ENOMEM.
 */
static int collect_bytes(struct kube_list_parser *p, const char *data, size_t len, size_t *used,
                         bool *done)
{
    size_t i = 0;
    *done = false;
    for (; i < len && !*done; i++) {
        char c = data[i];
        if (p->scalar && (c == ',' || c == '}' || c == ']' || is_space(c))) {
            *done = true;
            break; /* the delimiter belongs to the outer level */
        }
        /* Checked byte by byte, so that an oversized value fails at the same byte however the
         * response is cut (and before a nesting error further on). */
        if (p->val.len + i + 1 > p->val.limit)
            return K_ETOOBIG;
        if (p->scalar) {
            /* a number or literal: json-c checks it once it has ended */
        } else if (p->in_string) {
            if (p->escape)
                p->escape = false;
            else if (c == '\\')
                p->escape = true;
            else if (c == '"') {
                p->in_string = false;
                *done = p->depth == 0;
            }
        } else if (c == '"') {
            p->in_string = true;
        } else if (c == '{' || c == '[') {
            if (++p->depth > KUBE_LIST_MAX_DEPTH) {
                if (p->what != W_ITEM)
                    return K_EPARSE;
                p->deep = true; /* one object must not stop the LIST: skipped when complete */
            }
        } else if (c == '}' || c == ']') {
            *done = --p->depth == 0;
        }
    }
    *used = i;
    return buf_append(&p->val, data, i);
}

/* Run the state machine over `len` bytes (already checked for UTF-8). */
static int parse_bytes(struct kube_list_parser *p, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (p->state == ST_COLLECT) {
            size_t used;
            bool done;
            int rc = collect_bytes(p, data + i, len - i, &used, &done);
            if (rc)
                return rc;
            i += used;
            if (done && (rc = finish_value(p)) != K_OK)
                return rc;
            continue;
        }
        char c = data[i];
        if (is_space(c)) {
            i++;
            continue;
        }
        switch (p->state) {
        case ST_DOC:
            if (c != '{')
                return K_EPARSE; /* a list is a JSON object */
            p->state = ST_KEY_OR_END;
            i++;
            break;
        case ST_KEY_OR_END:
        case ST_KEY:
            if (c == '}' && p->state == ST_KEY_OR_END) {
                p->state = ST_END;
                i++;
            } else if (c == '"') {
                collect(p, W_KEY, c);
            } else {
                return K_EPARSE;
            }
            break;
        case ST_COLON:
            if (c != ':')
                return K_EPARSE;
            p->state = ST_VALUE;
            i++;
            break;
        case ST_VALUE:
            if (c == ',' || c == '}' || c == ']' || c == ':')
                return K_EPARSE;
            if (p->member == M_ITEMS && c == '[') {
                p->state = ST_ITEM_OR_END;
                i++;
            } else {
                collect(p,
                        p->member == M_META    ? W_META
                        : p->member == M_ITEMS ? W_ITEMS_NULL
                                               : W_OTHER,
                        c);
            }
            break;
        case ST_NEXT:
            if (c == ',')
                p->state = ST_KEY;
            else if (c == '}')
                p->state = ST_END;
            else
                return K_EPARSE;
            i++;
            break;
        case ST_ITEM_OR_END:
        case ST_ITEM:
            if (c == ']' && p->state == ST_ITEM_OR_END) {
                p->state = ST_NEXT;
                i++;
            } else if (c == '{') {
                collect(p, W_ITEM, c);
            } else {
                return K_EPARSE; /* an item is an object */
            }
            break;
        case ST_ITEM_NEXT:
            if (c == ',')
                p->state = ST_ITEM;
            else if (c == ']')
                p->state = ST_NEXT;
            else
                return K_EPARSE;
            i++;
            break;
        case ST_END:
            return K_EPARSE; /* something after the list */
        case ST_COLLECT:
            break; /* handled above */
        }
    }
    return K_OK;
}

int kube_list_parser_feed(struct kube_list_parser *p, const char *data, size_t len)
{
    if (p->failed)
        return p->failed;
    /* Everything before the first bad byte is parsed, so the items it completes are delivered
     * exactly as when the bad byte arrives in a later chunk; then the response is refused. */
    size_t good = utf8_stream_valid_prefix(&p->utf8, data, len);
    int rc = parse_bytes(p, data, good);
    if (rc == K_OK && good < len)
        rc = K_EPARSE;
    if (rc)
        p->failed = rc;
    return rc;
}

int kube_list_parser_finish(struct kube_list_parser *p)
{
    if (p->failed)
        return p->failed;
    if (p->state != ST_END || !utf8_stream_complete(&p->utf8))
        p->failed = K_EPARSE;
    return p->failed;
}
