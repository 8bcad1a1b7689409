/*
 * test_dra_store.c - core/cache/dra_store.c: the DRA objects from JSON, the per-node slice index,
 * the per-driver slice count, the device -> holder index, relists and their synced flags, the
 * informer handlers (the DRA fixtures classified through the store are in
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
    /* the classes, sorted by name; past cap counted, not written */
    const struct dra_class *sorted[4];
    assert_int_equal(dra_store_classes(ds, sorted, 4), 3);
    assert_true(strcmp(sorted[0]->name, sorted[1]->name) < 0);
    assert_true(strcmp(sorted[1]->name, sorted[2]->name) < 0);
    assert_int_equal(dra_store_classes(ds, sorted, 1), 3);
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

/* shares of a device that allows multiple allocations (a shareID) do not hold it; each
   sharing claim is listed once, and leaves the list when deleted */
#define SHARE_FMT                                                                                  \
    "{\"metadata\":{\"namespace\":\"dra-triage\",\"name\":\"%s\"},\"spec\":{},"                    \
    "\"status\":{\"allocation\":{\"devices\":{\"results\":["                                       \
    "{\"request\":\"a\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"dra-node-0\","                    \
    "\"device\":\"vgpu-0\",\"shareID\":\"%s-1\",\"consumedCapacity\":{\"memory\":\"1Gi\"}},"       \
    "{\"request\":\"b\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"dra-node-0\","                    \
    "\"device\":\"vgpu-0\",\"shareID\":\"%s-2\"}]}}}}"
    const char *sharers[] = {"share-a", "share-b"};
    for (size_t i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof(text), SHARE_FMT, sharers[i], sharers[i], sharers[i]);
        o = json_tokener_parse(text);
        assert_non_null(o);
        assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 0), K_OK);
        json_object_put(o);
    }
    const struct dra_claim *sh[4];
    dra_store_read_lock(ds);
    assert_null(dra_store_device_holder(ds, "gpu.nvidia.com", "dra-node-0", "vgpu-0"));
    assert_int_equal(dra_store_device_shares(ds, "gpu.nvidia.com", "dra-node-0", "vgpu-0", sh, 4),
                     2);
    assert_int_equal(dra_store_device_shares(ds, "gpu.nvidia.com", "dra-node-0", "vgpu-0", sh, 1),
                     2);
    assert_int_equal(dra_store_device_shares(ds, "gpu.nvidia.com", "dra-node-1", "vgpu-0", sh, 4),
                     0);
    dra_store_read_unlock(ds);
    o = json_tokener_parse("{\"metadata\":{\"namespace\":\"dra-triage\",\"name\":\"share-a\"}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 1), K_OK);
    json_object_put(o);
    dra_store_read_lock(ds);
    assert_int_equal(dra_store_device_shares(ds, "gpu.nvidia.com", "dra-node-0", "vgpu-0", sh, 4),
                     1);
    assert_string_equal(sh[0]->name, "share-b");
    assert_int_equal(sh[0]->results[0].n_consumed, 1);
    assert_int_equal(sh[0]->results[1].n_consumed, 0);
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
    dra_store_free(ds);
}

/* Objects read at v1beta1 (layout: kube/dra_api.h) give the same records as at v1; a version
 * switch keeps what the store holds; unsync marks every kind not synced. */
static void test_api_version(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    assert_int_equal(dra_store_api_version(ds), DRA_API_V1);
    dra_store_set_api_version(ds, DRA_API_V1BETA1);
    assert_int_equal(dra_store_api_version(ds), DRA_API_V1BETA1);
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":"
        "\"n\",\"pool\":{\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":"
        "[{\"name\":\"gpu-0\",\"basic\":{\"attributes\":{\"productName\":{\"string\":\"A100\"}},"
        "\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}}}]}}");
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_SLICE, NULL), K_OK);
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, o, 0), K_OK);
    json_object_put(o);
    o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{"
        "\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.nvidia.com\",\"count\":2}]}}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLAIM, o, 0), K_OK);
    json_object_put(o);
    dra_store_read_lock(ds);
    const struct dra_slice *buf[2];
    assert_int_equal(dra_store_node_slices(ds, "n", NULL, buf, 2), 1);
    assert_int_equal(buf[0]->n_devices, 1);
    assert_int_equal(buf[0]->devices[0].n_attrs, 1);
    assert_string_equal(buf[0]->devices[0].attrs[0].name, "gpu.nvidia.com/productName");
    assert_int_equal(buf[0]->devices[0].n_caps, 1);
    const struct dra_claim *c = dra_store_claim(ds, "ns", "c");
    assert_non_null(c);
    assert_int_equal(c->spec.n_requests, 1);
    assert_true(c->spec.requests[0].has_exactly);
    assert_string_equal(c->spec.requests[0].exactly.class_name, "gpu.nvidia.com");
    assert_int_equal(c->spec.requests[0].exactly.count, 2);
    assert_true(dra_store_synced(ds, DRA_KIND_SLICE));
    dra_store_read_unlock(ds);
    /* another version: the records stay until a relist replaces them */
    dra_store_set_api_version(ds, DRA_API_V1);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 1);
    /* DRA gone: not synced; the objects stay until a relist sweeps them */
    dra_store_unsync(ds);
    assert_false(dra_store_synced(ds, DRA_KIND_SLICE));
    assert_false(dra_store_synced(ds, DRA_KIND_CLAIM));
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 1);
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_SLICE, NULL), K_OK);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 0);
    assert_true(dra_store_synced(ds, DRA_KIND_SLICE));
    dra_store_free(ds);
}

static void apply_slice(struct dra_store *ds, const char *name, const char *driver,
                        const char *where)
{
    char js[512];
    snprintf(js, sizeof(js),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"%s\",\"pool\":{"
             "\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},%s}}",
             name, driver, where);
    json_object *o = json_tokener_parse(js);
    assert_non_null(o);
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, o, 0), K_OK);
    json_object_put(o);
}

static void delete_slice(struct dra_store *ds, const char *name)
{
    char js[256];
    snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"%s\"}}", name);
    json_object *o = json_tokener_parse(js);
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_SLICE, o, 1), K_OK);
    json_object_put(o);
}

/* A node's lookup finds the cluster-wide slices and its own, never those of a node whose name
 * it prefixes or extends; whether a driver publishes counts every slice of it. */
static void test_node_slices_and_drivers(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    apply_slice(ds, "s1", "gpu.nvidia.com", "\"nodeName\":\"a-b\"");
    apply_slice(ds, "s2", "gpu.nvidia.com", "\"nodeName\":\"a\"");
    apply_slice(ds, "s3", "gpu.nvidia.com", "\"allNodes\":true");
    apply_slice(ds, "s4", "dra.net", "\"nodeName\":\"a\"");
    apply_slice(ds, "s5", "gpu.nvidia.com", "\"nodeName\":\"a.b\"");
    apply_slice(ds, "s6", "gpu.amd.com", "\"allNodes\":true");
    apply_slice(ds, "s7", "gpu.nvidia.com", "\"nodeName\":\"b\"");
    apply_slice(ds, "s8", "gpu.intel.com", "\"perDeviceNodeSelection\":true");
    dra_store_read_lock(ds);
    const struct dra_slice *buf[8];
    assert_int_equal(dra_store_node_slices(ds, "a", "gpu.nvidia.com", buf, 8), 2);
    assert_string_equal(buf[0]->name, "s2"); /* the node's own, then the cluster-wide */
    assert_string_equal(buf[1]->name, "s3");
    assert_int_equal(dra_store_node_slices(ds, "a", NULL, buf, 8), 4); /* s2 s4 s3 s6 */
    assert_int_equal(dra_store_node_slices(ds, "a", NULL, buf, 1), 4); /* the total past cap */
    assert_int_equal(dra_store_node_slices(ds, "zz", "gpu.nvidia.com", buf, 8), 1);
    /* per-device node selection reaches no node (classify.h), yet the driver publishes */
    assert_int_equal(dra_store_node_slices(ds, "a", "gpu.intel.com", buf, 8), 0);
    assert_true(dra_store_driver_published(ds, "gpu.intel.com"));
    assert_true(dra_store_driver_published(ds, "dra.net"));
    assert_false(dra_store_driver_published(ds, "gpu.example.com"));
    assert_false(dra_store_driver_published(ds, NULL));
    dra_store_read_unlock(ds);

    /* a driver publishes until its last slice goes; replacing a slice counts it once */
    apply_slice(ds, "s2", "gpu.nvidia.com", "\"nodeName\":\"a\"");
    delete_slice(ds, "s4");
    delete_slice(ds, "s4"); /* twice: nothing more to take back */
    dra_store_read_lock(ds);
    assert_false(dra_store_driver_published(ds, "dra.net"));
    dra_store_read_unlock(ds);
    const char *nv[] = {"s1", "s2", "s3", "s5"};
    for (size_t i = 0; i < 4; i++)
        delete_slice(ds, nv[i]);
    dra_store_read_lock(ds);
    assert_true(dra_store_driver_published(ds, "gpu.nvidia.com")); /* s7 */
    dra_store_read_unlock(ds);
    /* a slice moving to another driver moves its count */
    apply_slice(ds, "s7", "dra.net", "\"nodeName\":\"b\"");
    dra_store_read_lock(ds);
    assert_false(dra_store_driver_published(ds, "gpu.nvidia.com"));
    assert_true(dra_store_driver_published(ds, "dra.net"));
    dra_store_read_unlock(ds);
    /* a relist that sees none removes every count */
    dra_store_sync_begin(ds, DRA_KIND_SLICE);
    dra_store_sync_end(ds, DRA_KIND_SLICE);
    dra_store_read_lock(ds);
    assert_false(dra_store_driver_published(ds, "dra.net"));
    assert_false(dra_store_driver_published(ds, "gpu.intel.com"));
    dra_store_read_unlock(ds);
    dra_store_free(ds);
}

/* A kind is synced once one of its relists ended, and stays so; the others are not. */
static void test_synced(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        assert_false(dra_store_synced(ds, (enum dra_kind)k));
    assert_false(dra_store_synced(ds, DRA_KIND_COUNT));
    dra_store_sync_begin(ds, DRA_KIND_CLASS);
    assert_false(dra_store_synced(ds, DRA_KIND_CLASS)); /* a LIST under way */
    dra_store_sync_end(ds, DRA_KIND_CLASS);
    assert_true(dra_store_synced(ds, DRA_KIND_CLASS));
    assert_false(dra_store_synced(ds, DRA_KIND_SLICE));
    dra_store_sync_begin(ds, DRA_KIND_CLASS); /* a relist: what was listed stays usable */
    assert_true(dra_store_synced(ds, DRA_KIND_CLASS));
    dra_store_sync_end(ds, DRA_KIND_CLASS);
    dra_store_free(ds);
}

/* A relist from a JSON array: what it names stays or comes, the rest goes, the kind is synced;
 * an item that does not project is reported after the others are applied. */
static void test_relist_items(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    apply_slice(ds, "old", "gpu.nvidia.com", "\"nodeName\":\"a\"");
    json_object *items = json_tokener_parse(
        "[{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"driver\":\"dra.net\",\"nodeName\":\"a\","
        "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1}}},"
        "{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"nodeName\":\"a\"}},"
        "{\"metadata\":{\"name\":\"s2\"},\"spec\":{\"driver\":\"dra.net\",\"allNodes\":true,"
        "\"pool\":{\"name\":\"q\",\"generation\":1,\"resourceSliceCount\":1}}}]");
    assert_non_null(items);
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_SLICE, items), K_EPARSE);
    json_object_put(items);
    dra_store_read_lock(ds);
    assert_true(dra_store_synced(ds, DRA_KIND_SLICE));
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 2); /* s1 and s2, not old */
    assert_false(dra_store_driver_published(ds, "gpu.nvidia.com"));
    assert_true(dra_store_driver_published(ds, "dra.net"));
    dra_store_read_unlock(ds);
    /* no items (absent, or not an array): an empty list, synced */
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_CLASS, NULL), K_OK);
    assert_true(dra_store_synced(ds, DRA_KIND_CLASS));
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_SLICE, NULL), K_OK);
    assert_int_equal(dra_store_count(ds, DRA_KIND_SLICE), 0);
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_COUNT, NULL), K_EINVAL);
    dra_store_free(ds);
}

/* The informer handlers feed the store as the apply and sync functions do. */
static void test_handlers(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    struct dra_store_feed f = {ds, DRA_KIND_CLASS};
    struct informer_handlers h = dra_store_handlers(&f);
    assert_ptr_equal(h.ctx, &f);
    json_object *a = json_tokener_parse("{\"metadata\":{\"name\":\"a\"}}");
    json_object *b = json_tokener_parse("{\"metadata\":{\"name\":\"b\"}}");
    json_object *bad = json_tokener_parse("{\"metadata\":{}}");
    h.sync_begin(h.ctx);
    h.upsert(h.ctx, a);
    h.upsert(h.ctx, b);
    h.upsert(h.ctx, bad); /* logged and skipped */
    h.sync_end(h.ctx);
    dra_store_read_lock(ds);
    assert_true(dra_store_synced(ds, DRA_KIND_CLASS));
    assert_int_equal(dra_store_count(ds, DRA_KIND_CLASS), 2);
    dra_store_read_unlock(ds);
    h.remove(h.ctx, a);
    dra_store_read_lock(ds);
    assert_null(dra_store_class(ds, "a"));
    assert_non_null(dra_store_class(ds, "b"));
    dra_store_read_unlock(ds);
    h.sync_begin(h.ctx); /* a relist that no longer sees b */
    h.sync_end(h.ctx);
    assert_int_equal(dra_store_count(ds, DRA_KIND_CLASS), 0);
    json_object_put(a);
    json_object_put(b);
    json_object_put(bad);
    dra_store_free(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexes),      cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_api_version),  cmocka_unit_test(test_node_slices_and_drivers),
        cmocka_unit_test(test_synced),       cmocka_unit_test(test_handlers),
        cmocka_unit_test(test_relist_items),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
