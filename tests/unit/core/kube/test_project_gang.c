/* test_project_gang.c - core/kube/project_gang.c: links from pods, groups of every kind, and
 * hostile groups (huge minMember, thousands of subGroups, long strings) at a fixed cost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/project_gang.h"
#include "util/result.h"

static struct pod_gang *link_of(const char *meta, const char *spec)
{
    json_object *m = json_tokener_parse(meta), *s = json_tokener_parse(spec);
    struct pod_gang *g = NULL;
    assert_int_equal(project_pod_gang(m, s, &g), K_OK);
    json_object_put(m);
    json_object_put(s);
    return g;
}

static void test_links(void **state)
{
    (void)state;
    struct pod_gang *g = link_of("{\"annotations\":{\"pod-group-name\":\"pg\"}}", "{}");
    assert_int_equal(g->kind, GANG_KAI);
    assert_string_equal(g->name, "pg");
    pod_gang_free(g);
    g = link_of("{\"annotations\":{\"scheduling.k8s.io/group-name\":\"v\"}}", "{}");
    assert_int_equal(g->kind, GANG_VOLCANO);
    pod_gang_free(g);
    g = link_of("{\"annotations\":{\"scheduling.volcano.sh/group-name\":\"v\"}}", "{}");
    assert_int_equal(g->kind, GANG_VOLCANO);
    pod_gang_free(g);
    g = link_of("{}", "{\"workloadRef\":{\"name\":\"w\",\"podGroup\":\"workers\","
                      "\"podGroupReplicaKey\":\"r1\"}}");
    assert_int_equal(g->kind, GANG_WORKLOAD);
    assert_string_equal(g->sub, "workers");
    assert_string_equal(g->replica, "r1");
    pod_gang_free(g);
    g = link_of("{\"annotations\":{\"pod-group-name\":\"pg\"}}",
                "{\"schedulingGroup\":{\"podGroupName\":\"up\"}}");
    assert_int_equal(g->kind, GANG_PODGROUP); /* the upstream field first */
    assert_string_equal(g->name, "up");
    pod_gang_free(g);
    assert_null(link_of("{\"annotations\":{\"other\":\"x\"}}", "{}"));
    assert_null(link_of("{\"annotations\":{\"pod-group-name\":\"\"}}", "{}"));
    char big[400];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    char meta[600];
    snprintf(meta, sizeof(meta), "{\"annotations\":{\"pod-group-name\":\"%s\"}}", big);
    assert_null(link_of(meta, "{}")); /* longer than any name: no link */
}

static void group_of(const char *json, enum gang_kind k, struct gang_group *g)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    assert_int_equal(project_gang_group(o, k, g), K_OK);
    json_object_put(o);
}

static void test_groups(void **state)
{
    (void)state;
    struct gang_group g;
    group_of("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minMember\":4,"
             "\"queue\":\"team\",\"subGroups\":[{\"name\":\"a\",\"minMember\":2}]},"
             "\"status\":{\"schedulingConditions\":[{\"type\":\"UnschedulableOnNodePool\","
             "\"reasons\":[{\"reason\":\"NonPreemptibleOverQuota\",\"message\":\"Non-preemptible "
             "workload is over quota.\"}]}]}}",
             GANG_KAI, &g);
    assert_int_equal(g.min, 4);
    assert_string_equal(g.queue, "team");
    assert_int_equal(g.n_subs, 1);
    assert_int_equal(g.subs[0].min, 2);
    assert_string_equal(g.queue_reason, "NonPreemptibleOverQuota");
    group_of("{\"metadata\":{\"name\":\"v\"},\"spec\":{\"minMember\":2},\"status\":{\"phase\":"
             "\"Pending\"}}",
             GANG_VOLCANO, &g);
    assert_int_equal(g.min, 2);
    assert_string_equal(g.phase, "Pending");
    group_of("{\"metadata\":{\"name\":\"u\"},\"spec\":{\"schedulingPolicy\":{\"gang\":"
             "{\"minCount\":3}}}}",
             GANG_PODGROUP, &g);
    assert_true(g.gang);
    assert_int_equal(g.min, 3);
    group_of("{\"metadata\":{\"name\":\"u\"},\"spec\":{\"schedulingPolicy\":{\"basic\":{}}}}",
             GANG_PODGROUP, &g);
    assert_false(g.gang);
    group_of("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"podGroups\":[{\"name\":\"workers\","
             "\"policy\":{\"gang\":{\"minCount\":5}}}]}}",
             GANG_WORKLOAD, &g);
    assert_int_equal(gang_group_sub_min(&g, "workers"), 5);
    json_object *bad = json_tokener_parse("{\"spec\":{}}");
    assert_int_equal(project_gang_group(bad, GANG_KAI, &g), K_EPARSE);
    json_object_put(bad);
}

static void test_hostile(void **state)
{
    (void)state;
    /* 5000 subGroups, a minMember past int64, a 10 KiB queue name */
    size_t cap = 5000 * 40 + 20000;
    char *j = malloc(cap);
    size_t n = (size_t)snprintf(j, cap,
                                "{\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":"
                                "99999999999999999999999,\"queue\":\"");
    for (int i = 0; i < 10000; i++)
        j[n++] = 'q';
    n += (size_t)snprintf(j + n, cap - n, "\",\"subGroups\":[");
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(j + n, cap - n, "%s{\"name\":\"s%d\",\"minMember\":-5}", i ? "," : "",
                              i);
    snprintf(j + n, cap - n, "]}}");
    struct gang_group g;
    group_of(j, GANG_KAI, &g);
    free(j);
    assert_int_equal(g.min, GANG_MAX_MIN);
    assert_int_equal(g.n_subs, 5000);
    assert_int_equal(g.subs[GANG_MAX_SUBGROUPS - 1].min, 0);
    assert_int_equal(strlen(g.queue), GANG_NAME_MAX - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
