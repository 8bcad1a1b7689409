/* Tests for controller/reconcile.c: which pods get written, and what, through a recording writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "objects.h"
#include "reconcile.h"
#include "util/result.h"

struct recorder {
    int annotations, events;
    char cause[32], detail[1024], event_type[16], reason[64];
    int fail_annotate; /* K_* to return from annotate */
};

static int rec_annotate(void *ctx, const char *ns, const char *name, const char *cause,
                        const char *detail, struct kube_error *err)
{
    (void)ns;
    (void)name;
    (void)err;
    struct recorder *r = ctx;
    if (r->fail_annotate)
        return r->fail_annotate;
    r->annotations++;
    snprintf(r->cause, sizeof(r->cause), "%s", cause);
    snprintf(r->detail, sizeof(r->detail), "%s", detail);
    return K_OK;
}

static int rec_event(void *ctx, const struct reconcile_plan *plan, struct kube_error *err)
{
    (void)err;
    struct recorder *r = ctx;
    r->events++;
    snprintf(r->event_type, sizeof(r->event_type), "%s", plan->event_type);
    snprintf(r->reason, sizeof(r->reason), "%s", plan->event_reason);
    return K_OK;
}

static struct gpu_set gpus;
static struct store *store;

static int setup(void **state)
{
    (void)state;
    gpu_set_parse(&gpus, GPU_SET_DEFAULT);
    store = store_new(&gpus);
    unsigned ch = 0;
    json_object *nodes[] = {
        test_node("lab-node-0", "2", "2", "nvidia.com/gpu=present:NoSchedule", NULL),
        test_node("lab-node-1", NULL, NULL, NULL, NULL),
        test_node("lab-node-2", "4", "0", NULL, NULL),
    };
    for (size_t i = 0; i < 3; i++) {
        store_node_apply_json(store, nodes[i], 0, NULL, &ch);
        json_object_put(nodes[i]);
    }
    json_object *ok =
        test_pod("gpu-triage", "case-ok", "1", "lab-node-0", "Running", "lab-node-0", 1, NULL);
    store_pod_apply_json(store, ok, 0, NULL, &ch);
    json_object_put(ok);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    store_free(store);
    gpu_set_cleanup(&gpus);
    return 0;
}

static void put(json_object *pod)
{
    unsigned ch = 0;
    assert_int_equal(store_pod_apply_json(store, pod, 0, NULL, &ch), K_OK);
    json_object_put(pod);
}

#define POD_UID "11111111-2222-3333-4444-555555555555" /* what test_pod() sets */

static struct recorder run_uid(const char *key, const char *written, const char *written_uid)
{
    struct recorder r = {0};
    struct pod_writer w = {&r, rec_annotate, rec_event};
    struct reconcile_plan plan;
    assert_int_equal(reconcile_plan(store, NULL, NULL, NULL, key, written, written_uid, &plan),
                     K_OK);
    struct kube_error err = {0};
    assert_int_equal(reconcile_apply(&plan, &w, &err, NULL), K_OK);
    return r;
}

static struct recorder run(const char *key, const char *written)
{
    return run_uid(key, written, written ? POD_UID : NULL);
}

static void test_blocked_pod_is_annotated_once(void **state)
{
    (void)state;
    put(test_pod("gpu-triage", "case-exhaust", "2", NULL, "Pending", "lab-node-0", 1, NULL));
    struct recorder r = run("gpu-triage/case-exhaust", NULL);
    assert_int_equal(r.annotations, 1);
    assert_int_equal(r.events, 1);
    assert_string_equal(r.cause, "exhausted");
    assert_string_equal(r.event_type, "Warning");
    assert_string_equal(r.reason, "GPUExhausted");
    assert_non_null(strstr(r.detail, "lab-node-0"));
    /* written but not yet seen through the watch: no second write */
    r = run("gpu-triage/case-exhaust", "exhausted");
    assert_int_equal(r.annotations + r.events, 0);
    /* a cause written for an earlier pod of the same name does not count */
    r = run_uid("gpu-triage/case-exhaust", "exhausted", "00000000-old-pod");
    assert_int_equal(r.annotations, 1);
    /* seen through the watch: still nothing */
    put(test_pod("gpu-triage", "case-exhaust", "2", NULL, "Pending", "lab-node-0", 1, "exhausted"));
    r = run("gpu-triage/case-exhaust", NULL);
    assert_int_equal(r.annotations + r.events, 0);
}

/* A pod its kubelet rejected: node-rejected once with a Warning Event, then never again. */
static void test_rejected_pod_is_written_once(void **state)
{
    (void)state;
    json_object *p = test_pod("gpu-triage", "rejected", "1", "lab-node-0", "Failed", NULL, 1, NULL);
    json_object *st = NULL;
    json_object_object_get_ex(p, "status", &st);
    json_object_object_add(st, "reason", json_object_new_string("TopologyAffinityError"));
    json_object_object_add(st, "message",
                           json_object_new_string("Resources cannot be allocated with Topology "
                                                  "locality"));
    json_object *again = json_object_get(p);
    put(p);
    struct recorder r = run("gpu-triage/rejected", NULL);
    assert_int_equal(r.annotations, 1);
    assert_int_equal(r.events, 1);
    assert_string_equal(r.cause, "node-rejected");
    assert_string_equal(r.event_type, "Warning");
    assert_string_equal(r.reason, "KubeletRejected");
    assert_non_null(strstr(r.detail, "TopologyAffinityError: Resources cannot be allocated"));
    /* seen through the watch with its annotation: nothing more */
    json_object *meta = NULL;
    json_object_object_get_ex(again, "metadata", &meta);
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, "gputri/cause", json_object_new_string("node-rejected"));
    json_object_object_add(meta, "annotations", ann);
    put(again);
    r = run("gpu-triage/rejected", NULL);
    assert_int_equal(r.annotations + r.events, 0);
}

/* preempting is not blocking: a Normal Event. */
static void test_preempting_is_normal(void **state)
{
    (void)state;
    json_object *p = test_pod("gpu-triage", "high", "2", NULL, "Pending", "lab-node-0", 1, NULL);
    json_object *st = NULL;
    json_object_object_get_ex(p, "status", &st);
    json_object_object_add(st, "nominatedNodeName", json_object_new_string("lab-node-0"));
    put(p);
    struct recorder r = run("gpu-triage/high", NULL);
    assert_string_equal(r.cause, "preempting");
    assert_string_equal(r.event_type, "Normal");
    assert_string_equal(r.reason, "GPUPreempting");
}

/* binding (nominated, no victims, PVC volumes, nothing to wait for): left alone on a pod never
 * annotated; over an earlier word, a Normal Event; written again under the same word only when
 * its detail differs from the pod's gputri/detail. */
static void test_binding_detail_refreshed(void **state)
{
    (void)state;
    json_object *p = test_pod("gpu-triage", "binder", "1", NULL, "Pending", "lab-node-0", 1, NULL);
    json_object *st = NULL, *spec = NULL, *meta = NULL;
    json_object_object_get_ex(p, "status", &st);
    json_object_object_get_ex(p, "spec", &spec);
    json_object_object_add(st, "nominatedNodeName", json_object_new_string("lab-node-0"));
    json_object_object_add(spec, "volumes",
                           json_tokener_parse("[{\"name\":\"data\",\"persistentVolumeClaim\":"
                                              "{\"claimName\":\"data\"}}]"));
    json_object *again = json_object_get(p);
    put(p);
    /* bound at once (nothing to wait for), never annotated: left alone */
    struct recorder r0 = run("gpu-triage/binder", NULL);
    assert_int_equal(r0.annotations + r0.events, 0);
    /* annotated before (a word it has left): binding is written */
    struct recorder r = run("gpu-triage/binder", "exhausted");
    assert_string_equal(r.cause, "binding");
    assert_string_equal(r.event_type, "Normal");
    assert_string_equal(r.reason, "GPUBinding");
    assert_non_null(strstr(r.detail, "binding PVC volumes"));
    /* written, but the store has not seen the detail yet: written again */
    struct recorder r2 = run("gpu-triage/binder", "binding");
    assert_int_equal(r2.annotations, 1);
    /* the pod carries this detail: nothing to write */
    json_object_object_get_ex(again, "metadata", &meta);
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, "gputri/cause", json_object_new_string("binding"));
    json_object_object_add(ann, "gputri/detail", json_object_new_string(r.detail));
    json_object_object_add(meta, "annotations", ann);
    put(again);
    struct recorder r3 = run("gpu-triage/binder", "binding");
    assert_int_equal(r3.annotations + r3.events, 0);
}

static void test_cause_change_rewrites(void **state)
{
    (void)state;
    put(test_pod("gpu-triage", "case-alloc0", "1", NULL, "Pending", "lab-node-2", 1,
                 "no-gpu-node"));
    struct recorder r = run("gpu-triage/case-alloc0", NULL);
    assert_int_equal(r.annotations, 1);
    assert_string_equal(r.cause, "allocatable-zero");
    assert_string_equal(r.reason, "GPUAllocatableZero");
}

static void test_placed_pod_becomes_ok(void **state)
{
    (void)state;
    put(test_pod("gpu-triage", "was-blocked", "1", "lab-node-2", "Running", NULL, 1, "exhausted"));
    struct recorder r = run("gpu-triage/was-blocked", NULL);
    assert_int_equal(r.annotations, 1);
    assert_string_equal(r.cause, "ok");
    assert_string_equal(r.event_type, "Normal");
    assert_string_equal(r.reason, "GPUPlaced");
    assert_string_equal(r.detail, "bound to node lab-node-2");
}

static void test_untouched_pods(void **state)
{
    (void)state;
    /* never blocked and placed */
    struct recorder r = run("gpu-triage/case-ok", NULL);
    assert_int_equal(r.annotations + r.events, 0);
    /* no GPU request */
    put(test_pod("gpu-triage", "case-norequest", NULL, NULL, "Pending", "lab-node-0", 1, NULL));
    r = run("gpu-triage/case-norequest", NULL);
    assert_int_equal(r.annotations + r.events, 0);
    /* gone */
    r = run("gpu-triage/nope", NULL);
    assert_int_equal(r.annotations + r.events, 0);
}

static void test_gpu_fits_waits_for_scheduler(void **state)
{
    (void)state;
    /* fits on lab-node-0 (1 free): the scheduler just has not placed it yet */
    put(test_pod("gpu-triage", "fits", "1", NULL, "Pending", "lab-node-0", 1, NULL));
    struct recorder r = run("gpu-triage/fits", NULL);
    assert_int_equal(r.annotations + r.events, 0);
    json_object *pod = test_pod("gpu-triage", "fits", "1", NULL, "Pending", "lab-node-0", 1, NULL);
    test_pod_set_scheduled(pod, "0/3 nodes are available: 3 Insufficient cpu.");
    put(pod);
    r = run("gpu-triage/fits", NULL);
    assert_int_equal(r.annotations, 1);
    assert_string_equal(r.cause, "gpu-fits");
    assert_non_null(strstr(r.detail, "Insufficient cpu"));
}

static void test_vanished_pod_is_not_an_error(void **state)
{
    (void)state;
    put(test_pod("gpu-triage", "racy", "2", NULL, "Pending", "lab-node-0", 1, NULL));
    struct recorder r = {.fail_annotate = K_ENOTFOUND};
    struct pod_writer w = {&r, rec_annotate, rec_event};
    struct reconcile_plan plan;
    reconcile_plan(store, NULL, NULL, NULL, "gpu-triage/racy", NULL, NULL, &plan);
    struct kube_error err = {0};
    assert_int_equal(reconcile_apply(&plan, &w, &err, NULL), K_ENOTFOUND);
    assert_int_equal(r.events, 0);
    r.fail_annotate = K_ESERVER;
    assert_int_equal(reconcile_apply(&plan, &w, &err, NULL), K_ESERVER);
}

/*
 * DRA: plan for the pod of a tests/fixtures/dra fixture, from stores holding the fixture's
 * nodes, pods and DRA objects. Returns the plan's kind; *cause receives its cause.
 */
static enum reconcile_kind plan_fixture(const char *file, enum cause *cause, char *detail,
                                        size_t len)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "dra/%s", file);
    json_object *root = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(root);
    struct store *s = store_new(&gpus);
    struct dra_store *ds = dra_store_new();
    struct gpu_set dra_classes;
    assert_int_equal(gpu_set_parse(&dra_classes, DRA_GPU_SET_DEFAULT), K_OK);
    static const char *const keys[DRA_KIND_COUNT] = {"resourceclaims", "resourceclaimtemplates",
                                                     "deviceclasses", "resourceslices",
                                                     "devicetaintrules"};
    unsigned ch = 0;
    json_object *a = NULL;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        json_object_object_get_ex(root, keys[k], &a);
        for (size_t i = 0; a && i < json_object_array_length(a); i++)
            assert_int_equal(
                dra_store_apply_json(ds, (enum dra_kind)k, json_object_array_get_idx(a, i), 0),
                K_OK);
        a = NULL;
    }
    json_object_object_get_ex(root, "nodes", &a);
    for (size_t i = 0; a && i < json_object_array_length(a); i++)
        assert_int_equal(store_node_apply_json(s, json_object_array_get_idx(a, i), 0, NULL, &ch),
                         K_OK);
    a = NULL;
    json_object_object_get_ex(root, "pods", &a);
    for (size_t i = 0; a && i < json_object_array_length(a); i++)
        assert_int_equal(store_pod_apply_json(s, json_object_array_get_idx(a, i), 0, NULL, &ch),
                         K_OK);
    json_object *pod = NULL;
    json_object_object_get_ex(root, "pod", &pod);
    char key[STORE_KEY_MAX];
    assert_int_equal(store_pod_apply_json(s, pod, 0, key, &ch), K_OK);
    struct reconcile_plan plan;
    assert_int_equal(reconcile_plan(s, ds, &dra_classes, NULL, key, NULL, NULL, &plan), K_OK);
    *cause = plan.cause;
    snprintf(detail, len, "%s", plan.detail);
    /* without DRA the same pod is not classified with its claims: never a DRA cause */
    struct reconcile_plan plain;
    assert_int_equal(reconcile_plan(s, NULL, NULL, NULL, key, NULL, NULL, &plain), K_OK);
    assert_true(plain.kind != RECONCILE_WRITE || plain.cause < CAUSE_DRA_TEMPLATE_MISSING);
    gpu_set_cleanup(&dra_classes);
    dra_store_free(ds);
    store_free(s);
    json_object_put(root);
    return plan.kind;
}

static void test_dra_pods(void **state)
{
    (void)state;
    enum cause c;
    char d[1024];
    /* no PodScheduled condition at all (the claim cannot be created): still written */
    assert_int_equal(plan_fixture("recorded-dra-template-missing.json", &c, d, sizeof(d)),
                     RECONCILE_WRITE);
    assert_int_equal(c, CAUSE_DRA_TEMPLATE_MISSING);
    assert_non_null(strstr(d, "gpu-large"));
    assert_int_equal(plan_fixture("recorded-dra-claim-missing.json", &c, d, sizeof(d)),
                     RECONCILE_WRITE);
    assert_int_equal(c, CAUSE_DRA_CLAIM_MISSING);
    assert_int_equal(plan_fixture("recorded-dra-exhausted.json", &c, d, sizeof(d)),
                     RECONCILE_WRITE);
    assert_int_equal(c, CAUSE_DRA_EXHAUSTED);
    assert_non_null(strstr(d, "dra-holder"));
    /* a pending pod whose only claim is not a GPU claim is left alone */
    assert_int_equal(plan_fixture("hand-nongpu-class.json", &c, d, sizeof(d)), RECONCILE_NOTHING);
}

/* A pod created at 2026-12-01T10:00:00Z (T0) blocked by no-gpu-node, planned at T0 + age
 * with the env given. */
#define T0 1796119200
static struct reconcile_plan plan_at(int64_t age, int64_t autoscaler_seen,
                                     struct pod_events *events)
{
    json_object *pod =
        test_pod("gpu-triage", "case-scale", "1", NULL, "Pending", "lab-node-1", 1, NULL);
    json_object *meta = NULL;
    assert_true(json_object_object_get_ex(pod, "metadata", &meta));
    json_object_object_add(meta, "creationTimestamp",
                           json_object_new_string("2026-12-01T10:00:00Z"));
    put(pod);
    struct reconcile_env env = {.now = T0 + age,
                                .events = events,
                                .autoscaler_seen = autoscaler_seen,
                                .autoscaler_grace = 30};
    struct reconcile_plan plan;
    assert_int_equal(
        reconcile_plan(store, NULL, NULL, &env, "gpu-triage/case-scale", NULL, NULL, &plan), K_OK);
    return plan;
}

/* Where an autoscaler is at work, a new pod's blocking per-node word waits for its verdict; an
 * autoscaler's scaling-up is written with a Normal Event. */
static void test_autoscaler_grace_and_words(void **state)
{
    (void)state;
    struct reconcile_plan p = plan_at(5, 0, NULL); /* no autoscaler seen: at once */
    assert_int_equal(p.kind, RECONCILE_WRITE);
    assert_int_equal(p.cause, CAUSE_NO_GPU_NODE);
    p = plan_at(5, T0, NULL);
    assert_int_not_equal(p.kind, RECONCILE_WRITE);
    assert_int_equal(p.recheck_after_ms, 25000);
    p = plan_at(31, T0, NULL); /* the grace is over: the nodes' word */
    assert_int_equal(p.kind, RECONCILE_WRITE);
    assert_int_equal(p.cause, CAUSE_NO_GPU_NODE);
    p = plan_at(5, T0 - RECONCILE_AUTOSCALED_FOR - 10, NULL); /* an hour without a verdict */
    assert_int_equal(p.kind, RECONCILE_WRITE);

    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    struct kevent ev;
    memset(&ev, 0, sizeof(ev));
    snprintf(ev.ns, sizeof(ev.ns), "gpu-triage");
    snprintf(ev.name, sizeof(ev.name), "case-scale.1");
    snprintf(ev.obj_kind, sizeof(ev.obj_kind), "Pod");
    snprintf(ev.obj_ns, sizeof(ev.obj_ns), "gpu-triage");
    snprintf(ev.obj_name, sizeof(ev.obj_name), "case-scale");
    snprintf(ev.obj_uid, sizeof(ev.obj_uid), POD_UID);
    snprintf(ev.component, sizeof(ev.component), "cluster-autoscaler");
    snprintf(ev.reason, sizeof(ev.reason), "TriggeredScaleUp");
    snprintf(ev.message, sizeof(ev.message), "pod triggered scale-up: [{gpu-pool 0->1 (max: 4)}]");
    ev.count = 1;
    ev.first_timestamp = ev.last_timestamp = T0 + 3;
    assert_int_equal(pod_events_apply(pe, &ev, false, 0, NULL), K_OK);
    p = plan_at(5, T0 + 3, pe);
    assert_int_equal(p.kind, RECONCILE_WRITE);
    assert_int_equal(p.cause, CAUSE_SCALING_UP);
    assert_string_equal(p.event_type, "Normal");
    assert_string_equal(p.event_reason, "GPUScalingUp");
    assert_int_equal(p.verdict, CAUSE_NO_GPU_NODE);
    assert_true(p.verdict_autoscaler);
    /* looked at again when the verdict goes stale */
    assert_int_equal(p.recheck_after_ms, (int64_t)(3 + CLASSIFY_PROVISION_WINDOW - 5 + 1) * 1000);
    pod_events_free(pe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocked_pod_is_annotated_once),
        cmocka_unit_test(test_rejected_pod_is_written_once),
        cmocka_unit_test(test_preempting_is_normal),
        cmocka_unit_test(test_binding_detail_refreshed),
        cmocka_unit_test(test_cause_change_rewrites),
        cmocka_unit_test(test_placed_pod_becomes_ok),
        cmocka_unit_test(test_untouched_pods),
        cmocka_unit_test(test_gpu_fits_waits_for_scheduler),
        cmocka_unit_test(test_vanished_pod_is_not_an_error),
        cmocka_unit_test(test_dra_pods),
        cmocka_unit_test(test_autoscaler_grace_and_words),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
