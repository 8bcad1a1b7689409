/*
 * Tests for core/json/tree.c: the tree built straight from the text is json-c's tokener's, the
 * members a schema cuts are gone, regions over their budget or skipped read as null, region 0
 * over its budget is refused, and the tree owns its text whatever its size.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json/tree.h"
#include "util/result.h"

enum { N_POD = JSON_NODE_ALL + 1, N_SPEC, N_CONTAINER, N_N };

/* A client's pod reader (issue 18's shape): everything but what no projection reads; "status"
 * priced apart, "old" never read. */
static const struct json_member_rule POD_RULES[] = {
    {"spec", N_SPEC, 0, true, NULL},
    {"managedFields", JSON_NODE_CUT, 0, false, NULL},
    {"status", JSON_NODE_ALL, 1, true, NULL},
    {"old", JSON_NODE_ALL, 2, true, NULL},
};
static const struct json_member_rule SPEC_RULES[] = {
    {"containers", N_CONTAINER, 0, false, NULL},
    {"initContainers", N_CONTAINER, 0, false, NULL},
    {"imagePullSecrets", JSON_NODE_CUT, 0, false, NULL},
    {"volumes", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_member_rule CONTAINER_RULES[] = {
    {"env", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_schema_node NODES[N_N] = {
    [N_POD] = {JSON_NODE_ALL, POD_RULES, 4},
    [N_SPEC] = {JSON_NODE_ALL, SPEC_RULES, 4},
    [N_CONTAINER] = {JSON_NODE_ALL, CONTAINER_RULES, 1},
};
static const struct json_schema POD = {NODES, N_N, N_POD};

static const char *print(json_object *o)
{
    return o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "null";
}

/* The tree of `text` both ways is json-c's json_tokener_parse() (strict) of `want`. */
static void assert_tree(const char *text, const struct json_tree_opts *base, const char *want)
{
    json_tokener *tok = json_tokener_new_ex(JSON_SCAN_MAX_DEPTH + 1);
    assert_non_null(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *expect = json_tokener_parse_ex(tok, want, (int)strlen(want) + 1);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    for (int tokener = 0; tokener < 2; tokener++) {
        struct json_tree_opts o = *base;
        o.flags |= tokener ? JSON_TREE_TOKENER : 0;
        struct json_tree t;
        char err[160];
        int rc = json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err));
        if (rc != K_OK)
            fail_msg("%s (%s): %d %s", text, tokener ? "tokener" : "built", rc, err);
        assert_string_equal(err, "");
        char got[4096];
        snprintf(got, sizeof(got), "%s", print(t.root));
        if (!json_object_equal(t.root, expect) || strcmp(got, print(expect)) != 0)
            fail_msg("%s (%s): got %s, want %s", text, tokener ? "tokener" : "built", got,
                     print(expect));
        json_tree_free(&t);
    }
    json_object_put(expect);
}

static const struct json_tree_opts WHOLE = {.max_depth = 16};

static void test_same_as_json_c(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{}",
        "[]",
        "null",
        "0",
        "-0",
        " 7 ",
        "true",
        "\"s\"",
        "[-0.5e+10,1E2,1.0,0.1,-1,9223372036854775807,9223372036854775808,"
        "18446744073709551615,99999999999999999999,-9223372036854775809,1e400,-1e-400]",
        /* strings: escapes, surrogates paired and lone, U+0000 in a value and a name */
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\",\"\\u00e9\\ud83d\\ude00\",\"\\ud800\",\"\\udc00x\","
        "\"\\ud800\\ud800\",\"\\ud800\\n\",\"a\\u0000b\",\"\xf0\x9f\x98\x80\"]",
        "{\"a\\u0000b\":1,\"\\u00e9\":2,\"\":3}",
        /* a repeated name replaces the value in place */
        "{\"a\":1,\"b\":2,\"a\":{\"c\":[]}}",
        "{\"a\":[{\"a\":{}},[[]],{}],\"b\":{\"c\":{\"d\":null}}}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        assert_tree(texts[i], &WHOLE, texts[i]);
}

static void test_schema_cuts(void **state)
{
    (void)state;
    struct json_tree_opts o = {.schema = &POD, .max_depth = 16};
    assert_tree("{\"managedFields\":[{\"manager\":\"kubectl\"}],\"metadata\":{\"name\":\"p\"},"
                "\"spec\":{\"imagePullSecrets\":[{},{},{}],\"containers\":[{\"name\":\"c\","
                "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"resources\":{}}],"
                "\"initContainers\":[{\"env\":[]}],\"volumes\":[{}],\"nodeName\":\"n\"}}",
                &o,
                "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                "\"resources\":{}}],\"initContainers\":[{}],\"nodeName\":\"n\"}}");
    /* KEEP_ALL: the schema only prices */
    o.flags = JSON_TREE_KEEP_ALL;
    assert_tree("{\"managedFields\":[],\"spec\":{\"volumes\":1}}", &o,
                "{\"managedFields\":[],\"spec\":{\"volumes\":1}}");
    /* no schema: nothing cut */
    assert_tree("{\"managedFields\":[]}", &WHOLE, "{\"managedFields\":[]}");
    struct json_tree t;
    char err[160];
    o.flags = 0;
    const char *two = "{\"managedFields\":1,\"spec\":{\"volumes\":2}}";
    assert_int_equal(json_tree_parse(&t, two, strlen(two), &o, err, sizeof(err)), K_OK);
    assert_int_equal(t.n_cuts, 2);
    json_tree_free(&t);
}

static void test_regions(void **state)
{
    (void)state;
    const char *text = "{\"spec\":{},\"status\":{\"conditions\":[{},{}]},\"old\":{\"a\":1}}";
    struct json_tree_opts o = {.schema = &POD, .max_depth = 16};
    /* within budget and not skipped: kept */
    assert_tree(text, &o, text);
    /* "old" skipped, "status" over its budget: both null, their costs still counted */
    o.region[1] = (struct json_region_budget){.max_cost = 1024, .null_when_over = true};
    o.region[2].skip = true;
    assert_tree(text, &o, "{\"spec\":{},\"status\":null,\"old\":null}");
    struct json_tree t;
    char err[160];
    assert_int_equal(json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err)), K_OK);
    assert_true(t.region_seen[1] && t.region_seen[2] && !t.region_seen[3]);
    assert_true(t.region_null[1] && t.region_null[2]);
    assert_int_equal(t.cost[1], JSON_COST_OBJECT + JSON_COST_MEMBER + 10 + JSON_COST_ARRAY +
                                    2 * (JSON_COST_ELEMENT + JSON_COST_OBJECT));
    assert_true(t.cost[2] > 0);
    assert_int_equal(t.built_cost, t.cost[0]);
    json_tree_free(&t);
    /* a region over budget without null_when_over is built all the same */
    o.region[1].null_when_over = false;
    assert_int_equal(json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err)), K_OK);
    assert_false(t.region_null[1]);
    assert_int_equal(t.built_cost, t.cost[0] + t.cost[1]);
    json_tree_free(&t);
    /* region 0 over budget: refused, with the costs */
    o.region[0].max_cost = 1024;
    assert_int_equal(json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err)), K_ETOOBIG);
    assert_null(t.root);
    assert_true(t.cost[0] > 1024);
    assert_non_null(strstr(err, "too large"));
    json_tree_free(&t);
    /* the whole text a region's value is not possible: regions are members */
    assert_int_equal(json_tree_parse(&t, "null", 4, &o, err, sizeof(err)), K_OK);
    assert_null(t.root);
    json_tree_free(&t);
}

static void test_errors(void **state)
{
    (void)state;
    struct json_tree t;
    char err[160];
    struct json_tree_opts o = {.schema = &POD, .max_depth = 4, .flags = JSON_TREE_OBJECT};
    assert_int_equal(json_tree_parse(&t, "[1]", 3, &o, err, sizeof(err)), K_EPARSE);
    assert_string_equal(err, "malformed JSON: not an object");
    json_tree_free(&t);
    assert_int_equal(json_tree_parse(&t, "{\"a\":[[[[]]]]}", 14, &o, err, sizeof(err)), K_EPARSE);
    assert_string_equal(err, "malformed JSON: nesting too deep at byte 8");
    json_tree_free(&t);
    assert_int_equal(json_tree_parse(&t, "{\"spec\":1,\"spec\":2}", 19, &o, err, sizeof(err)),
                     K_EPARSE);
    assert_string_equal(err, "malformed JSON: duplicate member \"spec\" at byte 17");
    json_tree_free(&t);
    /* not NUL-terminated: only len bytes are read */
    assert_int_equal(json_tree_parse(&t, "{}garbage", 2, &o, err, sizeof(err)), K_OK);
    assert_non_null(t.root);
    json_tree_free(&t);
    json_tree_free(&t); /* idempotent */
    json_tree_free(NULL);
}

/* A text above JSON_TREE_STACK_TEXT is copied to the heap; the tree outlives nothing it needs
 * (valgrind and ASan watch the reads of the member names after the parse). */
static void test_large_text(void **state)
{
    (void)state;
    size_t cap = 4 * JSON_TREE_STACK_TEXT;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t at = (size_t)snprintf(text, cap, "{\"spec\":{\"containers\":[");
    for (int i = 0; at < 3 * JSON_TREE_STACK_TEXT; i++)
        at += (size_t)snprintf(
            text + at, cap - at,
            "%s{\"name\":\"c%d\",\"env\":[{\"name\":\"V\",\"value\":\"%01000d\"}]}", i ? "," : "",
            i, i);
    snprintf(text + at, cap - at, "]}}");
    struct json_tree_opts o = {.schema = &POD, .max_depth = 16};
    for (int tokener = 0; tokener < 2; tokener++) {
        o.flags = tokener ? JSON_TREE_TOKENER : 0;
        struct json_tree t;
        char err[160];
        assert_int_equal(json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err)), K_OK);
        json_object *spec, *cs;
        assert_true(json_object_object_get_ex(t.root, "spec", &spec));
        assert_true(json_object_object_get_ex(spec, "containers", &cs));
        size_t n = json_object_array_length(cs);
        assert_true(n > 40 && n < JSON_SCAN_MAX_CUTS);
        json_object *last = json_object_array_get_idx(cs, n - 1), *name;
        assert_true(json_object_object_get_ex(last, "name", &name));
        char want[16];
        snprintf(want, sizeof(want), "c%zu", n - 1);
        assert_string_equal(json_object_get_string(name), want);
        assert_int_equal(json_object_object_length(last), 1);
        json_tree_free(&t);
    }
    free(text);
}

/* Parses on several threads at once, the tokener's per-thread state included. */
static void *parse_many(void *arg)
{
    const char *text = arg;
    struct json_tree_opts o = {.schema = &POD, .max_depth = 16};
    for (int i = 0; i < 200; i++) {
        o.flags = i % 2 ? JSON_TREE_TOKENER : 0;
        struct json_tree t;
        char err[160];
        int rc = json_tree_parse(&t, text, strlen(text), &o, err, sizeof(err));
        bool ok = rc == K_OK &&
                  strcmp(print(t.root), "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}") == 0;
        json_tree_free(&t);
        if (!ok)
            return (void *)1;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    static const char text[] =
        "{\"managedFields\":[1],\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[]}]}}";
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, parse_many, (void *)text), 0);
    for (int i = 0; i < 4; i++) {
        void *ret;
        assert_int_equal(pthread_join(th[i], &ret), 0);
        assert_null(ret);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_json_c), cmocka_unit_test(test_schema_cuts),
        cmocka_unit_test(test_regions),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_large_text),     cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
