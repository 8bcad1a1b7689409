/*
 * Tests for webhook/admission.c: every tests/fixtures/admission case file (an AdmissionReview,
 * a snapshot of nodes, RuntimeClasses, ResourceQuotas and Namespaces, and the DRA lists
 * deviceClasses, resourceSlices, resourceClaims, resourceClaimTemplates, each synced only when
 * its key is present, and the node autoscaler present as an --autoscaler mode (wh_testutil.h),
 * and the expected warning substrings; "absent" lists substrings no warning may hold), response
 * invariants, and malformed input.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpus.h"
#include "admission.h"
#include "json/scan.h"
#include "objects.h"
#include "wh_testutil.h"

/* What every answer must satisfy: a valid AdmissionReview v1, uid echoed, allowed, and
 * warnings within the limits. */
static void check_response(const struct admission_result *r, const char *uid)
{
    assert_non_null(r->response);
    json_object *root = json_tokener_parse(r->response);
    assert_non_null(root);
    json_object *v, *resp;
    assert_true(json_object_object_get_ex(root, "apiVersion", &v));
    assert_string_equal(json_object_get_string(v), "admission.k8s.io/v1");
    assert_true(json_object_object_get_ex(root, "kind", &v));
    assert_string_equal(json_object_get_string(v), "AdmissionReview");
    assert_true(json_object_object_get_ex(root, "response", &resp));
    assert_true(json_object_object_get_ex(resp, "uid", &v));
    assert_string_equal(json_object_get_string(v), uid);
    assert_true(json_object_object_get_ex(resp, "allowed", &v));
    assert_true(json_object_get_boolean(v));
    assert_false(json_object_object_get_ex(resp, "patch", &v));
    size_t total = 0, n = 0;
    if (json_object_object_get_ex(resp, "warnings", &v)) {
        n = json_object_array_length(v);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            const char *w = json_object_get_string(json_object_array_get_idx(v, i));
            assert_true(strlen(w) <= WARN_ITEM_MAX);
            assert_true(clean_utf8(w));
            assert_string_equal(w, r->warnings.items[i].text);
            for (size_t j = 0; j < i; j++)
                assert_string_not_equal(w, json_object_get_string(json_object_array_get_idx(v, j)));
            total += strlen(w);
        }
    }
    assert_int_equal(n, r->warnings.n);
    assert_true(n <= WARN_MAX_ITEMS);
    assert_true(total <= WARN_TOTAL_MAX);
    json_object_put(root);
}

static void run_fixture(void **state)
{
    const char *file = *state;
    json_object *c = test_load_json(FIXTURES_DIR, file);
    if (!c)
        fail_msg("%s: cannot load", file);
    json_object *snapj, *review, *expect, *v;
    assert_true(json_object_object_get_ex(c, "snapshot", &snapj));
    assert_true(json_object_object_get_ex(c, "review", &review));
    assert_true(json_object_object_get_ex(c, "expect", &expect));
    struct owned_snapshot os;
    assert_int_equal(owned_snapshot_build(&os, snapj, &test_gpus), K_OK);

    const char *body = json_object_to_json_string_ext(review, JSON_C_TO_STRING_PLAIN);
    struct admission_result *r = malloc(sizeof(*r));
    assert_non_null(r);
    int rc = admission_handle(body, strlen(body), &os.snap, r);

    json_object_object_get_ex(expect, "result", &v);
    const char *want = json_object_get_string(v);
    if (strcmp(want, "parse") == 0) {
        if (rc != K_EPARSE)
            fail_msg("%s: expected K_EPARSE, got %d", file, rc);
        assert_null(r->response);
        assert_true(r->error[0] != 0);
    } else {
        if (rc != K_OK)
            fail_msg("%s: admission_handle returned %d (%s)", file, rc, r->error);
        json_object *req, *uid;
        json_object_object_get_ex(review, "request", &req);
        json_object_object_get_ex(req, "uid", &uid);
        check_response(r, json_object_get_string(uid));
        json_object *ws, *reasons = NULL;
        json_object_object_get_ex(expect, "warnings", &ws);
        json_object_object_get_ex(expect, "reasons", &reasons);
        size_t nw = json_object_array_length(ws);
        if (nw != r->warnings.n) {
            for (size_t i = 0; i < r->warnings.n; i++)
                print_message("%s: got warning: %s\n", file, r->warnings.items[i].text);
            fail_msg("%s: expected %zu warning(s), got %zu", file, nw, r->warnings.n);
        }
        for (size_t i = 0; i < nw; i++) {
            const char *sub = json_object_get_string(json_object_array_get_idx(ws, i));
            bool found = false;
            for (size_t k = 0; k < r->warnings.n && !found; k++)
                found = strstr(r->warnings.items[k].text, sub) != NULL;
            if (!found) {
                for (size_t k = 0; k < r->warnings.n; k++)
                    print_message("%s: got warning: %s\n", file, r->warnings.items[k].text);
                fail_msg("%s: no warning contains \"%s\"", file, sub);
            }
        }
        json_object *absent = NULL;
        json_object_object_get_ex(expect, "absent", &absent);
        for (size_t i = 0; absent && i < json_object_array_length(absent); i++) {
            const char *sub = json_object_get_string(json_object_array_get_idx(absent, i));
            for (size_t k = 0; k < r->warnings.n; k++)
                if (strstr(r->warnings.items[k].text, sub))
                    fail_msg("%s: warning \"%s\" contains \"%s\"", file, r->warnings.items[k].text,
                             sub);
        }
        for (size_t i = 0; reasons && i < json_object_array_length(reasons); i++)
            assert_string_equal(r->warnings.items[i].reason,
                                json_object_get_string(json_object_array_get_idx(reasons, i)));
        if (json_object_object_get_ex(expect, "dryRun", &v))
            assert_int_equal(r->dry_run, json_object_get_boolean(v));
    }
    admission_result_cleanup(r);
    free(r);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

/* ------------------------------------------------------------------ malformed input */

static struct wh_snapshot empty_snap(void)
{
    struct wh_snapshot s = {.gpus = &test_gpus, .nodes_synced = true};
    return s;
}

static int handle_raw(const char *body, size_t len, struct admission_result *r)
{
    struct wh_snapshot s = empty_snap();
    return admission_handle(body, len, &s, r);
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "{",
        "[]",
        "null",
        "42",
        "\"AdmissionReview\"",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"u\"}} trailing",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"u\"}}{}",
        "{\"apiVersion\":1,\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"u\"",
        /* uids that cannot be echoed faithfully */
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"a\\u0000b\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"a b\\n\"}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct admission_result r;
        int rc = handle_raw(bad[i], strlen(bad[i]), &r);
        if (rc != K_EPARSE)
            fail_msg("input %zu (%s): expected K_EPARSE, got %d", i, bad[i], rc);
        assert_null(r.response);
        admission_result_cleanup(&r);
    }
    /* NULL body */
    struct admission_result r;
    assert_int_equal(admission_handle(NULL, 5, &(struct wh_snapshot){.gpus = &test_gpus}, &r),
                     K_EPARSE);
    admission_result_cleanup(&r);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    size_t depth = 100000;
    char *b = malloc(depth * 2 + 200);
    assert_non_null(b);
    int off = sprintf(b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                         "\"request\":{\"uid\":\"u\",\"object\":");
    memset(b + off, '[', depth);
    memset(b + off + depth, ']', depth);
    strcpy(b + off + 2 * depth, "}}");
    struct admission_result r;
    assert_int_equal(handle_raw(b, strlen(b), &r), K_EPARSE);
    admission_result_cleanup(&r);
    free(b);
}

static void test_length_not_terminated(void **state)
{
    (void)state;
    /* the body is taken by length: bytes after len are not read */
    const char *ok = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"uid\":\"u-1\"}}GARBAGE";
    struct admission_result r;
    assert_int_equal(handle_raw(ok, strlen(ok) - 7, &r), K_OK);
    check_response(&r, "u-1");
    admission_result_cleanup(&r);
    /* embedded NUL inside the length */
    char nul[] = "{\"apiVersion\":\"admission.k8s.io/v1\"\0,\"kind\":\"AdmissionReview\"}";
    assert_int_equal(handle_raw(nul, sizeof(nul) - 1, &r), K_EPARSE);
    admission_result_cleanup(&r);
}

#define REVIEW_HEAD                                                                                \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"   \
    "\"u-1\""

/* Not strict RFC 8259 JSON: answered 400 (K_EPARSE), never 200. */
static void test_strict_json(void **state)
{
    (void)state;
    static const char *bad[] = {
        REVIEW_HEAD ",\"x\":NaN}}",
        REVIEW_HEAD ",\"x\":nan}}",
        REVIEW_HEAD ",\"x\":Infinity}}",
        REVIEW_HEAD ",\"x\":-Infinity}}",
        REVIEW_HEAD ",\"x\":[1,2,]}}",
        REVIEW_HEAD ",\"x\":{\"a\":1,}}}",
        REVIEW_HEAD ",}}",
        REVIEW_HEAD ",\"x\":\"\xff\"}}",             /* invalid byte */
        REVIEW_HEAD ",\"x\":\"\xc0\x80\"}}",         /* overlong NUL */
        REVIEW_HEAD ",\"x\":\"\xed\xa0\x80\"}}",     /* UTF-8 encoded surrogate */
        REVIEW_HEAD ",\"x\":\"\xf4\x90\x80\x80\"}}", /* above U+10FFFF */
        REVIEW_HEAD ",\"x\":\"\xe2\x82\"}}",         /* truncated sequence */
        REVIEW_HEAD ",\"\xff\":1}}",                 /* in a member name */
        REVIEW_HEAD ",\"x\":\"a\tb\"}}",             /* raw control character */
        REVIEW_HEAD ",\"x\":\"\\x41\"}}",
        REVIEW_HEAD ",\"x\":\"\\u12\"}}",
        REVIEW_HEAD ",\"x\":01}}",
        REVIEW_HEAD ",\"x\":1.}}",
        REVIEW_HEAD ",\"x\":.5}}",
        REVIEW_HEAD ",\"x\":+1}}",
        REVIEW_HEAD ",\"x\":1e}}",
        REVIEW_HEAD ",\"x\":0x10}}",
        REVIEW_HEAD ",\"x\":TRUE}}",
        REVIEW_HEAD ",\"x\":'a'}}",
        REVIEW_HEAD ",/*c*/\"x\":1}}",
        REVIEW_HEAD ",x:1}}",
        REVIEW_HEAD ",\"x\" 1}}",
        REVIEW_HEAD "}}\n,",
        "\xef\xbb\xbf" REVIEW_HEAD "}}", /* byte order mark */
        /* duplicate members the checks depend on */
        REVIEW_HEAD ",\"object\":{},\"object\":{}}}",
        REVIEW_HEAD ",\"oldObject\":{},\"oldObject\":{}}}",
        REVIEW_HEAD ",\"ob\\u006aect\":{},\"object\":{}}}",
        REVIEW_HEAD "},\"request\":{\"uid\":\"u-2\"}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct admission_result r;
        int rc = handle_raw(bad[i], strlen(bad[i]), &r);
        if (rc != K_EPARSE)
            fail_msg("input %zu (%s): expected K_EPARSE, got %d", i, bad[i], rc);
        assert_null(r.response);
        assert_true(strncmp(r.error, "malformed JSON: ", 16) == 0);
        admission_result_cleanup(&r);
    }
    /* strict is not stricter than RFC 8259 */
    static const char *good[] = {
        REVIEW_HEAD ",\"x\":[-0.5e+10,0,1E2,true,false,null,{},[]]}}",
        REVIEW_HEAD ",\"x\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"}}",
        REVIEW_HEAD ",\"x\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}}",
        " \t\r\n" REVIEW_HEAD "} } \n",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct admission_result r;
        int rc = handle_raw(good[i], strlen(good[i]), &r);
        if (rc != K_OK)
            fail_msg("input %zu (%s): expected K_OK, got %d (%s)", i, good[i], rc, r.error);
        check_response(&r, "u-1");
        admission_result_cleanup(&r);
    }
}

/* The scan reads plain string bytes 8 at a time: an escape, a multi-byte character, a control
 * character or an invalid byte is found at every offset of a value and of a member name, with
 * the byte it is at. */
static void test_string_offsets(void **state)
{
    (void)state;
    static const struct {
        const char *insert;
        const char *error; /* NULL: accepted */
    } cases[] = {
        {"\\n", NULL},
        {"\\u00e9", NULL},
        {"\xc3\xa9", NULL},
        {"\x7f", NULL},
        {"\x01", "control character in string"},
        {"\xff", "invalid UTF-8 in string"},
        {"\\q", "invalid escape in string"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        for (int name = 0; name < 2; name++)
            for (size_t at = 0; at <= 20; at++) {
                char s[64], body[256];
                snprintf(s, sizeof(s), "%.*s%s%.*s", (int)at, "abcdefghijklmnopqrstuvwxyz",
                         cases[c].insert, (int)(20 - at), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                int n = name ? snprintf(body, sizeof(body), REVIEW_HEAD ",\"%s\":1}}", s)
                             : snprintf(body, sizeof(body), REVIEW_HEAD ",\"x\":\"%s\"}}", s);
                size_t str_start = strlen(REVIEW_HEAD) + (name ? 2 : 6);
                struct admission_result r;
                int rc = handle_raw(body, (size_t)n, &r);
                if (!cases[c].error) {
                    if (rc != K_OK)
                        fail_msg("case %zu at %zu (%s): %s", c, at, name ? "name" : "value",
                                 r.error);
                    check_response(&r, "u-1");
                } else {
                    char want[128];
                    snprintf(want, sizeof(want), "malformed JSON: %s at byte %zu", cases[c].error,
                             str_start + at);
                    assert_int_equal(rc, K_EPARSE);
                    assert_string_equal(r.error, want);
                }
                admission_result_cleanup(&r);
            }
}

/* ADMISSION_MAX_DEPTH containers are accepted, one more is not. */
static void test_depth_limit(void **state)
{
    (void)state;
    for (int extra = 0; extra < 2; extra++) {
        /* the envelope and request objects are 2 levels */
        size_t depth = ADMISSION_MAX_DEPTH - 2 + (size_t)extra;
        char *b = malloc(depth * 2 + 200);
        assert_non_null(b);
        int off = sprintf(b, REVIEW_HEAD ",\"x\":");
        memset(b + off, '[', depth);
        memset(b + off + depth, ']', depth);
        strcpy(b + off + 2 * depth, "}}");
        struct admission_result r;
        int rc = handle_raw(b, strlen(b), &r);
        assert_int_equal(rc, extra ? K_EPARSE : K_OK);
        admission_result_cleanup(&r);
        free(b);
    }
}

/* A review whose request.object is `n` copies of `item` in an array under metadata.x. */
static char *pod_review_with(const char *op, const char *where, const char *item, size_t n,
                             size_t *len)
{
    size_t il = strlen(item);
    char *b = malloc(n * (il + 1) + 1024);
    assert_non_null(b);
    size_t off = (size_t)sprintf(b,
                                 REVIEW_HEAD
                                 ",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                                 "\"operation\":\"%s\",\"namespace\":\"ns\",\"name\":\"p\",\"%s\":"
                                 "{\"metadata\":{\"name\":\"p\",\"x\":[",
                                 op, where);
    for (size_t i = 0; i < n; i++) {
        if (i)
            b[off++] = ',';
        memcpy(b + off, item, il);
        off += il;
    }
    off += (size_t)sprintf(b + off, "]},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                                    "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}}}");
    *len = off;
    return b;
}

static size_t count_reason(const struct admission_result *r, const char *reason)
{
    size_t n = 0;
    for (size_t i = 0; i < r->warnings.n; i++)
        n += strcmp(r->warnings.items[i].reason, reason) == 0;
    return n;
}

/* An object over the tree budget is allowed with one warning and not parsed. */
static void test_object_over_budget(void **state)
{
    (void)state;
    /* 1,048,576 empty objects: about 1 GiB as a json-c tree, 2 MiB of JSON */
    size_t len, n = (size_t)1 << 20;
    char *b = pod_review_with("CREATE", "object", "{}", n, &len);
    struct admission_result r;
    assert_int_equal(handle_raw(b, len, &r), K_OK);
    check_response(&r, "u-1");
    assert_int_equal(r.warnings.n, 1);
    assert_string_equal(r.warnings.items[0].reason, WARN_REASON_NOT_CHECKED);
    assert_non_null(strstr(r.warnings.items[0].text, "Pod too large to check"));
    assert_non_null(strstr(r.warnings.items[0].text, "GPU checks skipped"));
    assert_string_equal(r.name, "p"); /* from request.name */
    admission_result_cleanup(&r);

    /* just under the budget: parsed and checked (no nodes: no warning at all) */
    size_t fit = (ADMISSION_MAX_OBJECT_COST - 16384) / (JSON_COST_OBJECT + JSON_COST_ELEMENT);
    char *small = pod_review_with("CREATE", "object", "{}", fit, &len);
    assert_int_equal(handle_raw(small, len, &r), K_OK);
    assert_int_equal(count_reason(&r, WARN_REASON_NOT_CHECKED), 0);
    admission_result_cleanup(&r);
    free(small);

    /* the same object as oldObject of an UPDATE is never parsed, and says nothing */
    free(b);
    b = pod_review_with("UPDATE", "oldObject", "{}", n, &len);
    assert_int_equal(handle_raw(b, len, &r), K_OK);
    check_response(&r, "u-1");
    assert_int_equal(r.warnings.n, 0);
    admission_result_cleanup(&r);
    free(b);

    /* an escaped member name is the same member */
    b = pod_review_with("CREATE", "ob\\u006aect", "{}", n, &len);
    assert_int_equal(handle_raw(b, len, &r), K_OK);
    assert_int_equal(count_reason(&r, WARN_REASON_NOT_CHECKED), 1);
    admission_result_cleanup(&r);
    free(b);

    /* the same bulk outside request.object is refused */
    b = pod_review_with("CREATE", "userInfo", "{}", n, &len);
    assert_int_equal(handle_raw(b, len, &r), K_EPARSE);
    assert_non_null(strstr(r.error, "outside request.object is too large"));
    admission_result_cleanup(&r);
    free(b);
}

/* The quota check at the int64 limits: saturating, never wrapping (UBSan build: no report). */
static void test_quota_int64_limits(void **state)
{
    (void)state;
    static const struct {
        int64_t hard, used;
        const char *replicas; /* JSON number */
        const char *per_pod;  /* quantity */
        const char *want;     /* substring of the one quota warning, NULL for none */
    } cases[] = {
        /* hard - used overflows upwards: all of it is left */
        {INT64_MAX, INT64_MIN, "1", "1", NULL},
        {INT64_MAX, -1, "1", "9223372036854775", NULL},
        /* and downwards: nothing is left */
        {-2, INT64_MAX, "1", "1", "can never be admitted"},
        {INT64_MAX, INT64_MAX, "1", "1", "has 0 left"},
        /* replicas x per pod overflows: more than any quota holds */
        {INT64_MAX, 0, "9223372036854775807", "2",
         "9223372036854775807 replicas x 2 nvidia.com/gpu but quota \"q\" has "
         "9223372036854775807 left"},
        {INT64_MAX, 0, "2000", "9223372036854775", "left (used 0/9223372036854775807); only 1000"},
        /* exactly fits */
        {INT64_MAX, 0, "1", "9223372036854775", NULL},
        {INT64_MAX, 1, "1", "9223372036854775", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct wh_quota q = {.ns = "ns", .name = "q", .has_status = true};
        assert_int_equal(resource_list_add(&q.hard, "requests.nvidia.com/gpu", cases[i].hard),
                         K_OK);
        assert_int_equal(resource_list_add(&q.used, "requests.nvidia.com/gpu", cases[i].used),
                         K_OK);
        struct wh_snapshot snap = {
            .gpus = &test_gpus, .quotas = &q, .n_quotas = 1, .quotas_synced = true};
        char body[1024];
        snprintf(body, sizeof(body),
                 REVIEW_HEAD ",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":"
                             "\"Deployment\"},\"operation\":\"CREATE\",\"namespace\":\"ns\","
                             "\"object\":{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":%s,"
                             "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
                             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%s\"}}}]}}}}}}",
                 cases[i].replicas, cases[i].per_pod);
        struct admission_result r;
        assert_int_equal(admission_handle(body, strlen(body), &snap, &r), K_OK);
        check_response(&r, "u-1");
        size_t n = count_reason(&r, WARN_REASON_QUOTA);
        if (!cases[i].want && n != 0)
            fail_msg("case %zu: unexpected warning %s", i, r.warnings.items[0].text);
        if (cases[i].want && (n != 1 || !strstr(r.warnings.items[0].text, cases[i].want)))
            fail_msg("case %zu: want \"%s\", got %zu warning(s): %s", i, cases[i].want, n,
                     r.warnings.n ? r.warnings.items[0].text : "");
        admission_result_cleanup(&r);
        resource_list_cleanup(&q.hard);
        resource_list_cleanup(&q.used);
    }
}

/*
 * A pod above the projection caps: the node checks are skipped with one warning naming the cap;
 * the quota check still runs.
 */
static void test_caps_warn(void **state)
{
    (void)state;
    json_object *nj = json_tokener_parse(
        "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"taints\":[{\"key\":"
        "\"t\",\"effect\":\"NoSchedule\"}]},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\"}}}");
    struct knode node;
    assert_int_equal(project_node(nj, &test_gpus, &node), K_OK);
    const struct knode *nodes[] = {&node};
    struct wh_quota q = {.ns = "ns", .name = "q", .has_status = true};
    assert_int_equal(resource_list_add(&q.hard, "requests.nvidia.com/gpu", 0), K_OK);
    struct wh_snapshot snap = {.gpus = &test_gpus,
                               .nodes = nodes,
                               .n_nodes = 1,
                               .quotas = &q,
                               .n_quotas = 1,
                               .nodes_synced = true,
                               .quotas_synced = true};
    static const struct {
        size_t tols, sel;
        const char *want; /* the NOT_CHECKED warning; NULL: the node checks run */
    } cases[] = {
        {PROJECT_MAX_TOLERATIONS, 1, NULL},
        {PROJECT_MAX_TOLERATIONS + 1, 1,
         "spec.tolerations: 129 tolerations, above the 128 gputri-webhook evaluates per node; "
         "node checks skipped"},
        {1, PROJECT_MAX_SELECTOR_REQUIREMENTS + 1,
         "spec.affinity: node selection of 65 requirements and 0 values, above the 64 and "
         "512 gputri-webhook evaluates per node; node checks skipped"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t cap = 4096 + cases[i].tols * 64 + cases[i].sel * 32;
        char *b = malloc(cap);
        assert_non_null(b);
        size_t off = (size_t)snprintf(
            b, cap,
            REVIEW_HEAD ",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                        "\"operation\":\"CREATE\",\"namespace\":\"ns\",\"object\":{\"metadata\":"
                        "{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                        "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],\"tolerations\":[");
        for (size_t t = 0; t < cases[i].tols; t++)
            off += (size_t)snprintf(b + off, cap - off,
                                    "%s{\"key\":\"other-%zu\",\"operator\":\"Exists\"}",
                                    t ? "," : "", t);
        off += (size_t)snprintf(b + off, cap - off, "],\"nodeSelector\":{\"a\":\"b\"");
        for (size_t k = 1; k < cases[i].sel; k++)
            off += (size_t)snprintf(b + off, cap - off, ",\"k%zu\":\"v\"", k);
        off += (size_t)snprintf(b + off, cap - off, "}}}}}");
        assert_true(off < cap);
        struct admission_result r;
        assert_int_equal(admission_handle(b, off, &snap, &r), K_OK);
        check_response(&r, "u-1");
        assert_int_equal(count_reason(&r, WARN_REASON_QUOTA), 1); /* still checked */
        if (cases[i].want) {
            assert_int_equal(count_reason(&r, WARN_REASON_NOT_CHECKED), 1);
            assert_int_equal(count_reason(&r, WARN_REASON_TAINT), 0);
            assert_int_equal(count_reason(&r, WARN_REASON_SELECTOR), 0);
            bool found = false;
            for (size_t k = 0; k < r.warnings.n; k++)
                found |= strcmp(r.warnings.items[k].text, cases[i].want) == 0;
            if (!found)
                fail_msg("case %zu: no warning \"%s\"", i, cases[i].want);
        } else {
            assert_int_equal(count_reason(&r, WARN_REASON_NOT_CHECKED), 0);
            assert_int_equal(count_reason(&r, WARN_REASON_TAINT), 1); /* taint t untolerated */
        }
        admission_result_cleanup(&r);
        free(b);
    }
    resource_list_cleanup(&q.hard);
    node_cleanup(&node);
    json_object_put(nj);
}

static void test_unsynced_snapshot_is_quiet(void **state)
{
    (void)state;
    json_object *c = test_load_json(FIXTURES_DIR, "admission/pod_taint.json");
    assert_non_null(c);
    json_object *snapj, *review;
    json_object_object_get_ex(c, "snapshot", &snapj);
    json_object_object_get_ex(c, "review", &review);
    struct owned_snapshot os;
    assert_int_equal(owned_snapshot_build(&os, snapj, &test_gpus), K_OK);
    os.snap.nodes_synced = false;
    const char *body = json_object_to_json_string(review);
    struct admission_result r;
    assert_int_equal(admission_handle(body, strlen(body), &os.snap, &r), K_OK);
    assert_int_equal(r.warnings.n, 0);
    admission_result_cleanup(&r);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

/* The snapshot of admission/deployment_taint.json built into *os; returns the fixture (put it
 * after owned_snapshot_cleanup). */
static json_object *taint_snapshot(struct owned_snapshot *os)
{
    json_object *c = test_load_json(FIXTURES_DIR, "admission/deployment_taint.json");
    assert_non_null(c);
    json_object *snapj;
    json_object_object_get_ex(c, "snapshot", &snapj);
    assert_int_equal(owned_snapshot_build(os, snapj, &test_gpus), K_OK);
    return c;
}

static void test_event_identity(void **state)
{
    (void)state;
    json_object *c = test_load_json(FIXTURES_DIR, "admission/deployment_taint.json");
    assert_non_null(c);
    json_object *snapj, *review;
    json_object_object_get_ex(c, "snapshot", &snapj);
    json_object_object_get_ex(c, "review", &review);
    struct owned_snapshot os;
    assert_int_equal(owned_snapshot_build(&os, snapj, &test_gpus), K_OK);
    const char *body = json_object_to_json_string(review);
    struct admission_result r;
    assert_int_equal(admission_handle(body, strlen(body), &os.snap, &r), K_OK);
    assert_string_equal(r.ns, "gpu-triage");
    assert_string_equal(r.kind, "Deployment");
    assert_string_equal(r.api_version, "apps/v1");
    assert_string_equal(r.name, "taint-deploy");
    assert_string_equal(r.uid, "");
    assert_string_equal(r.operation, "CREATE");
    assert_false(r.dry_run);
    assert_string_equal(r.warnings.items[0].reason, WARN_REASON_TAINT);
    admission_result_cleanup(&r);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

/* ------------------------------------------------------------------ pruned = full */

/* admission_handle() (members the checks do not read cut) and ADMISSION_PARSE_FULL answer
 * alike: status, response bytes, warnings and their reasons, the object's identity. */
static void assert_same_as_full(const char *body, size_t len, const struct wh_snapshot *snap,
                                const char *what)
{
    struct admission_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    int ra = admission_handle(body, len, snap, a);
    int rb = admission_handle_ex(body, len, snap, ADMISSION_PARSE_FULL, b);
    if (ra != rb)
        fail_msg("%s: pruned %d (%s), full %d (%s)", what, ra, a->error, rb, b->error);
    if (ra == K_OK) {
        assert_int_equal(a->response_len, b->response_len);
        if (strcmp(a->response, b->response) != 0)
            fail_msg("%s: pruned %s\nfull %s", what, a->response, b->response);
    } else {
        assert_string_equal(a->error, b->error);
    }
    assert_int_equal(a->warnings.n, b->warnings.n);
    for (size_t i = 0; i < a->warnings.n; i++) {
        assert_string_equal(a->warnings.items[i].text, b->warnings.items[i].text);
        assert_ptr_equal(a->warnings.items[i].reason, b->warnings.items[i].reason);
    }
    assert_int_equal(a->dry_run, b->dry_run);
    assert_string_equal(a->ns, b->ns);
    assert_string_equal(a->kind, b->kind);
    assert_string_equal(a->api_version, b->api_version);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->uid, b->uid);
    assert_string_equal(a->operation, b->operation);
    admission_result_cleanup(a);
    admission_result_cleanup(b);
    free(a);
    free(b);
}

/* A copy of `v` where every object gets members no check reads, first and last: what the API
 * server also sends (managedFields, status, images, env, volumes, userInfo, ...). */
static json_object *with_unread_members(json_object *v)
{
    if (json_object_is_type(v, json_type_array)) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v); i++)
            json_object_array_add(a, with_unread_members(json_object_array_get_idx(v, i)));
        return a;
    }
    if (!json_object_is_type(v, json_type_object))
        return json_object_get(v);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "managedFields",
                           json_tokener_parse("[{\"manager\":\"kubectl\",\"fieldsV1\":"
                                              "{\"f:spec\":{\"f:containers\":{}}}}]"));
    json_object_object_add(o, "image", json_object_new_string("registry.example/cuda:12"));
    json_object_object_foreach(v, key, val)
    {
        json_object_object_add(o, key, with_unread_members(val));
    }
    json_object_object_add(o, "env", json_tokener_parse("[{\"name\":\"A\",\"value\":\"1\"}]"));
    json_object_object_add(o, "status", json_tokener_parse("{\"phase\":\"Pending\"}"));
    return o;
}

/* Every fixture, as recorded and with unread members everywhere, plain and pretty-printed. */
static void run_fixture_pruned(void **state)
{
    const char *file = *state;
    json_object *c = test_load_json(FIXTURES_DIR, file);
    assert_non_null(c);
    json_object *snapj, *review;
    assert_true(json_object_object_get_ex(c, "snapshot", &snapj));
    assert_true(json_object_object_get_ex(c, "review", &review));
    struct owned_snapshot os;
    assert_int_equal(owned_snapshot_build(&os, snapj, &test_gpus), K_OK);
    json_object *rich = with_unread_members(review);
    json_object *variants[] = {review, rich};
    for (size_t v = 0; v < 2; v++)
        for (int pretty = 0; pretty < 2; pretty++) {
            const char *body = json_object_to_json_string_ext(
                variants[v], pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN);
            char what[512];
            snprintf(what, sizeof(what), "%s (%s, %s)", file, v ? "unread members" : "recorded",
                     pretty ? "pretty" : "plain");
            assert_same_as_full(body, strlen(body), &os.snap, what);
        }
    /* the recorded answer does not change when unread members are added where the checks
     * do not look (the fixtures put none in request.object's kept subtrees) */
    json_object_put(rich);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

/* The cut tree is built from the text by admission.c, the whole one by json-c's tokener: the
 * same strings (escapes, surrogates paired, lone or doubled, U+0000 in a value and in a name),
 * numbers (integers past int64 and uint64, -0, fractions, exponents), literals and repeated
 * names, where the answer shows them (the object's identity, the RuntimeClass warning, the GPU
 * count in the too-large warning, replicas in the quota warning). */
static void test_built_tree(void **state)
{
    (void)state;
    struct owned_snapshot os;
    json_object *c = taint_snapshot(&os);
    static const char *const strings[] = {
        "",
        "plain",
        "a\\u0000b",
        "\\ud83d\\ude00",
        "\\ud83d",
        "\\ud83dx",
        "\\ud83d\\n",
        "\\ud83d\\ud83d\\ude00",
        "\\ude00",
        "\\ud83d\\u0041",
        "\\ud83d\\ud83d",
        "\\udbff\\udfff\\u0800\\u07ff\\u0080\\u007f",
        "\\/\\\\\\\"\\b\\f\\n\\r\\t",
        "\xc3\xa9\\u00e9\xf0\x9f\x98\x80",
        "lab\\u002dnode-0",
        "x\\u0000",
    };
    static const char *const numbers[] = {
        "1",
        "0",
        "-0",
        "2",
        "1.0",
        "1e0",
        "2E+0",
        "1.5",
        "-1",
        "100000000000",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "1e400",
        "-1e-400",
        "true",
        "false",
        "null",
        "\"3\"",
        "{}",
        "[]",
    };
    char *body = malloc(1 << 16);
    assert_non_null(body);
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        const char *v = strings[i];
        snprintf(body, 1 << 16,
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                 "\"request\":{\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
                 "\"kind\":\"Pod\"},\"namespace\":\"%s\",\"operation\":\"CREATE\","
                 "\"object\":{\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\",\"annotations\":"
                 "{\"gputri/cause\":\"%s\",\"%s\":\"x\"}},\"spec\":{\"runtimeClassName\":\"%s\","
                 "\"nodeSelector\":{\"%s\":\"%s\"},\"tolerations\":[{\"key\":\"%s\","
                 "\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"%s\",\"resources\":"
                 "{\"limits\":{\"nvidia.com/gpu\":1,\"%s\":2}}}]}}}}",
                 v, v, v, v, v, v, v, v, v, v, v);
        assert_same_as_full(body, strlen(body), &os.snap, body);
        struct admission_result r;
        if (admission_handle(body, strlen(body), &os.snap, &r) != K_OK)
            fail_msg("%s: %s", body, r.error);
        admission_result_cleanup(&r);
    }
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
        const char *n = numbers[i];
        char pod[1024];
        snprintf(pod, sizeof(pod),
                 "{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":%s},"
                 "\"requests\":{\"nvidia.com/gpu\":%s}}}],\"tolerations\":[{\"key\":"
                 "\"nvidia.com/gpu\",\"operator\":\"Exists\",\"tolerationSeconds\":%s}]}",
                 n, n, n);
        for (int k = 0; k < 2; k++) {
            char spec[2048];
            if (k) /* a Deployment: spec.replicas, then the template */
                snprintf(spec, sizeof(spec), "{\"replicas\":%s,\"template\":{\"spec\":%s}}", n,
                         pod);
            else
                snprintf(spec, sizeof(spec), "%s", pod);
            snprintf(body, 1 << 16,
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"uid\":\"u1\",\"kind\":{\"group\":\"%s\",\"version\":\"v1\","
                     "\"kind\":\"%s\"},\"namespace\":\"gpu-triage\",\"operation\":\"CREATE\","
                     "\"dryRun\":%s,\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":%s}}}",
                     k ? "apps" : "", k ? "Deployment" : "Pod", n, spec);
            assert_same_as_full(body, strlen(body), &os.snap, body);
            if (i < 8) { /* valid JSON with an integer or a plain number: answered */
                struct admission_result r;
                if (admission_handle(body, strlen(body), &os.snap, &r) != K_OK)
                    fail_msg("%s: %s", body, r.error);
                admission_result_cleanup(&r);
            }
        }
    }
    /* repeated names: the last value wins, in the first one's place */
    snprintf(body, 1 << 16,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
             "\"request\":{\"uid\":\"u1\",\"uid\":\"u2\",\"kind\":{\"group\":\"\",\"version\":"
             "\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"namespace\":\"a\","
             "\"namespace\":\"b\",\"object\":{\"metadata\":{\"name\":\"p\",\"name\":\"q\"},"
             "\"spec\":{\"nodeSelector\":{\"x\":\"1\"},\"nodeSelector\":{\"kubernetes.io/"
             "hostname\":\"lab-node-0\"},\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/"
             "gpu\":9,\"nvidia.com/gpu\":1}}}]}}}}");
    assert_same_as_full(body, strlen(body), &os.snap, body);
    free(body);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

/* Hostile shapes for the cutting itself. */
static void test_pruned_hostile(void **state)
{
    (void)state;
    struct owned_snapshot os;
    json_object *c = taint_snapshot(&os);
    static const char *const pod_specs[] = {
        /* only cut members, then none kept before a kept one */
        "{\"volumes\":[],\"dnsPolicy\":\"x\"}",
        "{\"volumes\":[],\"dnsPolicy\":\"x\",\"containers\":[{\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":1}}}]}",
        /* kept, cut, kept, cut with whitespace everywhere */
        " { \"containers\" : [ { \"image\" : \"x\" , \"resources\" : { \"limits\" : "
        "{ \"nvidia.com/gpu\" : 1 } } , \"ports\" : [ ] } ] , \"volumes\" : { } , "
        "\"nodeSelector\" : { \"gpu\" : \"a100\" } , \"hostAliases\" : null } ",
        /* a member name cut at U+0000 by json-c: kept as \"containers\" */
        "{\"containers\\u0000x\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}",
        "{\"containers\\u0000\\u00e9\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}",
        /* escaped names, non-ASCII names, long names */
        "{\"\\u0063ontainers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}],"
        "\"\\u00e9t\\u00e9\":1,\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":{}}",
        /* duplicates: a kept name twice, a cut name twice */
        "{\"containers\":[],\"volumes\":1,\"containers\":[{\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":1}}}],\"volumes\":2}",
        /* odd types where objects are expected */
        "{\"containers\":{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}},"
        "\"affinity\":[{\"nodeAffinity\":1}]}",
        "{\"containers\":[[{\"resources\":{}}],\"x\",null,{\"image\":{}}]}",
    };
    char *body = malloc(1 << 20);
    assert_non_null(body);
    for (size_t i = 0; i < sizeof(pod_specs) / sizeof(pod_specs[0]); i++) {
        for (int k = 0; k < 2; k++) {
            snprintf(body, 1 << 20,
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"userInfo\":{},\"uid\":\"u1\",\"kind\":{\"group\":\"%s\","
                     "\"version\":\"v1\",\"kind\":\"%s\"},\"namespace\":\"gpu-triage\","
                     "\"operation\":\"CREATE\",\"object\":{\"status\":{},\"metadata\":"
                     "{\"name\":\"p\",\"managedFields\":[]},\"spec\":%s%s%s},"
                     "\"oldObject\":null,\"options\":{}}}",
                     k ? "apps" : "", k ? "Deployment" : "Pod", k ? "{\"template\":{\"spec\":" : "",
                     pod_specs[i], k ? "}}" : "");
            assert_same_as_full(body, strlen(body), &os.snap, body);
        }
    }
    /* metadata: what project_meta() reads kept, the rest (labels, last-applied) cut */
    static const char *const metas[] = {
        "{\"labels\":{\"a\":\"b\"},\"annotations\":{\"kubectl.kubernetes.io/last-applied-"
        "configuration\":\"{\\\"x\\\":1}\",\"gputri/cause\":\"taint\",\"gputri/detail\":\"d\","
        "\"resource.kubernetes.io/pod-claim-name\":\"c\"},\"name\":\"p\",\"ownerReferences\":"
        "[{\"controller\":true,\"uid\":\"o1\",\"kind\":\"ReplicaSet\"}],"
        "\"creationTimestamp\":\"2026-12-01T00:00:00Z\",\"deletionTimestamp\":null,\"uid\":\"u\"}",
        "{\"annotations\":[],\"generateName\":\"p-\",\"namespace\":\"gpu-triage\"}",
        "{\"annotations\":{\"gputri/cause\":{\"x\":1}},\"labels\":null}",
    };
    for (size_t i = 0; i < sizeof(metas) / sizeof(metas[0]); i++) {
        snprintf(body, 1 << 20,
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                 "\"request\":{\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
                 "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{\"metadata\":%s,"
                 "\"spec\":{\"nodeSelector\":{\"kubernetes.io/hostname\":\"lab-node-0\"},"
                 "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}}}",
                 metas[i]);
        assert_same_as_full(body, strlen(body), &os.snap, body);
        struct admission_result m;
        assert_int_equal(admission_handle(body, strlen(body), &os.snap, &m), K_OK);
        admission_result_cleanup(&m);
    }
    /* more members to cut than JSON_SCAN_MAX_CUTS: the rest is parsed */
    size_t at = (size_t)snprintf(body, 1 << 20,
                                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                 "\"AdmissionReview\",\"request\":{\"uid\":\"u1\",\"kind\":"
                                 "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                                 "\"operation\":\"CREATE\",\"object\":{\"spec\":{");
    for (int i = 0; i < JSON_SCAN_MAX_CUTS + 50; i++)
        at += (size_t)snprintf(body + at, (1 << 20) - at, "\"x%d\":{\"a\":[%d]},", i, i);
    snprintf(body + at, (1 << 20) - at,
             "\"nodeSelector\":{\"kubernetes.io/hostname\":\"lab-node-0\"},"
             "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}}}");
    assert_same_as_full(body, strlen(body), &os.snap, "above JSON_SCAN_MAX_CUTS");
    struct admission_result r, plain;
    assert_int_equal(admission_handle(body, strlen(body), &os.snap, &r), K_OK);
    const char *small = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                        "\"request\":{\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
                        "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{\"spec\":"
                        "{\"nodeSelector\":{\"kubernetes.io/hostname\":\"lab-node-0\"},"
                        "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}}}";
    assert_int_equal(admission_handle(small, strlen(small), &os.snap, &plain), K_OK);
    assert_true(plain.warnings.n > 0);
    assert_string_equal(r.response, plain.response);
    admission_result_cleanup(&r);
    admission_result_cleanup(&plain);
    free(body);
    owned_snapshot_cleanup(&os);
    json_object_put(c);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/admission", FIXTURES_DIR);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return 1;
    }
    char **files = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        files = realloc(files, (n + 1) * sizeof(*files));
        files[n] = malloc(l + 16);
        snprintf(files[n], l + 16, "admission/%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(files, n, sizeof(*files), by_name);
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_strict_json),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_object_over_budget),
        cmocka_unit_test(test_quota_int64_limits),
        cmocka_unit_test(test_caps_warn),
        cmocka_unit_test(test_length_not_terminated),
        cmocka_unit_test(test_unsynced_snapshot_is_quiet),
        cmocka_unit_test(test_event_identity),
        cmocka_unit_test(test_pruned_hostile),
        cmocka_unit_test(test_string_offsets),
        cmocka_unit_test(test_built_tree),
    };
    size_t nf = sizeof(fixed) / sizeof(fixed[0]);
    struct CMUnitTest *tests = calloc(2 * n + nf, sizeof(*tests));
    char **names = calloc(n, sizeof(*names));
    for (size_t i = 0; i < n; i++) {
        tests[i].name = files[i];
        tests[i].test_func = run_fixture;
        tests[i].initial_state = files[i];
        size_t l = strlen(files[i]) + 16;
        names[i] = malloc(l);
        snprintf(names[i], l, "%s pruned", files[i]);
        tests[n + i].name = names[i];
        tests[n + i].test_func = run_fixture_pruned;
        tests[n + i].initial_state = files[i];
    }
    memcpy(tests + 2 * n, fixed, sizeof(fixed));
    int rc = _cmocka_run_group_tests("webhook_admission", tests, 2 * n + nf, test_gpus_setup,
                                     test_gpus_teardown);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(tests);
    return rc;
}
