/*
 * test_project_workload.c - core/kube/project_workload.c: Kueue Workloads as a real Kueue v0.17.0
 * wrote them (tests/fixtures/kueue/workloads.json, from e2e/test-kueue) into struct kworkload,
 * and the bounds against hostile objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "kube/project_workload.h"
#include "objects.h"
#include "util/buf.h"
#include "util/result.h"

static const char *const WAITING =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{\"name\":"
    "\"pod-second-1a2b3\",\"namespace\":\"kueue-e2e\",\"uid\":\"wu\",\"labels\":{"
    "\"kueue.x-k8s.io/job-uid\":\"pu\"},\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
    "\"Pod\",\"name\":\"second\",\"uid\":\"pu\",\"controller\":true}]},\"spec\":{\"queueName\":"
    "\"kueue-e2e-lq\",\"podSets\":[{\"name\":\"main\",\"count\":1}]},\"status\":{\"conditions\":["
    "{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":\"Pending\",\"message\":"
    "\"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
    "flavor kueue-e2e-flavor, 1 more needed\"}]}}";

static void test_waiting_workload(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(WAITING);
    struct kworkload w;
    assert_int_equal(project_workload(o, &w), K_OK);
    assert_string_equal(w.ns, "kueue-e2e");
    assert_string_equal(w.name, "pod-second-1a2b3");
    assert_string_equal(w.queue_name, "kueue-e2e-lq");
    assert_null(w.cluster_queue);
    assert_int_equal(w.n_owners, 1);
    assert_string_equal(w.owners[0].kind, "Pod");
    assert_string_equal(w.owners[0].name, "second");
    assert_true(workload_owned_by(&w, "pu"));
    assert_int_equal(w.quota_reserved.status, COND_FALSE);
    assert_string_equal(w.quota_reserved.reason, "Pending");
    assert_non_null(strstr(w.quota_reserved.message, "1 more needed"));
    assert_int_equal(w.admitted.status, COND_ABSENT);
    workload_cleanup(&w);
    json_object_put(o);
}

/* The recorded Workloads: the admitted one and the waiting one, each owned by its Pod. */
static void test_recorded(void **state)
{
    (void)state;
    json_object *list = test_load_json(FIXTURES_DIR, "kueue/workloads.json");
    assert_non_null(list);
    json_object *items = json_object_object_get(list, "items");
    assert_int_equal(json_object_array_length(items), 2);
    struct kworkload a, b;
    assert_int_equal(project_workload(json_object_array_get_idx(items, 0), &a), K_OK);
    assert_int_equal(project_workload(json_object_array_get_idx(items, 1), &b), K_OK);
    const char *type = NULL;
    assert_string_equal(a.cluster_queue, "kueue-e2e-cq");
    assert_null(workload_waiting(&a, &type));
    assert_string_equal(b.owners[0].kind, "Pod");
    assert_string_equal(b.owners[0].name, "second");
    assert_string_equal(b.queue_name, "kueue-e2e-lq");
    assert_ptr_equal(workload_waiting(&b, &type), &b.quota_reserved);
    assert_string_equal(b.quota_reserved.message,
                        "couldn't assign flavors to pod set main: insufficient unused quota for "
                        "nvidia.com/gpu in flavor kueue-e2e-flavor, 1 more needed");
    workload_cleanup(&a);
    workload_cleanup(&b);
    json_object_put(list);
}

static void test_admitted_workload(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"},\"status\":{\"admission\":{"
        "\"clusterQueue\":\"cq\"},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\"},"
        "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\"},{\"type\":"
        "\"Finished\",\"status\":\"True\"}]}}");
    struct kworkload w;
    assert_int_equal(project_workload(o, &w), K_OK);
    assert_string_equal(w.cluster_queue, "cq");
    assert_int_equal(w.quota_reserved.status, COND_TRUE);
    assert_int_equal(w.admitted.status, COND_TRUE);
    assert_true(w.finished);
    workload_cleanup(&w);
    json_object_put(o);
}

static void test_no_name_is_invalid(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse("{\"metadata\":{\"namespace\":\"ns\"}}");
    struct kworkload w;
    assert_int_equal(project_workload(o, &w), K_EINVAL);
    json_object_put(o);
    o = json_tokener_parse("[1,2]");
    assert_int_equal(project_workload(o, &w), K_EINVAL);
    json_object_put(o);
}

/* Hostile: 10,000 owners and conditions, a 1 MiB message with invalid UTF-8, fields of other
 * types: the projection keeps its bounds. */
static void test_bounds(void **state)
{
    (void)state;
    json_object *o = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string("w"));
    json_object_object_add(meta, "namespace", json_object_new_string("ns"));
    json_object *owners = json_object_new_array();
    for (int i = 0; i < 10000; i++) {
        json_object *ref = json_object_new_object();
        char uid[32];
        snprintf(uid, sizeof(uid), "u%d", i);
        json_object_object_add(ref, "uid", json_object_new_string(uid));
        json_object_object_add(ref, "kind", json_object_new_int(7)); /* not a string */
        json_object_array_add(owners, ref);
    }
    json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(o, "metadata", meta);
    size_t big = 1u << 20;
    char *msg = malloc(big + 1);
    assert_non_null(msg);
    memset(msg, 'x', big);
    msg[0] = (char)0xff; /* invalid UTF-8 */
    msg[big] = '\0';
    json_object *conds = json_object_new_array();
    for (int i = 0; i < 10000; i++) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "type",
                               json_object_new_string(i == 9999 ? "QuotaReserved" : "X"));
        json_object_object_add(c, "status", json_object_new_string("False"));
        json_object_array_add(conds, c);
    }
    json_object *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string("QuotaReserved"));
    json_object_object_add(c, "status", json_object_new_string("False"));
    json_object_object_add(c, "message", json_object_new_string(msg));
    json_object_array_put_idx(conds, 0, c);
    json_object *status = json_object_new_object();
    json_object_object_add(status, "conditions", conds);
    json_object_object_add(o, "status", status);
    json_object_object_add(o, "spec", json_object_new_string("not an object"));
    struct kworkload w;
    assert_int_equal(project_workload(o, &w), K_OK);
    assert_int_equal(w.n_owners, WORKLOAD_MAX_OWNERS);
    assert_null(w.owners[0].kind);
    assert_null(w.queue_name);
    assert_int_equal(w.quota_reserved.status, COND_FALSE);
    assert_true(strlen(w.quota_reserved.message) <= WORKLOAD_MAX_TEXT);
    assert_int_equal((unsigned char)w.quota_reserved.message[0], '?');
    workload_cleanup(&w);
    free(msg);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waiting_workload),
        cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_admitted_workload),
        cmocka_unit_test(test_no_name_is_invalid),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
