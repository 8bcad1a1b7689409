/* Tests for cli/nodes.c: rows per node and GPU resource or DeviceClass, reasons, rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra_world.h"
#include "gpus.h"
#include "nodes.h"
#include "util/result.h"

static void add_node(struct nodes_query *q, const char *json)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    nodes_query_add_node(q, o);
    json_object_put(o);
}

static void add_pod(struct nodes_query *q, const char *json)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    nodes_query_add_pod(q, o);
    json_object_put(o);
}

#define NODE(name, spec, cap, alloc)                                                               \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name                      \
    "\",\"labels\":{\"kubernetes.io/hostname\":\"" name "\"}},\"spec\":" spec                      \
    ",\"status\":{\"capacity\":" cap ",\"allocatable\":" alloc "}}"

#define POD(ns, name, node, phase, spec)                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"" ns                    \
    "\",\"name\":\"" name "\",\"uid\":\"uid-" name "\"},\"spec\":{\"nodeName\":\"" node "\"," spec \
    "},\"status\":{\"phase\":\"" phase "\"}}"

#define GPU_CONTAINER(n)                                                                           \
    "{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"" n "\"}}}"

/*
 * n0: 2 GPUs, the pool's nvidia.com/gpu taint (the resource's own, named so), ml/holder holds
 *     1 (Running), ml/done held 1 (Succeeded: nothing), ml/init holds 2 through an init container
 *     on n4;
 * n1: no GPU; n2: 4 in capacity, 0 allocatable; n3: 8 free but cordoned and not ready;
 * n4: 4 GPUs, ml/init's init container asks 2, its container 1: it holds 2 (the scheduler's rule).
 */
static void fill(struct nodes_query *q)
{
    add_node(q, NODE("n0",
                     "{\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":"
                     "\"NoSchedule\"}]}",
                     "{\"nvidia.com/gpu\":\"2\"}", "{\"nvidia.com/gpu\":\"2\"}"));
    add_node(q, NODE("n1", "{}", "{\"cpu\":\"4\"}", "{\"cpu\":\"4\"}"));
    add_node(q, NODE("n2", "{}", "{\"nvidia.com/gpu\":\"4\"}", "{\"nvidia.com/gpu\":\"0\"}"));
    add_node(q, NODE("n3",
                     "{\"unschedulable\":true,\"taints\":[{\"key\":\"node.kubernetes.io/"
                     "unschedulable\",\"effect\":\"NoSchedule\"},{\"key\":\"node.kubernetes.io/"
                     "not-ready\",\"effect\":\"NoExecute\"},{\"key\":\"soft\",\"effect\":"
                     "\"PreferNoSchedule\"}]}",
                     "{\"nvidia.com/gpu\":\"8\"}", "{\"nvidia.com/gpu\":\"8\"}"));
    add_node(q, NODE("n4", "{}", "{\"nvidia.com/gpu\":\"4\"}", "{\"nvidia.com/gpu\":\"4\"}"));
    add_pod(q, POD("ml", "holder", "n0", "Running", "\"containers\":[" GPU_CONTAINER("1") "]"));
    add_pod(q, POD("ml", "done", "n0", "Succeeded", "\"containers\":[" GPU_CONTAINER("1") "]"));
    add_pod(q,
            POD("ml", "cpu", "n0", "Running", "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]"));
    add_pod(q, POD("ml", "init", "n4", "Pending",
                   "\"initContainers\":[" GPU_CONTAINER("2") "],\"containers\":[" GPU_CONTAINER(
                       "1") "]"));
}

static const struct node_row *find(const struct node_rows *rows, const char *node,
                                   const char *resource)
{
    for (size_t i = 0; i < rows->n; i++)
        if (strcmp(rows->items[i].node, node) == 0 &&
            strcmp(rows->items[i].resource, resource) == 0)
            return &rows->items[i];
    return NULL;
}

static bool has_why(const struct node_row *r, const char *text)
{
    for (size_t i = 0; i < r->n_why; i++)
        if (strcmp(r->why[i], text) == 0)
            return true;
    return false;
}

static void test_resource_rows(void **state)
{
    (void)state;
    struct nodes_query q;
    assert_int_equal(nodes_query_init(&q, &test_gpus, NULL), K_OK);
    fill(&q);
    struct node_rows rows;
    assert_int_equal(nodes_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 4); /* n1 lists no GPU */
    /* free-first: n3 (8), n4 (2), n0 (1), n2 (0) */
    assert_string_equal(rows.items[0].node, "n3");
    assert_string_equal(rows.items[1].node, "n4");
    assert_string_equal(rows.items[2].node, "n0");
    assert_string_equal(rows.items[3].node, "n2");

    const struct node_row *r = find(&rows, "n0", "nvidia.com/gpu");
    assert_non_null(r);
    assert_int_equal(r->capacity, 2);
    assert_int_equal(r->allocatable, 2);
    assert_int_equal(r->in_use, 1);
    assert_int_equal(r->free, 1);
    assert_int_equal(r->pods, 1);
    assert_int_equal(r->n_holders, 1);
    assert_string_equal(r->holders[0].name, "holder");
    assert_int_equal(r->holders[0].count, 1);
    assert_int_equal(r->n_why, 1); /* the resource's own taint, named with what tolerates it */
    assert_true(has_why(r, "taint nvidia.com/gpu=present:NoSchedule (the resource's own: a pod "
                           "asking for it needs a toleration, which the "
                           "ExtendedResourceToleration admission plugin adds where it runs)"));

    r = find(&rows, "n2", "nvidia.com/gpu");
    assert_int_equal(r->unhealthy, 4);
    assert_int_equal(r->free, 0);
    assert_true(has_why(r, "4 unhealthy (capacity 4, allocatable 0)"));

    r = find(&rows, "n3", "nvidia.com/gpu");
    assert_int_equal(r->free, 8);
    assert_int_equal(r->n_why, 2); /* the cordon's taint and PreferNoSchedule are not named */
    assert_true(has_why(r, "cordoned (spec.unschedulable)"));
    assert_true(has_why(r, "not ready (taint node.kubernetes.io/not-ready:NoExecute)"));

    r = find(&rows, "n4", "nvidia.com/gpu");
    assert_int_equal(r->in_use, 2); /* max(init 2, containers 1) */
    assert_int_equal(r->free, 2);
    assert_int_equal(r->holders[0].count, 2);

    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(nodes_render_table(&rows, false, &b), K_OK);
    const char *t = buf_cstr(&b);
    assert_non_null(strstr(t, "NODE"));
    assert_non_null(strstr(t, "IN USE"));
    assert_null(strstr(t, "HOLDERS"));
    assert_non_null(strstr(t, "cordoned (spec.unschedulable); not ready"));
    buf_reset(&b);
    assert_int_equal(nodes_render_table(&rows, true, &b), K_OK);
    assert_non_null(strstr(buf_cstr(&b), "ml/holder=1"));
    assert_non_null(strstr(buf_cstr(&b), "UNHEALTHY"));
    json_object *j = nodes_rows_json(&rows);
    assert_non_null(j);
    json_object *v, *items;
    assert_true(json_object_object_get_ex(j, "apiVersion", &v));
    assert_string_equal(json_object_get_string(v), NODES_API_VERSION);
    assert_true(json_object_object_get_ex(j, "items", &items));
    assert_int_equal(json_object_array_length(items), 4);
    json_object *first = json_object_array_get_idx(items, 0);
    assert_true(json_object_object_get_ex(first, "free", &v));
    assert_int_equal(json_object_get_int64(v), 8);
    assert_true(json_object_object_get_ex(first, "type", &v));
    assert_string_equal(json_object_get_string(v), "resource");
    json_object_put(j);
    buf_cleanup(&b);
    node_rows_cleanup(&rows);
    nodes_query_cleanup(&q);
}

static void test_resource_filter(void **state)
{
    (void)state;
    struct nodes_query q;
    assert_int_equal(nodes_query_init(&q, &test_gpus, "amd.com/gpu"), K_OK);
    fill(&q);
    struct node_rows rows;
    assert_int_equal(nodes_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 0);
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(nodes_render_table(&rows, false, &b), K_OK);
    assert_int_equal(b.len, 0);
    buf_cleanup(&b);
    node_rows_cleanup(&rows);
    nodes_query_cleanup(&q);
}

/* d0: three GPUs of gpu.example.com (g0 held by claim ml/p1-gpu for pod p1, g1 tainted by the
 * driver, g2 free) and a NIC of dra.net; d1: one GPU tainted by a DeviceTaintRule, held by a
 * claim reserved for no pod. */
static const char dra_objects[] =
    "{\"deviceclasses\":["
    "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{"
    "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}},"
    "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"nic\"},\"spec\":{"
    "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'dra.net'\"}}]}}],"
    "\"resourceslices\":["
    "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"d0-gpu\"},\"spec\":{\"driver\":"
    "\"gpu.example.com\",\"nodeName\":\"d0\",\"pool\":{\"name\":\"d0\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"g0\"},{\"name\":\"g1\",\"taints\":[{"
    "\"key\":\"gpu.example.com/xid\",\"value\":\"79\",\"effect\":\"NoSchedule\"}]},{\"name\":"
    "\"g2\",\"taints\":[{\"key\":\"info\",\"effect\":\"None\"}]}]}},"
    "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"d0-nic\"},\"spec\":{\"driver\":"
    "\"dra.net\",\"nodeName\":\"d0\",\"pool\":{\"name\":\"d0\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"eth1\"}]}},"
    "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"d1-gpu\"},\"spec\":{\"driver\":"
    "\"gpu.example.com\",\"nodeName\":\"d1\",\"pool\":{\"name\":\"d1\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"g0\"}]}}],"
    "\"resourceclaims\":["
    "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"p1-gpu\",\"namespace\":\"ml\",\"uid\":"
    "\"u1\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
    "\"deviceClassName\":\"gpu.example.com\"}}]}},\"status\":{\"allocation\":{\"devices\":{"
    "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"d0\","
    "\"device\":\"g0\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p1\",\"uid\":"
    "\"uid-p1\"}]}},"
    "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"kept\",\"namespace\":\"ml\",\"uid\":"
    "\"u2\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
    "\"deviceClassName\":\"gpu.example.com\"}}]}},\"status\":{\"allocation\":{\"devices\":{"
    "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"d1\","
    "\"device\":\"g0\"}]}}}}],"
    "\"devicetaintrules\":["
    "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"maint\"},\"spec\":{"
    "\"deviceSelector\":{\"driver\":\"gpu.example.com\",\"pool\":\"d1\"},\"taint\":{\"key\":"
    "\"maintenance\",\"effect\":\"NoSchedule\"}}}]}";

static void test_device_class_rows(void **state)
{
    (void)state;
    struct nodes_query q;
    assert_int_equal(nodes_query_init(&q, &test_gpus, NULL), K_OK);
    add_node(&q, NODE("d0", "{}", "{\"cpu\":\"4\"}", "{\"cpu\":\"4\"}"));
    add_node(&q, NODE("d1", "{\"unschedulable\":true}", "{\"cpu\":\"4\"}", "{\"cpu\":\"4\"}"));
    struct dra_store *dra = dra_store_new();
    assert_non_null(dra);
    json_object *root = json_tokener_parse(dra_objects);
    assert_non_null(root);
    assert_int_equal(dra_world_apply(dra, root), K_OK);
    json_object_put(root);
    struct gpu_set classes;
    assert_int_equal(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT), K_OK);
    q.dra = dra;
    q.dra_classes = &classes;
    struct node_rows rows;
    assert_int_equal(nodes_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 2); /* nic is no GPU class */

    const struct node_row *r = &rows.items[0]; /* d0 has one free */
    assert_string_equal(r->node, "d0");
    assert_string_equal(r->resource, "gpu.example.com");
    assert_int_equal(r->type, NODE_ROW_DEVICE_CLASS);
    assert_string_equal(r->driver, "gpu.example.com");
    assert_int_equal(r->capacity, 3);
    assert_int_equal(r->in_use, 1);
    assert_int_equal(r->tainted, 1);
    assert_int_equal(r->allocatable, 2);
    assert_int_equal(r->free, 1); /* g2: an effect-None taint does not block */
    assert_int_equal(r->pods, 1);
    assert_string_equal(r->holders[0].name, "p1");
    assert_false(r->holders[0].claim);
    assert_true(has_why(r, "device g1 (pool d0): taint gpu.example.com/xid=79:NoSchedule "
                           "(ResourceSlice d0-gpu)"));

    r = &rows.items[1];
    assert_string_equal(r->node, "d1");
    assert_int_equal(r->capacity, 1);
    assert_int_equal(r->in_use, 1);
    assert_int_equal(r->tainted, 1);
    assert_int_equal(r->free, 0);
    assert_int_equal(r->pods, 0);
    assert_true(r->holders[0].claim);
    assert_string_equal(r->holders[0].name, "kept");
    assert_true(has_why(r, "device g0 (pool d1): taint maintenance:NoSchedule (DeviceTaintRule "
                           "maint)"));
    assert_true(has_why(r, "cordoned (spec.unschedulable)"));

    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(nodes_render_table(&rows, true, &b), K_OK);
    assert_non_null(strstr(buf_cstr(&b), "deviceclass/gpu.example.com"));
    assert_non_null(strstr(buf_cstr(&b), "claim:ml/kept=1"));
    buf_cleanup(&b);
    node_rows_cleanup(&rows);

    /* --resource deviceclass/NAME keeps the class rows only */
    q.resource = "deviceclass/gpu.example.com";
    assert_int_equal(nodes_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 2);
    node_rows_cleanup(&rows);
    q.resource = "nvidia.com/gpu";
    assert_int_equal(nodes_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 0);
    node_rows_cleanup(&rows);
    nodes_query_cleanup(&q);
    gpu_set_cleanup(&classes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resource_rows),
        cmocka_unit_test(test_resource_filter),
        cmocka_unit_test(test_device_class_rows),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
