/*
 * test_project_proto.c - the projection of a Pod's usage and of a Node from protobuf
 * (core/kube/project_proto.c) on responses recorded from a real kube-apiserver
 * (tests/fixtures/proto/README.md) and on encodings built by hand (tests/lib/pb_write.h): every
 * field agrees with the JSON projection (project_pod, project_node) of the same object, edge
 * cases included, as the generated Go code reads them; malformed pods are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gpus.h"
#include "kube/project.h"
#include "kube/proto.h"
#include "objects.h"
#include "pb_write.h"
#include "util/buf.h"
#include "util/result.h"

#define GPUS (&test_gpus)

/* Items of a protobuf list, copied. */
struct items {
    struct buf bytes[64];
    size_t n, stop_at;
};

static int collect(void *ctx, const uint8_t *bytes, size_t len)
{
    struct items *it = ctx;
    assert_true(it->n < 64);
    buf_init(&it->bytes[it->n], 1u << 24);
    assert_int_equal(buf_append(&it->bytes[it->n], (const char *)bytes, len), K_OK);
    it->n++;
    return it->stop_at && it->n == it->stop_at ? 7 : 0;
}

static void items_free(struct items *it)
{
    for (size_t i = 0; i < it->n; i++)
        buf_cleanup(&it->bytes[i]);
    it->n = 0;
}

static void same_string(const char *a, const char *b)
{
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

/* Every usage field of the protobuf projection equals the JSON projection's. */
static void same_usage(const struct kpod *j, const struct kpod *p)
{
    same_string(j->ns, p->ns);
    same_string(j->name, p->name);
    same_string(j->uid, p->uid);
    same_string(j->node_name, p->node_name);
    same_string(j->scheduler_name, p->scheduler_name);
    same_string(j->owner_uid, p->owner_uid);
    same_string(j->nominated_node, p->nominated_node);
    assert_int_equal(j->phase, p->phase);
    assert_int_equal(j->deleting, p->deleting);
    assert_int_equal(j->created, p->created);
    assert_int_equal(j->gpu_requests.n, p->gpu_requests.n);
    for (size_t i = 0; i < j->gpu_requests.n; i++)
        assert_int_equal(resource_list_get(&p->gpu_requests, j->gpu_requests.items[i].name),
                         j->gpu_requests.items[i].value);
}

static void test_agrees_with_json(void **state)
{
    (void)state;
    struct buf pb, js;
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/pods.pb", &pb), K_OK);
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/pods.json", &js), K_OK);
    json_object *list = json_tokener_parse(buf_cstr(&js));
    assert_non_null(list);
    json_object *jitems = json_object_object_get(list, "items");
    struct items it = {0};
    char rv[64], cont[64];
    assert_int_equal(kube_proto_list(pb.data, pb.len, collect, &it, rv, cont, sizeof(rv)), K_OK);
    assert_int_equal(it.n, json_object_array_length(jitems));
    assert_int_equal(it.n, 6);
    assert_true(strspn(rv, "0123456789") == strlen(rv) && rv[0]); /* recorded a moment apart */
    assert_string_equal(cont, "");
    /* what each recorded pod asks for (tests/fixtures/proto/README.md) */
    static const struct {
        const char *name;
        int64_t n_gpus;
        bool deleting, owner, nominated;
    } want[] = {
        {"deleting", 2, true, false, false},  {"limits-only", 3, false, true, false},
        {"nominated", 8, false, false, true}, {"overhead", 2, false, false, false},
        {"sidecars", 5, false, false, false}, {"zero", 0, false, false, false},
    };
    for (size_t i = 0; i < it.n; i++) {
        struct kpod j, p;
        assert_int_equal(project_pod(json_object_array_get_idx(jitems, i), GPUS, &j), K_OK);
        assert_int_equal(
            project_pod_usage_proto((const uint8_t *)it.bytes[i].data, it.bytes[i].len, GPUS, &p),
            K_OK);
        same_usage(&j, &p);
        assert_string_equal(p.name, want[i].name);
        assert_string_equal(p.ns, "fixture");
        assert_int_equal(resource_list_get(&p.gpu_requests, "nvidia.com/gpu"), want[i].n_gpus);
        assert_int_equal(p.deleting, want[i].deleting);
        assert_int_equal(p.owner_uid != NULL, want[i].owner);
        assert_int_equal(p.nominated_node != NULL, want[i].nominated);
        assert_true(p.created > 1700000000);
        /* what the usage projection leaves out */
        assert_null(p.cause);
        assert_int_equal(p.node_selector.n, 0);
        assert_int_equal(p.n_tolerations, 0);
        pod_cleanup(&j);
        pod_cleanup(&p);
    }
    items_free(&it);
    json_object_put(list);
    buf_cleanup(&pb);
    buf_cleanup(&js);
}

/* Every field of the protobuf node projection equals the JSON projection's (nodes.pb/.json). */
static void test_nodes_agree_with_json(void **state)
{
    (void)state;
    struct buf pb, js;
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/nodes.pb", &pb), K_OK);
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/nodes.json", &js), K_OK);
    json_object *list = json_tokener_parse(buf_cstr(&js));
    assert_non_null(list);
    json_object *jitems = json_object_object_get(list, "items");
    struct items it = {0};
    assert_int_equal(kube_proto_list(pb.data, pb.len, collect, &it, NULL, NULL, 0), K_OK);
    assert_int_equal(it.n, 2);
    assert_int_equal(json_object_array_length(jitems), 2);
    for (size_t i = 0; i < it.n; i++) {
        struct knode j, p;
        assert_int_equal(project_node(json_object_array_get_idx(jitems, i), GPUS, &j), K_OK);
        assert_int_equal(
            project_node_proto((const uint8_t *)it.bytes[i].data, it.bytes[i].len, GPUS, &p), K_OK);
        assert_string_equal(j.name, p.name);
        assert_int_equal(j.unschedulable, p.unschedulable);
        assert_int_equal(j.labels.n, p.labels.n);
        for (size_t k = 0; k < j.labels.n; k++)
            assert_string_equal(kv_list_get(&p.labels, j.labels.items[k].key),
                                j.labels.items[k].value);
        assert_int_equal(j.n_taints, p.n_taints);
        for (size_t k = 0; k < j.n_taints; k++) {
            assert_string_equal(j.taints[k].key, p.taints[k].key);
            assert_string_equal(j.taints[k].value, p.taints[k].value);
            assert_string_equal(j.taints[k].effect, p.taints[k].effect);
        }
        assert_int_equal(j.capacity.n, p.capacity.n);
        assert_int_equal(j.allocatable.n, p.allocatable.n);
        for (size_t k = 0; k < j.capacity.n; k++)
            assert_int_equal(resource_list_get(&p.capacity, j.capacity.items[k].name),
                             j.capacity.items[k].value);
        for (size_t k = 0; k < j.allocatable.n; k++)
            assert_int_equal(resource_list_get(&p.allocatable, j.allocatable.items[k].name),
                             j.allocatable.items[k].value);
        if (i == 0) { /* fixture-node (tests/fixtures/proto/README.md) */
            assert_string_equal(p.name, "fixture-node");
            assert_true(p.unschedulable);
            assert_int_equal(p.n_taints, 3);
            assert_string_equal(p.taints[1].value, "");
            assert_string_equal(kv_list_get(&p.labels, "empty"), "");
            assert_int_equal(resource_list_get(&p.capacity, "nvidia.com/gpu"), 8);
            assert_int_equal(resource_list_get(&p.allocatable, "nvidia.com/gpu"), 7);
            assert_int_equal(p.capacity.n, 1); /* GPU resources only */
        }
        node_cleanup(&j);
        node_cleanup(&p);
    }
    items_free(&it);
    json_object_put(list);
    buf_cleanup(&pb);
    buf_cleanup(&js);
}

/* A pod without a name, and a GPU quantity that does not parse, are refused. */
static void test_refused(void **state)
{
    (void)state;
    struct kpod p;
    const uint8_t nameless[] = {0x0a, 0x02, 0x1a, 0x00};
    assert_int_equal(project_pod_usage_proto(nameless, sizeof(nameless), GPUS, &p), K_EPARSE);
    /* metadata{name:"p"} spec{containers{resources{requests{"nvidia.com/gpu": Q}}}} */
    struct buf pod, meta, spec, c, res;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20);
    static const char *const quantities[] = {"1x", "1"};
    for (size_t i = 0; i < 2; i++) {
        buf_reset(&pod);
        pb_put_text(&meta, 1, "p");
        pb_put_quantity(&res, 2, "nvidia.com/gpu", quantities[i]);
        pb_put_msg(&c, 8, &res);
        pb_put_msg(&spec, 2, &c);
        pb_put_msg(&pod, 1, &meta);
        pb_put_msg(&pod, 2, &spec);
        int rc = project_pod_usage_proto((const uint8_t *)pod.data, pod.len, GPUS, &p);
        if (i == 0) {
            assert_int_equal(rc, K_EPARSE);
            continue;
        }
        assert_int_equal(rc, K_OK);
        assert_string_equal(p.name, "p");
        assert_int_equal(resource_list_get(&p.gpu_requests, "nvidia.com/gpu"), 1);
        pod_cleanup(&p);
    }
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
}

/* Project `json` (a Pod) and `pb` (the same Pod in protobuf) and compare every usage field. */
static void agree(const char *json, const struct buf *pb)
{
    json_object *obj = json_tokener_parse(json);
    assert_non_null(obj);
    struct kpod j, p;
    assert_int_equal(project_pod(obj, GPUS, &j), K_OK);
    assert_int_equal(project_pod_usage_proto((const uint8_t *)pb->data, pb->len, GPUS, &p), K_OK);
    same_usage(&j, &p);
    pod_cleanup(&j);
    pod_cleanup(&p);
    json_object_put(obj);
}

static int64_t gpus_of(const struct buf *pb)
{
    struct kpod p;
    assert_int_equal(project_pod_usage_proto((const uint8_t *)pb->data, pb->len, GPUS, &p), K_OK);
    int64_t n = resource_list_get(&p.gpu_requests, "nvidia.com/gpu");
    pod_cleanup(&p);
    return n;
}

/*
 * A resource map with the same key twice: the generated Go code (k8s.io/api core/v1
 * generated.pb.go, ResourceRequirements.Unmarshal: m.Requests[mapkey] = *mapvalue) and json-c
 * keep the last entry; they do not add up.
 */
static void test_duplicate_map_key(void **state)
{
    (void)state;
    struct buf pod, meta, spec, c, res;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20);
    pb_put_text(&meta, 1, "p");
    pb_put_quantity(&res, 2, "nvidia.com/gpu", "1"); /* requests */
    pb_put_quantity(&res, 2, "nvidia.com/gpu", "3");
    pb_put_quantity(&res, 1, "nvidia.com/gpu", "5"); /* limits */
    pb_put_quantity(&res, 1, "nvidia.com/gpu", "7");
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_quantity(&spec, 32, "nvidia.com/gpu", "2"); /* overhead */
    pb_put_quantity(&spec, 32, "nvidia.com/gpu", "1");
    pb_put_msg(&pod, 1, &meta);
    pb_put_msg(&pod, 2, &spec);
    agree("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{"
          "\"requests\":{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpu\":\"3\"},"
          "\"limits\":{\"nvidia.com/gpu\":\"5\",\"nvidia.com/gpu\":\"7\"}}}],"
          "\"overhead\":{\"nvidia.com/gpu\":\"2\",\"nvidia.com/gpu\":\"1\"}}}",
          &pod);
    assert_int_equal(gpus_of(&pod), 4);
    /* limits only, twice: the last limit is the request */
    buf_reset(&pod);
    pb_put_text(&meta, 1, "p");
    pb_put_quantity(&res, 1, "nvidia.com/gpu", "5");
    pb_put_quantity(&res, 1, "nvidia.com/gpu", "2");
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_msg(&pod, 1, &meta);
    pb_put_msg(&pod, 2, &spec);
    assert_int_equal(gpus_of(&pod), 2);
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
}

/* An OwnerReference {uid = 4, controller = 6} as field 13 of an ObjectMeta. */
static void put_owner(struct buf *meta, const char *uid, size_t uid_len, bool controller)
{
    struct buf o;
    buf_init(&o, 1u << 20);
    pb_put_text(&o, 1, "ReplicaSet");
    pb_put_bytes(&o, 4, uid, uid_len);
    pb_put_varint(&o, 6 << 3 | PB_VARINT);
    pb_put_varint(&o, controller);
    pb_put_msg(meta, 13, &o);
    buf_cleanup(&o);
}

/* Edge cases the API server can write, projected the same from JSON and from protobuf. */
static void test_agrees_on_edges(void **state)
{
    (void)state;
    struct buf pod, meta, spec, c, res, st;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20), buf_init(&st, 1u << 20);

    /* status first, unknown fields of every wire type, a request of 0 beside a
     * limit, quantities in several spellings, nodeName "", owners before the
     * controller */
    pb_put_varint(&pod, 99 << 3 | PB_I64);
    assert_int_equal(buf_append(&pod, "12345678", 8), K_OK);
    pb_put_text(&st, 1, "Running");
    pb_put_text(&st, 11, "");
    pb_put_msg(&pod, 3, &st);
    pb_put_varint(&spec, 77 << 3 | PB_I32);
    assert_int_equal(buf_append(&spec, "1234", 4), K_OK);
    pb_put_text(&spec, 10, "");
    pb_put_quantity(&res, 2, "nvidia.com/gpu", "0");
    pb_put_quantity(&res, 1, "nvidia.com/gpu", "2");
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_quantity(&res, 2, "nvidia.com/gpu", "500m");
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_quantity(&res, 2, "nvidia.com/gpu", "0.5");
    pb_put_quantity(&res, 1, "amd.com/gpu", "1e3");
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_msg(&pod, 2, &spec);
    pb_put_varint(&meta, 50 << 3 | PB_VARINT);
    pb_put_varint(&meta, UINT64_MAX);
    pb_put_text(&meta, 1, "p");
    pb_put_text(&meta, 3, "ns");
    put_owner(&meta, "a", 1, false);
    put_owner(&meta, "b", 1, true);
    put_owner(&meta, "c", 1, true);
    struct buf t;
    buf_init(&t, 64);
    pb_put_varint(&t, 1 << 3 | PB_VARINT);
    pb_put_varint(&t, (uint64_t)INT64_C(1700000000));
    pb_put_msg(&meta, 8, &t);
    pb_put_msg(&pod, 1, &meta);
    agree("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
          "\"creationTimestamp\":\"2023-11-14T22:13:20Z\",\"ownerReferences\":["
          "{\"uid\":\"a\",\"controller\":false},{\"uid\":\"b\",\"controller\":true},"
          "{\"uid\":\"c\",\"controller\":true}]},"
          "\"spec\":{\"nodeName\":\"\",\"containers\":["
          "{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"0\"},"
          "\"limits\":{\"nvidia.com/gpu\":\"2\"}}},"
          "{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"500m\"}}},"
          "{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"0.5\"},"
          "\"limits\":{\"amd.com/gpu\":\"1e3\"}}}]},"
          "\"status\":{\"phase\":\"Running\",\"nominatedNodeName\":\"\"}}",
          &pod);

    /* more owner references than are read: the controller past them is not seen by either */
    buf_reset(&pod);
    pb_put_text(&meta, 1, "p");
    struct buf js;
    buf_init(&js, 1u << 20);
    assert_int_equal(buf_append_str(&js, "{\"metadata\":{\"name\":\"p\",\"ownerReferences\":["),
                     K_OK);
    for (size_t i = 0; i <= PROJECT_MAX_OWNER_REFERENCES; i++) {
        put_owner(&meta, "x", 1, i == PROJECT_MAX_OWNER_REFERENCES);
        assert_int_equal(buf_append_str(&js, i ? "," : ""), K_OK);
        assert_int_equal(buf_append_str(&js, i == PROJECT_MAX_OWNER_REFERENCES
                                                 ? "{\"uid\":\"x\",\"controller\":true}"
                                                 : "{\"uid\":\"x\"}"),
                         K_OK);
    }
    assert_int_equal(buf_append_str(&js, "]}}"), K_OK);
    pb_put_msg(&pod, 1, &meta);
    agree(buf_cstr(&js), &pod);

    buf_cleanup(&js), buf_cleanup(&t);
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
    buf_cleanup(&st);
}

/*
 * The API server checks of an ownerReference's uid only that it is not empty
 * (kubernetes/kubernetes: staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go
 * validateOwnerReference), so a pod may carry one that is long, holds a NUL or is not UTF-8.
 * Such a pod still uses its GPUs: it is projected and counted, without an owner.
 */
static void test_odd_owner_uid_still_counted(void **state)
{
    (void)state;
    char long_uid[600];
    memset(long_uid, 'u', sizeof(long_uid));
    static const char nul_uid[] = {'a', 0, 'b'}, bad_uid[] = {'\xc3', '\x28'};
    const struct {
        const char *uid;
        size_t len;
    } uids[] = {{long_uid, sizeof(long_uid)}, {nul_uid, sizeof(nul_uid)}, {bad_uid, 2}};
    struct buf pod, meta, spec, c, res;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20);
    for (size_t i = 0; i < sizeof(uids) / sizeof(uids[0]); i++) {
        buf_reset(&pod);
        pb_put_text(&meta, 1, "p");
        put_owner(&meta, uids[i].uid, uids[i].len, true);
        pb_put_quantity(&res, 2, "nvidia.com/gpu", "2");
        pb_put_msg(&c, 8, &res);
        pb_put_msg(&spec, 2, &c);
        pb_put_msg(&pod, 1, &meta);
        pb_put_msg(&pod, 2, &spec);
        struct kpod p;
        assert_int_equal(project_pod_usage_proto((const uint8_t *)pod.data, pod.len, GPUS, &p),
                         K_OK);
        assert_string_equal(p.name, "p");
        assert_null(p.owner_uid);
        assert_int_equal(resource_list_get(&p.gpu_requests, "nvidia.com/gpu"), 2);
        pod_cleanup(&p);
    }
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
}

/*
 * A resource map entry without its value, or whose Quantity has no string, is a zero Quantity in
 * the generated Go code (mapvalue := &resource.Quantity{}): a request of 0, which keeps the limit
 * from being the request. A Quantity whose string is "" does not parse there (ParseQuantity).
 */
static void test_entry_without_value(void **state)
{
    (void)state;
    struct buf pod, meta, spec, c, res, e, q;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20), buf_init(&e, 1u << 20);
    buf_init(&q, 1u << 20);
    for (int k = 0; k < 3; k++) {
        buf_reset(&pod);
        pb_put_text(&meta, 1, "p");
        pb_put_text(&e, 1, "nvidia.com/gpu");
        if (k > 0) { /* a Quantity without its string, or with "" */
            if (k == 2)
                pb_put_text(&q, 1, "");
            pb_put_msg(&e, 2, &q);
        }
        pb_put_msg(&res, 2, &e); /* requests */
        pb_put_quantity(&res, 1, "nvidia.com/gpu", "2");
        pb_put_msg(&c, 8, &res);
        pb_put_msg(&spec, 2, &c);
        pb_put_msg(&pod, 1, &meta);
        pb_put_msg(&pod, 2, &spec);
        struct kpod p;
        int rc = project_pod_usage_proto((const uint8_t *)pod.data, pod.len, GPUS, &p);
        if (k == 2) {
            assert_int_equal(rc, K_EPARSE);
            continue;
        }
        assert_int_equal(rc, K_OK);
        assert_int_equal(resource_list_get(&p.gpu_requests, "nvidia.com/gpu"), 0);
        pod_cleanup(&p);
    }
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
    buf_cleanup(&e), buf_cleanup(&q);
}

/* A container asking for `gpus` nvidia.com/gpu as field `field` (2: containers, 20: init). */
static void put_container(struct buf *spec, unsigned field, const char *gpus)
{
    struct buf c, res;
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20);
    pb_put_quantity(&res, 2, "nvidia.com/gpu", gpus);
    pb_put_msg(&c, 8, &res);
    pb_put_msg(spec, field, &c);
    buf_cleanup(&c), buf_cleanup(&res);
}

/*
 * A message field seen twice is merged into the first by the generated Go code (repeated fields
 * append, map entries replace, a string seen again replaces it, "" too): a spec in two parts is
 * one spec, whose overhead is added once and whose init containers count against all of its
 * containers; a nodeName or nominatedNodeName written again as "" is none.
 */
static void test_repeated_message_merges(void **state)
{
    (void)state;
    struct buf pod, meta, spec, st;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&st, 1u << 20);
    pb_put_text(&meta, 1, "p");
    pb_put_msg(&pod, 1, &meta);
    pb_put_quantity(&spec, 32, "nvidia.com/gpu", "1"); /* overhead */
    put_container(&spec, 20, "4");                     /* an init container */
    pb_put_text(&spec, 10, "n0");
    pb_put_msg(&pod, 2, &spec);
    pb_put_quantity(&spec, 32, "nvidia.com/gpu", "1");
    put_container(&spec, 2, "2");
    pb_put_text(&spec, 10, "");
    pb_put_msg(&pod, 2, &spec);
    pb_put_text(&st, 11, "n1");
    pb_put_msg(&pod, 3, &st);
    pb_put_text(&st, 11, "");
    pb_put_msg(&pod, 3, &st);
    struct kpod p;
    assert_int_equal(project_pod_usage_proto((const uint8_t *)pod.data, pod.len, GPUS, &p), K_OK);
    /* max(containers 2, init 4) + overhead 1 */
    assert_int_equal(resource_list_get(&p.gpu_requests, "nvidia.com/gpu"), 5);
    assert_null(p.node_name);
    assert_null(p.nominated_node);
    pod_cleanup(&p);
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&st);
}

/*
 * The API server accepts a GPU quantity of any length (ParseQuantity; a huge one passes the
 * integer check when its MilliValue wraps to a multiple of 1000): such a pod projects from
 * protobuf as from JSON, clamped, not dropped.
 */
static void test_long_quantity(void **state)
{
    (void)state;
    char q[301];
    memset(q, '1', sizeof(q) - 1);
    q[sizeof(q) - 1] = '\0';
    struct buf pod, meta, spec, c, res, js;
    buf_init(&pod, 1u << 20), buf_init(&meta, 1u << 20), buf_init(&spec, 1u << 20);
    buf_init(&c, 1u << 20), buf_init(&res, 1u << 20), buf_init(&js, 1u << 20);
    pb_put_text(&meta, 1, "p");
    pb_put_quantity(&res, 2, "nvidia.com/gpu", q);
    pb_put_msg(&c, 8, &res);
    pb_put_msg(&spec, 2, &c);
    pb_put_msg(&pod, 1, &meta);
    pb_put_msg(&pod, 2, &spec);
    assert_int_equal(buf_printf(&js,
                                "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{"
                                "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"%s\"}}}]}}",
                                q),
                     K_OK);
    agree(buf_cstr(&js), &pod);
    assert_true(gpus_of(&pod) > 1000000);
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec), buf_cleanup(&c), buf_cleanup(&res);
    buf_cleanup(&js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_json),
        cmocka_unit_test(test_nodes_agree_with_json),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_duplicate_map_key),
        cmocka_unit_test(test_agrees_on_edges),
        cmocka_unit_test(test_odd_owner_uid_still_counted),
        cmocka_unit_test(test_entry_without_value),
        cmocka_unit_test(test_repeated_message_merges),
        cmocka_unit_test(test_long_quantity),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
