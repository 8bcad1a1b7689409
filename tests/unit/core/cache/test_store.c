/* Tests for core/cache/store.c: per-node GPU usage, pending set, change bits, mark and sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cache/store.h"
#include "objects.h"
#include "util/result.h"

static struct gpu_set gpus;

static int setup(void **state)
{
    (void)state;
    return gpu_set_parse(&gpus, GPU_SET_DEFAULT);
}

static int teardown(void **state)
{
    (void)state;
    gpu_set_cleanup(&gpus);
    return 0;
}

static unsigned apply_pod(struct store *s, json_object *pod, int deleted)
{
    unsigned changed = 0;
    assert_int_equal(store_pod_apply_json(s, pod, deleted, NULL, &changed), K_OK);
    json_object_put(pod);
    return changed;
}

static unsigned apply_node(struct store *s, json_object *node)
{
    unsigned changed = 0;
    assert_int_equal(store_node_apply_json(s, node, 0, NULL, &changed), K_OK);
    json_object_put(node);
    return changed;
}

static void test_usage_follows_pod_lifecycle(void **state)
{
    (void)state;
    struct store *s = store_new(&gpus);
    assert_non_null(s);
    unsigned ch = apply_pod(s, test_pod("ns", "a", "1", "n0", "Running", NULL, 1, NULL), 0);
    assert_true(ch & STORE_CHANGED_USAGE);
    assert_false(ch & STORE_CHANGED_POD); /* bound, never blocked: not interesting */
    apply_pod(s, test_pod("ns", "b", "2", "n0", "Pending", NULL, 1, NULL), 0);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 3);
    /* a status-only update leaves usage alone */
    ch = apply_pod(s, test_pod("ns", "b", "2", "n0", "Running", NULL, 1, NULL), 0);
    assert_false(ch & STORE_CHANGED_USAGE);
    /* a finished pod frees its GPUs */
    ch = apply_pod(s, test_pod("ns", "b", "2", "n0", "Succeeded", NULL, 1, NULL), 0);
    assert_true(ch & STORE_CHANGED_USAGE);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 1);
    ch = apply_pod(s, test_pod("ns", "a", "1", "n0", "Running", NULL, 1, NULL), 1);
    assert_true(ch & STORE_CHANGED_USAGE);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 0);
    assert_int_equal(store_pod_count(s), 1);
    store_free(s);
}

static void count_key(void *ctx, const char *key)
{
    (void)key;
    (*(int *)ctx)++;
}

static void test_pending_set(void **state)
{
    (void)state;
    struct store *s = store_new(&gpus);
    unsigned ch = apply_pod(s, test_pod("ns", "p", "1", NULL, "Pending", "n0", 1, NULL), 0);
    assert_true(ch & STORE_CHANGED_POD);
    apply_pod(s, test_pod("ns", "cpu-only", NULL, NULL, "Pending", NULL, 0, NULL), 0);
    assert_int_equal(store_pending_gpu_pod_count(s), 1);
    int n = 0;
    store_read_lock(s);
    store_for_each_pending_gpu_pod(s, count_key, &n);
    const struct kpod *p = store_pod_get(s, "ns", "p");
    assert_non_null(p);
    assert_string_equal(kv_list_get(&p->node_selector, "kubernetes.io/hostname"), "n0");
    store_read_unlock(s);
    assert_int_equal(n, 1);
    /* bound: leaves the pending set and is compacted */
    apply_pod(s, test_pod("ns", "p", "1", "n0", "Pending", "n0", 1, "exhausted"), 0);
    assert_int_equal(store_pending_gpu_pod_count(s), 0);
    store_read_lock(s);
    p = store_pod_get(s, "ns", "p");
    assert_int_equal(p->node_selector.n, 0);
    assert_string_equal(p->cause, "exhausted");
    store_read_unlock(s);
    store_free(s);
}

static void test_nodes_sorted_and_changes(void **state)
{
    (void)state;
    struct store *s = store_new(&gpus);
    assert_true(apply_node(s, test_node("n2", "4", "0", NULL, NULL)) & STORE_CHANGED_NODES);
    apply_node(s, test_node("n0", "2", "2", "nvidia.com/gpu=present:NoSchedule", NULL));
    apply_node(s, test_node("n1", NULL, NULL, NULL, NULL));
    /* an identical status (a heartbeat) changes nothing */
    assert_int_equal(apply_node(s, test_node("n1", NULL, NULL, NULL, NULL)), 0);
    assert_true(apply_node(s, test_node("n1", "1", "1", NULL, NULL)) & STORE_CHANGED_NODES);
    size_t n;
    store_read_lock(s);
    const struct knode *const *nodes = store_nodes(s, &n);
    assert_int_equal(n, 3);
    assert_string_equal(nodes[0]->name, "n0");
    assert_string_equal(nodes[1]->name, "n1");
    assert_string_equal(nodes[2]->name, "n2");
    assert_int_equal(resource_list_get(&nodes[2]->capacity, "nvidia.com/gpu"), 4);
    store_read_unlock(s);
    store_free(s);
}

static void test_sync_sweeps_vanished(void **state)
{
    (void)state;
    struct store *s = store_new(&gpus);
    apply_pod(s, test_pod("ns", "stays", "1", "n0", "Running", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "vanished", "1", "n0", "Running", NULL, 1, NULL), 0);
    apply_node(s, test_node("n0", "2", "2", NULL, NULL));
    apply_node(s, test_node("gone", "2", "2", NULL, NULL));
    store_pods_sync_begin(s);
    store_nodes_sync_begin(s);
    apply_pod(s, test_pod("ns", "stays", "1", "n0", "Running", NULL, 1, NULL), 0);
    apply_node(s, test_node("n0", "2", "2", NULL, NULL));
    unsigned ch = 0;
    store_pods_sync_end(s, &ch);
    store_nodes_sync_end(s, &ch);
    assert_true(ch & STORE_CHANGED_USAGE);
    assert_true(ch & STORE_CHANGED_NODES);
    assert_int_equal(store_pod_count(s), 1);
    assert_int_equal(store_node_count(s), 1);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 1);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_follows_pod_lifecycle),
        cmocka_unit_test(test_pending_set),
        cmocka_unit_test(test_nodes_sorted_and_changes),
        cmocka_unit_test(test_sync_sweeps_vanished),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
