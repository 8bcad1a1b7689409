/*
 * Tests for controller/workers.c: one key through controller_process() with the Kubernetes
 * writer over a recording fake API (the PATCH and the Event POST it makes), a fake clock for the
 * gpu-fits grace and the backoff, and leadership gating with the Lease lock over the same fake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller_internal.h"
#include "metrics.h"
#include "kube/event_recorder.h"
#include "fake_kube.h"
#include "objects.h"
#include "util/result.h"

struct fixture {
    struct fake_kube api;
    struct kube_client *client;
    struct gpu_set gpus;
    struct clock_fake clk;
    struct clock clock;
    struct controller *c;
    struct informer_handlers pods, nodes;
    struct kube_pod_writer kw;
    struct gated_writer g;
    struct pod_writer w;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_kube_init(&f->api);
    f->client = fake_kube_client(&f->api);
    gpu_set_parse(&f->gpus, GPU_SET_DEFAULT);
    clock_fake_init(&f->clk, 1764513000000); /* 2025-11-30T14:30:00Z */
    f->clock = clock_fake_clock(&f->clk);
    struct controller_options o = {.instance = "host-1", .clock = &f->clock};
    f->c = controller_new(&f->api.cfg, &f->gpus, &o);
    assert_non_null(f->c);
    f->pods = controller_pod_handlers(f->c);
    f->nodes = controller_node_handlers(f->c);
    f->kw = (struct kube_pod_writer){f->client, "host-1", f->c->events};
    f->g = (struct gated_writer){f->c, pod_writer_kube(&f->kw)};
    f->w = controller_gated_writer(&f->g);
    json_object *n = test_node("lab-node-0", "2", "2", NULL, NULL);
    f->nodes.upsert(f->nodes.ctx, n);
    json_object_put(n);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    controller_free(f->c);
    kube_client_free(f->client);
    gpu_set_cleanup(&f->gpus);
    fake_kube_cleanup(&f->api);
    free(f);
    return 0;
}

static void put_pod(struct fixture *f, json_object *pod)
{
    f->pods.upsert(f->pods.ctx, pod);
    json_object_put(pod);
}

/* Take `key` off the queue (it must be ready), process it, and mark it done. */
static void work(struct fixture *f, const char *key)
{
    char *got = workqueue_try_get(f->c->queue, NULL);
    assert_non_null(got);
    assert_string_equal(got, key);
    controller_process(f->c, &f->w, got);
    workqueue_done(f->c->queue, got);
    free(got);
}

/* The pod is put again unchanged: the store reports no change, so nothing is queued; then
 * `key` is processed anyway, as a resync would. */
static void put_same_and_look(struct fixture *f, json_object *pod, const char *key)
{
    put_pod(f, pod);
    assert_null(workqueue_try_get(f->c->queue, NULL));
    controller_process(f->c, &f->w, key);
}

/* Empty the ready queue. */
static void drain(struct fixture *f)
{
    char *k;
    while ((k = workqueue_try_get(f->c->queue, NULL)) != NULL) {
        workqueue_done(f->c->queue, k);
        free(k);
    }
}

static void test_blocked_pod_is_patched_and_evented_once(void **state)
{
    struct fixture *f = *state;
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 2);
    const struct fake_request *patch = fake_kube_request(&f->api, 0);
    assert_string_equal(patch->method, "PATCH");
    assert_string_equal(patch->path,
                        "/api/v1/namespaces/team/pods/train?fieldManager=gputri-controller");
    assert_non_null(strstr(patch->body, "\"gputri/cause\":\"exhausted\""));
    assert_non_null(strstr(patch->body, "\"gputri/detail\":\"node lab-node-0"));
    const struct fake_request *event = fake_kube_request(&f->api, 1);
    assert_string_equal(event->method, "POST");
    assert_string_equal(event->path, "/api/v1/namespaces/team/events");
    assert_non_null(strstr(event->body, "\"reason\":\"GPUExhausted\""));
    assert_non_null(strstr(event->body, "\"type\":\"Warning\""));
    assert_non_null(strstr(event->body, "\"reportingInstance\":\"host-1\""));
    assert_non_null(strstr(event->body, "2025-11-30T14:30:00Z"));
    assert_int_equal(metrics_transitions(f->c->metrics, METRICS_NO_CAUSE, CAUSE_EXHAUSTED), 1);
    /* the verdict is kept for the re-check policy */
    struct requeue_record rec;
    pod_ledger_verdict(f->c->ledger, "team/train", &rec);
    assert_true(rec.valid);
    assert_int_equal(rec.word, CAUSE_EXHAUSTED);
    /* another look before the watch shows the annotation writes nothing */
    put_same_and_look(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL),
                      "team/train");
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_int_equal(metrics_transitions(f->c->metrics, METRICS_NO_CAUSE, CAUSE_EXHAUSTED), 1);
    /* the watch shows it; the pod is then placed: one patch to ok and a Normal Event */
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, "exhausted"));
    drain(f);
    json_object *n = test_node("lab-node-1", "8", "8", NULL, NULL);
    f->nodes.upsert(f->nodes.ctx, n);
    json_object_put(n);
    drain(f);
    put_pod(f, test_pod("team", "train", "4", "lab-node-1", "Running", NULL, 1, "exhausted"));
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 4);
    assert_non_null(strstr(fake_kube_request(&f->api, 2)->body, "\"gputri/cause\":\"ok\""));
    assert_non_null(strstr(fake_kube_request(&f->api, 3)->body, "\"type\":\"Normal\""));
    assert_int_equal(metrics_transitions(f->c->metrics, CAUSE_EXHAUSTED, CAUSE_OK), 1);
}

static void test_gpu_fits_waits_for_the_grace(void **state)
{
    struct fixture *f = *state;
    json_object *pod = test_pod("team", "small", "1", NULL, "Pending", NULL, 1, NULL);
    test_pod_set_scheduled(pod, "0/1 nodes are available: 1 Insufficient cpu.");
    put_pod(f, pod);
    work(f, "team/small");
    assert_int_equal(fake_kube_count(&f->api), 0);
    assert_int_equal(workqueue_delayed_len(f->c->queue), 1);
    clock_fake_advance_ms(&f->clk, GPU_FITS_GRACE_MS - 1);
    assert_null(workqueue_try_get(f->c->queue, NULL));
    clock_fake_advance_ms(&f->clk, 1);
    work(f, "team/small");
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_non_null(strstr(fake_kube_request(&f->api, 0)->body, "\"gputri/cause\":\"gpu-fits\""));
}

static void test_failed_writes_back_off(void **state)
{
    struct fixture *f = *state;
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    /* 429 with Retry-After: 3 s: requeued after at least that */
    fake_kube_answer(&f->api, 429, 3, "{\"kind\":\"Status\",\"message\":\"slow down\"}");
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 1);
    assert_int_equal(workqueue_failures(f->c->queue, "team/train"), 1);
    clock_fake_advance_ms(&f->clk, 2999);
    assert_null(workqueue_try_get(f->c->queue, NULL));
    clock_fake_advance_ms(&f->clk, 1);
    /* a 409 conflict is retried at once */
    fake_kube_answer(&f->api, 409, 0, "{\"kind\":\"Status\",\"message\":\"conflict\"}");
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 2);
    /* then it goes through and the failures are forgotten */
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 4);
    assert_int_equal(workqueue_failures(f->c->queue, "team/train"), 0);
    /* a pod deleted before its patch: nothing is retried, no Event */
    put_pod(f, test_pod("team", "gone", "4", NULL, "Pending", NULL, 1, NULL));
    drain(f);
    fake_kube_answer(&f->api, 404, 0, "{\"kind\":\"Status\",\"message\":\"not found\"}");
    controller_process(f->c, &f->w, "team/gone");
    assert_int_equal(fake_kube_count(&f->api), 5);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 0);
}

/* The patch goes through and the Event does not (the API server went away in between): the
 * Event is recorded on the retry, and the annotation is not written twice. */
static void test_event_owed_after_a_patch(void **state)
{
    struct fixture *f = *state;
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    fake_kube_answer(&f->api, 200, 0, "{}");
    fake_kube_fail(&f->api, K_EIO);
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_string_equal(fake_kube_request(&f->api, 0)->method, "PATCH");
    assert_string_equal(fake_kube_request(&f->api, 1)->method, "POST");
    assert_int_equal(workqueue_failures(f->c->queue, "team/train"), 1);
    /* the watch shows the annotation before the retry */
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, "exhausted"));
    drain(f);
    clock_fake_advance_ms(&f->clk, 60 * 1000);
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 3);
    const struct fake_request *event = fake_kube_request(&f->api, 2);
    assert_string_equal(event->method, "POST");
    assert_non_null(strstr(event->body, "\"reason\":\"GPUExhausted\""));
    assert_int_equal(metrics_transitions(f->c->metrics, METRICS_NO_CAUSE, CAUSE_EXHAUSTED), 1);
    /* owed no more */
    put_same_and_look(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, "exhausted"),
                      "team/train");
    assert_int_equal(fake_kube_count(&f->api), 3);
}

/* A patch that runs into the API server's timeout (a huge pod on a loaded server) is retried only
 * after twice as long as it took, not after the 5 ms of a first backoff: a few such pods cannot
 * keep every worker from the other pods. */
static void test_slow_failed_write_waits_twice_as_long(void **state)
{
    struct fixture *f = *state;
    f->api.clock = &f->clk;
    put_pod(f, test_pod("team", "huge", "4", NULL, "Pending", NULL, 1, NULL));
    fake_kube_answer_after(&f->api, 34 * 1000, 504,
                           "{\"kind\":\"Status\",\"code\":504,\"message\":\"Timeout: request "
                           "did not complete within requested timeout\"}");
    work(f, "team/huge");
    assert_int_equal(fake_kube_count(&f->api), 1);
    assert_int_equal(workqueue_failures(f->c->queue, "team/huge"), 1);
    clock_fake_advance_ms(&f->clk, 2 * 34 * 1000 - 1);
    assert_null(workqueue_try_get(f->c->queue, NULL));
    clock_fake_advance_ms(&f->clk, 1);
    work(f, "team/huge");
    assert_int_equal(fake_kube_count(&f->api), 3); /* the patch and the Event this time */
}

/* A bound pod whose GPU container never started, carrying container-start-failed, is deleted
 * and lingers on a finalizer: it is forgotten, not set to ok with a GPUPlaced Event; so is a
 * pending pod being deleted. */
static void test_deleting_pod_is_forgotten(void **state)
{
    struct fixture *f = *state;
    json_object *pod =
        test_pod("team", "train", "1", "lab-node-0", "Pending", NULL, 1, "container-start-failed");
    test_pod_set_container_state(pod, "{\"waiting\":{\"reason\":\"CreateContainerError\"}}");
    test_pod_set_deleting(pod);
    put_pod(f, pod);
    drain(f);
    controller_process(f->c, &f->w, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 0);
    pod = test_pod("team", "big", "4", NULL, "Pending", NULL, 1, NULL);
    test_pod_set_deleting(pod);
    put_pod(f, pod);
    drain(f);
    controller_process(f->c, &f->w, "team/big");
    assert_int_equal(fake_kube_count(&f->api), 0);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 0);
}

/* The namespace is being deleted: the Event is refused with 403 for good, and given up rather
 * than retried with backoff (after the patch, and when owed from an earlier failure). */
static void test_event_refused_in_terminating_namespace(void **state)
{
    struct fixture *f = *state;
    static const char terminating[] =
        "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"events "
        "is forbidden: unable to create new content in namespace team because it is being "
        "terminated\"}";
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    fake_kube_answer(&f->api, 200, 0, "{}");
    fake_kube_answer(&f->api, 403, 0, terminating);
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_int_equal(workqueue_failures(f->c->queue, "team/train"), 0);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 0);
    /* owed from a transport failure, then refused: given up */
    put_pod(f, test_pod("team", "infer", "4", NULL, "Pending", NULL, 1, NULL));
    fake_kube_answer(&f->api, 200, 0, "{}");
    fake_kube_fail(&f->api, K_EIO);
    work(f, "team/infer");
    assert_int_equal(fake_kube_count(&f->api), 4);
    assert_int_equal(workqueue_failures(f->c->queue, "team/infer"), 1);
    put_pod(f, test_pod("team", "infer", "4", NULL, "Pending", NULL, 1, "exhausted"));
    drain(f);
    clock_fake_advance_ms(&f->clk, 60 * 1000);
    fake_kube_answer(&f->api, 403, 0, terminating);
    work(f, "team/infer");
    assert_int_equal(fake_kube_count(&f->api), 5);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 0);
    /* owed no more */
    put_same_and_look(f, test_pod("team", "infer", "4", NULL, "Pending", NULL, 1, "exhausted"),
                      "team/infer");
    assert_int_equal(fake_kube_count(&f->api), 5);
    /* a 403 for another reason (RBAC) is retried */
    struct kube_error err = {0};
    snprintf(err.message, sizeof(err.message), "events is forbidden: User cannot create");
    assert_false(reconcile_event_hopeless(K_EFORBIDDEN, &err));
    assert_true(reconcile_event_hopeless(K_ENOTFOUND, NULL));
}

static void test_only_the_leader_writes(void **state)
{
    struct fixture *f = *state;
    struct kube_lease_lock lock;
    assert_int_equal(kube_lease_lock_init(&lock, f->client, "gputri", "gputri-controller"), K_OK);
    struct lease_lock ops = kube_lease_lock_ops(&lock);
    struct leader_options lo = {"me", 15000, 10000, 2000};
    f->c->le = leader_new(&lo, &ops, &f->clock);
    assert_non_null(f->c->le);
    put_pod(f, test_pod("team", "train", "4", NULL, "Pending", NULL, 1, NULL));
    /* not leading yet: the work is left to the leader, nothing is written */
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 0);
    assert_int_equal(workqueue_len(f->c->queue) + workqueue_delayed_len(f->c->queue), 0);
    /* no Lease yet: it is created holding our identity, and we lead */
    fake_kube_answer(&f->api, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    fake_kube_answer(&f->api, 201, 0,
                     "{\"kind\":\"Lease\",\"metadata\":{\"name\":\"gputri-controller\","
                     "\"namespace\":\"gputri\",\"resourceVersion\":\"1\"},\"spec\":{"
                     "\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15}}");
    assert_true(leader_step(f->c->le));
    assert_string_equal(fake_kube_request(&f->api, 0)->method, "GET");
    assert_string_equal(fake_kube_request(&f->api, 0)->path,
                        "/apis/coordination.k8s.io/v1/namespaces/gputri/leases/gputri-controller");
    assert_string_equal(fake_kube_request(&f->api, 1)->method, "POST");
    assert_non_null(strstr(fake_kube_request(&f->api, 1)->body, "\"holderIdentity\":\"me\""));
    controller_enqueue_pending(f->c);
    work(f, "team/train");
    assert_int_equal(fake_kube_count(&f->api), 4);
    assert_string_equal(fake_kube_request(&f->api, 2)->method, "PATCH");
    /* no renewal for the renew deadline: leadership ends and writes stop */
    clock_fake_advance_ms(&f->clk, 10000);
    put_pod(f, test_pod("team", "other", "4", NULL, "Pending", NULL, 1, NULL));
    work(f, "team/other");
    assert_int_equal(fake_kube_count(&f->api), 4);
    kube_lease_lock_cleanup(&lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_blocked_pod_is_patched_and_evented_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gpu_fits_waits_for_the_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_writes_back_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_owed_after_a_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_failed_write_waits_twice_as_long, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_only_the_leader_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleting_pod_is_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_refused_in_terminating_namespace, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
