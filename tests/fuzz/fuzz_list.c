/*
 * fuzz_list.c - libFuzzer target for the LIST response splitter (core/kube/list_parser.c).
 *
 * The input is a small header that chooses the cuts, then the response body:
 *   byte 0   bits 0-3: the number of cuts (0-15); bit 4: feed one byte at a time instead;
 *            bits 5-6: the item size limit (16 MiB, 64, 300 or 4096 bytes)
 *   byte 1   the item on which the handler asks to stop (1-based), 0 for never
 *   2 bytes per cut: a little-endian offset into the body (modulo its length + 1)
 * Checks, beyond the sanitizers:
 *   - fed whole and fed in the chosen chunks (or byte by byte), the items delivered, the result,
 *     resourceVersion, continue and the item count are the same, and a parser that failed keeps
 *     failing without delivering anything;
 *   - when the parser accepts the body whole (no stop, the 16 MiB limit), json-c accepts it as one
 *     document too, and its "items" (an array, or absent or null), each read alone as the clients
 *     read one (kube_read_parse: members cut, over the budget skipped), and
 *     metadata.resourceVersion and .continue are exactly what the parser delivered.
 * A difference aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/list_parser.h"
#include "kube/read_budget.h"
#include "util/buf.h"
#include "util/result.h"

#define LOG_LIMIT (64u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct record {
    struct buf log;
    unsigned count;
    unsigned stop_after;
};

static void log_object(struct buf *log, json_object *o)
{
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    if (buf_printf(log, "%s\n", text ? text : "(null)") != K_OK)
        abort(); /* bounded by LOG_LIMIT, far above what an input can produce */
}

static int on_item(void *ctx, json_object *item)
{
    struct record *r = ctx;
    r->count++;
    if (!json_object_is_type(item, json_type_object))
        abort();
    log_object(&r->log, item);
    return r->stop_after && r->count == r->stop_after;
}

struct run {
    int rc;
    char *log, *rv, *cont;
    size_t items;
};

static char *dup_or(const char *s, const char *absent)
{
    char *d = strdup(s ? s : absent);
    if (!d)
        abort();
    return d;
}

/* Feed body[0..len) as the chunks ending at cuts[0..ncuts) (ascending) and then at len. */
static struct run feed(const char *body, size_t len, const size_t *cuts, size_t ncuts,
                       size_t max_item, unsigned stop_after)
{
    struct record r = {.stop_after = stop_after};
    buf_init(&r.log, LOG_LIMIT);
    struct kube_list_parser *p = kube_list_parser_new(max_item, on_item, &r);
    if (!p)
        abort();
    struct run out = {.rc = K_OK};
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        unsigned seen = r.count;
        int rc = kube_list_parser_feed(p, body + at, end - at);
        if (out.rc == K_OK) {
            out.rc = rc;
        } else if (rc != out.rc || r.count != seen) {
            fprintf(stderr, "feed after error %d returned %d\n", out.rc, rc);
            abort();
        }
        at = end;
    }
    unsigned seen = r.count;
    int fin = kube_list_parser_finish(p);
    if (out.rc == K_OK)
        out.rc = fin;
    else if (fin != out.rc)
        abort();
    if (r.count != seen || kube_list_parser_items(p) != r.count)
        abort();
    out.items = r.count;
    out.rv = dup_or(kube_list_parser_resource_version(p), "(absent)");
    out.cont = dup_or(kube_list_parser_continue(p), "(absent)");
    out.log = r.log.data ? buf_take(&r.log) : dup_or("", "");
    kube_list_parser_free(p);
    return out;
}

static void run_free(struct run *r)
{
    free(r->log);
    free(r->rv);
    free(r->cont);
}

static const char *meta_string(json_object *meta, const char *key)
{
    json_object *v;
    if (!meta || !json_object_object_get_ex(meta, key, &v) ||
        !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* The parser accepted `body`: json-c must read the same list from it. */
static void check_against_json_c(const char *body, size_t len, const struct run *got)
{
    struct json_tokener *tok = json_tokener_new_ex(KUBE_LIST_MAX_DEPTH + 2);
    if (!tok)
        abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *doc = json_tokener_parse_ex(tok, body, (int)len);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!doc || !json_object_is_type(doc, json_type_object)) {
        fprintf(stderr, "accepted, but json-c does not read one object\n");
        abort();
    }
    for (size_t i = end; i < len; i++)
        if (!strchr(" \t\r\n", body[i]))
            abort();
    struct buf log;
    buf_init(&log, LOG_LIMIT);
    json_object *items = NULL, *meta = NULL;
    json_object_object_get_ex(doc, "items", &items);
    json_object_object_get_ex(doc, "metadata", &meta);
    if (items && !json_object_is_type(items, json_type_array))
        abort();
    /* each item as the clients read one alone (kube/read_budget.h): cut, or skipped over budget */
    for (size_t i = 0; items && i < json_object_array_length(items); i++) {
        const char *text = json_object_to_json_string_ext(json_object_array_get_idx(items, i),
                                                          JSON_C_TO_STRING_PLAIN);
        struct json_tree t;
        char err[160];
        int rc = kube_read_parse(&t, KUBE_READ_OBJECT, text, strlen(text), err, sizeof(err));
        if (rc == K_OK)
            log_object(&log, t.root);
        else if (rc != K_ETOOBIG)
            abort();
        json_tree_free(&t);
    }
    const char *rv = meta_string(meta, "resourceVersion");
    const char *cont = meta_string(meta, "continue");
    if (strcmp(buf_cstr(&log), got->log) != 0 || strcmp(rv ? rv : "(absent)", got->rv) != 0 ||
        strcmp(cont ? cont : "(absent)", got->cont) != 0) {
        fprintf(stderr,
                "json-c reads:\n%s rv %s continue %s\nthe parser delivered:\n%s rv %s "
                "continue %s\n",
                buf_cstr(&log), rv ? rv : "(absent)", cont ? cont : "(absent)", got->log, got->rv,
                got->cont);
        abort();
    }
    buf_cleanup(&log);
    json_object_put(doc);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t limits[4] = {16u << 20, 64, 300, 4096};
    if (size < 2)
        return 0;
    unsigned flags = data[0];
    unsigned stop_after = data[1];
    size_t ncuts = flags & 15;
    int bytewise = (flags >> 4) & 1;
    size_t max_item = limits[(flags >> 5) & 3];
    data += 2;
    size -= 2;
    if (size < 2 * ncuts)
        return 0;
    const uint8_t *offsets = data;
    const char *body = (const char *)data + 2 * ncuts;
    size_t len = size - 2 * ncuts;

    size_t *cuts;
    if (bytewise) {
        ncuts = len ? len - 1 : 0;
        cuts = malloc((ncuts + 1) * sizeof(*cuts));
        if (!cuts)
            abort();
        for (size_t i = 0; i < ncuts; i++)
            cuts[i] = i + 1;
    } else {
        cuts = malloc((ncuts + 1) * sizeof(*cuts));
        if (!cuts)
            abort();
        for (size_t i = 0; i < ncuts; i++)
            cuts[i] = ((size_t)offsets[2 * i] | (size_t)offsets[2 * i + 1] << 8) % (len + 1);
        qsort(cuts, ncuts, sizeof(*cuts), cmp_size);
    }

    struct run whole = feed(body, len, NULL, 0, max_item, stop_after);
    struct run split = feed(body, len, cuts, ncuts, max_item, stop_after);
    if (whole.rc != split.rc || whole.items != split.items || strcmp(whole.log, split.log) != 0 ||
        strcmp(whole.rv, split.rv) != 0 || strcmp(whole.cont, split.cont) != 0) {
        fprintf(stderr, "whole: rc %d rv %s continue %s items:\n%s\n", whole.rc, whole.rv,
                whole.cont, whole.log);
        fprintf(stderr, "in %zu chunks: rc %d rv %s continue %s items:\n%s\n", ncuts + 1, split.rc,
                split.rv, split.cont, split.log);
        for (size_t i = 0; i < ncuts; i++)
            fprintf(stderr, "cut at %zu\n", cuts[i]);
        abort();
    }
    if (whole.rc == K_OK && !stop_after && max_item == limits[0])
        check_against_json_c(body, len, &whole);
    run_free(&whole);
    run_free(&split);
    free(cuts);
    return 0;
}
