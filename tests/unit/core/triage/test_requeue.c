/*
 * test_requeue.c - core/triage/requeue.c: which pending pods a store change can give another
 * word. Hand-picked changes (a GPU freed where a pod is exhausted, taken where it fits, a taint
 * on a node that does not decide, a label that adds a candidate), and the equivalence property:
 * over random changes on random small clusters, re-checking only what the policy names leaves
 * every pending GPU pod with the word a classification from scratch gives
 * (tests/lib/requeue_model.h; the longer run is tests/fuzz/fuzz_requeue.c).
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

#include "cache/dra_store.h"
#include "cache/store.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "requeue_model.h"
#include "triage/requeue.h"
#include "triage/triage.h"
#include "util/result.h"

struct world {
    struct gpu_set gpus;
    struct store *s;
};

static int setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    gpu_set_parse(&w->gpus, GPU_SET_DEFAULT);
    w->s = store_new(&w->gpus);
    assert_non_null(w->s);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;
    store_free(w->s);
    gpu_set_cleanup(&w->gpus);
    free(w);
    return 0;
}

static void node(struct world *w, const char *name, const char *cap, const char *alloc,
                 const char *taint, struct store_delta *d)
{
    json_object *o = test_node(name, cap, alloc, taint, NULL);
    assert_int_equal(store_node_apply_json_delta(w->s, o, 0, NULL, d), K_OK);
    json_object_put(o);
}

static void pod(struct world *w, const char *name, const char *gpus, const char *on,
                const char *phase, int tolerate_all, struct store_delta *d)
{
    json_object *o = test_pod("t", name, gpus, on, phase, NULL, tolerate_all, NULL);
    struct kpod p;
    assert_int_equal(project_pod(o, &w->gpus, &p), K_OK);
    json_object_put(o);
    assert_int_equal(store_pod_upsert_delta(w->s, &p, d), K_OK);
}

/* The word of pod t/name now, as a record. */
static struct requeue_record classified(struct world *w, const char *name)
{
    struct requeue_record rec = {.valid = true};
    store_read_lock(w->s);
    const struct kpod *p = store_pod_get(w->s, "t", name);
    assert_non_null(p);
    struct triage_source src = {.store = w->s};
    struct classify_result r;
    r.verdicts = NULL;
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    rec.word = r.cause;
    snprintf(rec.uid, sizeof(rec.uid), "%s", p->uid ? p->uid : "");
    store_read_unlock(w->s);
    return rec;
}

static bool affects(struct world *w, const char *name, const struct requeue_record *rec,
                    const struct store_delta *d)
{
    store_read_lock(w->s);
    const struct kpod *p = store_pod_get(w->s, "t", name);
    const struct knode *n = d->node[0] ? store_node_get(w->s, d->node) : NULL;
    bool r = requeue_after_store_change(p, rec, d, n, store_node_usage, w->s);
    store_read_unlock(w->s);
    return r;
}

/* The store describes what changed: the node, the usage sums before and after, the node
 * replaced. */
static void test_store_describes_changes(void **state)
{
    struct world *w = *state;
    struct store_delta d;
    node(w, "n0", "4", "4", NULL, &d);
    assert_true(d.changed & STORE_CHANGED_NODES);
    assert_int_equal(d.what, STORE_DELTA_NODE_ADDED);
    assert_string_equal(d.node, "n0");
    assert_null(d.old_node);
    store_delta_cleanup(&d);

    node(w, "n0", "4", "2", "gpu=present:NoSchedule", &d);
    assert_int_equal(d.what, STORE_DELTA_TAINTS | STORE_DELTA_ALLOCATABLE);
    assert_non_null(d.old_node);
    assert_int_equal(d.old_node->n_taints, 0);
    store_delta_cleanup(&d);
    node(w, "n0", "4", "2", "gpu=present:NoSchedule", &d); /* the same again: nothing */
    assert_int_equal(d.changed, 0);
    assert_int_equal(d.what, 0);
    store_delta_cleanup(&d);

    pod(w, "holder", "3", "n0", "Running", 1, &d);
    assert_true(d.changed & STORE_CHANGED_USAGE);
    assert_int_equal(d.what, STORE_DELTA_USAGE_TAKEN);
    assert_string_equal(d.node, "n0");
    assert_int_equal(d.n_usage, 1);
    assert_string_equal(d.usage[0].resource, "nvidia.com/gpu");
    assert_int_equal(d.usage[0].before, 0);
    assert_int_equal(d.usage[0].after, 3);
    store_delta_cleanup(&d);
    pod(w, "holder", "3", "n0", "Succeeded", 1, &d);
    assert_int_equal(d.what, STORE_DELTA_USAGE_FREED);
    assert_int_equal(d.usage[0].before, 3);
    assert_int_equal(d.usage[0].after, 0);
    store_delta_cleanup(&d);

    pod(w, "wait", "1", NULL, "Pending", 0, &d); /* its own change only */
    assert_int_equal(d.changed, STORE_CHANGED_POD);
    assert_int_equal(d.what, 0);
    assert_string_equal(d.node, "");
    store_delta_cleanup(&d);

    assert_int_equal(store_node_delete_delta(w->s, "n0", &d), K_OK);
    assert_int_equal(d.what, STORE_DELTA_NODE_REMOVED);
    assert_non_null(d.old_node);
    assert_string_equal(d.old_node->name, "n0");
    store_delta_cleanup(&d);
    assert_int_equal(store_pod_delete_delta(w->s, "t", "nope", &d), K_OK);
    assert_int_equal(d.changed, 0);
    store_delta_cleanup(&d);
}

/* GPUs freed or taken on a node: only the pods whose closest node that can move. */
static void test_usage_changes(void **state)
{
    struct world *w = *state;
    struct store_delta d;
    node(w, "n0", "2", "2", NULL, &d);
    store_delta_cleanup(&d);
    node(w, "n1", "8", "8", "gpu=present:NoSchedule", &d);
    store_delta_cleanup(&d);
    pod(w, "holder", "2", "n0", "Running", 0, &d);
    store_delta_cleanup(&d);
    pod(w, "big", "2", NULL, "Pending", 0, &d); /* exhausted on n0, tainted n1 */
    store_delta_cleanup(&d);
    pod(w, "tol", "1", NULL, "Pending", 1, &d); /* fits on n1 */
    store_delta_cleanup(&d);
    struct requeue_record big = classified(w, "big"), tol = classified(w, "tol");
    assert_int_equal(big.word, CAUSE_EXHAUSTED);
    assert_int_equal(tol.word, CAUSE_GPU_FITS);

    /* the holder finishes: n0 frees 2 GPUs: big fits now; tol already fits */
    pod(w, "holder", "2", "n0", "Succeeded", 0, &d);
    assert_true(affects(w, "big", &big, &d));
    assert_false(affects(w, "tol", &tol, &d));
    store_delta_cleanup(&d);
    big = classified(w, "big");
    assert_int_equal(big.word, CAUSE_GPU_FITS);

    /* one GPU taken on n0: big no longer fits there (its only untainted candidate) */
    pod(w, "one", "1", "n0", "Running", 0, &d);
    assert_true(affects(w, "big", &big, &d));
    /* without a record: always */
    assert_true(affects(w, "big", NULL, &d));
    store_delta_cleanup(&d);
    big = classified(w, "big");
    assert_int_equal(big.word, CAUSE_EXHAUSTED);

    /* with a record of another pod of the name: always */
    struct requeue_record other = big;
    snprintf(other.uid, sizeof(other.uid), "another");
    pod(w, "two", "1", "n1", "Running", 1, &d);
    assert_true(affects(w, "big", &other, &d));
    /* a GPU taken on tainted n1 does not move big, which stops at the taint there */
    assert_false(affects(w, "big", &big, &d));
    store_delta_cleanup(&d);
}

/* Node changes: a taint on a node that does not decide, a node the pod cannot select, a new
 * candidate. */
static void test_node_changes(void **state)
{
    struct world *w = *state;
    struct store_delta d;
    node(w, "n0", NULL, NULL, NULL, &d); /* a CPU node */
    store_delta_cleanup(&d);
    node(w, "n1", "4", "0", NULL, &d); /* driver failure */
    store_delta_cleanup(&d);
    pod(w, "p", "1", NULL, "Pending", 0, &d);
    store_delta_cleanup(&d);
    struct requeue_record p = classified(w, "p");
    assert_int_equal(p.word, CAUSE_ALLOCATABLE_ZERO);

    /* the CPU node is tainted: it was behind n1 and stays so */
    node(w, "n0", NULL, NULL, "x=y:NoSchedule", &d);
    assert_false(affects(w, "p", &p, &d));
    store_delta_cleanup(&d);
    /* n1's driver comes back: the pod fits */
    node(w, "n1", "4", "4", NULL, &d);
    assert_true(affects(w, "p", &p, &d));
    store_delta_cleanup(&d);
    p = classified(w, "p");
    assert_int_equal(p.word, CAUSE_GPU_FITS);
    /* a new node with GPUs: no closer than fitting */
    node(w, "n2", "8", "8", NULL, &d);
    assert_false(affects(w, "p", &p, &d));
    store_delta_cleanup(&d);
    /* n1 tainted: n2 still fits, but the policy cannot know n1 was not the only one */
    node(w, "n1", "4", "4", "gpu=present:NoSchedule", &d);
    assert_true(affects(w, "p", &p, &d));
    store_delta_cleanup(&d);
    p = classified(w, "p");
    assert_int_equal(p.word, CAUSE_GPU_FITS);

    /* a word before node selection reads no node */
    struct requeue_record gated = p;
    gated.word = CAUSE_SCHEDULING_GATED;
    assert_int_equal(store_node_delete_delta(w->s, "n2", &d), K_OK);
    assert_false(affects(w, "p", &gated, &d));
    assert_true(affects(w, "p", &p, &d)); /* n2 may have been the closest */
    /* an incomplete description: always */
    d.overflow = true;
    assert_true(affects(w, "p", &gated, &d));
    store_delta_cleanup(&d);
}

static void test_dra_changes(void **state)
{
    (void)state;
    struct pod_claim_ref ref = {.name = "gpu", .claim_name = "mine"};
    struct kpod p = {.ns = "t", .uid = "u", .claims = &ref, .n_claims = 1};
    struct requeue_record rec = {.valid = true, .word = CAUSE_DRA_CLASS_MISSING, .uid = "u"};
    struct requeue_dra_change slice = {.kind = DRA_KIND_SLICE, .name = "s"};
    /* devices: not for a word before node selection, unless unreadable */
    assert_false(requeue_after_dra_event(&p, &rec, &slice, NULL));
    slice.unreadable = true;
    assert_true(requeue_after_dra_event(&p, &rec, &slice, NULL));
    slice.unreadable = false;
    rec.word = CAUSE_DRA_EXHAUSTED;
    assert_true(requeue_after_dra_event(&p, &rec, &slice, NULL));
    rec.word = CAUSE_LABEL_MISMATCH;
    assert_true(requeue_after_dra_event(&p, &rec, &slice, NULL));
    rec.word = CAUSE_SCHEDULING_GATED;
    assert_true(requeue_after_dra_event(&p, NULL, &slice, NULL));
    rec.valid = false;
    assert_true(requeue_after_dra_event(&p, &rec, &slice, NULL));
    rec.valid = true;
    /* a claim that holds no devices: its users only, whatever their word */
    struct requeue_dra_change claim = {.kind = DRA_KIND_CLAIM, .ns = "t", .name = "mine"};
    rec.word = CAUSE_GPU_FITS;
    assert_true(requeue_after_dra_event(&p, &rec, &claim, NULL));
    claim.name = "other";
    assert_false(requeue_after_dra_event(&p, &rec, &claim, NULL));
    /* ... one that holds devices: its users, and the pods whose word reads devices */
    claim.holds_devices = true;
    assert_true(requeue_after_dra_event(&p, &rec, &claim, NULL));
    rec.word = CAUSE_DRA_CLAIM_MISSING;
    assert_false(requeue_after_dra_event(&p, &rec, &claim, NULL));
    claim.name = "mine";
    assert_true(requeue_after_dra_event(&p, &rec, &claim, NULL));
    /* a template: the pods that name it; a class: a claim not cached may name it */
    struct requeue_dra_change tmpl = {.kind = DRA_KIND_TEMPLATE, .ns = "t", .name = "x"};
    assert_false(requeue_after_dra_event(&p, &rec, &tmpl, NULL));
    struct requeue_dra_change cls = {.kind = DRA_KIND_CLASS, .name = "gpu.example.com"};
    assert_true(requeue_after_dra_event(&p, &rec, &cls, NULL));
    /* a pod without claims: never */
    struct kpod plain = {.ns = "t", .uid = "v"};
    assert_false(requeue_after_dra_event(&plain, NULL, &slice, NULL));
}

/* A pod asking nvidia.com/gpu (no claims): DRA events concern it only while a DeviceClass serves
 * it (KEP-5004), or served it when its word was given. */
static void test_dra_changes_extended(void **state)
{
    (void)state;
    struct pod_ext_request er = {.resource = "nvidia.com/gpu", .count = 1};
    struct pod_ext ext = {.requests = &er, .n_requests = 1};
    struct kpod p = {.ns = "t", .uid = "u", .ext = &ext};
    struct requeue_record rec = {.valid = true, .word = CAUSE_NO_GPU_NODE, .uid = "u"};
    struct requeue_dra_change slice = {.kind = DRA_KIND_SLICE, .name = "s"};
    struct requeue_dra_change cls = {.kind = DRA_KIND_CLASS, .name = "gpu.nvidia.com"};
    struct dra_store *dra = dra_store_new();
    assert_non_null(dra);
    dra_store_read_lock(dra);
    assert_false(requeue_after_dra_event(&p, &rec, &slice, dra)); /* no class serves it */
    assert_false(requeue_after_dra_event(&p, &rec, &cls, dra));
    rec.word = CAUSE_DRA_EXHAUSTED; /* a class served it: the class may have gone */
    assert_true(requeue_after_dra_event(&p, &rec, &cls, dra));
    assert_true(requeue_after_dra_event(&p, &rec, &slice, dra));
    dra_store_read_unlock(dra);
    json_object *c = json_tokener_parse(
        "{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"extendedResourceName\":"
        "\"nvidia.com/gpu\"}}");
    assert_int_equal(dra_store_apply_json(dra, DRA_KIND_CLASS, c, 0), K_OK);
    json_object_put(c);
    dra_store_read_lock(dra);
    rec.word = CAUSE_GPU_FITS;
    assert_true(triage_ext_served(&p, dra));
    assert_true(requeue_after_dra_event(&p, &rec, &slice, dra));
    assert_true(requeue_after_dra_event(&p, &rec, &cls, dra));
    rec.word = CAUSE_SCHEDULING_GATED; /* reads no device */
    assert_false(requeue_after_dra_event(&p, &rec, &slice, dra));
    dra_store_read_unlock(dra);
    dra_store_free(dra);
}

/* xorshift64*: a deterministic stream for the property runs. */
static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ULL;
}

/* Pod t/name, pending, with a PodScheduled condition (status False, reason Unschedulable). */
static void pending_with_message(struct world *w, const char *name, const char *reason,
                                 const char *message, struct store_delta *d)
{
    json_object *o = test_pod("t", name, "1", NULL, "Pending", NULL, 0, NULL);
    test_set_condition(o, "PodScheduled", "False", reason, message);
    struct kpod p;
    assert_int_equal(project_pod(o, &w->gpus, &p), K_OK);
    json_object_put(o);
    assert_int_equal(store_pod_upsert_delta(w->s, &p, d), K_OK);
}

/* kube-scheduler rewrites a pending pod's message on each retry: a classified pod is not
 * re-checked for it; anything more (the reason), no record, or another uid is. */
static void test_scheduler_message(void **state)
{
    struct world *w = *state;
    struct store_delta d;
    node(w, "n0", "1", "1", NULL, &d);
    store_delta_cleanup(&d);
    pending_with_message(w, "p", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.",
                         &d);
    assert_true(d.changed & STORE_CHANGED_POD);
    assert_int_equal(d.what, 0); /* new: its own check */
    store_delta_cleanup(&d);
    struct requeue_record rec = classified(w, "p");

    pending_with_message(w, "p", "Unschedulable", "0/1 nodes are available: 1 Insufficient memory.",
                         &d);
    assert_true(d.changed & STORE_CHANGED_POD);
    assert_int_equal(d.what, STORE_DELTA_POD_SCHEDULED_MESSAGE);
    assert_false(requeue_after_own_change(rec.uid, &rec, &d));
    assert_true(requeue_after_own_change(rec.uid, NULL, &d));
    assert_true(requeue_after_own_change("another-uid", &rec, &d));
    struct requeue_record running = {.valid = false};
    assert_true(requeue_after_own_change(rec.uid, &running, &d));
    store_delta_cleanup(&d);

    pending_with_message(w, "p", "SchedulerError", "0/1 nodes are available: 1 Insufficient cpu.",
                         &d);
    assert_int_equal(d.what, 0);
    assert_true(requeue_after_own_change(rec.uid, &rec, &d));
    store_delta_cleanup(&d);
}

/* The property: a few thousand random changes per seed, the words compared after each. */
static void test_targeted_equals_recheck_all(void **state)
{
    (void)state;
    size_t sum_t = 0, sum_a = 0, sum_s = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct rq_model *m = rq_model_new();
        assert_non_null(m);
        uint64_t x = seed * 0x9E3779B97F4A7C15ULL;
        for (int i = 0; i < 3000; i++) {
            uint64_t r = next(&x);
            if (rq_model_step(m, (uint8_t)r, (uint8_t)(r >> 8), (uint8_t)(r >> 16),
                              (uint8_t)(r >> 24)) != 0)
                fail_msg("seed %llu: %s", (unsigned long long)seed, rq_model_why(m));
        }
        size_t t, a, s;
        rq_model_counts(m, &t, &a, &s);
        sum_t += t;
        sum_a += a;
        sum_s += s;
        rq_model_free(m);
    }
    print_message("%zu changes: %zu classifications targeted, %zu re-checking all\n", sum_s, sum_t,
                  sum_a);
    assert_true(sum_t < sum_a); /* it does narrow */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_describes_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_changes, setup, teardown),
        cmocka_unit_test(test_dra_changes),
        cmocka_unit_test(test_dra_changes_extended),
        cmocka_unit_test_setup_teardown(test_scheduler_message, setup, teardown),
        cmocka_unit_test(test_targeted_equals_recheck_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
