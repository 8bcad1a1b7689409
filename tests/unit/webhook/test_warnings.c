/*
 * Tests for webhook/warnings.c: the warning list's text rules (no control characters, valid
 * UTF-8, per-item cut on a character boundary, deduplication, count and total limits) and the
 * limits holding for objects built to produce long warnings.
 */
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
#include "warnings.h"
#include "wh_testutil.h"

static void test_control_characters(void **state)
{
    (void)state;
    struct warn_list l;
    warn_list_init(&l);
    assert_true(warn_add(&l, "R", "a\nb\tc\rd\x1b[31me\x7f"));
    assert_string_equal(l.items[0].text, "a b c d [31me");
    /* C1 control U+0085 (NEL) becomes a space, invalid bytes become ? */
    assert_true(warn_add(&l, "R", "x\xc2\x85y\xff\xfez\xc3"));
    assert_string_equal(l.items[1].text, "x y??z?");
    /* valid multi-byte text is kept */
    assert_true(warn_add(&l, "R", "spec: \xe5\xb8\xa6 \xf0\x9f\x98\x80"));
    assert_true(clean_utf8(l.items[2].text));
    assert_string_equal(l.items[2].text, "spec: \xe5\xb8\xa6 \xf0\x9f\x98\x80");
    /* surrogates and overlongs are invalid */
    assert_true(warn_add(&l, "R", "s\xed\xa0\x80o\xc0\xaf"));
    assert_true(clean_utf8(l.items[3].text));
    for (size_t i = 0; i < l.n; i++)
        assert_true(clean_utf8(l.items[i].text));
}

static void test_cut_and_dedupe(void **state)
{
    (void)state;
    struct warn_list l;
    warn_list_init(&l);
    char long_ascii[600];
    memset(long_ascii, 'a', sizeof(long_ascii) - 1);
    long_ascii[sizeof(long_ascii) - 1] = 0;
    assert_true(warn_add(&l, "R", "%s", long_ascii));
    assert_int_equal(strlen(l.items[0].text), WARN_ITEM_MAX);
    assert_string_equal(l.items[0].text + WARN_ITEM_MAX - 3, "...");
    /* three-byte characters: the cut never splits one */
    char cjk[900] = "";
    for (int i = 0; i < 250; i++)
        strcat(cjk, "\xe5\xb8\xa6");
    assert_true(warn_add(&l, "R", "%s", cjk));
    assert_true(strlen(l.items[1].text) <= WARN_ITEM_MAX);
    assert_true(clean_utf8(l.items[1].text));
    assert_non_null(strstr(l.items[1].text, "..."));
    /* exactly WARN_ITEM_MAX is not cut */
    char exact[WARN_ITEM_MAX + 1];
    memset(exact, 'b', WARN_ITEM_MAX);
    exact[WARN_ITEM_MAX] = 0;
    assert_true(warn_add(&l, "R", "%s", exact));
    assert_string_equal(l.items[2].text, exact);
    /* duplicates and empty warnings are dropped without counting as dropped */
    assert_false(warn_add(&l, "R", "%s", exact));
    assert_false(warn_add(&l, "R", "%s", ""));
    assert_false(warn_add(&l, "R", "  "));
    assert_int_equal(l.n, 3);
    assert_int_equal(l.dropped, 0);
}

static void test_limits(void **state)
{
    (void)state;
    struct warn_list l;
    warn_list_init(&l);
    for (int i = 0; i < 30; i++)
        warn_add(&l, "R", "warning %d", i);
    assert_int_equal(l.n, WARN_MAX_ITEMS);
    assert_int_equal(l.dropped, 30 - WARN_MAX_ITEMS);
    warn_list_init(&l);
    char big[WARN_ITEM_MAX + 1];
    for (int i = 0; i < WARN_MAX_ITEMS; i++) {
        memset(big, 'a' + i, WARN_ITEM_MAX);
        big[WARN_ITEM_MAX] = 0;
        warn_add(&l, "R", "%s", big);
    }
    assert_true(l.total <= WARN_TOTAL_MAX);
    size_t sum = 0;
    for (size_t i = 0; i < l.n; i++)
        sum += strlen(l.items[i].text);
    assert_int_equal(sum, l.total);
}

/* Long names everywhere: every warning stays within the limits. */
static void test_long_names_stay_within_limits(void **state)
{
    (void)state;
    char n253[254];
    memset(n253, 'n', 253);
    n253[253] = 0;
    char res[80] = "nvidia.com/";
    memset(res + 11, 'g', 60);
    res[71] = 0;
    struct gpu_set big;
    char spec[160];
    snprintf(spec, sizeof(spec), "%s,nvidia.com/gpu", res);
    assert_int_equal(gpu_set_parse(&big, spec), K_OK);

    json_object *node = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string(n253));
    json_object_object_add(node, "metadata", meta);
    json_object *taint = json_object_new_object();
    json_object_object_add(taint, "key", json_object_new_string(res));
    json_object_object_add(taint, "value", json_object_new_string(n253));
    json_object_object_add(taint, "effect", json_object_new_string("NoSchedule"));
    json_object *taints = json_object_new_array();
    json_object_array_add(taints, taint);
    json_object *nspec = json_object_new_object();
    json_object_object_add(nspec, "taints", taints);
    json_object_object_add(node, "spec", nspec);
    json_object *cap = json_object_new_object();
    json_object_object_add(cap, res, json_object_new_string("8"));
    json_object *status = json_object_new_object();
    json_object_object_add(status, "capacity", cap);
    json_object_object_add(node, "status", status);
    struct knode kn;
    assert_int_equal(project_node(node, &big, &kn), K_OK);
    const struct knode *nodes[] = {&kn};

    struct wh_quota q = {.ns = n253, .name = n253};
    char key[120];
    snprintf(key, sizeof(key), "requests.%s", res);
    resource_list_add(&q.hard, key, 1);
    resource_list_add(&q.used, key, 1);
    struct wh_snapshot snap = {
        .gpus = &big,
        .nodes = nodes,
        .n_nodes = 1,
        .quotas = &q,
        .n_quotas = 1,
        .nodes_synced = true,
        .runtime_classes_synced = true,
        .quotas_synced = true,
    };
    char *body = malloc(8192);
    snprintf(body, 8192,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":"
             "\"Deployment\"},\"operation\":\"CREATE\",\"namespace\":\"%s\",\"object\":{"
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"replicas\":3,\"template\":{\"spec\":{"
             "\"runtimeClassName\":\"%s\\n\\u0085x\",\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"limits\":{\"%s\":\"2\"}}}]}}}}}}",
             n253, n253, n253, res);
    struct admission_result r;
    assert_int_equal(admission_handle(body, strlen(body), &snap, &r), K_OK);
    assert_true(r.warnings.n >= 3); /* RuntimeClass, quota, taint */
    size_t total = 0;
    for (size_t i = 0; i < r.warnings.n; i++) {
        const char *w = r.warnings.items[i].text;
        assert_true(strlen(w) <= WARN_ITEM_MAX);
        assert_true(clean_utf8(w));
        assert_int_equal(strncmp(w, "spec.template.spec.", 19), 0); /* the field path first */
        total += strlen(w);
    }
    assert_true(total <= WARN_TOTAL_MAX);
    assert_non_null(strstr(r.response, "\"allowed\":true"));
    admission_result_cleanup(&r);
    free(body);
    resource_list_cleanup(&q.hard);
    resource_list_cleanup(&q.used);
    node_cleanup(&kn);
    json_object_put(node);
    gpu_set_cleanup(&big);
}

/* hard - used is saturating: hard 9223372036854775807 with used -5 leaves INT64_MAX, not a
 * wrapped negative (undefined behaviour, and a false "0 left" warning). */
static void test_quota_arithmetic_saturates(void **state)
{
    (void)state;
    struct wh_quota q = {.ns = "ns", .name = "q"};
    assert_int_equal(resource_list_add(&q.hard, "requests.nvidia.com/gpu", INT64_MAX), K_OK);
    assert_int_equal(resource_list_add(&q.used, "requests.nvidia.com/gpu", -5), K_OK);
    struct wh_snapshot snap = {
        .gpus = &test_gpus, .quotas = &q, .n_quotas = 1, .quotas_synced = true};
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        "\"operation\":\"CREATE\",\"namespace\":\"ns\",\"object\":{\"metadata\":{\"name\":"
        "\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
        "\"nvidia.com/gpu\":\"1\"}}}]}}}}";
    struct admission_result r;
    assert_int_equal(admission_handle(body, strlen(body), &snap, &r), K_OK);
    for (size_t i = 0; i < r.warnings.n; i++)
        if (strstr(r.warnings.items[i].text, "quota"))
            fail_msg("unexpected quota warning: %s", r.warnings.items[i].text);
    admission_result_cleanup(&r);
    resource_list_cleanup(&q.hard);
    resource_list_cleanup(&q.used);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_cut_and_dedupe),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_quota_arithmetic_saturates),
        cmocka_unit_test(test_long_names_stay_within_limits),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
