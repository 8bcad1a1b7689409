/* Tests for webhook/snapshot.c: projection errors are reported as what they are; the DRA
 * lists' order, keys and lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "snapshot.h"
#include "util/result.h"

/* A quota naming more GPU keys than a resource list holds is K_ETOOBIG, not out of memory. */
static void test_quota_too_many_keys(void **state)
{
    (void)state;
    struct gpu_set gpus = {0};
    assert_int_equal(gpu_set_parse(&gpus, "example.com/*"), K_OK);
    for (int n = RESOURCE_LIST_MAX; n <= RESOURCE_LIST_MAX + 1; n++) {
        json_object *hard = json_object_new_object();
        for (int i = 0; i < n; i++) {
            char key[64];
            snprintf(key, sizeof(key), "requests.example.com/gpu-%d", i);
            json_object_object_add(hard, key, json_object_new_string("1"));
        }
        json_object *spec = json_object_new_object(), *meta = json_object_new_object();
        json_object_object_add(spec, "hard", hard);
        json_object_object_add(meta, "name", json_object_new_string("q"));
        json_object_object_add(meta, "namespace", json_object_new_string("ns"));
        json_object *obj = json_object_new_object();
        json_object_object_add(obj, "metadata", meta);
        json_object_object_add(obj, "spec", spec);
        struct wh_quota q;
        int rc = wh_project_quota(obj, &gpus, &q);
        if (n <= RESOURCE_LIST_MAX) {
            assert_int_equal(rc, K_OK);
            assert_int_equal(q.hard.n, (size_t)n);
        } else {
            assert_int_equal(rc, K_ETOOBIG);
            assert_null(q.name); /* cleaned up */
        }
        wh_quota_cleanup(&q);
        json_object_put(obj);
    }
    gpu_set_cleanup(&gpus);
}

/* Slices in snapshot order: the cache's keys sort the same way, a node's lookup finds the
 * cluster-wide slices and its own, never those of a node whose name it prefixes. */
static void test_dra_slices(void **state)
{
    (void)state;
    struct dra_slice sl[] = {
        {.name = "s1", .driver = "gpu.nvidia.com", .node_name = "a-b"},
        {.name = "s2", .driver = "gpu.nvidia.com", .node_name = "a"},
        {.name = "s3", .driver = "gpu.nvidia.com", .all_nodes = true},
        {.name = "s4", .driver = "dra.net", .node_name = "a"},
        {.name = "s5", .driver = "gpu.nvidia.com", .node_name = "a.b"},
        {.name = "s6", .driver = "gpu.amd.com", .all_nodes = true},
        {.name = "s7", .driver = "gpu.nvidia.com", .node_name = "b"},
    };
    size_t n = sizeof(sl) / sizeof(sl[0]);
    qsort(sl, n, sizeof(sl[0]), wh_dra_slice_cmp);
    for (size_t i = 1; i < n; i++) {
        char k1[256], k2[256];
        wh_dra_slice_key(&sl[i - 1], k1, sizeof(k1));
        wh_dra_slice_key(&sl[i], k2, sizeof(k2));
        assert_true(strcmp(k1, k2) < 0);
    }
    struct wh_snapshot snap = {.slices = sl, .n_slices = n};
    const struct dra_slice *buf[8];
    size_t got = wh_snapshot_node_slices(&snap, "a", "gpu.nvidia.com", buf, 8);
    assert_int_equal(got, 2);
    assert_string_equal(buf[0]->name, "s3"); /* cluster-wide first */
    assert_string_equal(buf[1]->name, "s2");
    got = wh_snapshot_node_slices(&snap, "a", NULL, buf, 8);
    assert_int_equal(got, 4); /* s3, s6, s2, s4 */
    got = wh_snapshot_node_slices(&snap, "a", NULL, buf, 1);
    assert_int_equal(got, 4); /* the total, past the cap */
    assert_int_equal(wh_snapshot_node_slices(&snap, "zz", "gpu.nvidia.com", buf, 8), 1);
    assert_true(wh_snapshot_driver_published(&snap, "dra.net"));
    assert_false(wh_snapshot_driver_published(&snap, "gpu.intel.com"));
}

static void test_dra_lookups(void **state)
{
    (void)state;
    struct dra_claim claims[] = {
        {.ns = "ns-b", .name = "c"},
        {.ns = "ns", .name = "c-1"},
        {.ns = "ns", .name = "c"},
    };
    qsort(claims, 3, sizeof(claims[0]), wh_dra_claim_cmp);
    char k1[128], k2[128];
    for (size_t i = 1; i < 3; i++) {
        wh_dra_ns_key(claims[i - 1].ns, claims[i - 1].name, k1, sizeof(k1));
        wh_dra_ns_key(claims[i].ns, claims[i].name, k2, sizeof(k2));
        assert_true(strcmp(k1, k2) < 0);
    }
    struct dra_template tmpls[] = {{.ns = "ns", .name = "t"}};
    struct dra_class classes[] = {{.name = "gpu.amd.com"}, {.name = "gpu.nvidia.com"}};
    struct wh_snapshot snap = {.claims = claims,
                               .n_claims = 3,
                               .claim_templates = tmpls,
                               .n_claim_templates = 1,
                               .device_classes = classes,
                               .n_device_classes = 2};
    assert_non_null(wh_snapshot_claim(&snap, "ns", "c"));
    assert_string_equal(wh_snapshot_claim(&snap, "ns-b", "c")->ns, "ns-b");
    assert_null(wh_snapshot_claim(&snap, "ns", "d"));
    assert_non_null(wh_snapshot_claim_template(&snap, "ns", "t"));
    assert_null(wh_snapshot_claim_template(&snap, "ns-b", "t"));
    assert_non_null(wh_snapshot_device_class(&snap, "gpu.nvidia.com"));
    assert_null(wh_snapshot_device_class(&snap, "gpu.intel.com"));
    assert_null(wh_snapshot_device_class(&snap, NULL));

    /* the same lookups through the ladder's view */
    struct gpu_set gpus = {0};
    snap.dra_gpus = &gpus;
    struct dra_view v = wh_snapshot_dra_view(&snap);
    assert_ptr_equal(v.ctx, &snap);
    assert_ptr_equal(v.gpu_classes, &gpus);
    assert_null(v.device_holder);
    assert_ptr_equal(v.claim(v.ctx, "ns", "c"), wh_snapshot_claim(&snap, "ns", "c"));
    assert_null(v.claim(v.ctx, "ns", "d"));
    assert_ptr_equal(v.claim_template(v.ctx, "ns", "t"),
                     wh_snapshot_claim_template(&snap, "ns", "t"));
    assert_ptr_equal(v.device_class(v.ctx, "gpu.amd.com"),
                     wh_snapshot_device_class(&snap, "gpu.amd.com"));
    const struct dra_slice *buf[1];
    assert_int_equal(v.node_slices(v.ctx, "n1", NULL, buf, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_too_many_keys),
        cmocka_unit_test(test_dra_slices),
        cmocka_unit_test(test_dra_lookups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
