/* admission.c - AdmissionReview v1 decode, checks, encode. */
#include "admission.h"

#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
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

/* ------------------------------------------------------------------ pre-scan */

/* Where a value sits: request.object, request.oldObject, or anywhere else (the envelope). */
enum region { REGION_ENVELOPE, REGION_OBJECT, REGION_OLD_OBJECT, REGION_N };

struct span {
    size_t start, end; /* [start, end) of the value's bytes */
    bool seen;
};

/*
 * What the checks read, as a tree of member names (admission.h "Parsing only what the checks
 * read"): per node, the members kept and the node their values follow; every other member of
 * that node is cut. S_ALL keeps a whole subtree (and is what every node becomes when the review
 * is parsed in full). An array takes the node of its member, for each of its elements.
 */
enum schema_node {
    S_CUT,         /* the member is cut from the text json-c sees */
    S_ALL,         /* kept with everything below it */
    S_ROOT,        /* the AdmissionReview */
    S_REQUEST,     /* request */
    S_OBJECT,      /* request.object */
    S_META,        /* metadata of the object or of a pod template */
    S_SPEC,        /* spec of every kind checked (union) */
    S_TEMPLATE,    /* spec.template, spec.jobTemplate */
    S_CONTAINER,   /* containers[], initContainers[] */
    S_AFFINITY,    /* spec.affinity */
    S_ANNOTATIONS, /* metadata.annotations */
    S_N
};

struct schema_member {
    const char *name;
    unsigned char node;
};

/* Per node: the node of a member not listed, then the listed members. Kept in step with
 * admission_handle(), pod_spec_of(), warnings.c, warnings_dra.c and core/kube/project*.c. */
static const struct {
    unsigned char other;
    struct schema_member members[18];
} SCHEMA[S_N] = {
    [S_ROOT] = {S_CUT, {{"apiVersion", S_ALL}, {"kind", S_ALL}, {"request", S_REQUEST}}},
    [S_REQUEST] = {S_CUT,
                   {{"uid", S_ALL},
                    {"kind", S_ALL},
                    {"subResource", S_ALL},
                    {"name", S_ALL},
                    {"namespace", S_ALL},
                    {"operation", S_ALL},
                    {"dryRun", S_ALL},
                    {"object", S_OBJECT},
                    /* read as null through its region, below */
                    {"oldObject", S_ALL}}},
    [S_OBJECT] = {S_CUT,
                  {{"apiVersion", S_ALL}, {"kind", S_ALL}, {"metadata", S_META}, {"spec", S_SPEC}}},
    /* admission_handle() and core/kube/project.c project_meta() */
    [S_META] = {S_CUT,
                {{"name", S_ALL},
                 {"namespace", S_ALL},
                 {"generateName", S_ALL},
                 {"uid", S_ALL},
                 {"annotations", S_ANNOTATIONS},
                 {"deletionTimestamp", S_ALL},
                 {"creationTimestamp", S_ALL},
                 {"ownerReferences", S_ALL}}},
    /* project_meta(), core/kube/project_dra.c (a kubectl last-applied-configuration is cut) */
    [S_ANNOTATIONS] = {S_CUT,
                       {{"gputri/cause", S_ALL},
                        {"gputri/detail", S_ALL},
                        {"resource.kubernetes.io/pod-claim-name", S_ALL}}},
    [S_SPEC] = {S_CUT,
                {/* PodSpec (core/kube/project.c project_pod_spec, warnings.c) */
                 {"containers", S_CONTAINER},
                 {"initContainers", S_CONTAINER},
                 {"overhead", S_ALL},
                 {"affinity", S_AFFINITY},
                 {"tolerations", S_ALL},
                 {"nodeSelector", S_ALL},
                 {"nodeName", S_ALL},
                 {"schedulerName", S_ALL},
                 {"runtimeClassName", S_ALL},
                 {"resourceClaims", S_ALL},
                 {"schedulingGates", S_ALL},
                 /* workloads (pod_spec_of) */
                 {"replicas", S_ALL},
                 {"parallelism", S_ALL},
                 {"template", S_TEMPLATE},
                 {"jobTemplate", S_TEMPLATE},
                 /* ResourceQuota, ResourceClaim, ResourceClaimTemplate (spec.spec) */
                 {"hard", S_ALL},
                 {"devices", S_ALL},
                 {"spec", S_SPEC}}},
    [S_TEMPLATE] = {S_CUT, {{"metadata", S_META}, {"spec", S_SPEC}}},
    [S_CONTAINER] = {S_CUT, {{"name", S_ALL}, {"resources", S_ALL}, {"restartPolicy", S_ALL}}},
    [S_AFFINITY] = {S_CUT, {{"nodeAffinity", S_ALL}}},
};

static unsigned char schema_child(unsigned char parent, const char *key)
{
    if (parent == S_ALL || parent == S_CUT || parent >= S_N)
        return S_ALL;
    const struct schema_member *m = SCHEMA[parent].members;
    for (size_t i = 0; i < sizeof(SCHEMA[0].members) / sizeof(m[0]) && m[i].name; i++)
        if (m[i].name[0] == key[0] && strcmp(m[i].name, key) == 0)
            return m[i].node;
    return SCHEMA[parent].other;
}

/* A cut: bytes [start, end) of the body read as `repl` ("null" for a value, "" for a member). */
struct cut {
    size_t start, end;
    const char *repl;
};

struct scan {
    const unsigned char *s;
    size_t len, pos;
    int depth;                           /* open containers */
    bool is_object[ADMISSION_MAX_DEPTH]; /* per open container: object (true) or array */
    /* pruning (admission.h): per open container its schema node, whether a member of it was
     * kept, and where its last ',' was */
    bool prune;
    unsigned char node[ADMISSION_MAX_DEPTH];
    bool kept[ADMISSION_MAX_DEPTH];
    size_t comma[ADMISSION_MAX_DEPTH];
    unsigned char next_node; /* node of the member value after its name */
    size_t key_start;        /* where the last member name began */
    int cut_depth;           /* the member being cut is in the container at this depth, or -1 */
    size_t cut_start;
    bool cut_comma;                          /* the last cut takes the ',' that follows it */
    struct cut cuts[ADMISSION_MAX_CUTS + 2]; /* + the two regions read as null */
    size_t n_cuts;
    bool in_request; /* the current root member is "request" */
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
 * The bytes at p[0, 8) that do not stand for themselves in a string (below 0x20, '"', '\\', or
 * from 0x80), as the high bit of each in a word, 0 when there is none. Word-at-a-time: a byte is
 * zero in x exactly when (x - 0x01..) & ~x has its high bit, below 0x20 exactly when
 * (x - 0x20..) & ~x has it; a borrow only marks bytes above a marked one, so the lowest mark is
 * always right.
 */
static uint64_t special8(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    uint64_t quote = v ^ (ones * '"'), bslash = v ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | ((v - ones * 0x20) & ~v) |
            v) &
           high;
}

/*
 * A string at sc->pos (the opening quote). Its bytes go into *bytes; when key is non-NULL, its
 * decoded text (up to keylen - 1 ASCII characters) goes there, "" when longer or not ASCII.
 */
static bool scan_string(struct scan *sc, size_t *bytes, char *key, size_t keylen)
{
    size_t start = ++sc->pos, k = 0;
    bool ascii = true, stopped = false; /* json-c cuts a member name at U+0000 */
    for (;;) {
        /* printable ASCII but '"' and '\\': one byte, itself; 8 bytes at a time, then one by
         * one */
        size_t run = sc->pos;
        while (sc->len - run >= 8) {
            uint64_t hit = special8(sc->s + run);
            if (!hit) {
                run += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            run += (size_t)__builtin_ctzll(hit) / 8; /* the first byte that is not plain */
#endif
            break;
        }
        while (run < sc->len && sc->s[run] >= 0x20 && sc->s[run] < 0x80 && sc->s[run] != '"' &&
               sc->s[run] != '\\')
            run++;
        if (key && !stopped) {
            size_t n = run - sc->pos;
            if (n > keylen - 1 - k) {
                n = keylen - 1 - k;
                ascii = false;
            }
            memcpy(key + k, sc->s + sc->pos, n);
            k += n;
        }
        sc->pos = run;
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
        if (key && !stopped) {
            if (cp == 0)
                stopped = true;
            else if (cp >= 0x80 || k + 1 >= keylen)
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
    if (sc->cut_depth == sc->depth) {
        /* the member cut ends with its value; when nothing before it in its object was kept,
         * it also takes the ',' after it, else it began at the ',' before it */
        sc->cuts[sc->n_cuts++] = (struct cut){sc->cut_start, sc->pos, ""};
        sc->cut_comma = !sc->kept[sc->depth - 1];
        sc->cut_depth = -1;
    }
}

/* A member name `key` was read (and its ':'): decide whether its value is kept or cut. */
static void member_prune(struct scan *sc, const char *key)
{
    int d = sc->depth - 1;
    unsigned char child = schema_child(sc->node[d], key);
    if (child == S_CUT && sc->n_cuts < ADMISSION_MAX_CUTS) {
        sc->cut_depth = sc->depth;
        sc->cut_start = sc->kept[d] ? sc->comma[d] : sc->key_start;
        sc->next_node = S_ALL; /* nothing is recorded inside a cut */
        return;
    }
    /* kept (or no cut left: parsed, still within the cost budget) */
    sc->kept[d] = true;
    sc->next_node = child == S_CUT ? S_ALL : child;
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
                sc->node[sc->depth] = sc->depth == 0                 ? (sc->prune ? S_ROOT : S_ALL)
                                      : sc->is_object[sc->depth - 1] ? sc->next_node
                                                                     : sc->node[sc->depth - 1];
                sc->kept[sc->depth] = false;
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
            char key[64]; /* longer names are none the schema keeps */
            if (c != '"')
                return scan_fail(sc, "expected a member name");
            sc->key_start = sc->pos;
            if (!scan_string(sc, &bytes, key, sizeof(key)))
                return false;
            sc->cost[sc->region] += ADMISSION_COST_MEMBER + bytes;
            skip_ws(sc);
            if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
                return scan_fail(sc, "expected ':'");
            sc->pos++;
            if (!member_name(sc, key))
                return false;
            member_prune(sc, key);
            st = VALUE;
            continue;
        }
        case AFTER: {
            bool obj = sc->is_object[sc->depth - 1];
            if (c == ',' && sc->cut_comma)
                sc->cuts[sc->n_cuts - 1].end = sc->pos + 1;
            sc->cut_comma = false;
            if (c == ',' && obj)
                sc->comma[sc->depth - 1] = sc->pos;
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

/* One tokener per thread, kept between requests (its parse stack is a 2.6 KiB allocation, and
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
    tok = json_tokener_new_ex(ADMISSION_MAX_DEPTH + 1);
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
 * with a fraction or an exponent). The text was validated by scan_json(), so nothing here
 * checks syntax, and the member names are decoded in place and given to json-c as constant
 * keys: no copy of each name, and the text must outlive the tree. The tokener stays for
 * ADMISSION_PARSE_FULL, so the tests and fuzz_admission compare the two.
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
 * The text json-c is given: body[0, len) with each cut (sorted, not overlapping) read as its
 * replacement, NUL-terminated, in t->stack up to ADMISSION_STACK_TEXT bytes, else in t->heap
 * (the caller frees it, after the tree when the tree was built from it).
 */
struct text {
    char stack[ADMISSION_STACK_TEXT];
    char *heap;
};

static char *cut_text(struct text *t, const char *body, size_t len, const struct cut *cuts,
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
        memcpy(text + n, body + at, cuts[i].start - at);
        n += cuts[i].start - at;
        size_t r = strlen(cuts[i].repl);
        memcpy(text + n, cuts[i].repl, r);
        n += r;
        at = cuts[i].end;
    }
    memcpy(text + n, body + at, len - at);
    n += len - at;
    text[n] = 0;
    *out_len = n;
    return text;
}

/*
 * Builds the json-c tree of the cut text: with `prune`, straight from the text (above; the tree
 * borrows member names from *t), else with json-c's tokener, in one call (json-c 0.16 sets up
 * and frees a C locale on every json_tokener_parse_ex() call).
 */
static json_object *parse_cut(struct text *t, const char *body, size_t len, const struct cut *cuts,
                              size_t n_cuts, bool prune, char *err, size_t errlen)
{
    size_t n;
    char *text = cut_text(t, body, len, cuts, n_cuts, &n);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (prune) {
        struct build b = {.s = text};
        build_ws(&b);
        json_object *root = build_value(&b);
        if (b.nomem || b.bad_number) {
            json_object_put(root);
            if (b.nomem)
                snprintf(err, errlen, "out of memory");
            else
                snprintf(err, errlen, "malformed JSON: %s",
                         json_tokener_error_desc(json_tokener_error_parse_number));
            return NULL;
        }
        return root;
    }
    json_object *root = NULL;
    enum json_tokener_error jerr = json_tokener_continue;
    bool owned = false;
    json_tokener *tok = thread_tokener(&owned);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* no JSON_TOKENER_VALIDATE_UTF8: scan_json() accepted only strict UTF-8 (utf8_decode)
     * inside strings and ASCII outside them, which json-c's laxer check (a lead byte and its
     * count of continuation bytes) never refuses */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, text, (int)n);
    jerr = json_tokener_get_error(tok);
    /* nothing may follow the value (scan_json() checked the body; this is the copy) */
    if (jerr == json_tokener_success && (size_t)json_tokener_get_parse_end(tok) != n)
        jerr = json_tokener_error_parse_unexpected;
    json_tokener_reset(tok);
    if (owned)
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
 * Validates the body, then builds the tree without request.oldObject (never read), without
 * request.object when it is above its budget (*object_cost set, *too_large true), and, with
 * `prune`, without the members the checks do not read (admission.h).
 */
static json_object *parse(struct text *t, const char *body, size_t len, bool prune,
                          uint64_t *object_cost, bool *too_large, uint64_t *total_cost, char *err,
                          size_t errlen)
{
    if (len > (size_t)INT_MAX) {
        snprintf(err, errlen, "body too large");
        return NULL;
    }
    struct scan scan_state, *sc = &scan_state; /* about 8 KiB, on the stack: no allocation */
    *sc = (struct scan){.s = (const unsigned char *)body,
                        .len = len,
                        .err = err,
                        .errlen = errlen,
                        .prune = prune,
                        .cut_depth = -1};
    json_object *root = NULL;
    if (!scan_json(sc))
        goto out;
    if (!sc->is_object[0]) {
        snprintf(err, errlen, "malformed JSON: not an object");
        goto out;
    }
    if (sc->cost[REGION_ENVELOPE] > ADMISSION_MAX_ENVELOPE_COST) {
        snprintf(err, errlen,
                 "the AdmissionReview outside request.object is too large to parse (%" PRIu64
                 " KiB estimated, limit %u KiB)",
                 sc->cost[REGION_ENVELOPE] >> 10, ADMISSION_MAX_ENVELOPE_COST >> 10);
        goto out;
    }
    *object_cost = sc->cost[REGION_OBJECT];
    *too_large = sc->cost[REGION_OBJECT] > ADMISSION_MAX_OBJECT_COST;
    /* the values read as null, in body order */
    struct cut nulls[2];
    size_t n_nulls = 0;
    const struct span *obj = &sc->spans[REGION_OBJECT], *old = &sc->spans[REGION_OLD_OBJECT];
    if (*too_large)
        nulls[n_nulls++] = (struct cut){obj->start, obj->end, "null"};
    if (old->seen)
        nulls[n_nulls++] = (struct cut){old->start, old->end, "null"};
    if (n_nulls == 2 && nulls[0].start > nulls[1].start) {
        struct cut first = nulls[1];
        nulls[1] = nulls[0];
        nulls[0] = first;
    }
    /* merge them with the member cuts (none is inside oldObject; those inside a null object
     * go) into sc->cuts, in place from the end */
    size_t n = 0;
    for (size_t i = 0; i < sc->n_cuts; i++)
        if (!*too_large || sc->cuts[i].end <= obj->start || sc->cuts[i].start >= obj->end)
            sc->cuts[n++] = sc->cuts[i];
    size_t total = n + n_nulls, k = total, a = n, b = n_nulls;
    while (b > 0) {
        if (a > 0 && sc->cuts[a - 1].start > nulls[b - 1].start)
            sc->cuts[--k] = sc->cuts[--a];
        else
            sc->cuts[--k] = nulls[--b];
    }
    *total_cost = sc->cost[REGION_ENVELOPE] + (*too_large ? 0 : sc->cost[REGION_OBJECT]);
    root = parse_cut(t, body, len, sc->cuts, total, prune, err, errlen);
out:
    return root;
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
    return admission_handle_ex(body, len, snap, 0, out);
}

int admission_handle_ex(const char *body, size_t len, const struct wh_snapshot *snap,
                        unsigned flags, struct admission_result *out)
{
    memset(out, 0, sizeof(*out));
    warn_list_init(&out->warnings);
    uint64_t object_cost = 0, total_cost = 0;
    bool too_large = false;
    struct text text; /* the tree borrows its member names from it: freed after the tree */
    text.heap = NULL;
    json_object *root =
        parse(&text, body ? body : "", body ? len : 0, !(flags & ADMISSION_PARSE_FULL),
              &object_cost, &too_large, &total_cost, out->error, sizeof(out->error));
    if (!root) {
        free(text.heap);
        return K_EPARSE;
    }
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
    free(text.heap);
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
