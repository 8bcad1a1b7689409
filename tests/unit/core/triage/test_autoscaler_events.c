/*
 * test_autoscaler_events.c - core/triage/autoscaler_events.c and the autoscalers' word in
 * triage_pod(): which Events a one-shot tool lists (fake API server, recorded requests), and
 * how Events recorded from the writers' formats (tests/fixtures/autoscaler) turn the current
 * nodes' word into scaling-up or scale-up-blocked, and stop doing so once stale.
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

#include "cache/pod_events.h"
#include "cache/store.h"
#include "fake_kube.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "triage/triage.h"
#include "util/result.h"

/* The fixtures' times are seconds after 2026-12-01T10:00:00Z. */
#define T0 1796119200
#define POD_UID "11111111-2222-3333-4444-555555555555"

/* Fixture `file` as an Event about the test pod ml/want. */
static json_object *fixture(const char *file)
{
    char rel[256];
    /* "quota/..." names a fixture of another directory (classify/quota.h) */
    snprintf(rel, sizeof(rel), strchr(file, '/') ? "%s" : "autoscaler/%s", file);
    json_object *ev = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(ev);
    json_object *obj = NULL;
    assert_true(json_object_object_get_ex(ev, "involvedObject", &obj));
    json_object_object_add(obj, "uid", json_object_new_string(POD_UID));
    json_object_object_add(obj, "name", json_object_new_string("want"));
    json_object_object_add(obj, "namespace", json_object_new_string("ml"));
    json_object *meta = NULL;
    if (strchr(file, '/') && json_object_object_get_ex(ev, "metadata", &meta))
        json_object_object_add(meta, "namespace", json_object_new_string("ml"));
    return ev;
}

static void answer_events(struct fake_kube *f, const char *const *files, size_t n)
{
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "resourceVersion", json_object_new_string("9"));
    json_object_object_add(list, "kind", json_object_new_string("EventList"));
    json_object_object_add(list, "metadata", meta);
    for (size_t i = 0; i < n; i++)
        json_object_array_add(items, fixture(files[i]));
    json_object_object_add(list, "items", items);
    fake_kube_answer(f, 200, 0, json_object_to_json_string(list));
    json_object_put(list);
}

static size_t held(struct pod_events *pe)
{
    struct pod_events_stats st;
    pod_events_stats(pe, &st);
    return st.events;
}

/* One pod: its Events by uid, only the autoscalers' verdicts kept. Every pod: one LIST per
 * writer. A 403 is the caller's to take as "no evidence". */
static void test_lists_what_it_needs(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    const char *files[] = {"ca-triggered-one.json", "not-evidence-scheduler.json"};
    answer_events(&f, files, 2);
    struct kube_client *c = fake_kube_client(&f);
    struct pod_events *pe = pod_events_new(0);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    assert_int_equal(triage_read_pod_events(c, pe, "ml", POD_UID, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 1);
    assert_string_equal(fake_kube_request(&f, 0)->path,
                        "/api/v1/namespaces/ml/events?fieldSelector=involvedObject.uid%3D" POD_UID
                        "&limit=500");
    assert_int_equal(held(pe), 1);
    pod_events_free(pe);
    kube_client_free(c);
    fake_kube_cleanup(&f);

    fake_kube_init(&f);
    const char *karpenter[] = {"karpenter-nominated.json"};
    const char *quota[] = {"quota/claim-refused.json", "quota/job-refused.json"};
    answer_events(&f, files, 1);
    answer_events(&f, karpenter, 1);
    answer_events(&f, quota, 2);
    answer_events(&f, NULL, 0);
    answer_events(&f, NULL, 0);
    c = fake_kube_client(&f);
    pe = pod_events_new(0);
    assert_int_equal(triage_read_pod_events(c, pe, NULL, NULL, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 5);
    /* a claim refused by a quota is kept too (classify/quota.h), an owner's refusal is not */
    assert_string_equal(fake_kube_request(&f, 2)->path,
                        "/api/v1/events?fieldSelector=type%3DWarning%2Creason%3D"
                        "FailedResourceClaimCreation&limit=500");
    assert_string_equal(fake_kube_request(&f, 0)->path,
                        "/api/v1/events?fieldSelector=source%3Dcluster-autoscaler&limit=500");
    assert_string_equal(fake_kube_request(&f, 1)->path,
                        "/api/v1/events?fieldSelector=source%3Dkarpenter&limit=500");
    /* the kubelets' warnings the after-placement steps read (classify/placement.h) */
    assert_string_equal(fake_kube_request(&f, 3)->path,
                        "/api/v1/events?fieldSelector=source%3Dkubelet%2Ctype%3DWarning%2Creason%3D"
                        "FailedCreatePodSandBox&limit=500");
    assert_string_equal(fake_kube_request(&f, 4)->path,
                        "/api/v1/events?fieldSelector=source%3Dkubelet%2Ctype%3DWarning%2Creason%3D"
                        "Failed&limit=500");
    assert_int_equal(held(pe), 3);
    pod_events_free(pe);
    kube_client_free(c);
    fake_kube_cleanup(&f);

    fake_kube_init(&f);
    fake_kube_answer(&f, 403, 0,
                     "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Forbidden\","
                     "\"code\":403,\"message\":\"events is forbidden\"}");
    c = fake_kube_client(&f);
    pe = pod_events_new(0);
    assert_int_equal(triage_read_pod_events(c, pe, "ml", POD_UID, &err), K_EFORBIDDEN);
    pod_events_free(pe);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

struct world {
    struct store *s;
    struct pod_events *pe;
};

/* A CPU node, a node `extra` (NULL: none), and pending pod ml/want asking one GPU. */
static void world_new(struct world *w, json_object *extra)
{
    w->s = store_new(&test_gpus);
    w->pe = pod_events_new(0);
    assert_non_null(w->s);
    assert_non_null(w->pe);
    unsigned ch = 0;
    json_object *cpu = test_node("cpu-1", NULL, NULL, NULL, NULL);
    assert_int_equal(store_node_apply_json(w->s, cpu, 0, NULL, &ch), K_OK);
    json_object_put(cpu);
    if (extra) {
        assert_int_equal(store_node_apply_json(w->s, extra, 0, NULL, &ch), K_OK);
        json_object_put(extra);
    }
    json_object *pod = test_pod("ml", "want", "1", NULL, "Pending", NULL, 0, NULL);
    assert_int_equal(store_pod_apply_json(w->s, pod, 0, NULL, &ch), K_OK);
    json_object_put(pod);
}

static void world_event(struct world *w, const char *file)
{
    json_object *o = fixture(file);
    struct kevent ev;
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_int_equal(pod_events_apply(w->pe, &ev, false, 0, NULL), K_OK);
}

static void world_free(struct world *w)
{
    store_free(w->s);
    pod_events_free(w->pe);
}

static struct classify_result run(struct world *w, int64_t now)
{
    struct triage_source src = {.store = w->s, .events = w->pe, .now = now};
    struct classify_result r;
    r.verdicts = NULL;
    store_read_lock(w->s);
    assert_int_equal(triage_pod(&src, store_pod_get(w->s, "ml", "want"), &r), K_OK);
    store_read_unlock(w->s);
    return r;
}

/* Cluster Autoscaler scaling up, then refusing; stale after the window; the nodes' word kept in
 * the detail and in ladder_cause. */
static void test_cluster_autoscaler_word(void **state)
{
    (void)state;
    struct world w;
    world_new(&w, NULL);
    struct classify_result r = run(&w, T0 + 60);
    assert_int_equal(r.cause, CAUSE_NO_GPU_NODE); /* no evidence yet */
    assert_int_equal(r.ladder_cause, CAUSE_NO_GPU_NODE);

    world_event(&w, "ca-triggered-one.json"); /* 10:00:30 */
    r = run(&w, T0 + 60);
    assert_int_equal(r.cause, CAUSE_SCALING_UP);
    assert_int_equal(r.ladder_cause, CAUSE_NO_GPU_NODE);
    assert_non_null(strstr(r.detail, "eks-gpu-a10g-20c9d1e2 0->1 (max: 4)"));
    assert_non_null(strstr(r.detail, "; on the current nodes: no-gpu-node: "));
    assert_int_equal(r.autoscaler_until, T0 + 30 + CLASSIFY_PROVISION_WINDOW);

    r = run(&w, T0 + 30 + CLASSIFY_PROVISION_WINDOW + 1); /* stale: the nodes speak again */
    assert_int_equal(r.cause, CAUSE_NO_GPU_NODE);
    assert_int_equal(r.autoscaler_until, 0);

    world_event(&w, "ca-not-triggered-one.json");
    r = run(&w, T0 + 600);
    assert_int_equal(r.cause, CAUSE_SCALE_UP_BLOCKED);
    assert_true(cause_is_blocking(r.cause));
    assert_false(cause_is_blocking(CAUSE_SCALING_UP));
    world_free(&w);
}

/* Karpenter: nominated to a NodeClaim whose node is not there, or is there and still joining:
 * scaling-up; to a node that has joined: the ladder speaks for it. */
static void test_karpenter_nomination(void **state)
{
    (void)state;
    struct world w;
    world_new(&w, NULL);
    world_event(&w, "karpenter-nominated-node.json");
    struct classify_result r = run(&w, T0 + 120);
    assert_int_equal(r.cause, CAUSE_SCALING_UP);
    world_free(&w);

    world_new(&w, test_node("ip-10-0-12-34.ec2.internal", "1", "1",
                            "karpenter.sh/unregistered=true:NoExecute", NULL));
    world_event(&w, "karpenter-nominated-node.json");
    r = run(&w, T0 + 120);
    assert_int_equal(r.cause, CAUSE_SCALING_UP);
    assert_int_equal(r.ladder_cause, CAUSE_TAINT);
    assert_null(strstr(r.detail, "add toleration"));
    world_free(&w);

    world_new(&w, test_node("ip-10-0-12-34.ec2.internal", "1", "1", NULL, NULL));
    world_event(&w, "karpenter-nominated-node.json");
    r = run(&w, T0 + 120);
    assert_int_equal(r.cause, CAUSE_GPU_FITS); /* joined: no autoscaler word over it */
    world_free(&w);

    /* no Event at all, but a candidate still joining */
    world_new(&w, test_node("new-gpu", "1", "1", "karpenter.sh/unregistered=true:NoExecute", NULL));
    r = run(&w, T0 + 120);
    assert_int_equal(r.cause, CAUSE_SCALING_UP);
    assert_non_null(strstr(r.detail, "node new-gpu is being added by an autoscaler"));
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_what_it_needs),
        cmocka_unit_test(test_cluster_autoscaler_word),
        cmocka_unit_test(test_karpenter_nomination),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
