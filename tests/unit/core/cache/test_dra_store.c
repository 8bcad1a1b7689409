/*
 * test_dra_store.c - core/cache/dra_store.c: the DRA objects from JSON, the per-node slice index,
 * the device -> holder index, relists (the DRA fixtures classified through the store are in
 * tests/unit/core/triage/test_triage.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/dra_store.h"
#include "cache/store.h"
#include "dra_world.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "util/result.h"

static json_object *load(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/dra/%s", FIXTURES_DIR, name);
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    return root;
}

static json_object *list(json_object *root, const char *key)
{
    json_object *a = NULL;
    json_object_object_get_ex(root, key, &a);
    return a;
}

static void test_indexes(void **state)
{
    (void)state;
    json_object *root = load("recorded-dra-exhausted.json");
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    assert_int_equal(dra_world_apply(ds, root), K_OK);

    dra_store_read_lock(ds);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 5);
    assert_int_equal(dra_store_count(ds, DRA_KIND_CLASS), 3);
    const struct dra_slice *buf[16];
    /* node 0 has a dra.net and a gpu.nvidia.com slice; node 2 only a GPU one */
    assert_int_equal(dra_store_node_slices(ds, "dra-node-0", NULL, buf, 16), 2);
    assert_int_equal(dra_store_node_slices(ds, "dra-node-0", "gpu.nvidia.com", buf, 16), 1);
    assert_string_equal(buf[0]->name, "dra-node-0-gpu.nvidia.com");
    assert_int_equal(dra_store_node_slices(ds, "dra-node-2", "dra.net", buf, 16), 0);
    assert_int_equal(dra_store_node_slices(ds, "no-such-node", NULL, buf, 16), 0);
    /* past cap: counted, not written */
    assert_int_equal(dra_store_node_slices(ds, "dra-node-1", NULL, buf, 1), 2);

    const struct dra_claim *h =
        dra_store_device_holder(ds, "gpu.nvidia.com", "dra-node-1", "gpu-0");
    assert_non_null(h);
    assert_true(strncmp(h->name, "dra-holder-gpu-", 15) == 0);
    assert_null(dra_store_device_holder(ds, "gpu.nvidia.com", "dra-node-2", "gpu-0"));
    char holder[256];
    snprintf(holder, sizeof(holder), "%s", h->name);
    assert_non_null(dra_store_claim(ds, "dra-triage", holder));
    assert_null(dra_store_claim(ds, "other", holder));
    assert_non_null(dra_store_template(ds, "dra-triage", "single-gpu"));
    assert_non_null(dra_store_class(ds, "gpu.nvidia.com"));
    assert_null(dra_store_class(ds, "nope"));
    dra_store_read_unlock(ds);

    /* deleting the holder frees its device */
    char del[512];
    snprintf(del, sizeof(del), "{\"metadata\":{\"namespace\":\"dra-triage\",\"name\":\"%s\"}}",
             holder);
    json_object *o = json_tokener_parse(del);
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 1), K_OK);
    json_object_put(o);
    dra_store_read_lock(ds);
    assert_null(dra_store_device_holder(ds, "gpu.nvidia.com", "dra-node-1", "gpu-0"));
    assert_null(dra_store_claim(ds, "dra-triage", holder));
    dra_store_read_unlock(ds);

    /* a claim allocated with adminAccess holds nothing */
    o = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"dra-triage\",\"name\":\"monitor\"},\"spec\":{"
        "\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
        "\"gpu.nvidia.com\",\"adminAccess\":true}}]}},\"status\":{\"allocation\":{\"devices\":{"
        "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"dra-node-1\","
        "\"device\":\"gpu-0\",\"adminAccess\":true}]}}}}");
    assert_non_null(o);
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 0), K_OK);
    json_object_put(o);
    dra_store_read_lock(ds);
    assert_non_null(dra_store_claim(ds, "dra-triage", "monitor"));
    assert_null(dra_store_device_holder(ds, "gpu.nvidia.com", "dra-node-1", "gpu-0"));
    dra_store_read_unlock(ds);

    /* replacing a slice keeps one index entry; moving it to another node moves the entry */
    json_object *sl = json_object_get(json_object_array_get_idx(list(root, "resourceslices"), 4));
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, sl, 0), K_OK);
    dra_store_read_lock(ds);
    assert_int_equal(dra_store_node_slices(ds, "dra-node-2", NULL, buf, 16), 1);
    dra_store_read_unlock(ds);
    json_object *spec = NULL;
    json_object_object_get_ex(sl, "spec", &spec);
    json_object_object_del(spec, "nodeName");
    json_object_object_add(spec, "allNodes", json_object_new_boolean(1));
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, sl, 0), K_OK);
    dra_store_read_lock(ds);
    assert_int_equal(dra_store_node_slices(ds, "dra-node-2", NULL, buf, 16), 1);
    assert_int_equal(dra_store_node_slices(ds, "dra-node-0", NULL, buf, 16), 3);
    assert_string_equal(buf[2]->name, "dra-node-2-gpu.nvidia.com");
    dra_store_read_unlock(ds);
    json_object_put(sl);

    /* a relist that sees no slices removes them all, and their indexes */
    dra_store_sync_begin(ds, DRA_KIND_SLICE);
    dra_store_sync_end(ds, DRA_KIND_SLICE);
    dra_store_read_lock(ds);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 0);
    assert_int_equal(dra_store_node_slices(ds, "dra-node-0", NULL, buf, 16), 0);
    assert_int_equal(dra_store_count(ds, DRA_KIND_CLASS), 3);
    dra_store_read_unlock(ds);
    /* a relist that sees the classes again keeps them */
    dra_store_sync_begin(ds, DRA_KIND_CLASS);
    json_object *classes = list(root, "deviceclasses");
    for (size_t i = 0; i < json_object_array_length(classes); i++)
        assert_int_equal(
            dra_store_apply_json(ds, DRA_KIND_CLASS, json_object_array_get_idx(classes, i), 0),
            K_OK);
    dra_store_sync_end(ds, DRA_KIND_CLASS);
    assert_int_equal(dra_store_count(ds, DRA_KIND_CLASS), 3);

    dra_store_free(ds);
    json_object_put(root);
}

static void test_rejects(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    json_object *o = json_tokener_parse("{\"metadata\":{}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLASS, o, 0), K_EPARSE);
    json_object_put(o);
    /* a slice without a driver does not project */
    o = json_tokener_parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"nodeName\":\"n\"}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, o, 0), K_EPARSE);
    json_object_put(o);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 0);
    assert_string_equal(dra_kind_path(DRA_KIND_SLICE), "/apis/resource.k8s.io/v1/resourceslices");
    dra_store_free(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexes),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
