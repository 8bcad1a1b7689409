/* test_gang.c - core/classify/gang.c through classify(): gang-waiting and queue-waiting for each
 * kind of group, and where they stand on the ladder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "classify/classify.h"
#include "classify/gang.h"
#include "util/result.h"

static struct resource_amount gpu = {.name = "nvidia.com/gpu", .value = 1000};

static enum cause run(struct kpod *pod, struct gang_facts *f, char *detail, size_t cap)
{
    struct classify_input in = {.pod = pod, .gang = f, .now = 1000};
    struct classify_result r = {0};
    assert_int_equal(classify(&in, &r), K_OK);
    snprintf(detail, cap, "%s", r.detail);
    return r.cause;
}

static void test_kinds(void **state)
{
    (void)state;
    char d[1024];
    struct pod_gang link = {GANG_PODGROUP, "pg", NULL, NULL};
    struct kpod pod = {.ns = "ns",
                       .name = "p",
                       .gang = &link,
                       .created = 1,
                       .gpu_requests = {.items = &gpu, .n = 1}};
    struct gang_facts f = {.read = true, .found = true, .exist = 2, .gated = 0};
    f.group = (struct gang_group){.kind = GANG_PODGROUP, .min = 3, .gang = true};
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    assert_non_null(strstr(d, "PodGroup ns/pg (scheduling.k8s.io) needs minCount 3, 2 pods exist, "
                              "0 gated: kube-scheduler"));
    /* the scheduler tried the pod: it does not hold it for its gang */
    pod.scheduled.status = COND_FALSE;
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_LABEL_MISMATCH);
    pod.scheduled.reason = "SchedulingGated"; /* the API server's, for a gated pod */
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    pod.scheduled.reason = NULL;
    pod.scheduled.status = COND_ABSENT;
    f.exist = 3;
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_LABEL_MISMATCH); /* no nodes: the ladder */
    f.group.gang = false;                                                /* basic policy */
    f.exist = 1;
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_LABEL_MISMATCH);
    /* the group absent where the kind is read */
    f.found = false;
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    assert_non_null(strstr(d, "does not exist"));
    /* not read: nothing said */
    f.read = false;
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_LABEL_MISMATCH);

    /* 1.35 Workload: the pod's podGroup decides */
    struct pod_gang wl = {GANG_WORKLOAD, "w", "workers", NULL};
    pod.gang = &wl;
    f = (struct gang_facts){.read = true, .found = true, .exist = 1};
    f.group = (struct gang_group){
        .kind = GANG_WORKLOAD, .gang = true, .n_subs = 1, .subs = {{"workers", 2}}};
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    assert_non_null(strstr(d, "podGroup workers needs minCount 2, 1 pod exists"));
    wl.sub = "other";
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    assert_non_null(strstr(d, "has no podGroup other"));
}

static void test_queue_and_order(void **state)
{
    (void)state;
    char d[1024];
    struct pod_gang link = {GANG_VOLCANO, "vg", NULL, NULL};
    char *gates[] = {"g"};
    struct kpod pod = {.ns = "ns",
                       .name = "p",
                       .gang = &link,
                       .gpu_requests = {.items = &gpu, .n = 1},
                       .scheduling_gates = gates,
                       .n_scheduling_gates = 1};
    struct gang_facts f = {.read = true, .found = true, .exist = 1, .gated = 1};
    f.group = (struct gang_group){.kind = GANG_VOLCANO, .min = 2, .gang = true};
    strcpy(f.group.queue, "q1");
    /* gang-waiting before scheduling-gated */
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_GANG_WAITING);
    assert_non_null(strstr(d, "needs minMember 2, 1 pod exists, 1 gated"));
    strcpy(f.event_reason, "Unschedulable");
    strcpy(f.event_message, "queue resource quota insufficient: insufficient nvidia.com/gpu");
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_QUEUE_WAITING);
    assert_non_null(strstr(d, "Event Unschedulable: queue resource quota insufficient"));
    assert_non_null(strstr(d, "Queue q1 (kubectl get queues.scheduling.volcano.sh q1)"));
    /* bound: ok whatever the gang says */
    pod.node_name = "n1";
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_OK);
    /* KAI's own condition */
    pod.node_name = NULL;
    pod.n_scheduling_gates = 0;
    link.kind = GANG_KAI;
    f.group.kind = GANG_KAI;
    f.event_reason[0] = '\0';
    strcpy(f.group.queue_reason, "OverLimit");
    strcpy(f.group.queue_message, "queue limit reached");
    assert_int_equal(run(&pod, &f, d, sizeof(d)), CAUSE_QUEUE_WAITING);
    assert_non_null(strstr(d, "held back by its queue: OverLimit: queue limit reached"));
    assert_non_null(strstr(d, "queues.scheduling.run.ai"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_queue_and_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
