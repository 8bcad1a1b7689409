/* test_gang.c - core/model/gang.c: the kinds, the link's equality, the Event rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "model/gang.h"

static void test_kinds(void **state)
{
    (void)state;
    const char *g, *v, *r;
    assert_true(gang_kind_api(GANG_KAI, &g, &v, &r));
    assert_string_equal(g, "scheduling.run.ai");
    assert_string_equal(v, "v2alpha2");
    assert_string_equal(r, "podgroups");
    assert_false(gang_kind_api(GANG_NONE, &g, &v, &r));
    assert_int_equal(gang_kind_of_api_version("scheduling.volcano.sh/v1beta1", "PodGroup"),
                     GANG_VOLCANO);
    assert_int_equal(gang_kind_of_api_version("scheduling.k8s.io/v1alpha2", "PodGroup"),
                     GANG_PODGROUP);
    assert_int_equal(gang_kind_of_api_version("scheduling.k8s.io/v1alpha1", "Workload"),
                     GANG_WORKLOAD);
    assert_int_equal(gang_kind_of_api_version("v1", "Pod"), GANG_NONE);
    assert_int_equal(gang_kind_of_api_version(NULL, "PodGroup"), GANG_NONE);
    assert_string_equal(gang_kind_name(GANG_KAI), "KAI PodGroup");
    assert_string_equal(gang_kind_name((enum gang_kind)99), "");
}

static void test_link_equal(void **state)
{
    (void)state;
    struct pod_gang a = {GANG_WORKLOAD, "w", "workers", NULL},
                    b = {GANG_WORKLOAD, "w", "workers", NULL};
    assert_true(pod_gang_equal(&a, &b));
    b.sub = NULL;
    assert_false(pod_gang_equal(&a, &b));
    assert_true(pod_gang_equal(NULL, NULL));
    assert_false(pod_gang_equal(&a, NULL));
    struct gang_group g = {.n_subs = 1, .subs = {{"workers", 3}}};
    assert_int_equal(gang_group_sub_min(&g, "workers"), 3);
    assert_int_equal(gang_group_sub_min(&g, "other"), -1);
}

static void test_events(void **state)
{
    (void)state;
    assert_true(gang_event_is_queue(
        "Unschedulable", "queue resource quota insufficient: insufficient nvidia.com/gpu"));
    assert_true(gang_event_is_queue("Unschedulable", "Non-preemptible workload is over quota. x"));
    assert_false(gang_event_is_queue("Unschedulable", "0/3 nodes are available"));
    assert_true(gang_event_speaks("NotReady", "Job is not ready for scheduling."));
    assert_false(gang_event_speaks("Scheduled", "pod group is ready"));
    assert_false(gang_event_speaks(NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_link_equal),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
