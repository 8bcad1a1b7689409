/* Tests for webhook/snapshot.c: projection errors are reported as what they are; the DRA view
 * over core's DRA store, without device holders, counting devices as the ladder does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/dra_store.h"
#include "classify/classify.h"
#include "dra_world.h"
#include "gpus.h"
#include "model/model.h"
#include "objects.h"
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

/* The snapshot's DRA view is the store's, without device holders. */
static void test_dra_view(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"c\"},\"spec\":{\"devices\":{"
        "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}},"
        "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
        "\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"}]}}}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 0), K_OK);
    json_object_put(o);
    o = json_tokener_parse("{\"metadata\":{\"name\":\"gpu.nvidia.com\"}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLASS, o, 0), K_OK);
    json_object_put(o);
    struct gpu_set gpus = {0};
    struct wh_snapshot snap = {.dra_gpus = &gpus, .dra = ds};
    dra_store_read_lock(ds);
    struct dra_view v = wh_snapshot_dra_view(&snap);
    assert_ptr_equal(v.ctx, ds);
    assert_ptr_equal(v.gpu_classes, &gpus);
    /* the claim holds gpu-0, yet admission does not see who holds what */
    assert_non_null(dra_store_device_holder(ds, "gpu.nvidia.com", "n1", "gpu-0"));
    assert_null(v.device_holder);
    assert_ptr_equal(v.claim(v.ctx, "ns", "c"), dra_store_claim(ds, "ns", "c"));
    assert_null(v.claim(v.ctx, "ns", "d"));
    assert_null(v.claim_template(v.ctx, "ns", "t"));
    assert_ptr_equal(v.device_class(v.ctx, "gpu.nvidia.com"),
                     dra_store_class(ds, "gpu.nvidia.com"));
    const struct dra_slice *buf[1];
    assert_int_equal(v.node_slices(v.ctx, "n1", NULL, buf, 1), 0);
    dra_store_read_unlock(ds);
    dra_store_free(ds);
}

/*
 * For every DRA classifier fixture (tests/fixtures/dra), on every node the ladder decided a DRA
 * request for, the webhook's device count (dra_count_matching over the snapshot's view, as
 * webhook/warnings_dra.c counts) equals the ladder's `dra_matching` and `dra_devices`, both
 * reading the one DRA store; the pod is unbound, as at admission. Held devices count in both.
 */
static size_t compared;

static int counts_agree(const char *path, void *ctx)
{
    (void)ctx;
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    struct dra_world w;
    char err[256];
    if (dra_world_load(root, &test_gpus, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", path, err);
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    assert_int_equal(dra_world_apply(ds, root), K_OK);
    struct wh_snapshot snap = {.dra_gpus = &w.dra_gpus, .dra = ds};
    free(w.pod.node_name);
    w.pod.node_name = NULL;
    struct node_verdict *verdicts = calloc(w.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    dra_store_read_lock(ds);
    struct dra_view view = wh_snapshot_dra_view(&snap);
    struct classify_input in = {
        .pod = &w.pod, .nodes = w.node_ptrs, .n_nodes = w.n_nodes, .dra = &view};
    struct classify_result r;
    memset(&r, 0, sizeof(r));
    r.verdicts = verdicts;
    assert_int_equal(classify(&in, &r), K_OK);
    int failures = 0;
    for (size_t i = 0; i < r.n_verdicts; i++) {
        const struct node_verdict *v = &verdicts[i];
        if (!v->dra_request || !v->dra_exact || !v->dra_cls)
            continue;
        struct dra_match_count mc;
        const struct knode *one[1] = {v->node};
        assert_int_equal(dra_count_matching(&view, v->dra_exact, v->dra_cls, one, 1, &mc), K_OK);
        compared++;
        if (mc.most != v->dra_matching || mc.devices != v->dra_devices) {
            print_error("%s: node %s request %s: ladder %zu matching of %zu, webhook %zu of %zu\n",
                        path, v->node->name, v->dra_request, v->dra_matching, v->dra_devices,
                        mc.most, mc.devices);
            failures++;
        }
    }
    dra_store_read_unlock(ds);
    free(verdicts);
    dra_store_free(ds);
    dra_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_dra_counts_agree_with_ladder(void **state)
{
    (void)state;
    size_t n;
    int failures = test_fixtures_each(FIXTURES_DIR, "dra", counts_agree, NULL, &n);
    assert_true(n > 10);
    assert_true(compared > 10); /* the comparison ran on real nodes */
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_too_many_keys),
        cmocka_unit_test(test_dra_view),
        cmocka_unit_test(test_dra_counts_agree_with_ladder),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
