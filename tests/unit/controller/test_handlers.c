/*
 * Tests for controller/handlers.c: informer events into the store and pod keys onto the
 * workqueue - which pods are queued, dropped, and requeued after node changes or a LIST.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/pod_events.h"
#include "controller_internal.h"
#include "fake_kube.h"
#include "metrics.h"
#include "objects.h"
#include "util/result.h"

struct fixture {
    struct fake_kube api;
    struct gpu_set gpus;
    struct gpu_set dra_classes; /* setup_dra */
    struct clock_fake clk;
    struct clock clock;
    struct controller *c;
    struct informer_handlers pods, nodes;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_kube_init(&f->api);
    gpu_set_parse(&f->gpus, GPU_SET_DEFAULT);
    clock_fake_init(&f->clk, 1764513000000);
    f->clock = clock_fake_clock(&f->clk);
    struct controller_options o = {.instance = "test", .clock = &f->clock};
    f->c = controller_new(&f->api.cfg, &f->gpus, &o);
    assert_non_null(f->c);
    f->pods = controller_pod_handlers(f->c);
    f->nodes = controller_node_handlers(f->c);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    controller_free(f->c);
    gpu_set_cleanup(&f->gpus);
    gpu_set_cleanup(&f->dra_classes);
    fake_kube_cleanup(&f->api);
    free(f);
    return 0;
}

/* Apply `obj` (consumed) through handler fn. */
static void feed(void (*fn)(void *, json_object *), void *ctx, json_object *obj)
{
    fn(ctx, obj);
    json_object_put(obj);
}

/* The keys ready on the queue, in order, joined by spaces; the queue is left empty. */
static void expect_queue_at(struct controller *c, const char *want, int line)
{
    char got[512] = "";
    char *key;
    while ((key = workqueue_try_get(c->queue, NULL)) != NULL) {
        if (got[0])
            strcat(got, " ");
        strcat(got, key);
        workqueue_done(c->queue, key);
        free(key);
    }
    if (strcmp(got, want) != 0)
        fail_msg("line %d: queue \"%s\", want \"%s\"", line, got, want);
}

#define expect_queue(c, want) expect_queue_at(c, want, __LINE__)

static void lab_nodes(struct fixture *f)
{
    f->nodes.sync_begin(f->nodes.ctx);
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-0", "2", "2", NULL, NULL));
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", NULL, NULL, NULL, NULL));
    f->nodes.sync_end(f->nodes.ctx);
}

static void test_pending_gpu_pods_are_queued(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    expect_queue(f->c, "");
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/train");
    /* no GPU request: nothing to do */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "web", NULL, NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "");
    /* running without a cause: nothing to do for it, but it takes a GPU train needs, so train
     * may have a new answer */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "placed", "1", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "team/train");
    /* a placed pod that still carries a cause must be set to ok; the GPU it takes moves
     * nothing for train, which no longer fits on lab-node-0 either way */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "was-blocked", "1", "lab-node-0", "Running", NULL, 1, "exhausted"));
    expect_queue(f->c, "team/was-blocked");
    /* an update that changes nothing the store keeps (a status field outside the projection)
     * is not looked at again */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "");
    /* every update that changes a pending GPU pod is, once however many arrive */
    json_object *tried = test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL);
    test_pod_set_scheduled(tried, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
    feed(f->pods.upsert, f->pods.ctx, tried);
    tried = test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL);
    test_pod_set_scheduled(tried, "0/2 nodes are available: 1 Insufficient nvidia.com/gpu.");
    feed(f->pods.upsert, f->pods.ctx, tried);
    expect_queue(f->c, "team/train");
}

/* A placed GPU pod that its kubelet then refuses (Failed, UnexpectedAdmissionError) is queued;
 * one that fails after running (Evicted for memory) is not. */
static void test_rejected_pods_are_queued(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "placed", "1", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "");
    json_object *rejected = test_pod("team", "placed", "1", "lab-node-0", "Failed", NULL, 1, NULL);
    json_object *st = NULL;
    json_object_object_get_ex(rejected, "status", &st);
    json_object_object_add(st, "reason", json_object_new_string("UnexpectedAdmissionError"));
    feed(f->pods.upsert, f->pods.ctx, rejected);
    expect_queue(f->c, "team/placed");
    json_object *evicted = test_pod("team", "other", "1", "lab-node-0", "Failed", NULL, 1, NULL);
    json_object_object_get_ex(evicted, "status", &st);
    json_object_object_add(st, "reason", json_object_new_string("Evicted"));
    json_object_object_add(st, "message", json_object_new_string("The node was low on resource"));
    feed(f->pods.upsert, f->pods.ctx, evicted);
    expect_queue(f->c, "");
}

static void test_deleted_or_placed_pods_are_dropped(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "b", "4", NULL, "Pending", NULL, 1, NULL));
    /* train is deleted, b is placed without ever carrying a cause, before a worker ran */
    feed(f->pods.remove, f->pods.ctx,
         test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "b", "4", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "");
    assert_int_equal(workqueue_delayed_len(f->c->queue), 0);
}

/*
 * The ledger follows the watch: a cause we wrote keeps a placed pod's key queued until the watch
 * shows it; a deleted pod is forgotten; a relist forgets the pods that vanished meanwhile.
 */
static void test_ledger_follows_the_watch(void **state)
{
    struct fixture *f = *state;
    const char *uid = "11111111-2222-3333-4444-555555555555";
    lab_nodes(f);
    f->pods.sync_begin(f->pods.ctx);
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "a", "2", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "b", "2", NULL, "Pending", NULL, 1, NULL));
    f->pods.sync_end(f->pods.ctx);
    expect_queue(f->c, "team/a team/b");
    assert_int_equal(pod_ledger_set_written(f->c->ledger, "team/a", uid, CAUSE_EXHAUSTED), K_OK);
    /* placed before the watch showed our cause: it must still become ok (and b may fit less) */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "a", "2", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "team/a team/b");
    assert_true(pod_ledger_written(f->c->ledger, "team/a", NULL));
    /* the watch shows it: settled */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "a", "2", "lab-node-0", "Running", NULL, 1, "exhausted"));
    assert_false(pod_ledger_written(f->c->ledger, "team/a", NULL));
    /* deleted: forgotten (b keeps its pending mark) */
    assert_int_equal(pod_ledger_set_written(f->c->ledger, "team/a", uid, CAUSE_OK), K_OK);
    feed(f->pods.remove, f->pods.ctx,
         test_pod("team", "a", "2", "lab-node-0", "Running", NULL, 1, "exhausted"));
    assert_false(pod_ledger_written(f->c->ledger, "team/a", NULL));
    assert_int_equal(pod_ledger_len(f->c->ledger), 1);
    /* b vanished while the watch was down */
    assert_int_equal(pod_ledger_set_written(f->c->ledger, "team/b", uid, CAUSE_TAINT), K_OK);
    f->pods.sync_begin(f->pods.ctx);
    f->pods.sync_end(f->pods.ctx);
    assert_int_equal(pod_ledger_len(f->c->ledger), 0);
}

/* A test_pod() created at 2025-11-30T14:20:00Z, 600 s before the fixture's clock. */
static json_object *aged_pod(const char *ns, const char *name, const char *gpus, const char *node,
                             const char *phase, const char *cause)
{
    json_object *pod = test_pod(ns, name, gpus, node, phase, NULL, 1, cause);
    json_object *meta = NULL;
    json_object_object_get_ex(pod, "metadata", &meta);
    json_object_object_add(meta, "creationTimestamp",
                           json_object_new_string("2025-11-30T14:20:00Z"));
    return pod;
}

/*
 * gputri_gpu_pod_pending_seconds: a GPU pod that stops being pending is observed once, under the
 * last blocking cause it carried (preempting is not one), or "none".
 */
static void test_pending_time_by_last_blocking_cause(void **state)
{
    struct fixture *f = *state;
    struct metrics *m = f->c->metrics;
    lab_nodes(f);
    /* exhausted, then preempting, then bound: counted under exhausted, 600 s */
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "a", "2", NULL, "Pending", NULL));
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "a", "2", NULL, "Pending", "exhausted"));
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "a", "2", NULL, "Pending", "preempting"));
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 0);
    feed(f->pods.upsert, f->pods.ctx,
         aged_pod("team", "a", "2", "lab-node-0", "Running", "preempting"));
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 1);
    assert_int_equal(metrics_pending_count(m, CAUSE_PREEMPTING), 0);
    /* later updates of the bound pod (its cause set to ok) count nothing more */
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "a", "2", "lab-node-0", "Running", "ok"));
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 1);
    assert_int_equal(metrics_pending_count(m, CAUSE_OK), 0);

    /* deleted while pending: counted under its cause */
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "b", "1", NULL, "Pending", "taint"));
    feed(f->pods.remove, f->pods.ctx, aged_pod("team", "b", "1", NULL, "Pending", "taint"));
    assert_int_equal(metrics_pending_count(m, CAUSE_TAINT), 1);

    /* never blocked: "none"; a pod without a GPU request: not counted */
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "c", "1", NULL, "Pending", NULL));
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "c", "1", "lab-node-0", "Running", NULL));
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "web", NULL, NULL, "Pending", NULL));
    feed(f->pods.upsert, f->pods.ctx, aged_pod("team", "web", NULL, "lab-node-1", "Running", NULL));
    assert_int_equal(metrics_pending_count(m, METRICS_NO_CAUSE), 1);

    struct metrics_gauges g = {0};
    struct buf out;
    buf_init(&out, 1 << 20);
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    assert_non_null(
        strstr(buf_cstr(&out),
               "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"300\"} 0\n"
               "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"600\"} 1\n"));
    assert_non_null(strstr(buf_cstr(&out),
                           "gputri_gpu_pod_pending_seconds_sum{cause=\"exhausted\"} 600.000\n"));
    buf_cleanup(&out);
    /* no record is left behind */
    assert_int_equal(pod_ledger_len(f->c->ledger), 0);
}

static void test_node_changes_requeue_pending_pods(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "other", "1", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/train team/other");
    /* the device plugin on lab-node-1 comes back: every pending GPU pod may have a new answer */
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", "8", "8", NULL, NULL));
    char *a = workqueue_try_get(f->c->queue, NULL), *b = workqueue_try_get(f->c->queue, NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(strcmp(a, b) != 0);
    workqueue_done(f->c->queue, a);
    workqueue_done(f->c->queue, b);
    free(a);
    free(b);
    expect_queue(f->c, "");
    /* a pod placed on a node takes GPUs: requeued too, the pods whose step there it moves
     * (other fitted on lab-node-0; train, 4 GPUs, never did) */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "holder", "2", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "team/other");
}

/* The verdict a worker would record for pending pod ns/name: its classification now. */
static void record_verdict(struct fixture *f, const char *ns, const char *name)
{
    char key[STORE_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    struct reconcile_plan plan;
    assert_int_equal(reconcile_plan(f->c->store, NULL, NULL, NULL, key, NULL, NULL, &plan), K_OK);
    assert_true(plan.classified);
    pod_ledger_set_verdict(f->c->ledger, key, plan.uid, plan.verdict, plan.verdict_autoscaler);
}

/* With verdicts recorded, a change re-checks only the pods whose word it can move; with
 * --recheck=all every pending GPU pod. */
static void test_changes_recheck_affected_pods_only(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "holder", "2", "lab-node-0", "Running", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "big", "2", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "small", "1", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/big team/small");
    record_verdict(f, "team", "big"); /* exhausted on lab-node-0 */
    struct requeue_record rec;
    pod_ledger_verdict(f->c->ledger, "team/big", &rec);
    assert_true(rec.valid);
    assert_int_equal(rec.word, CAUSE_EXHAUSTED);

    /* a label on the CPU node: no pod selects by it, nothing moves */
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", NULL, NULL, NULL, "zone=b"));
    expect_queue(f->c, "team/small"); /* never classified: always re-checked */
    record_verdict(f, "team", "small");
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", NULL, NULL, NULL, "zone=c"));
    expect_queue(f->c, "");
    /* the holder finishes: both fit now */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "holder", "2", "lab-node-0", "Succeeded", NULL, 1, NULL));
    expect_queue(f->c, "team/big team/small");
    record_verdict(f, "team", "big");
    record_verdict(f, "team", "small");
    /* another holder takes one GPU: big (2) no longer fits, small (1) still does */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "one", "1", "lab-node-0", "Running", NULL, 1, NULL));
    expect_queue(f->c, "team/big");
    /* a classification under way forgets the verdict: the next change re-checks the pod */
    pod_ledger_forget_verdict(f->c->ledger, "team/small");
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", NULL, NULL, NULL, "zone=d"));
    expect_queue(f->c, "team/small");
    /* big is bound: its verdict goes; the GPUs it takes move small */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "big", "2", "lab-node-0", "Running", NULL, 1, NULL));
    pod_ledger_verdict(f->c->ledger, "team/big", &rec);
    assert_false(rec.valid);
    expect_queue(f->c, "team/small");

    /* the old policy: every pending GPU pod after any change of nodes or usage */
    record_verdict(f, "team", "small");
    f->c->opts.recheck_all = true;
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", NULL, NULL, NULL, "zone=e"));
    expect_queue(f->c, "team/small");
}

static void test_changes_during_a_list_are_batched(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/train");
    /* a relist of nodes: no requeue per node, one at the end */
    f->nodes.sync_begin(f->nodes.ctx);
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-0", "2", "1", NULL, NULL));
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-1", "8", "8", NULL, NULL));
    expect_queue(f->c, "");
    f->nodes.sync_end(f->nodes.ctx);
    expect_queue(f->c, "team/train");
    /* a relist that no longer has lab-node-1 sweeps it */
    f->nodes.sync_begin(f->nodes.ctx);
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-0", "2", "1", NULL, NULL));
    f->nodes.sync_end(f->nodes.ctx);
    store_read_lock(f->c->store);
    assert_int_equal(store_node_count(f->c->store), 1);
    store_read_unlock(f->c->store);
    expect_queue(f->c, "team/train");
    /* a relist that failed (no sync_end) and began again: one end closes it, and changes
     * outside a list are requeued at once again */
    f->nodes.sync_begin(f->nodes.ctx);
    f->nodes.sync_begin(f->nodes.ctx);
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-0", "2", "1", NULL, NULL));
    f->nodes.sync_end(f->nodes.ctx);
    expect_queue(f->c, "team/train");
    feed(f->nodes.upsert, f->nodes.ctx, test_node("lab-node-0", "4", "4", NULL, NULL));
    expect_queue(f->c, "team/train");
}

/* ---- DRA ---------------------------------------------------------------------------------- */

static int setup_dra(void **state)
{
    setup(state);
    struct fixture *f = *state;
    controller_free(f->c);
    gpu_set_parse(&f->dra_classes, DRA_GPU_SET_DEFAULT);
    struct controller_options o = {
        .instance = "test", .clock = &f->clock, .dra_classes = &f->dra_classes};
    f->c = controller_new(&f->api.cfg, &f->gpus, &o);
    assert_non_null(f->c);
    f->pods = controller_pod_handlers(f->c);
    f->nodes = controller_node_handlers(f->c);
    return 0;
}

/* A pending pod without extended-resource GPUs whose claim `gpu` comes from template `tmpl`. */
static json_object *claim_pod(const char *ns, const char *name, const char *tmpl)
{
    json_object *p = test_pod(ns, name, NULL, NULL, "Pending", NULL, 0, NULL);
    json_object *spec = NULL;
    json_object_object_get_ex(p, "spec", &spec);
    json_object *claims = json_tokener_parse("[{\"name\":\"gpu\"}]");
    json_object_object_add(json_object_array_get_idx(claims, 0), "resourceClaimTemplateName",
                           json_object_new_string(tmpl));
    json_object_object_add(spec, "resourceClaims", claims);
    return p;
}

static json_object *dra_obj(const char *ns, const char *name, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "{\"metadata\":{%s%s%s\"name\":\"%s\"},\"spec\":%s}",
             ns ? "\"namespace\":\"" : "", ns ? ns : "", ns ? "\"," : "", name, spec);
    json_object *o = json_tokener_parse(buf);
    assert_non_null(o);
    return o;
}

static void test_pending_claim_pods_are_queued(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "dra", "single-gpu"));
    expect_queue(f->c, "team/dra");
    /* bound later, its containers not started: watched until they have (store.h
     * store_is_starting_gpu_pod) */
    json_object *bound = claim_pod("team", "dra", "single-gpu");
    json_object *spec = NULL;
    json_object_object_get_ex(bound, "spec", &spec);
    json_object_object_add(spec, "nodeName", json_object_new_string("lab-node-0"));
    feed(f->pods.upsert, f->pods.ctx, bound);
    expect_queue(f->c, "team/dra");
    /* running (a status the kubelet never writes without containers: nothing to watch) */
    bound = claim_pod("team", "dra", "single-gpu");
    json_object_object_get_ex(bound, "spec", &spec);
    json_object_object_add(spec, "nodeName", json_object_new_string("lab-node-0"));
    json_object *status = json_object_new_object();
    json_object_object_add(status, "phase", json_object_new_string("Running"));
    json_object_object_add(bound, "status", status);
    feed(f->pods.upsert, f->pods.ctx, bound);
    expect_queue(f->c, ""); /* nothing to do (it never carried a cause) */
}

static void test_dra_changes_requeue_claim_pods(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "dra", "single-gpu"));
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/dra team/train");
    struct informer_handlers cl = controller_dra_handlers(f->c, DRA_KIND_CLASS);
    struct informer_handlers sl = controller_dra_handlers(f->c, DRA_KIND_SLICE);
    struct informer_handlers tp = controller_dra_handlers(f->c, DRA_KIND_TEMPLATE);
    /* a class, a template, a slice appear: only the pod with claims is looked at again */
    feed(cl.upsert, cl.ctx,
         dra_obj(NULL, "gpu.nvidia.com",
                 "{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
                 "'gpu.nvidia.com'\"}}]}"));
    expect_queue(f->c, "team/dra");
    feed(tp.upsert, tp.ctx,
         dra_obj("team", "single-gpu",
                 "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
                 "\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}"));
    expect_queue(f->c, "team/dra");
    const char *slice = "{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"lab-node-1\","
                        "\"pool\":{\"name\":\"lab-node-1\",\"generation\":1,"
                        "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"}]}";
    feed(sl.upsert, sl.ctx, dra_obj(NULL, "lab-node-1-gpu", slice));
    expect_queue(f->c, "team/dra");
    dra_store_read_lock(f->c->dra);
    assert_non_null(dra_store_template(f->c->dra, "team", "single-gpu"));
    assert_int_equal(dra_store_count(f->c->dra, DRA_KIND_SLICE), 1);
    dra_store_read_unlock(f->c->dra);
    /* the driver stops publishing: looked at again, and the slice is gone */
    feed(sl.remove, sl.ctx, dra_obj(NULL, "lab-node-1-gpu", slice));
    expect_queue(f->c, "team/dra");
    dra_store_read_lock(f->c->dra);
    assert_int_equal(dra_store_count(f->c->dra, DRA_KIND_SLICE), 0);
    dra_store_read_unlock(f->c->dra);
    /* an object that does not project is not cached, and still requeues */
    feed(sl.upsert, sl.ctx, dra_obj(NULL, "broken", "{\"nodeName\":\"lab-node-1\"}"));
    expect_queue(f->c, "team/dra");
    /* a relist: no requeue per object, every pending pod at its end */
    sl.sync_begin(sl.ctx);
    feed(sl.upsert, sl.ctx, dra_obj(NULL, "lab-node-1-gpu", slice));
    expect_queue(f->c, "");
    sl.sync_end(sl.ctx);
    expect_queue(f->c, "team/dra team/train");
}

/* A ResourceClaim `name` in `ns` of one device of gpu.nvidia.com; allocated on lab-node-0 when
 * `allocated`. */
static json_object *claim_obj(const char *ns, const char *name, bool allocated)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},"
             "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
             "\"deviceClassName\":\"gpu.nvidia.com\"}}]}}%s}",
             ns, name,
             allocated ? ",\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
                         "\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\","
                         "\"pool\":\"lab-node-0\",\"device\":\"gpu-0\"}]}}}"
                       : "");
    json_object *o = json_tokener_parse(buf);
    assert_non_null(o);
    return o;
}

static void test_unallocated_claims_requeue_their_pods_only(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    /* team/a: its claim was generated as a-gpu-1; team/b names claim "shared" directly */
    json_object *a = claim_pod("team", "a", "single-gpu");
    json_object_object_add(a, "status",
                           json_tokener_parse("{\"phase\":\"Pending\",\"resourceClaimStatuses\":"
                                              "[{\"name\":\"gpu\",\"resourceClaimName\":"
                                              "\"a-gpu-1\"}]}"));
    feed(f->pods.upsert, f->pods.ctx, a);
    json_object *b = claim_pod("team", "b", "single-gpu");
    json_object *spec = NULL;
    json_object_object_get_ex(b, "spec", &spec);
    json_object_object_add(spec, "resourceClaims",
                           json_tokener_parse("[{\"name\":\"gpu\",\"resourceClaimName\":"
                                              "\"shared\"}]"));
    feed(f->pods.upsert, f->pods.ctx, b);
    expect_queue(f->c, "team/a team/b");
    struct informer_handlers cm = controller_dra_handlers(f->c, DRA_KIND_CLAIM);
    /* claims that hold nothing: only the pods that use them */
    feed(cm.upsert, cm.ctx, claim_obj("team", "a-gpu-1", false));
    expect_queue(f->c, "team/a");
    feed(cm.upsert, cm.ctx, claim_obj("team", "shared", false));
    expect_queue(f->c, "team/b");
    feed(cm.upsert, cm.ctx, claim_obj("team", "unused", false));
    expect_queue(f->c, "");
    feed(cm.upsert, cm.ctx, claim_obj("other", "shared", false));
    expect_queue(f->c, "");
    feed(cm.remove, cm.ctx, claim_obj("team", "unused", false));
    expect_queue(f->c, "");
    /* a claim that takes devices, gives them back, then goes: every pending claim pod */
    feed(cm.upsert, cm.ctx, claim_obj("team", "holder", true));
    expect_queue(f->c, "team/a team/b");
    feed(cm.upsert, cm.ctx, claim_obj("team", "holder", false));
    expect_queue(f->c, "team/a team/b");
    feed(cm.upsert, cm.ctx, claim_obj("team", "holder", true));
    expect_queue(f->c, "team/a team/b");
    feed(cm.remove, cm.ctx, claim_obj("team", "holder", true));
    expect_queue(f->c, "team/a team/b");
    dra_store_read_lock(f->c->dra);
    assert_int_equal(dra_store_count(f->c->dra, DRA_KIND_CLAIM), 3);
    dra_store_read_unlock(f->c->dra);
}

/* Templates and DeviceClasses hold no devices: only the pods that name them are looked at again. */
static void test_templates_and_classes_requeue_their_pods_only(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    struct informer_handlers cl = controller_dra_handlers(f->c, DRA_KIND_CLASS);
    struct informer_handlers tp = controller_dra_handlers(f->c, DRA_KIND_TEMPLATE);
    const char *nv = "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
                     "\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}";
    const char *amd = "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\","
                      "\"firstAvailable\":[{\"name\":\"big\",\"deviceClassName\":\"gpu.amd.com\"}]}"
                      "]}}}";
    feed(tp.upsert, tp.ctx, dra_obj("team", "nv", nv));
    feed(tp.upsert, tp.ctx, dra_obj("team", "amd", amd));
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "a", "nv"));
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "b", "amd"));
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "c", "not-yet"));
    expect_queue(f->c, "team/a team/b team/c");
    /* a template: the pods in its namespace that name it */
    feed(tp.upsert, tp.ctx, dra_obj("team", "nv", nv));
    expect_queue(f->c, "team/a");
    feed(tp.upsert, tp.ctx, dra_obj("other", "nv", nv));
    expect_queue(f->c, "");
    feed(tp.remove, tp.ctx, dra_obj("team", "amd", amd));
    expect_queue(f->c, "team/b");
    feed(tp.upsert, tp.ctx, dra_obj("team", "amd", amd));
    expect_queue(f->c, "team/b");
    /* a class: the pods whose requests (or firstAvailable alternatives) name it, and those
     * whose template is not there to tell */
    feed(cl.upsert, cl.ctx, dra_obj(NULL, "gpu.amd.com", "{}"));
    expect_queue(f->c, "team/b team/c");
    feed(cl.remove, cl.ctx, dra_obj(NULL, "gpu.nvidia.com", "{}"));
    expect_queue(f->c, "team/a team/c");
    feed(cl.upsert, cl.ctx, dra_obj(NULL, "dranet", "{}"));
    expect_queue(f->c, "team/c");
}

/* Re-checks after others' changes wait behind pods seen first or changed themselves, and come
 * at most once per recheck interval (set on the queue as controller_new sets it). With
 * --recheck=all, so that every usage change re-checks both pods whatever the policy judges. */
static void test_rechecks_wait_behind_own_changes(void **state)
{
    struct fixture *f = *state;
    f->c->opts.recheck_all = true;
    workqueue_set_recheck_interval(f->c->queue, 1000);
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "a", "4", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "b", "4", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/a team/b");
    clock_fake_advance_ms(&f->clk, 1000);
    /* a GPU freed: both re-checked, at low priority; a new pod and a changed one go first */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "holder", "1", "lab-node-0", "Running", NULL, 1, NULL));
    assert_int_equal(workqueue_len_priority(f->c->queue, WORKQUEUE_LOW), 2);
    feed(f->pods.upsert, f->pods.ctx, test_pod("team", "new", "1", NULL, "Pending", NULL, 1, NULL));
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "b", "4", NULL, "Pending", NULL, 1, "exhausted"));
    expect_queue(f->c, "team/new team/b team/a");
    /* a storm of usage changes right after: coalesced into one re-check per pod a second later */
    for (int i = 0; i < 10; i++)
        feed(f->pods.upsert, f->pods.ctx,
             test_pod("team", "holder", "1", i % 2 ? "lab-node-0" : "lab-node-1", "Running", NULL,
                      1, NULL));
    expect_queue(f->c, "");
    assert_int_equal(workqueue_delayed_len(f->c->queue), 3);
    clock_fake_advance_ms(&f->clk, 1000);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 3);
    char *k;
    int n = 0;
    while ((k = workqueue_try_get(f->c->queue, NULL)) != NULL) {
        workqueue_done(f->c->queue, k);
        free(k);
        n++;
    }
    assert_int_equal(n, 3);
}

#define POD_UID "11111111-2222-3333-4444-555555555555"

/* A Cluster Autoscaler NotTriggerScaleUp Event in namespace `ns` about pod team/`pod`. */
static json_object *ca_event(const char *ns, const char *name, const char *pod)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},"
             "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"team\",\"name\":\"%s\","
             "\"uid\":\"" POD_UID "\"},\"reason\":\"NotTriggerScaleUp\","
             "\"message\":\"pod didn't trigger scale-up: 1 max node group size reached\","
             "\"source\":{\"component\":\"cluster-autoscaler\"},\"reportingComponent\":"
             "\"cluster-autoscaler\",\"count\":1,\"eventTime\":\"2025-11-30T14:29:00.000000Z\","
             "\"lastTimestamp\":\"2025-11-30T14:29:00Z\"}",
             ns, name, pod);
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

static size_t events_held(struct controller *c)
{
    struct pod_events_stats st;
    pod_events_stats(c->pod_events, &st);
    return st.events;
}

/* An autoscaler's Event is kept for a pending GPU pod of its own namespace only; the pod's
 * deletion drops it. */
static void test_autoscaler_events_kept_for_own_pod(void **state)
{
    struct fixture *f = *state;
    struct controller_events_ctx x = {f->c, "cluster-autoscaler", "events/cluster-autoscaler"};
    struct informer_handlers ev = controller_events_handlers(&x);
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL));
    expect_queue(f->c, "team/train");
    /* written in another namespace (the API server allows it for an Event with an eventTime) */
    feed(ev.upsert, ev.ctx, ca_event("evil", "forged", "train"));
    assert_int_equal(events_held(f->c), 0);
    expect_queue(f->c, "");
    feed(ev.upsert, ev.ctx, ca_event("team", "real", "train"));
    assert_int_equal(events_held(f->c), 1);
    expect_queue(f->c, "team/train");
    feed(f->pods.remove, f->pods.ctx,
         test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL));
    assert_int_equal(events_held(f->c), 0);

    /* a pod deleted while the pods' watch was down: the relist drops its records */
    feed(f->pods.upsert, f->pods.ctx,
         test_pod("team", "train", "2", NULL, "Pending", NULL, 1, NULL));
    feed(ev.upsert, ev.ctx, ca_event("team", "real", "train"));
    assert_int_equal(events_held(f->c), 1);
    f->pods.sync_begin(f->pods.ctx);
    f->pods.sync_end(f->pods.ctx);
    assert_int_equal(events_held(f->c), 0);
}

/* A real Event of tests/fixtures/quota re-aimed at `kind` team/<obj> of uid `uid`, dated at the
 * fake clock's wall time. */
static json_object *quota_event(struct fixture *f, const char *file, const char *obj,
                                const char *uid)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "quota/%s", file);
    json_object *o = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(o);
    json_object *meta = NULL, *io = NULL;
    assert_true(json_object_object_get_ex(o, "metadata", &meta));
    assert_true(json_object_object_get_ex(o, "involvedObject", &io));
    json_object_object_add(meta, "namespace", json_object_new_string("team"));
    json_object_object_add(io, "namespace", json_object_new_string("team"));
    json_object_object_add(io, "name", json_object_new_string(obj));
    json_object_object_add(io, "uid", json_object_new_string(uid));
    test_event_dated(o, clock_wall_ms(&f->clock) / 1000);
    return o;
}

/* kube-controller-manager's refusal of a pending pod's claim is kept for the pod and re-checks it
 * (classify/quota.h). */
static void test_quota_claim_events_kept(void **state)
{
    struct fixture *f = *state;
    struct controller_events_ctx x = {f->c, "resource_claim", "events/resource_claim"};
    struct informer_handlers ev = controller_events_handlers(&x);
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx, claim_pod("team", "dra", "single-gpu"));
    expect_queue(f->c, "team/dra");
    feed(ev.upsert, ev.ctx, quota_event(f, "claim-refused.json", "dra", POD_UID));
    assert_int_equal(events_held(f->c), 1);
    expect_queue(f->c, "team/dra");
    /* an owner's refusal is not a pod's */
    feed(ev.upsert, ev.ctx, quota_event(f, "job-refused.json", "dra", POD_UID));
    assert_int_equal(events_held(f->c), 1);
}

static size_t owners_of(struct controller *c, enum quota_owner_kind k)
{
    size_t counts[QUOTA_OWNER_KINDS];
    quota_owners_counts(c->quota_owners, counts, NULL);
    return counts[k];
}

/* The workload controllers' FailedCreate for GPU quota: one owner counted and an Event posted; a
 * CPU-only refusal ignored; the owner forgotten once it has a pod created after the refusal, or
 * when a relist no longer has its Event. */
static void test_quota_owner_events(void **state)
{
    struct fixture *f = *state;
    struct controller_events_ctx x = {f->c, CONTROLLER_OWNER_EVENTS, "events/failed-create"};
    struct informer_handlers ev = controller_events_handlers(&x);
    lab_nodes(f);
    feed(ev.upsert, ev.ctx, quota_event(f, "job-refused.json", "finetune", "job-uid"));
    feed(ev.upsert, ev.ctx, quota_event(f, "replicaset-refused-cpu.json", "web-1", "rs-uid"));
    assert_int_equal(owners_of(f->c, QUOTA_OWNER_JOB), 1);
    assert_int_equal(owners_of(f->c, QUOTA_OWNER_REPLICASET), 0);
    assert_int_equal(metrics_events(f->c->metrics), 1); /* GPUQuotaExceeded on the Job */
    feed(ev.upsert, ev.ctx, quota_event(f, "job-refused.json", "finetune", "job-uid"));
    assert_int_equal(metrics_events(f->c->metrics), 1); /* the same numbers: no new Event */
    expect_queue(f->c, "");

    /* its pod, created after the refusal */
    clock_fake_advance_ms(&f->clk, 5000);
    json_object *pod = test_pod("team", "finetune-abcde", "2", NULL, "Pending", NULL, 0, NULL);
    json_object *meta = NULL;
    json_object_object_get_ex(pod, "metadata", &meta);
    char when[32];
    test_rfc3339(clock_wall_ms(&f->clock) / 1000, when);
    json_object_object_add(meta, "creationTimestamp", json_object_new_string(when));
    json_object_object_add(meta, "ownerReferences",
                           json_tokener_parse("[{\"kind\":\"Job\",\"name\":\"finetune\","
                                              "\"uid\":\"job-uid\",\"controller\":true}]"));
    feed(f->pods.upsert, f->pods.ctx, pod);
    controller_quota_owners_tick(f->c);
    assert_int_equal(owners_of(f->c, QUOTA_OWNER_JOB), 0);
    assert_int_equal(metrics_events(f->c->metrics), 2); /* GPUQuotaAdmitted */

    /* a relist without the Event drops the owner */
    feed(ev.upsert, ev.ctx, quota_event(f, "statefulset-refused.json", "sweep", "sts-uid"));
    assert_int_equal(owners_of(f->c, QUOTA_OWNER_STATEFULSET), 1);
    ev.sync_begin(ev.ctx);
    ev.sync_end(ev.ctx);
    assert_int_equal(owners_of(f->c, QUOTA_OWNER_STATEFULSET), 0);
}

/* A kubelet's Warning Event about pod team/`pod` (source.component kubelet, host the node). */
static json_object *kubelet_ev(const char *name, const char *pod, const char *reason,
                               const char *message)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *io = json_object_new_object(), *src = json_object_new_object();
    json_object_object_add(meta, "namespace", json_object_new_string("team"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(io, "kind", json_object_new_string("Pod"));
    json_object_object_add(io, "namespace", json_object_new_string("team"));
    json_object_object_add(io, "name", json_object_new_string(pod));
    json_object_object_add(io, "uid", json_object_new_string(POD_UID));
    json_object_object_add(o, "involvedObject", io);
    json_object_object_add(o, "reason", json_object_new_string(reason));
    json_object_object_add(o, "message", json_object_new_string(message));
    json_object_object_add(o, "type", json_object_new_string("Warning"));
    json_object_object_add(src, "component", json_object_new_string("kubelet"));
    json_object_object_add(src, "host", json_object_new_string("lab-node-0"));
    json_object_object_add(o, "source", src);
    json_object_object_add(o, "lastTimestamp", json_object_new_string("2025-11-30T14:29:00Z"));
    return o;
}

/* team/train bound to lab-node-0, its GPU container in `state` (JSON). */
static json_object *bound_pod(const char *state)
{
    json_object *pod = test_pod("team", "train", "1", "lab-node-0", "Pending", NULL, 1, NULL);
    test_pod_set_container_state(pod, state);
    return pod;
}

/* The kubelet's warnings are kept for a bound GPU pod whose GPU container has not started, the
 * bare "Error: ErrImagePull" is not, and the records go once the container has started. */
static void test_kubelet_events_for_starting_pods(void **state)
{
    struct fixture *f = *state;
    struct controller_events_ctx x = {f->c, "kubelet", "events/kubelet"};
    struct informer_handlers ev = controller_events_handlers(&x);
    lab_nodes(f);
    feed(f->pods.upsert, f->pods.ctx, bound_pod("{\"waiting\":{\"reason\":\"ErrImagePull\"}}"));
    expect_queue(f->c, "team/train");
    feed(
        ev.upsert, ev.ctx,
        kubelet_ev("e1", "train", "Failed", "Failed to pull image \"x\": no space left on device"));
    assert_int_equal(events_held(f->c), 1);
    expect_queue(f->c, "team/train");
    feed(ev.upsert, ev.ctx, kubelet_ev("e2", "train", "Failed", "Error: ErrImagePull"));
    feed(ev.upsert, ev.ctx, kubelet_ev("e3", "train", "BackOff", "Back-off pulling image"));
    assert_int_equal(events_held(f->c), 1);
    expect_queue(f->c, "");
    /* started: forgotten, and its kubelet's later warnings are not kept */
    feed(f->pods.upsert, f->pods.ctx, bound_pod("{\"running\":{}}"));
    assert_int_equal(events_held(f->c), 0);
    feed(ev.upsert, ev.ctx,
         kubelet_ev("e4", "train", "FailedCreatePodSandBox", "Failed to create pod sandbox"));
    assert_int_equal(events_held(f->c), 0);
}

struct churn {
    struct fixture *f;
    atomic_int pod; /* the pod the Events are about now; -1: done */
};

static void *churn_events(void *arg)
{
    struct churn *ch = arg;
    struct controller_events_ctx x = {ch->f->c, "cluster-autoscaler", "events/cluster-autoscaler"};
    struct informer_handlers ev = controller_events_handlers(&x);
    int i;
    while ((i = atomic_load(&ch->pod)) >= 0) {
        char name[32];
        snprintf(name, sizeof(name), "train-%d", i);
        feed(ev.upsert, ev.ctx, ca_event("team", name, name));
    }
    return NULL;
}

/* Events for a pod that is deleted meanwhile: no record outlives its pod (the store's lock is
 * held from the check that the pod is pending to the write). */
static void test_autoscaler_events_race_pod_deletion(void **state)
{
    struct fixture *f = *state;
    lab_nodes(f);
    struct churn ch = {.f = f};
    atomic_init(&ch.pod, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, churn_events, &ch), 0);
    for (int i = 0; i < 3000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "train-%d", i);
        atomic_store(&ch.pod, i);
        feed(f->pods.upsert, f->pods.ctx,
             test_pod("team", name, "2", NULL, "Pending", NULL, 1, NULL));
        feed(f->pods.remove, f->pods.ctx,
             test_pod("team", name, "2", NULL, "Pending", NULL, 1, NULL));
    }
    atomic_store(&ch.pod, -1);
    pthread_join(t, NULL);
    assert_int_equal(events_held(f->c), 0);
    char *key;
    while ((key = workqueue_try_get(f->c->queue, NULL)) != NULL) {
        workqueue_done(f->c->queue, key);
        free(key);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_autoscaler_events_kept_for_own_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubelet_events_for_starting_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_autoscaler_events_race_pod_deletion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_gpu_pods_are_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rechecks_wait_behind_own_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected_pods_are_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_or_placed_pods_are_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_time_by_last_blocking_cause, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ledger_follows_the_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_changes_requeue_pending_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes_recheck_affected_pods_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes_during_a_list_are_batched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_claim_pods_are_queued, setup_dra, teardown),
        cmocka_unit_test_setup_teardown(test_quota_claim_events_kept, setup_dra, teardown),
        cmocka_unit_test_setup_teardown(test_quota_owner_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dra_changes_requeue_claim_pods, setup_dra, teardown),
        cmocka_unit_test_setup_teardown(test_templates_and_classes_requeue_their_pods_only,
                                        setup_dra, teardown),
        cmocka_unit_test_setup_teardown(test_unallocated_claims_requeue_their_pods_only, setup_dra,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
