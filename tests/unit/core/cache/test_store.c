/* Tests for core/cache/store.c: per-node GPU usage, pending set, change bits, mark and sweep,
 * updates that change nothing, the lock's counts. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpus.h"
#include "cache/store.h"
#include "model/containers.h"
#include "objects.h"
#include "util/result.h"

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
    struct store *s = store_new(&test_gpus);
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

static void sum_bound(void *ctx, const struct kpod *p)
{
    *(int64_t *)ctx += resource_list_get(&p->gpu_requests, "nvidia.com/gpu");
}

/* store_for_each_bound_gpu_pod: exactly the pods store_node_usage sums, over every node. */
static void test_bound_gpu_pods(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    apply_pod(s, test_pod("ns", "a", "1", "n0", "Running", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "b", "2", "n1", "Pending", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "done", "4", "n1", "Succeeded", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "waiting", "8", NULL, "Pending", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "cpu", NULL, "n0", "Running", NULL, 1, NULL), 0);
    int64_t sum = 0;
    store_read_lock(s);
    store_for_each_bound_gpu_pod(s, sum_bound, &sum);
    assert_int_equal(sum, store_node_usage(s, "n0", "nvidia.com/gpu") +
                              store_node_usage(s, "n1", "nvidia.com/gpu"));
    assert_int_equal(sum, 3);
    store_read_unlock(s);
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
    struct store *s = store_new(&test_gpus);
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
    struct store *s = store_new(&test_gpus);
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
    struct store *s = store_new(&test_gpus);
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

/* 1,001 pods each asking for 9223372036854775807 GPUs on one node: the usage saturates at
 * INT64_MAX (the node looks full, not free), and taking the pods away again is exact. */
static void test_usage_saturates_and_unwinds(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    apply_pod(s, test_pod("ns", "p0", "9223372036854775807", "n0", "Running", NULL, 1, NULL), 0);
    int64_t one = store_node_usage(s, "n0", "nvidia.com/gpu");
    assert_true(one > 0);
    char name[32];
    for (int i = 1; i < 1001; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        apply_pod(s, test_pod("ns", name, "9223372036854775807", "n0", "Running", NULL, 1, NULL),
                  0);
    }
    assert_true((__int128)one * 1001 > INT64_MAX);
    assert_true(store_node_usage(s, "n0", "nvidia.com/gpu") == INT64_MAX);
    for (int i = 1000; i >= 1; i--) {
        snprintf(name, sizeof(name), "p%d", i);
        apply_pod(s, test_pod("ns", name, "1", "n0", "Running", NULL, 1, NULL), 1);
        if (i == 2)
            assert_true(store_node_usage(s, "n0", "nvidia.com/gpu") == 2 * one);
    }
    assert_true(store_node_usage(s, "n0", "nvidia.com/gpu") == one);
    apply_pod(s, test_pod("ns", "p0", "1", "n0", "Running", NULL, 1, NULL), 1);
    assert_true(store_node_usage(s, "n0", "nvidia.com/gpu") == 0);
    store_free(s);
}

/* A Running pod bound to `node` (NULL: unbound) requesting `amount` of example.com/r<a> and, when
 * b >= 0, of example.com/r<b>. */
static int upsert_pod(struct store *s, const char *name, const char *node, int a, int b,
                      int64_t amount)
{
    struct kpod p = {0};
    p.ns = strdup("ns");
    p.name = strdup(name);
    p.node_name = node ? strdup(node) : NULL;
    p.phase = POD_PHASE_RUNNING;
    for (int k = 0; k < 2; k++) {
        int i = k ? b : a;
        char res[32];
        snprintf(res, sizeof(res), "example.com/r%d", i);
        if (i >= 0)
            assert_int_equal(resource_list_add(&p.gpu_requests, res, amount), K_OK);
    }
    unsigned changed = 0;
    return store_pod_upsert(s, &p, &changed);
}

static int64_t usage_r(struct store *s, const char *node, int i)
{
    char res[32];
    snprintf(res, sizeof(res), "example.com/r%d", i);
    return store_node_usage(s, node, res);
}

/* Once a node's usage names RESOURCE_LIST_MAX resources, an update that cannot be accounted
 * leaves the old record and the old accounting untouched; deleting everything gives back 0. */
static void test_update_at_name_cap_is_all_or_nothing(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    char name[32];
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        assert_int_equal(upsert_pod(s, name, "n0", i, -1, 1), K_OK);
    }
    /* p0 now also asks for a 65th name: refused, nothing moves */
    assert_int_equal(upsert_pod(s, "p0", "n0", 0, RESOURCE_LIST_MAX, 3), K_ETOOBIG);
    assert_true(usage_r(s, "n0", 0) == 1);
    assert_true(usage_r(s, "n0", RESOURCE_LIST_MAX) == 0);
    store_read_lock(s);
    const struct kpod *p0 = store_pod_get(s, "ns", "p0");
    assert_non_null(p0);
    assert_int_equal(p0->gpu_requests.n, 1);
    assert_true(resource_list_get(&p0->gpu_requests, "example.com/r0") == 1);
    store_read_unlock(s);
    /* a new pod with a 65th name is refused and not stored */
    assert_int_equal(upsert_pod(s, "extra", "n0", RESOURCE_LIST_MAX + 1, -1, 1), K_ETOOBIG);
    assert_int_equal(store_pod_count(s), RESOURCE_LIST_MAX);
    assert_true(usage_r(s, "n0", RESOURCE_LIST_MAX + 1) == 0);
    /* p1 swaps r1 (only its own) for r64: fits, since r1 leaves with it */
    assert_int_equal(upsert_pod(s, "p1", "n0", RESOURCE_LIST_MAX, -1, 2), K_OK);
    assert_true(usage_r(s, "n0", 1) == 0);
    assert_true(usage_r(s, "n0", RESOURCE_LIST_MAX) == 2);
    /* p2 moves to another node; p3 is unbound (a new version without spec.nodeName) */
    assert_int_equal(upsert_pod(s, "p2", "n1", 2, -1, 5), K_OK);
    assert_true(usage_r(s, "n0", 2) == 0);
    assert_true(usage_r(s, "n1", 2) == 5);
    assert_int_equal(upsert_pod(s, "p3", NULL, 3, -1, 1), K_OK);
    assert_true(usage_r(s, "n0", 3) == 0);
    /* and now the refused update fits */
    assert_int_equal(upsert_pod(s, "p0", "n0", 0, RESOURCE_LIST_MAX, 3), K_OK);
    assert_true(usage_r(s, "n0", 0) == 3);
    assert_true(usage_r(s, "n0", RESOURCE_LIST_MAX) == 5);
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        unsigned changed = 0;
        assert_int_equal(store_pod_delete(s, "ns", name, &changed), K_OK);
    }
    assert_int_equal(store_pod_count(s), 0);
    for (int i = 0; i <= RESOURCE_LIST_MAX + 1; i++) {
        assert_true(usage_r(s, "n0", i) == 0);
        assert_true(usage_r(s, "n1", i) == 0);
    }
    store_free(s);
}

/* A pod whose new version cannot be accounted still exists: a relist does not sweep it. */
static void test_refused_update_survives_relist(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    char name[32];
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        assert_int_equal(upsert_pod(s, name, "n0", i, -1, 1), K_OK);
    }
    store_pods_sync_begin(s);
    for (int i = 1; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        assert_int_equal(upsert_pod(s, name, "n0", i, -1, 1), K_OK);
    }
    assert_int_equal(upsert_pod(s, "p0", "n0", 0, RESOURCE_LIST_MAX, 1), K_ETOOBIG);
    unsigned ch = 0;
    store_pods_sync_end(s, &ch);
    assert_int_equal(store_pod_count(s), RESOURCE_LIST_MAX);
    assert_true(usage_r(s, "n0", 0) == 1);
    store_free(s);
}

/* The controller's store keeps GPU pods, pods being deleted and annotated pods only. */
static void test_gpu_pods_only(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    store_keep_gpu_pods_only(s);
    apply_pod(s, test_pod("ns", "gpu", "2", "n0", "Running", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "cpu", NULL, "n0", "Running", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "cpu-pending", NULL, NULL, "Pending", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "annotated", NULL, NULL, "Pending", NULL, 1, "taint"), 0);
    assert_int_equal(store_pod_count(s), 2);
    store_read_lock(s);
    assert_non_null(store_pod_get(s, "ns", "gpu"));
    assert_null(store_pod_get(s, "ns", "cpu"));
    assert_non_null(store_pod_get(s, "ns", "annotated"));
    store_read_unlock(s);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 2);

    /* a CPU pod being deleted is kept (a possible preemption victim), then goes */
    json_object *del = test_pod("ns", "cpu", NULL, "n0", "Running", NULL, 1, NULL);
    json_object_object_add(json_object_object_get(del, "metadata"), "deletionTimestamp",
                           json_object_new_string("2026-12-01T10:00:00Z"));
    apply_pod(s, del, 0);
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "cpu");
    assert_non_null(p);
    assert_true(p->deleting);
    store_read_unlock(s);
    assert_int_equal(store_pod_count(s), 3);

    /* the annotation removed from a pod without a GPU request: its record goes */
    unsigned ch =
        apply_pod(s, test_pod("ns", "annotated", NULL, NULL, "Pending", NULL, 1, NULL), 0);
    assert_true(ch & STORE_CHANGED_POD);
    assert_int_equal(store_pod_count(s), 2);
    store_free(s);
}

/* A relist of a store that keeps GPU pods only: a pod that lost what kept it goes at once, pods
 * never kept stay out, packed and unpacked records are replaced and swept without leaks. */
static void test_gpu_pods_only_relist(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    store_keep_gpu_pods_only(s);
    apply_pod(s, test_pod("ns", "gpu", "2", "n0", "Running", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "annotated", NULL, "n0", "Running", NULL, 1, "taint"), 0);
    apply_pod(s, test_pod("ns", "pending", "1", NULL, "Pending", NULL, 1, NULL), 0);
    apply_pod(s, test_pod("ns", "gone", "1", "n1", "Running", NULL, 1, NULL), 0);
    assert_int_equal(store_pod_count(s), 4);

    store_pods_sync_begin(s);
    apply_pod(s, test_pod("ns", "gpu", "2", "n0", "Running", NULL, 1, NULL), 0);
    /* the annotation is gone: the record goes before the relist ends */
    apply_pod(s, test_pod("ns", "annotated", NULL, "n0", "Running", NULL, 1, NULL), 0);
    assert_int_equal(store_pod_count(s), 3);
    apply_pod(s, test_pod("ns", "cpu", NULL, "n0", "Running", NULL, 1, NULL), 0);
    /* the pending pod is bound now: its unpacked record is replaced by a packed one */
    apply_pod(s, test_pod("ns", "pending", "1", "n0", "Running", NULL, 1, NULL), 0);
    unsigned ch = 0;
    store_pods_sync_end(s, &ch);
    assert_int_equal(store_pod_count(s), 2);
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "pending");
    assert_non_null(p);
    assert_string_equal(p->ns, "ns");
    assert_string_equal(p->name, "pending");
    assert_string_equal(p->node_name, "n0");
    assert_null(store_pod_get(s, "ns", "cpu"));
    assert_null(store_pod_get(s, "ns", "gone"));
    store_read_unlock(s);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 3);
    assert_int_equal(store_node_usage(s, "n1", "nvidia.com/gpu"), 0);

    /* a relist that holds no kept pod empties the store */
    store_pods_sync_begin(s);
    apply_pod(s, test_pod("ns", "cpu", NULL, "n0", "Running", NULL, 1, NULL), 0);
    store_pods_sync_end(s, &ch);
    assert_int_equal(store_pod_count(s), 0);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 0);
    store_free(s);
}

static uint64_t write_locks(struct store *s)
{
    struct store_lock_stats st;
    store_lock_stats(s, &st);
    return st.write_locks;
}

/* What the API server sends on every update and the projection does not keep. */
static json_object *with_new_version(json_object *obj, const char *rv)
{
    json_object_object_add(json_object_object_get(obj, "metadata"), "resourceVersion",
                           json_object_new_string(rv));
    return obj;
}

/* A node's heartbeat: its Ready condition written again (the kubelet's message, here with the
 * time in it), nothing else. */
static json_object *heartbeat(json_object *node, const char *rv, const char *when)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "kubelet is posting ready status at %s", when);
    test_set_condition(node, "Ready", "True", "KubeletReady", msg);
    return with_new_version(node, rv);
}

/* A pod's status-only update: a container became ready. */
static json_object *container_ready(json_object *pod, const char *rv)
{
    json_object *status = json_object_object_get(pod, "status");
    json_object *cs = json_object_new_object();
    json_object_object_add(cs, "name", json_object_new_string("main"));
    json_object_object_add(cs, "ready", json_object_new_boolean(1));
    json_object *list = json_object_new_array();
    json_object_array_add(list, cs);
    json_object_object_add(status, "containerStatuses", list);
    return with_new_version(pod, rv);
}

/* Heartbeats and status-only updates take no write lock and report no change; real changes
 * still apply. */
static void test_unchanged_updates_take_no_write_lock(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    apply_node(s, test_node("n0", "2", "2", NULL, NULL));
    uint64_t locks = write_locks(s);
    assert_int_equal(apply_node(s, heartbeat(test_node("n0", "2", "2", NULL, NULL), "7", "t1")),
                     STORE_CHANGED_NOTHING);
    assert_int_equal(apply_node(s, heartbeat(test_node("n0", "2", "2", NULL, NULL), "8", "t2")),
                     STORE_CHANGED_NOTHING);
    assert_true(write_locks(s) == locks);
    /* a taint is a change */
    assert_true(apply_node(s, test_node("n0", "2", "2", "gpu=broken:NoSchedule", NULL)) &
                STORE_CHANGED_NODES);
    assert_true(write_locks(s) == locks + 1);
    store_read_lock(s);
    size_t n;
    assert_int_equal(store_nodes(s, &n)[0]->n_taints, 1);
    store_read_unlock(s);

    /* a pending GPU pod: a container status changes nothing the store keeps */
    apply_pod(s, test_pod("ns", "p", "1", NULL, "Pending", NULL, 1, NULL), 0);
    locks = write_locks(s);
    assert_int_equal(
        apply_pod(s, container_ready(test_pod("ns", "p", "1", NULL, "Pending", NULL, 1, NULL), "9"),
                  0),
        STORE_CHANGED_NOTHING);
    assert_true(write_locks(s) == locks);
    /* the scheduler's verdict is kept: a change */
    json_object *tried = test_pod("ns", "p", "1", NULL, "Pending", NULL, 1, NULL);
    test_pod_set_scheduled(tried, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    assert_true(apply_pod(s, tried, 0) & STORE_CHANGED_POD);
    assert_true(write_locks(s) == locks + 1);
    store_read_lock(s);
    assert_non_null(store_pod_get(s, "ns", "p")->scheduled.message);
    store_read_unlock(s);

    /* a bound pod keeps no scheduling constraints: a new nodeSelector changes nothing */
    apply_pod(s, test_pod("ns", "b", "1", "n0", "Running", NULL, 1, NULL), 0);
    locks = write_locks(s);
    assert_int_equal(apply_pod(s, test_pod("ns", "b", "1", "n0", "Running", "n0", 0, NULL), 0),
                     STORE_CHANGED_NOTHING);
    assert_true(write_locks(s) == locks);
    /* finishing frees the GPU */
    assert_true(apply_pod(s, test_pod("ns", "b", "1", "n0", "Succeeded", NULL, 1, NULL), 0) &
                STORE_CHANGED_USAGE);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 0);

    struct store_lock_stats st;
    store_lock_stats(s, &st);
    assert_true(st.unchanged == 4);
    assert_true(st.write_wait_ns == 0); /* one thread: the lock was always free */
    store_free(s);
}

/* During a relist an unchanged object is written all the same: the write clears the mark, and
 * the sweep keeps it. */
static void test_unchanged_update_survives_relist(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    apply_node(s, test_node("n0", "2", "2", NULL, NULL));
    apply_pod(s, test_pod("ns", "p", "1", NULL, "Pending", NULL, 1, NULL), 0);
    store_nodes_sync_begin(s);
    store_pods_sync_begin(s);
    uint64_t locks = write_locks(s);
    assert_int_equal(apply_node(s, test_node("n0", "2", "2", NULL, NULL)), STORE_CHANGED_NOTHING);
    apply_pod(s, test_pod("ns", "p", "1", NULL, "Pending", NULL, 1, NULL), 0);
    assert_true(write_locks(s) == locks + 2);
    unsigned ch = 0;
    store_nodes_sync_end(s, &ch);
    store_pods_sync_end(s, &ch);
    assert_int_equal(ch, STORE_CHANGED_NOTHING);
    assert_int_equal(store_node_count(s), 1);
    assert_int_equal(store_pending_gpu_pod_count(s), 1);
    store_free(s);
}

/* With only GPU pods kept, an update or deletion of any other pod takes no write lock. */
static void test_unkept_pod_takes_no_write_lock(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    store_keep_gpu_pods_only(s);
    uint64_t locks = write_locks(s);
    assert_int_equal(apply_pod(s, test_pod("ns", "web", NULL, "n0", "Running", NULL, 1, NULL), 0),
                     STORE_CHANGED_NOTHING);
    assert_int_equal(apply_pod(s, test_pod("ns", "web", NULL, "n0", "Running", NULL, 1, NULL), 1),
                     STORE_CHANGED_NOTHING); /* nor its deletion */
    assert_true(write_locks(s) == locks);
    assert_int_equal(store_pod_count(s), 0);
    store_free(s);
}

/* Readers and the informers' writes side by side (for ThreadSanitizer): heartbeats, taint flips
 * and pod updates while two threads read; the last write of each object stands. */
#define RACE_ROUNDS 300

static void *race_reader(void *arg)
{
    struct store *s = arg;
    int64_t sum = 0;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        store_read_lock(s);
        size_t n;
        const struct knode *const *nodes = store_nodes(s, &n);
        for (size_t k = 0; k < n; k++)
            sum +=
                (int64_t)nodes[k]->n_taints + store_node_usage(s, nodes[k]->name, "nvidia.com/gpu");
        const struct kpod *p = store_pod_get(s, "ns", "p");
        sum += p ? p->phase : 0;
        store_read_unlock(s);
    }
    return (void *)(intptr_t)(sum >= 0);
}

static void *race_nodes(void *arg)
{
    struct store *s = arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        char rv[16];
        snprintf(rv, sizeof(rv), "%d", i);
        apply_node(s,
                   heartbeat(test_node("n0", "2", "2", i % 10 == 8 ? "a=b:NoSchedule" : NULL, NULL),
                             rv, rv));
    }
    return NULL;
}

static void *race_pods(void *arg)
{
    struct store *s = arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        char rv[16];
        snprintf(rv, sizeof(rv), "%d", i);
        apply_pod(
            s,
            container_ready(
                test_pod("ns", "p", "1", i % 7 == 6 ? NULL : "n0", "Running", NULL, 1, NULL), rv),
            0);
    }
    return NULL;
}

static void test_writers_and_readers_race(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    apply_node(s, test_node("n0", "2", "2", NULL, NULL));
    pthread_t t[4];
    void *(*fn[4])(void *) = {race_reader, race_reader, race_nodes, race_pods};
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, fn[i], s), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    /* round 299: no taint (299 % 10 != 8), the pod bound (299 % 7 != 6) */
    store_read_lock(s);
    size_t n;
    assert_int_equal(store_nodes(s, &n)[0]->n_taints, 0);
    store_read_unlock(s);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 1);
    store_free(s);
}

/* A GPU pod's container status, as its kubelet writes it. */
static json_object *with_status(json_object *pod, const char *state_json)
{
    json_object *st = NULL, *spec = NULL, *ctrs = NULL;
    assert_true(json_object_object_get_ex(pod, "status", &st));
    assert_true(json_object_object_get_ex(pod, "spec", &spec));
    assert_true(json_object_object_get_ex(spec, "containers", &ctrs));
    const char *name =
        json_object_get_string(json_object_object_get(json_object_array_get_idx(ctrs, 0), "name"));
    char buf[512];
    snprintf(buf, sizeof(buf), "[{\"name\":\"%s\",\"state\":%s}]", name, state_json);
    json_object_object_add(st, "containerStatuses", json_tokener_parse(buf));
    return pod;
}

/* A bound GPU pod keeps its container statuses until its GPU container has started once, then
 * is compacted like every bound pod (store_is_starting_gpu_pod). */
static void test_starting_pods(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    store_keep_gpu_pods_only(s);
    unsigned ch =
        apply_pod(s,
                  with_status(test_pod("ns", "a", "1", "n0", "Pending", NULL, 0, NULL),
                              "{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"m1\"}}"),
                  0);
    assert_true(ch & STORE_CHANGED_POD);
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "a");
    assert_non_null(p);
    assert_true(store_is_starting_gpu_pod(p));
    assert_false(store_is_pending_gpu_pod(p));
    assert_non_null(p->containers);
    assert_string_equal(p->containers->items[0].waiting_message, "m1");
    assert_int_equal(store_starting_gpu_pod_count(s), 1);
    assert_int_equal(store_pending_gpu_pod_count(s), 0);
    store_read_unlock(s);
    /* the message moves: a change */
    ch =
        apply_pod(s,
                  with_status(test_pod("ns", "a", "1", "n0", "Pending", NULL, 0, NULL),
                              "{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"m2\"}}"),
                  0);
    assert_true(ch & STORE_CHANGED_POD);
    /* being deleted (a finalizer holds it): no starting pod any more, whatever its containers */
    json_object *del =
        with_status(test_pod("ns", "d", "1", "n0", "Pending", NULL, 0, NULL),
                    "{\"waiting\":{\"reason\":\"CreateContainerError\",\"message\":\"m\"}}");
    test_pod_set_deleting(del);
    apply_pod(s, del, 0);
    store_read_lock(s);
    p = store_pod_get(s, "ns", "d");
    assert_non_null(p);
    assert_true(p->deleting);
    assert_false(store_is_starting_gpu_pod(p));
    assert_false(store_is_pending_gpu_pod(p));
    assert_int_equal(store_starting_gpu_pod_count(s), 1);
    store_read_unlock(s);
    /* started: compacted, and its later status updates change nothing */
    ch = apply_pod(
        s,
        with_status(test_pod("ns", "a", "1", "n0", "Running", NULL, 0, NULL), "{\"running\":{}}"),
        0);
    assert_true(ch & STORE_CHANGED_POD); /* it was a starting pod */
    store_read_lock(s);
    p = store_pod_get(s, "ns", "a");
    assert_false(store_is_starting_gpu_pod(p));
    assert_null(p->containers);
    assert_int_equal(store_starting_gpu_pod_count(s), 0);
    store_read_unlock(s);
    ch = apply_pod(s,
                   with_status(test_pod("ns", "a", "1", "n0", "Running", NULL, 0, NULL),
                               "{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{"
                               "\"terminated\":{\"reason\":\"Error\",\"exitCode\":1}}"),
                   0);
    assert_int_equal(ch, 0); /* an application crash after a start: nothing the store keeps */
    /* a CPU pod that does not start is no starting GPU pod */
    ch = apply_pod(s,
                   with_status(test_pod("ns", "cpu", NULL, "n0", "Pending", NULL, 0, NULL),
                               "{\"waiting\":{\"reason\":\"ErrImagePull\"}}"),
                   0);
    assert_int_equal(ch, 0);
    store_free(s);
}

/* A pod of one container asking `resource: 1` (requests and limits), bound to `node` (NULL:
 * pending) in `phase`; `status_extra` (JSON members, or NULL) is added to its status. */
static json_object *ext_pod(const char *name, const char *resource, const char *node,
                            const char *phase, const char *status_extra)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\",\"uid\":\"u-%s\"},\"spec\":{%s%s%s\"containers\":[{"
             "\"name\":\"c\",\"resources\":{\"requests\":{\"%s\":\"1\"},\"limits\":{\"%s\":"
             "\"1\"}}}]},\"status\":{\"phase\":\"%s\"%s%s}}",
             name, name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "",
             resource, resource, phase, status_extra ? "," : "", status_extra ? status_extra : "");
    json_object *pod = json_tokener_parse(buf);
    assert_non_null(pod);
    return pod;
}

static bool has_ext(struct store *s, const char *name)
{
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", name);
    assert_non_null(p);
    bool has = pod_has_ext_requests(p);
    store_read_unlock(s);
    return has;
}

#define CLASS_NAME "deviceclass.resource.kubernetes.io/gpu.example.com"
#define RUNNING_STATUS "\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"running\":{}}}]"

/*
 * What compact() keeps of a bound pod's extended-resource requests (kpod.ext, KEP-5004): with
 * store_keep_gpu_pods_only (the controller) only where they are read again: pending, starting
 * and kubelet-rejected pods, and pods they alone make GPU pods; a bound running pod with a GPU
 * request drops them, and its next update changes nothing. The CLI's store keeps them all.
 */
static void test_compact_keeps_ext_where_read(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    store_keep_gpu_pods_only(s);
    apply_pod(s, ext_pod("running", "nvidia.com/gpu", "n0", "Running", RUNNING_STATUS), 0);
    apply_pod(s, ext_pod("pending", "nvidia.com/gpu", NULL, "Pending", NULL), 0);
    apply_pod(s,
              ext_pod("starting", "nvidia.com/gpu", "n0", "Pending",
                      "\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"waiting\":{"
                      "\"reason\":\"ContainerCreating\"}}}]"),
              0);
    apply_pod(s,
              ext_pod("rejected", "nvidia.com/gpu", "n0", "Failed",
                      "\"reason\":\"UnexpectedAdmissionError\",\"message\":\"m\""),
              0);
    apply_pod(s, ext_pod("class", CLASS_NAME, "n0", "Running", RUNNING_STATUS), 0);
    assert_int_equal(store_pod_count(s), 5);
    assert_false(has_ext(s, "running"));
    assert_true(has_ext(s, "pending"));
    assert_true(has_ext(s, "starting"));
    assert_true(has_ext(s, "rejected"));
    assert_true(has_ext(s, "class")); /* nothing else says it is a GPU pod */
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "running");
    assert_int_equal(resource_list_get(&p->gpu_requests, "nvidia.com/gpu"), 1);
    assert_true(store_is_starting_gpu_pod(store_pod_get(s, "ns", "starting")));
    assert_true(store_is_rejected_gpu_pod(store_pod_get(s, "ns", "rejected")));
    store_read_unlock(s);
    assert_int_equal(store_node_usage(s, "n0", "nvidia.com/gpu"), 2); /* running, starting */
    /* the same objects again change nothing: a compacted pod comes out the same */
    assert_int_equal(
        apply_pod(s, ext_pod("running", "nvidia.com/gpu", "n0", "Running", RUNNING_STATUS), 0), 0);
    assert_int_equal(apply_pod(s, ext_pod("class", CLASS_NAME, "n0", "Running", RUNNING_STATUS), 0),
                     0);
    /* the starting pod starts: it drops them too */
    apply_pod(s, ext_pod("starting", "nvidia.com/gpu", "n0", "Running", RUNNING_STATUS), 0);
    assert_false(has_ext(s, "starting"));
    store_free(s);

    /* the CLI's store (every pod kept): explain and pods read a bound pod's ext */
    s = store_new(&test_gpus);
    assert_non_null(s);
    apply_pod(s, ext_pod("running", "nvidia.com/gpu", "n0", "Running", RUNNING_STATUS), 0);
    assert_true(has_ext(s, "running"));
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_follows_pod_lifecycle),
        cmocka_unit_test(test_bound_gpu_pods),
        cmocka_unit_test(test_pending_set),
        cmocka_unit_test(test_starting_pods),
        cmocka_unit_test(test_compact_keeps_ext_where_read),
        cmocka_unit_test(test_nodes_sorted_and_changes),
        cmocka_unit_test(test_sync_sweeps_vanished),
        cmocka_unit_test(test_usage_saturates_and_unwinds),
        cmocka_unit_test(test_update_at_name_cap_is_all_or_nothing),
        cmocka_unit_test(test_refused_update_survives_relist),
        cmocka_unit_test(test_gpu_pods_only),
        cmocka_unit_test(test_gpu_pods_only_relist),
        cmocka_unit_test(test_unchanged_updates_take_no_write_lock),
        cmocka_unit_test(test_unchanged_update_survives_relist),
        cmocka_unit_test(test_unkept_pod_takes_no_write_lock),
        cmocka_unit_test(test_writers_and_readers_race),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
