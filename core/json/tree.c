/* tree.c - the tree of tree.h: the cut text, then json-c objects straight from it. */
#include "tree.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"
#include "util/strconv.h"

/* One tokener per thread, kept between calls (its parse stack is a 2.6 KiB allocation, and
 * glibc consolidates its fast bins on every allocation that size); freed when the thread exits. */
static pthread_once_t tokener_once = PTHREAD_ONCE_INIT;
static pthread_key_t tokener_key;
static bool tokener_key_ok;

static void tokener_free(void *tok)
{
    json_tokener_free(tok);
}

static void tokener_key_init(void)
{
    tokener_key_ok = pthread_key_create(&tokener_key, tokener_free) == 0;
}

/* This thread's tokener, reset; *owned when it is a new one the caller must free. */
static json_tokener *thread_tokener(bool *owned)
{
    *owned = false;
    pthread_once(&tokener_once, tokener_key_init);
    json_tokener *tok = tokener_key_ok ? pthread_getspecific(tokener_key) : NULL;
    if (tok)
        return tok;
    tok = json_tokener_new_ex(JSON_SCAN_MAX_DEPTH + 1);
    if (tok && (!tokener_key_ok || pthread_setspecific(tokener_key, tok) != 0))
        *owned = true;
    return tok;
}

/* ------------------------------------------------------------------ build */

/*
 * The cut text's tree, built straight from the text, as json-c 0.16's tokener
 * (json_tokener.c, JSON_TOKENER_STRICT) builds it: the same json-c objects, member by member in
 * the same order (json_object_object_add: a repeated name replaces the value in place), strings
 * decoded the same way (an unpaired \u surrogate as U+FFFD, \u0000 kept in a value and ending a
 * member name), numbers read the same way (json_parse_int64 for a negative integer,
 * json_parse_uint64 for another, int64 up to INT64_MAX; strtod and json_object_new_double_s
 * with a fraction or an exponent). The text was validated by json_scan(), so nothing here
 * checks syntax, and the member names are decoded in place and given to json-c as constant
 * keys: no copy of each name, and the text must outlive the tree. The tokener stays for
 * JSON_TREE_TOKENER, so the tests and fuzz_json compare the two.
 */
struct build {
    char *s; /* the text, NUL-terminated, written over by the decoded names and strings */
    size_t pos;
    bool nomem, bad_number;
};

#define IS_HIGH_SURROGATE(u) (((u)&0xfc00) == 0xd800)
#define IS_LOW_SURROGATE(u) (((u)&0xfc00) == 0xdc00)

static void build_ws(struct build *b)
{
    while (b->s[b->pos] == ' ' || b->s[b->pos] == '\t' || b->s[b->pos] == '\n' ||
           b->s[b->pos] == '\r')
        b->pos++;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 4 | (unsigned)strconv_hex_digit((unsigned char)p[i]);
    return v;
}

/* Appends code point u as json-c does (U+FFFD for a lone low surrogate or past U+10FFFF). */
static size_t put_utf8(char *w, unsigned u)
{
    unsigned char *o = (unsigned char *)w;
    if (u < 0x80) {
        o[0] = (unsigned char)u;
        return 1;
    }
    if (u < 0x800) {
        o[0] = (unsigned char)(0xc0 | u >> 6);
        o[1] = (unsigned char)(0x80 | (u & 0x3f));
        return 2;
    }
    if (IS_LOW_SURROGATE(u) || u >= 0x110000)
        u = 0xfffd;
    if (u < 0x10000) {
        o[0] = (unsigned char)(0xe0 | u >> 12);
        o[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (u & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | ((u >> 18) & 0x07));
    o[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (u & 0x3f));
    return 4;
}

/*
 * The string at b->pos (its opening quote), decoded in place: returns where it starts, its
 * decoded length in *n, followed by a NUL. Writing never overtakes reading: an escape is at
 * least as long as what it stands for (a surrogate pair 12 bytes for 4, a lone surrogate 6 for
 * the 3 of U+FFFD).
 */
static char *build_string(struct build *b, size_t *n)
{
    char *s = b->s, *out = s + b->pos + 1;
    size_t r = b->pos + 1, w = r;
    unsigned high = 0; /* a high surrogate waiting for its low half */
    for (;;) {
        size_t run = r;
        while (s[run] != '"' && s[run] != '\\')
            run++;
        if (high && run > r) { /* the high surrogate is not followed by an escape */
            w += put_utf8(s + w, 0xfffd);
            high = 0;
        }
        if (w != r)
            memmove(s + w, s + r, run - r);
        w += run - r;
        r = run;
        if (s[r] == '"')
            break;
        char e = s[r + 1];
        if (e != 'u') {
            if (high) {
                w += put_utf8(s + w, 0xfffd);
                high = 0;
            }
            static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
            s[w++] = esc_out[strchr(esc_in, e) - esc_in];
            r += 2;
            continue;
        }
        unsigned u = hex4(s + r + 2);
        r += 6;
        if (high) {
            if (IS_LOW_SURROGATE(u))
                u = (((high & 0x3ff) << 10) | (u & 0x3ff)) + 0x10000;
            else
                w += put_utf8(s + w, 0xfffd);
            high = 0;
        }
        if (IS_HIGH_SURROGATE(u))
            high = u;
        else
            w += put_utf8(s + w, u);
    }
    if (high)
        w += put_utf8(s + w, 0xfffd);
    s[w] = 0;
    b->pos = r + 1;
    *n = w - (size_t)(out - s);
    return out;
}

/* The number at b->pos. The text is in the C locale (nothing in gputri calls setlocale). */
static json_object *build_number(struct build *b)
{
    char *s = b->s + b->pos;
    size_t n = 0;
    bool is_double = false;
    while (s[n] && strchr("0123456789-+.eE", s[n])) {
        is_double |= s[n] == '.' || s[n] == 'e' || s[n] == 'E';
        n++;
    }
    b->pos += n;
    char after = s[n];
    s[n] = 0; /* json-c's readers stop at a NUL; put back below */
    json_object *v = NULL;
    int64_t i64;
    uint64_t u64;
    if (!is_double && s[0] == '-' && json_parse_int64(s, &i64) == 0) {
        v = json_object_new_int64(i64);
    } else if (!is_double && s[0] != '-' && json_parse_uint64(s, &u64) == 0) {
        if (u64 && s[0] == '0')
            b->bad_number = true; /* a leading zero: JSON_TOKENER_STRICT */
        else
            v = u64 <= INT64_MAX ? json_object_new_int64((int64_t)u64)
                                 : json_object_new_uint64(u64);
    } else if (is_double) {
        char *end;
        double d = strtod(s, &end);
        if (end == s + n)
            v = json_object_new_double_s(d, s);
        else
            b->bad_number = true;
    } else {
        b->bad_number = true;
    }
    s[n] = after;
    if (!v && !b->bad_number)
        b->nomem = true;
    return v;
}

/* The value at b->pos (after white space); NULL for null, and on error (b->nomem, bad_number). */
static json_object *build_value(struct build *b)
{
    char c = b->s[b->pos];
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        json_object *v = obj ? json_object_new_object() : json_object_new_array();
        b->pos++;
        if (!v) {
            b->nomem = true;
            return NULL;
        }
        build_ws(b);
        if (b->s[b->pos] == (obj ? '}' : ']')) {
            b->pos++;
            return v;
        }
        for (;;) {
            const char *key = NULL;
            if (obj) {
                size_t n;
                key = build_string(b, &n);
                build_ws(b);
                b->pos++; /* ':' */
                build_ws(b);
            }
            json_object *e = build_value(b);
            if (b->nomem || b->bad_number) {
                json_object_put(e);
                json_object_put(v);
                return NULL;
            }
            if (obj ? json_object_object_add_ex(v, key, e, JSON_C_OBJECT_ADD_CONSTANT_KEY) != 0
                    : json_object_array_add(v, e) != 0) {
                json_object_put(e);
                json_object_put(v);
                b->nomem = true;
                return NULL;
            }
            build_ws(b);
            if (b->s[b->pos++] != ',')
                break; /* '}' or ']' */
            build_ws(b);
        }
        return v;
    }
    if (c == '"') {
        size_t n;
        const char *str = build_string(b, &n);
        json_object *v = json_object_new_string_len(str, (int)n);
        if (!v)
            b->nomem = true;
        return v;
    }
    if (c == 't' || c == 'f') {
        b->pos += c == 't' ? 4 : 5;
        json_object *v = json_object_new_boolean(c == 't');
        if (!v)
            b->nomem = true;
        return v;
    }
    if (c == 'n') {
        b->pos += 4;
        return NULL;
    }
    return build_number(b);
}

/*
 * The text json-c is given: src[0, len) with each cut (sorted, not overlapping) read as its
 * replacement, NUL-terminated, in t->stack up to JSON_TREE_STACK_TEXT bytes, else in t->heap
 * (the caller frees it, after the tree when the tree was built from it).
 */
static char *cut_text(struct json_tree *t, const char *src, size_t len, const struct json_cut *cuts,
                      size_t n_cuts, size_t *out_len)
{
    size_t need = len;
    for (size_t i = 0; i < n_cuts; i++)
        need = need - (cuts[i].end - cuts[i].start) + strlen(cuts[i].repl);
    char *text = t->stack;
    if (need + 1 > sizeof(t->stack) && !(text = t->heap = malloc(need + 1)))
        return NULL;
    size_t at = 0, n = 0;
    for (size_t i = 0; i < n_cuts; i++) {
        memcpy(text + n, src + at, cuts[i].start - at);
        n += cuts[i].start - at;
        size_t r = strlen(cuts[i].repl);
        memcpy(text + n, cuts[i].repl, r);
        n += r;
        at = cuts[i].end;
    }
    memcpy(text + n, src + at, len - at);
    n += len - at;
    text[n] = 0;
    *out_len = n;
    return text;
}

/*
 * Builds the json-c tree of the cut text: by default straight from the text (above; the tree
 * borrows member names from *t), else with json-c's tokener, in one call (json-c 0.16 sets up
 * and frees a C locale on every json_tokener_parse_ex() call).
 */
static int parse_cut(struct json_tree *t, const char *src, size_t len, const struct json_cut *cuts,
                     size_t n_cuts, bool tokener, json_object **root, char *err, size_t errlen)
{
    size_t n;
    char *text = cut_text(t, src, len, cuts, n_cuts, &n);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    if (!tokener) {
        struct build b = {.s = text};
        build_ws(&b);
        *root = build_value(&b);
        if (b.nomem || b.bad_number) {
            json_object_put(*root);
            *root = NULL;
            if (b.nomem) {
                snprintf(err, errlen, "out of memory");
                return K_ENOMEM;
            }
            snprintf(err, errlen, "malformed JSON: %s",
                     json_tokener_error_desc(json_tokener_error_parse_number));
            return K_EPARSE;
        }
        return K_OK;
    }
    if (n >= (size_t)INT_MAX) { /* a region read as null grows by at most 3 bytes */
        snprintf(err, errlen, "text too large");
        return K_ETOOBIG;
    }
    bool owned = false;
    json_tokener *tok = thread_tokener(&owned);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    /* no JSON_TOKENER_VALIDATE_UTF8: json_scan() accepted only strict UTF-8 (utf8_decode)
     * inside strings and ASCII outside them, which json-c's laxer check (a lead byte and its
     * count of continuation bytes) never refuses */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    /* with the NUL, as json_tokener_parse() does: a number or literal at the end is complete */
    *root = json_tokener_parse_ex(tok, text, (int)n + 1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    /* nothing may follow the value (json_scan() checked the original; this is the cut copy) */
    if (jerr == json_tokener_success && (size_t)json_tokener_get_parse_end(tok) != n)
        jerr = json_tokener_error_parse_unexpected;
    json_tokener_reset(tok);
    if (owned)
        json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        snprintf(err, errlen, "malformed JSON: %s",
                 jerr == json_tokener_continue ? "unexpected end of input"
                                               : json_tokener_error_desc(jerr));
        json_object_put(*root);
        *root = NULL;
        return K_EPARSE;
    }
    return K_OK;
}

/* The cost of region r is over its budget. */
static bool over(const struct json_tree_opts *opts, const struct json_tree *t, size_t r)
{
    return opts->region[r].max_cost && t->cost[r] > opts->region[r].max_cost;
}

int json_tree_parse(struct json_tree *t, const char *text, size_t len,
                    const struct json_tree_opts *opts, char *err, size_t errlen)
{
    memset(t, 0, offsetof(struct json_tree, stack));
    if (errlen)
        err[0] = 0;
    if (len > (size_t)INT_MAX) {
        snprintf(err, errlen, "text too large");
        return K_ETOOBIG;
    }
    struct json_scan scan_state, *sc = &scan_state; /* about 8 KiB, on the stack */
    struct json_scan_opts so = {
        .schema = opts->schema,
        .max_depth = opts->max_depth,
        .keep_all = (opts->flags & JSON_TREE_KEEP_ALL) != 0,
    };
    if (!json_scan(sc, text, len, &so, err, errlen))
        return K_EPARSE;
    if ((opts->flags & JSON_TREE_OBJECT) && !sc->root_is_object) {
        snprintf(err, errlen, "malformed JSON: not an object");
        return K_EPARSE;
    }
    memcpy(t->cost, sc->cost, sizeof(t->cost));
    memcpy(t->region_seen, sc->region_seen, sizeof(t->region_seen));
    if (over(opts, t, 0)) {
        snprintf(err, errlen,
                 "too large to parse (%" PRIu64 " KiB estimated, limit %" PRIu64 " KiB)",
                 t->cost[0] >> 10, opts->region[0].max_cost >> 10);
        return K_ETOOBIG;
    }
    /* the regions read as null, in text order (they do not nest) */
    struct json_cut nulls[JSON_MAX_REGIONS];
    size_t n_nulls = 0;
    t->built_cost = t->cost[0];
    for (size_t r = 1; r < JSON_MAX_REGIONS; r++) {
        t->region_null[r] =
            opts->region[r].skip || (opts->region[r].null_when_over && over(opts, t, r));
        if (!t->region_null[r]) {
            t->built_cost += t->cost[r];
            continue;
        }
        if (!sc->region_seen[r])
            continue;
        size_t i = n_nulls++;
        for (; i > 0 && nulls[i - 1].start > sc->span[r].start; i--)
            nulls[i] = nulls[i - 1];
        nulls[i] = (struct json_cut){sc->span[r].start, sc->span[r].end, "null"};
    }
    /* merge them with the member cuts (those inside a null region go) into sc->cuts, in place
     * from the end */
    size_t n = 0;
    for (size_t i = 0; i < sc->n_cuts; i++) {
        bool inside = false;
        for (size_t k = 0; k < n_nulls && !inside; k++)
            inside = sc->cuts[i].start >= nulls[k].start && sc->cuts[i].end <= nulls[k].end;
        if (!inside)
            sc->cuts[n++] = sc->cuts[i];
    }
    t->n_cuts = n;
    size_t total = n + n_nulls, k = total, a = n, b = n_nulls;
    while (b > 0) {
        if (a > 0 && sc->cuts[a - 1].start > nulls[b - 1].start)
            sc->cuts[--k] = sc->cuts[--a];
        else
            sc->cuts[--k] = nulls[--b];
    }
    return parse_cut(t, text, len, sc->cuts, total, (opts->flags & JSON_TREE_TOKENER) != 0,
                     &t->root, err, errlen);
}

void json_tree_free(struct json_tree *t)
{
    if (!t)
        return;
    json_object_put(t->root);
    t->root = NULL;
    free(t->heap);
    t->heap = NULL;
}
