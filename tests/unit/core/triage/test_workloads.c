/*
 * test_workloads.c - core/triage/workloads.c and the Kueue Workload in triage_pod(): what a
 * one-shot tool lists (fake API server, recorded requests: discovery, then the Workloads labelled
 * with the pod's uid; nothing when Kueue is not served), and a gated pod whose Workload waits
 * turning queue-waiting through the store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/store.h"
#include "cache/workload_store.h"
#include "fake_kube.h"
#include "gpus.h"
#include "objects.h"
#include "triage/triage.h"
#include "util/result.h"

#define GROUP                                                                                      \
    "{\"kind\":\"APIGroup\",\"name\":\"kueue.x-k8s.io\",\"versions\":[{\"version\":\"v1beta2\"}]}"
#define LIST                                                                                       \
    "{\"kind\":\"WorkloadList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{"             \
    "\"metadata\":{\"name\":\"pod-p-1\",\"namespace\":\"ns\",\"ownerReferences\":[{\"kind\":"      \
    "\"Pod\",\"name\":\"p\",\"uid\":\"pu\"}]},\"spec\":{\"queueName\":\"lq\"},\"status\":{"        \
    "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":\"Pending\","     \
    "\"message\":\"insufficient unused quota for nvidia.com/gpu in flavor f, 1 more "              \
    "needed\"}]}}]}"

static void test_read_the_pods_workload(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    fake_kube_answer(&f, 200, 0, GROUP);
    fake_kube_answer(&f, 200, 0, LIST);
    struct kube_client *c = fake_kube_client(&f);
    struct workload_store *ws = workload_store_new();
    struct kube_error err = {0};
    const char *uids[] = {"pu", NULL};
    assert_int_equal(triage_read_workloads(c, ws, "ns", uids, 2, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 2);
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/kueue.x-k8s.io");
    assert_non_null(strstr(fake_kube_request(&f, 1)->path,
                           "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads?labelSelector="
                           "kueue.x-k8s.io%2Fjob-uid%3Dpu"));
    workload_store_read_lock(ws);
    assert_non_null(workload_store_for_pod(ws, "pu", NULL));
    workload_store_read_unlock(ws);

    /* the pod in a store, gated: queue-waiting with Kueue's message */
    struct store *s = store_new(&test_gpus);
    json_object *pod = test_pod("ns", "p", "1", NULL, "Pending", NULL, 0, NULL);
    json_object *meta = json_object_object_get(pod, "metadata");
    json_object_object_add(meta, "uid", json_object_new_string("pu"));
    json_object *gates = json_object_new_array(), *g = json_object_new_object();
    json_object_object_add(g, "name", json_object_new_string("kueue.x-k8s.io/admission"));
    json_object_array_add(gates, g);
    json_object_object_add(json_object_object_get(pod, "spec"), "schedulingGates", gates);
    unsigned changed = 0;
    assert_int_equal(store_pod_apply_json(s, pod, 0, NULL, &changed), K_OK);
    json_object_put(pod);
    struct triage_source src = {.store = s, .workloads = ws};
    struct classify_result r = {0};
    store_read_lock(s);
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "p"), &r), K_OK);
    store_read_unlock(s);
    assert_int_equal(r.cause, CAUSE_QUEUE_WAITING);
    assert_non_null(strstr(r.detail, "Kueue Workload ns/pod-p-1: QuotaReserved=False (Pending): "
                                     "insufficient unused quota"));
    src.workloads = NULL;
    store_read_lock(s);
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "p"), &r), K_OK);
    store_read_unlock(s);
    assert_int_equal(r.cause, CAUSE_SCHEDULING_GATED);
    store_free(s);
    workload_store_free(ws);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

static void test_not_served_reads_nothing(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    fake_kube_answer(&f, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    struct kube_client *c = fake_kube_client(&f);
    struct workload_store *ws = workload_store_new();
    struct kube_error err = {0};
    assert_int_equal(triage_read_workloads(c, ws, NULL, NULL, 0, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 1);
    workload_store_free(ws);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_the_pods_workload),
        cmocka_unit_test(test_not_served_reads_nothing),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
