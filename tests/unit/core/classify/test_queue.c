/*
 * test_queue.c - core/classify/queue.c and the word it gives classify(): queue-waiting for a pod
 * held by Kueue's admission gate whose Workload says QuotaReserved=False (Kueue's message quoted,
 * the Workload and the queue named), over scheduling-gated; an admitted Workload leaves the gate's
 * word; a bound pod is ok whatever its Workload says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/classify.h"
#include "classify/queue.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "util/result.h"

#define MESSAGE                                                                                    \
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "    \
    "flavor default-flavor, 1 more needed"

static void gated_pod(struct kpod *p, const char *node)
{
    json_object *o = test_pod("ns", "p", "1", node, "Pending", NULL, 0, NULL);
    json_object *spec = json_object_object_get(o, "spec");
    json_object *gates = json_object_new_array();
    json_object *g = json_object_new_object();
    json_object_object_add(g, "name", json_object_new_string("kueue.x-k8s.io/admission"));
    json_object_array_add(gates, g);
    json_object_object_add(spec, "schedulingGates", gates);
    assert_int_equal(project_pod(o, &test_gpus, p), K_OK);
    json_object_put(o);
}

static struct kworkload waiting(void)
{
    static char ns[] = "ns", name[] = "pod-p-1", lq[] = "lq", reason[] = "Pending", msg[] = MESSAGE;
    struct kworkload w = {.ns = ns, .name = name, .queue_name = lq};
    w.quota_reserved = (struct pod_condition){COND_FALSE, reason, msg};
    return w;
}

static void test_queue_waiting_over_gated(void **state)
{
    (void)state;
    struct kpod p;
    gated_pod(&p, NULL);
    struct kworkload w = waiting();
    struct classify_input in = {.pod = &p, .workload = &w};
    struct classify_result r = {0};
    assert_int_equal(classify(&in, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_QUEUE_WAITING);
    assert_string_equal(r.detail,
                        "Kueue Workload ns/pod-p-1: QuotaReserved=False (Pending): " MESSAGE
                        "; LocalQueue ns/lq");
    assert_true(cause_is_blocking(CAUSE_QUEUE_WAITING));
    assert_string_equal(cause_event_reason(CAUSE_QUEUE_WAITING), "GPUQueueWaiting");

    static char cq[] = "cq", checks[] = "AdmissionCheck prov is Pending";
    w.quota_reserved.status = COND_TRUE;
    w.admitted = (struct pod_condition){COND_FALSE, NULL, checks};
    w.cluster_queue = cq;
    assert_int_equal(classify(&in, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_QUEUE_WAITING);
    assert_string_equal(r.detail, "Kueue Workload ns/pod-p-1: Admitted=False: "
                                  "AdmissionCheck "
                                  "prov is Pending; ClusterQueue cq");

    w.admitted.status = COND_TRUE; /* admitted: Kueue is about to remove the gate */
    assert_int_equal(classify(&in, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_SCHEDULING_GATED);
    in.workload = NULL; /* no Workload known (Kueue not served) */
    assert_int_equal(classify(&in, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_SCHEDULING_GATED);
    pod_cleanup(&p);
}

static void test_bound_is_ok(void **state)
{
    (void)state;
    struct kpod p;
    gated_pod(&p, "n0");
    struct kworkload w = waiting();
    struct classify_input in = {.pod = &p, .workload = &w};
    struct classify_result r = {0};
    assert_int_equal(classify(&in, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_OK);
    pod_cleanup(&p);
}

static void test_detail_bounded(void **state)
{
    (void)state;
    char buf[64];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    struct kworkload w = waiting();
    assert_true(queue_kueue_waiting(&w, &l));
    line_finish(&l);
    assert_true(strlen(buf) < sizeof(buf));
    l = (struct line){.buf = buf, .cap = sizeof(buf)};
    assert_false(queue_kueue_waiting(NULL, &l));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_waiting_over_gated),
        cmocka_unit_test(test_bound_is_ok),
        cmocka_unit_test(test_detail_bounded),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
