/*
 * Tests for webhook/warnings_ext.c: extended resources served by DRA (KEP-5004) at admission:
 * which class serves a resource, the quota keys a pod counts against, and that a pod asking for
 * nvidia.com/gpu where a DeviceClass serves it gets no "no node lists" warning, but the quota
 * of the class's devices is checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/dra_store.h"
#include "gpus.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "util/result.h"
#include "warnings.h"

static json_object *parse(const char *js)
{
    json_object *o = json_tokener_parse(js);
    assert_non_null(o);
    return o;
}

static const char GPU_CLASS[] =
    "{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"extendedResourceName\":"
    "\"nvidia.com/gpu\",\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
    "'gpu.nvidia.com'\"}}]}}";

static void test_quota_key(void **state)
{
    (void)state;
    assert_true(wh_quota_key(&test_gpus, "requests.nvidia.com/gpu"));
    assert_true(wh_quota_key(&test_gpus, "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"));
    assert_true(
        wh_quota_key(&test_gpus, "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com"));
    assert_false(wh_quota_key(&test_gpus, "requests.cpu"));
    assert_false(wh_quota_key(&test_gpus, "nvidia.com/gpu"));
    assert_false(wh_quota_key(&test_gpus, ".deviceclass.resource.k8s.io/devices"));
}

struct world {
    struct dra_store *ds;
    struct gpu_set dra;
    struct wh_snapshot snap;
    struct knode node;
    const struct knode *nodes[1];
    struct wh_quota q;
};

/* One node without nvidia.com/gpu; the DeviceClass gpu.nvidia.com serving it when `served`. */
static void world_init(struct world *w, bool served)
{
    memset(w, 0, sizeof(*w));
    w->ds = dra_store_new();
    assert_non_null(w->ds);
    assert_int_equal(gpu_set_parse(&w->dra, DRA_GPU_SET_DEFAULT), K_OK);
    json_object *items = json_object_new_array();
    if (served)
        json_object_array_add(items, parse(GPU_CLASS));
    assert_int_equal(dra_store_relist_items(w->ds, DRA_KIND_CLASS, items), K_OK);
    json_object_put(items);
    json_object *n = parse("{\"metadata\":{\"name\":\"n0\"},\"status\":{\"capacity\":{\"cpu\":"
                           "\"8\"},\"allocatable\":{\"cpu\":\"8\"}}}");
    assert_int_equal(project_node(n, &test_gpus, &w->node), K_OK);
    json_object_put(n);
    w->nodes[0] = &w->node;
    w->q = (struct wh_quota){.ns = "ns", .name = "gpus", .has_status = true};
    w->snap = (struct wh_snapshot){.gpus = &test_gpus,
                                   .nodes = w->nodes,
                                   .n_nodes = 1,
                                   .nodes_synced = true,
                                   .quotas = &w->q,
                                   .n_quotas = 1,
                                   .quotas_synced = true,
                                   .runtime_classes_synced = true,
                                   .dra_gpus = &w->dra,
                                   .dra = w->ds};
    dra_store_read_lock(w->ds);
}

static void world_cleanup(struct world *w)
{
    dra_store_read_unlock(w->ds);
    dra_store_free(w->ds);
    gpu_set_cleanup(&w->dra);
    node_cleanup(&w->node);
    resource_list_cleanup(&w->q.hard);
    resource_list_cleanup(&w->q.used);
}

/* The warnings of a Pod asking `gpus` nvidia.com/gpu, as "reason: text" lines. */
static void pod_warnings(struct world *w, const char *resource, int gpus, char *out, size_t len)
{
    char spec[512];
    snprintf(spec, sizeof(spec),
             "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"%s\":\"%d\"}}}]}",
             resource, gpus);
    json_object *s = parse(spec);
    struct wh_object o = {
        .ns = "ns", .spec = s, .spec_path = "spec", .replicas = 1, .is_pod = true, .create = true};
    struct warn_list l;
    warn_list_init(&l);
    assert_int_equal(wh_check_pod_spec(&w->snap, &o, &l), K_OK);
    out[0] = '\0';
    for (size_t i = 0; i < l.n; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s: %s\n", l.items[i].reason,
                 l.items[i].text);
    json_object_put(s);
}

static void test_no_false_no_gpu_node(void **state)
{
    (void)state;
    struct world w;
    char got[4096];
    world_init(&w, false);
    pod_warnings(&w, "nvidia.com/gpu", 1, got, sizeof(got));
    assert_non_null(strstr(got, WARN_REASON_NO_GPU_NODE)); /* no class: the device plugin's */
    assert_null(wh_served_by_dra(&w.snap, "nvidia.com/gpu"));
    world_cleanup(&w);

    world_init(&w, true);
    assert_non_null(wh_served_by_dra(&w.snap, "nvidia.com/gpu"));
    pod_warnings(&w, "nvidia.com/gpu", 1, got, sizeof(got));
    if (strstr(got, WARN_REASON_NO_GPU_NODE))
        fail_msg("a warning for a resource DRA serves: %s", got);
    world_cleanup(&w);
}

static void test_quota_of_class_devices(void **state)
{
    (void)state;
    struct world w;
    char got[4096];
    world_init(&w, true);
    assert_int_equal(
        resource_list_add(&w.q.hard, "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", 4),
        K_OK);
    assert_int_equal(
        resource_list_add(&w.q.used, "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", 3),
        K_OK);
    pod_warnings(&w, "nvidia.com/gpu", 2, got, sizeof(got));
    assert_non_null(strstr(got, WARN_REASON_QUOTA));
    assert_non_null(strstr(got, "has 1 left (used 3/4)"));
    assert_non_null(strstr(got, "DeviceClass gpu.nvidia.com serves nvidia.com/gpu"));
    pod_warnings(&w, "nvidia.com/gpu", 1, got, sizeof(got));
    assert_null(strstr(got, WARN_REASON_QUOTA));
    pod_warnings(&w, "nvidia.com/gpu", 5, got, sizeof(got));
    assert_non_null(strstr(got, "it can never be bound"));

    /* the items behind it */
    json_object *s = parse("{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
                           "\"nvidia.com/gpu\":\"2\"}}}]}");
    struct kpod pod;
    assert_int_equal(project_pod_spec(s, NULL, &test_gpus, &pod, NULL), K_OK);
    struct wh_quota_item items[WH_MAX_QUOTA_ITEMS];
    size_t n = wh_quota_items(&w.snap, &pod, items, WH_MAX_QUOTA_ITEMS);
    assert_int_equal(n, 3);
    assert_string_equal(items[0].key, "requests.nvidia.com/gpu");
    assert_null(items[0].via_class);
    assert_string_equal(items[1].key, "gpu.nvidia.com.deviceclass.resource.k8s.io/devices");
    assert_int_equal(items[1].per_pod, 2);
    assert_string_equal(items[1].via_class, "gpu.nvidia.com");
    assert_string_equal(items[2].key, "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com");
    assert_int_equal(wh_quota_items(&w.snap, &pod, items, 1), 1);
    pod_cleanup(&pod);
    json_object_put(s);
    world_cleanup(&w);
}

/* A pod asking only the implicit name: its requests.<implicit name> is checked. */
static void test_quota_of_implicit_name(void **state)
{
    (void)state;
    struct world w;
    char got[4096];
    world_init(&w, true);
    const char *key = "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com";
    assert_int_equal(resource_list_add(&w.q.hard, key, 1), K_OK);
    pod_warnings(&w, "deviceclass.resource.kubernetes.io/gpu.nvidia.com", 2, got, sizeof(got));
    assert_non_null(strstr(got, WARN_REASON_QUOTA));
    assert_non_null(strstr(got, "allows requests.deviceclass")); /* long: cut there */
    world_cleanup(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_key),
        cmocka_unit_test(test_no_false_no_gpu_node),
        cmocka_unit_test(test_quota_of_class_devices),
        cmocka_unit_test(test_quota_of_implicit_name),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
