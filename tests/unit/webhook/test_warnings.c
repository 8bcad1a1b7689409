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

/* Many cluster-wide slices make matching cost their square on every node: past the work
 * budget the request is not matched, and one warning says so (nothing is guessed). */
static void test_dra_work_budget(void **state)
{
    (void)state;
    enum { NODES = 100, SLICES = 600 };
    struct knode *nodes = calloc(NODES, sizeof(*nodes));
    const struct knode **np = calloc(NODES, sizeof(*np));
    struct dra_slice *sl = calloc(SLICES, sizeof(*sl));
    char names[SLICES][16], nn[NODES][16];
    assert_non_null(nodes);
    assert_non_null(np);
    assert_non_null(sl);
    for (size_t i = 0; i < NODES; i++) {
        snprintf(nn[i], sizeof(nn[i]), "n%03zu", i);
        nodes[i].name = nn[i];
        np[i] = &nodes[i];
    }
    for (size_t i = 0; i < SLICES; i++) {
        snprintf(names[i], sizeof(names[i]), "s%03zu", i);
        sl[i] = (struct dra_slice){.name = names[i],
                                   .driver = "gpu.nvidia.com",
                                   .pool = names[i],
                                   .generation = 1,
                                   .slice_count = 1,
                                   .all_nodes = true};
    }
    char *sel = "device.driver == 'gpu.nvidia.com'";
    struct dra_class cls = {
        .name = "gpu.nvidia.com", .selectors = &sel, .n_selectors = 1, .driver = "gpu.nvidia.com"};
    struct gpu_set dra = {0};
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct wh_snapshot snap = {.gpus = &test_gpus,
                               .nodes = np,
                               .n_nodes = NODES,
                               .nodes_synced = true,
                               .dra_gpus = &dra,
                               .device_classes = &cls,
                               .n_device_classes = 1,
                               .slices = sl,
                               .n_slices = SLICES,
                               .device_classes_synced = true,
                               .slices_synced = true};
    json_object *claim =
        json_tokener_parse("{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{"
                           "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":2}}]}}}");
    assert_non_null(claim);
    struct warn_list w;
    warn_list_init(&w);
    assert_int_equal(wh_check_dra_object(&snap, "ns", claim, false, &w), K_OK);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.items[0].reason, WARN_REASON_NOT_CHECKED);
    assert_non_null(strstr(w.items[0].text, "spec.devices: 1 device request not matched"));
    json_object_put(claim);
    gpu_set_cleanup(&dra);
    free(nodes);
    free(np);
    free(sl);
}

/* Selectors that cost a hundred times a plain one (10 KiB of `||` comparisons, all run): the
 * CEL budget stops the matching, the devices left are undecided (no "no device matches"), and
 * one warning says the selectors were too costly to check. */
static void test_dra_cel_budget(void **state)
{
    (void)state;
    enum { NODES = 100, SLICES = 10, DEVICES = 8 };
    struct knode *nodes = calloc(NODES, sizeof(*nodes));
    const struct knode **np = calloc(NODES, sizeof(*np));
    struct dra_slice *sl = calloc(SLICES, sizeof(*sl));
    struct dra_device *devs = calloc(SLICES * DEVICES, sizeof(*devs));
    char names[SLICES][16], nn[NODES][16];
    assert_non_null(nodes);
    assert_non_null(np);
    assert_non_null(sl);
    assert_non_null(devs);
    for (size_t i = 0; i < NODES; i++) {
        snprintf(nn[i], sizeof(nn[i]), "n%03zu", i);
        nodes[i].name = nn[i];
        np[i] = &nodes[i];
    }
    for (size_t i = 0; i < SLICES; i++) {
        snprintf(names[i], sizeof(names[i]), "s%03zu", i);
        for (size_t d = 0; d < DEVICES; d++)
            devs[i * DEVICES + d].name = "gpu";
        sl[i] = (struct dra_slice){.name = names[i],
                                   .driver = "gpu.nvidia.com",
                                   .pool = names[i],
                                   .generation = 1,
                                   .slice_count = 1,
                                   .all_nodes = true,
                                   .devices = &devs[i * DEVICES],
                                   .n_devices = DEVICES};
    }
    char *sel = "device.driver == 'gpu.nvidia.com'";
    struct dra_class cls = {
        .name = "gpu.nvidia.com", .selectors = &sel, .n_selectors = 1, .driver = "gpu.nvidia.com"};
    struct gpu_set dra = {0};
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct wh_snapshot snap = {.gpus = &test_gpus,
                               .nodes = np,
                               .n_nodes = NODES,
                               .nodes_synced = true,
                               .dra_gpus = &dra,
                               .device_classes = &cls,
                               .n_device_classes = 1,
                               .slices = sl,
                               .n_slices = SLICES,
                               .device_classes_synced = true,
                               .slices_synced = true};
    /* every comparison false but the last */
    static char expr[10 * 1024 + 1];
    size_t n = 0;
    for (size_t k = 0; n + 64 < sizeof(expr); k++)
        n += (size_t)snprintf(expr + n, sizeof(expr) - n, "device.driver == 'd%05zu' || ", k);
    snprintf(expr + n, sizeof(expr) - n, "device.driver == 'gpu.nvidia.com'");
    json_object *sels = json_object_new_array();
    for (int i = 0; i < 16; i++) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "expression", json_object_new_string(expr));
        json_object *s = json_object_new_object();
        json_object_object_add(s, "cel", c);
        json_object_array_add(sels, s);
    }
    json_object *claim =
        json_tokener_parse("{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{"
                           "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}}]}}}");
    assert_non_null(claim);
    json_object *req = json_object_array_get_idx(
        json_object_object_get(
            json_object_object_get(json_object_object_get(claim, "spec"), "devices"), "requests"),
        0);
    json_object_object_add(json_object_object_get(req, "exactly"), "selectors", sels);
    struct warn_list w;
    warn_list_init(&w);
    assert_int_equal(wh_check_dra_object(&snap, "ns", claim, false, &w), K_OK);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.items[0].reason, WARN_REASON_NOT_CHECKED);
    assert_non_null(strstr(w.items[0].text, "spec.devices: 1 device request not fully matched "
                                            "against node devices, selectors too costly to "
                                            "check"));
    json_object_put(claim);
    gpu_set_cleanup(&dra);
    free(nodes);
    free(np);
    free(sl);
    free(devs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_cut_and_dedupe),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_quota_arithmetic_saturates),
        cmocka_unit_test(test_long_names_stay_within_limits),
        cmocka_unit_test(test_dra_work_budget),
        cmocka_unit_test(test_dra_cel_budget),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
