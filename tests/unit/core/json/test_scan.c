/*
 * Tests for core/json/scan.c: strict RFC 8259 validation with the byte of each error, the depth
 * limit, the cost model, regions, unique members and the member cuts of a schema.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <malloc.h>

#include "json/scan.h"

enum { N_POD = JSON_NODE_ALL + 1, N_META, N_SPEC, N_CONTAINER, N_N };

/* "all but": what a client reading pods never looks at */
static const struct json_member_rule POD_RULES[] = {
    {"metadata", N_META, 0, true, NULL},
    {"spec", N_SPEC, 0, true, NULL},
    {"status", JSON_NODE_ALL, 1, true, "status"},
};
static const struct json_member_rule META_RULES[] = {
    {"managedFields", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_member_rule SPEC_RULES[] = {
    {"containers", N_CONTAINER, 0, false, NULL},
    {"imagePullSecrets", JSON_NODE_CUT, 0, false, NULL},
    {"volumes", JSON_NODE_CUT, 0, false, NULL},
};
/* "only": a container keeps its name and resources */
static const struct json_member_rule CONTAINER_RULES[] = {
    {"name", JSON_NODE_ALL, 0, false, NULL},
    {"resources", JSON_NODE_ALL, 0, false, NULL},
};
static const struct json_schema_node NODES[N_N] = {
    [N_POD] = {JSON_NODE_ALL, POD_RULES, 3},
    [N_META] = {JSON_NODE_ALL, META_RULES, 1},
    [N_SPEC] = {JSON_NODE_ALL, SPEC_RULES, 3},
    [N_CONTAINER] = {JSON_NODE_CUT, CONTAINER_RULES, 2},
};
static const struct json_schema POD = {NODES, N_N, N_POD};

static bool scan(struct json_scan *sc, const char *text, const struct json_schema *schema,
                 unsigned depth, bool keep_all, char *err, size_t errlen)
{
    struct json_scan_opts o = {.schema = schema, .max_depth = depth, .keep_all = keep_all};
    return json_scan(sc, text, strlen(text), &o, err, errlen);
}

/* The text with the scan's cuts applied. */
static void apply(const struct json_scan *sc, const char *text, char *out, size_t cap)
{
    size_t at = 0, n = 0;
    for (size_t i = 0; i < sc->n_cuts; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%.*s%s", (int)(sc->cuts[i].start - at), text + at,
                              sc->cuts[i].repl);
        at = sc->cuts[i].end;
    }
    snprintf(out + n, cap - n, "%s", text + at);
}

static void test_strict(void **state)
{
    (void)state;
    static const struct {
        const char *text, *error; /* NULL: valid */
        size_t at;
    } cases[] = {
        {"{}", NULL, 0},
        {" [1, -0.5e+10, 0, 1E2, true, false, null, \"\\u00e9\\ud83d\\ude00\", {}] \n", NULL, 0},
        {"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", NULL, 0},
        {"0", NULL, 0},
        {"", "unexpected end of input", 0},
        {"[1,]", "unexpected character", 3},
        {"{\"a\":1,}", "expected a member name", 7},
        {"01", "trailing data after the value", 1},
        {"-", "invalid number", 1},
        {"1.", "invalid number", 2},
        {"1e", "invalid number", 2},
        {"+1", "unexpected character", 0},
        {"NaN", "unexpected character", 0},
        {"nul", "unexpected character", 0},
        {"\"a\x01\"", "control character in string", 2},
        {"\"\\x\"", "invalid escape in string", 1},
        {"\"\\u12g4\"", "invalid \\u escape", 1},
        {"\"\xc0\xaf\"", "invalid UTF-8 in string", 1},     /* overlong */
        {"\"\xed\xa0\x80\"", "invalid UTF-8 in string", 1}, /* a surrogate */
        {"\"abc", "unterminated string", 4},
        {"{\"a\" 1}", "expected ':'", 5},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}'", 7},
        {"[1 2]", "expected ',' or ']'", 3},
        {"{} {}", "trailing data after the value", 3},
        {"\xef\xbb\xbf{}", "unexpected character", 0},
        {"[/*c*/]", "unexpected character", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct json_scan sc;
        char err[128] = "", want[128];
        bool ok = scan(&sc, cases[i].text, NULL, 8, false, err, sizeof(err));
        if (!cases[i].error) {
            if (!ok)
                fail_msg("case %zu (%s): %s", i, cases[i].text, err);
            continue;
        }
        snprintf(want, sizeof(want), "malformed JSON: %s at byte %zu", cases[i].error, cases[i].at);
        if (ok || strcmp(err, want) != 0)
            fail_msg("case %zu (%s): got \"%s\", want \"%s\"", i, cases[i].text, ok ? "ok" : err,
                     want);
    }
}

static void test_depth(void **state)
{
    (void)state;
    char text[2 * JSON_SCAN_MAX_DEPTH + 8], err[128];
    for (unsigned depth = 1; depth <= JSON_SCAN_MAX_DEPTH; depth += JSON_SCAN_MAX_DEPTH - 1)
        for (unsigned extra = 0; extra < 2; extra++) {
            unsigned n = depth + extra;
            memset(text, '[', n);
            memset(text + n, ']', n);
            text[2 * n] = 0;
            struct json_scan sc;
            bool ok = scan(&sc, text, NULL, depth, false, err, sizeof(err));
            assert_int_equal(ok, extra == 0);
            if (!ok)
                assert_non_null(strstr(err, "nesting too deep"));
        }
    /* a limit above JSON_SCAN_MAX_DEPTH is JSON_SCAN_MAX_DEPTH */
    memset(text, '[', JSON_SCAN_MAX_DEPTH + 1);
    memset(text + JSON_SCAN_MAX_DEPTH + 1, ']', JSON_SCAN_MAX_DEPTH + 1);
    text[2 * JSON_SCAN_MAX_DEPTH + 2] = 0;
    struct json_scan sc;
    assert_false(scan(&sc, text, NULL, 100000, false, err, sizeof(err)));
}

enum {
    O = JSON_COST_OBJECT,
    A = JSON_COST_ARRAY,
    M = JSON_COST_MEMBER,
    E = JSON_COST_ELEMENT,
    S = JSON_COST_SCALAR
};

static void test_cost(void **state)
{
    (void)state;
    struct json_scan sc;
    char err[128];
    /* names and strings are priced by their bytes as written, escapes included */
    const char *text = "{\"ab\":[1,\"x\\n\",{}],\"c\":null}";
    assert_true(scan(&sc, text, NULL, 8, false, err, sizeof(err)));
    assert_int_equal(sc.cost[0], O + (M + 2) + A + 3 * E + S + (S + 3) + O + (M + 1) + S);
    assert_int_equal(sc.values, 6);
    assert_true(sc.root_is_object);
    for (size_t r = 1; r < JSON_MAX_REGIONS; r++)
        assert_int_equal(sc.cost[r], 0);
    /* cut members are priced too: the budget does not depend on the schema */
    const char *pod = "{\"metadata\":{\"managedFields\":[{},{}]},\"spec\":{}}";
    uint64_t whole;
    assert_true(scan(&sc, pod, NULL, 8, false, err, sizeof(err)));
    whole = sc.cost[0];
    assert_true(scan(&sc, pod, &POD, 8, false, err, sizeof(err)));
    assert_int_equal(sc.n_cuts, 1);
    assert_int_equal(sc.cost[0], whole);
    assert_true(scan(&sc, "[]", NULL, 8, false, err, sizeof(err)));
    assert_false(sc.root_is_object);
    assert_int_equal(sc.cost[0], A);
}

/*
 * The estimate bounds what json-c really allocates, for every kind of value (measured with
 * mallinfo2 on an array of 20,000 of each; under a sanitizer's allocator it reads 0 and the
 * check is vacuous).
 */
static void test_cost_is_an_upper_bound(void **state)
{
    (void)state;
    static const struct {
        const char *item;
        size_t estimate; /* in an array */
    } cases[] = {
        {"{}", O + E},
        {"[]", A + E},
        {"\"a\"", S + 1 + E},
        {"1", S + E},
        {"1.5", S + E},
        {"true", S + E},
        {"null", S + E},
        {"{\"a\":1}", O + M + 1 + S + E},
        {"{\"k\":\"v\",\"l\":[1]}", O + 2 * (M + 1) + S + 1 + A + E + S + E},
        {"[[],[],[]]", A + 3 * (A + E) + E},
    };
    const size_t n = 20000;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t item = strlen(cases[i].item), cap = n * (item + 1) + 2, at = 0;
        char *text = malloc(cap + 1);
        assert_non_null(text);
        text[at++] = '[';
        for (size_t k = 0; k < n; k++) {
            memcpy(text + at, cases[i].item, item);
            at += item;
            text[at++] = k + 1 < n ? ',' : ']';
        }
        text[at] = 0;
        struct json_scan *sc = malloc(sizeof(*sc));
        char err[128];
        assert_non_null(sc);
        struct json_scan_opts opts = {.max_depth = 8};
        assert_true(json_scan(sc, text, at, &opts, err, sizeof(err)));
        assert_int_equal(sc->cost[0], A + n * cases[i].estimate);
        struct mallinfo2 before = mallinfo2();
        json_object *o = json_tokener_parse(text);
        struct mallinfo2 after = mallinfo2();
        assert_non_null(o);
        size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
        json_object_put(o);
        free(sc);
        free(text);
        if (used / n > cases[i].estimate)
            fail_msg("%s: json-c used %zu bytes per item, estimate %zu", cases[i].item, used / n,
                     cases[i].estimate);
    }
}

static void test_regions(void **state)
{
    (void)state;
    struct json_scan sc;
    char err[160];
    const char *text = "{\"spec\":{},\"status\":{\"a\":[1]},\"x\":1}";
    assert_true(scan(&sc, text, &POD, 8, false, err, sizeof(err)));
    assert_true(sc.region_seen[1]);
    assert_false(sc.region_seen[2]);
    assert_int_equal(sc.span[1].start, strstr(text, "{\"a\"") - text);
    assert_int_equal(sc.span[1].end, strstr(text, ",\"x\"") - text);
    assert_int_equal(sc.cost[1], JSON_COST_OBJECT + JSON_COST_MEMBER + 1 + JSON_COST_ARRAY +
                                     JSON_COST_ELEMENT + JSON_COST_SCALAR);
    /* the member's name is priced outside the region, its value inside */
    assert_int_equal(sc.cost[0], JSON_COST_OBJECT + 3 * JSON_COST_MEMBER + 4 + 6 + 1 +
                                     JSON_COST_OBJECT + JSON_COST_SCALAR);
    /* a scalar region */
    assert_true(scan(&sc, "{\"status\":\"s\"}", &POD, 8, false, err, sizeof(err)));
    assert_int_equal(sc.span[1].start, 10);
    assert_int_equal(sc.span[1].end, 13);
    /* repeated: a unique member, a region (here through its label) */
    assert_false(scan(&sc, "{\"spec\":{},\"spec\":{}}", &POD, 8, false, err, sizeof(err)));
    assert_string_equal(err, "malformed JSON: duplicate member \"spec\" at byte 18");
    assert_false(scan(&sc, "{\"st\\u0061tus\":1,\"status\":2}", &POD, 8, false, err, sizeof(err)));
    assert_string_equal(err, "malformed JSON: duplicate member \"status\" at byte 26");
    /* unique per object: the same name in two objects is fine */
    assert_true(scan(&sc,
                     "{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"a\"},"
                     "{\"name\":\"b\",\"name\":\"c\"}]}}",
                     &POD, 8, false, err, sizeof(err)));
    /* keep_all: nothing cut, regions and unique names as with cuts */
    assert_true(scan(&sc, "{\"metadata\":{\"managedFields\":[]},\"status\":1}", &POD, 8, true, err,
                     sizeof(err)));
    assert_int_equal(sc.n_cuts, 0);
    assert_true(sc.region_seen[1]);
    assert_false(scan(&sc, "{\"spec\":{},\"spec\":{}}", &POD, 8, true, err, sizeof(err)));
}

static void test_cuts(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        /* deny-list: managedFields, imagePullSecrets, volumes */
        {"{\"metadata\":{\"name\":\"p\",\"managedFields\":[{\"a\":1}]},\"spec\":{\"volumes\":[],"
         "\"imagePullSecrets\":[{},{}],\"nodeName\":\"n\"}}",
         "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\"}}"},
        /* only cut members */
        {"{\"spec\":{\"volumes\":[] , \"imagePullSecrets\":null}}", "{\"spec\":{ }}"},
        /* allow-list inside an array: every element */
        {"{\"spec\":{\"containers\":[{\"image\":\"i\",\"name\":\"a\",\"env\":[]},"
         "{\"resources\":{},\"args\":[\"x\"]}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"resources\":{}}]}}"},
        /* white space, and a kept member between cut ones */
        {" { \"spec\" : { \"volumes\" : 1 , \"x\" : 2 , \"volumes\" : 3 } } ",
         " { \"spec\" : {  \"x\" : 2  } } "},
        /* escaped and NUL-ended names read as json-c reads them */
        {"{\"spec\":{\"vol\\u0075mes\":1,\"volumes\\u0000x\":2,\"volumesx\":3}}",
         "{\"spec\":{\"volumesx\":3}}"},
        /* a cut member's value is not looked into */
        {"{\"metadata\":{\"managedFields\":{\"spec\":1,\"spec\":2}}}", "{\"metadata\":{}}"},
        /* a name longer than JSON_SCAN_NAME_MAX matches nothing: the node's other */
        {"{\"spec\":{\"containers\":[{\"nameeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
         "eeeeeeeeeeeee\":1}]}}",
         "{\"spec\":{\"containers\":[{}]}}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct json_scan sc;
        char err[160], out[512];
        if (!scan(&sc, cases[i].in, &POD, 8, false, err, sizeof(err)))
            fail_msg("case %zu: %s", i, err);
        apply(&sc, cases[i].in, out, sizeof(out));
        if (strcmp(out, cases[i].out) != 0)
            fail_msg("case %zu: got %s, want %s", i, out, cases[i].out);
        /* what is left is valid JSON */
        struct json_scan again;
        assert_true(scan(&again, out, &POD, 8, false, err, sizeof(err)));
        assert_int_equal(again.n_cuts, 0);
    }
    /* no schema: nothing is cut */
    struct json_scan sc;
    char err[160];
    assert_true(scan(&sc, cases[0].in, NULL, 8, false, err, sizeof(err)));
    assert_int_equal(sc.n_cuts, 0);
}

/* Past JSON_SCAN_MAX_CUTS members are kept. */
static void test_cut_cap(void **state)
{
    (void)state;
    size_t cap = 64 * (JSON_SCAN_MAX_CUTS + 10);
    char *text = malloc(cap), *out = malloc(cap), err[160];
    assert_non_null(text);
    assert_non_null(out);
    size_t at = (size_t)snprintf(text, cap, "{\"spec\":{");
    for (int i = 0; i < JSON_SCAN_MAX_CUTS + 5; i++)
        at += (size_t)snprintf(text + at, cap - at, "%s\"volumes\":%d", i ? "," : "", i);
    snprintf(text + at, cap - at, "}}");
    struct json_scan *sc = malloc(sizeof(*sc));
    assert_non_null(sc);
    assert_true(scan(sc, text, &POD, 8, false, err, sizeof(err)));
    assert_int_equal(sc->n_cuts, JSON_SCAN_MAX_CUTS);
    apply(sc, text, out, cap);
    assert_non_null(strstr(out, "\"volumes\":256,\"volumes\":257"));
    assert_null(strstr(out, "\"volumes\":255,"));
    free(sc);
    free(text);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict),  cmocka_unit_test(test_depth),
        cmocka_unit_test(test_cost),    cmocka_unit_test(test_cost_is_an_upper_bound),
        cmocka_unit_test(test_regions), cmocka_unit_test(test_cuts),
        cmocka_unit_test(test_cut_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
