/*
 * test_pod_events.c - core/cache/pod_events.c: the newest Event per (pod, writer, reason), its
 * bounds, deletions and the relist's sweep of one writer's records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache/pod_events.h"
#include "util/result.h"

static struct kevent event(const char *name, const char *pod, const char *uid,
                           const char *component, const char *reason, const char *message,
                           int64_t last)
{
    struct kevent e;
    memset(&e, 0, sizeof(e));
    snprintf(e.ns, sizeof(e.ns), "ml");
    snprintf(e.name, sizeof(e.name), "%s", name);
    snprintf(e.obj_kind, sizeof(e.obj_kind), "Pod");
    snprintf(e.obj_ns, sizeof(e.obj_ns), "ml");
    snprintf(e.obj_name, sizeof(e.obj_name), "%s", pod);
    snprintf(e.obj_uid, sizeof(e.obj_uid), "%s", uid);
    snprintf(e.component, sizeof(e.component), "%s", component);
    snprintf(e.reason, sizeof(e.reason), "%s", reason);
    snprintf(e.message, sizeof(e.message), "%s", message);
    snprintf(e.type, sizeof(e.type), "Normal");
    e.count = 1;
    e.first_timestamp = last - 10;
    e.last_timestamp = last;
    return e;
}

static size_t get(struct pod_events *pe, const char *pod, const char *uid,
                  const struct pod_event **out)
{
    pod_events_read_lock(pe);
    size_t n = pod_events_get(pe, "ml", pod, uid, out, POD_EVENTS_PER_POD);
    pod_events_read_unlock(pe);
    return n;
}

/* One record per writer and reason, the newest; an older Event of the same kind changes
 * nothing; another writer's same reason is another record. */
static void test_newest_per_reason(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    char key[256];
    struct kevent e = event("a", "p", "u1", "cluster-autoscaler", "NotTriggerScaleUp",
                            "pod didn't trigger scale-up: 1 max node group size reached", 100);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "ml/p");
    e = event("b", "p", "u1", "cluster-autoscaler", "TriggeredScaleUp",
              "pod triggered scale-up: [{g 0->1 (max: 4)}]", 200);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    e = event("c", "p", "u1", "cluster-autoscaler", "NotTriggerScaleUp", "older", 50);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, ""); /* older than what it has */
    e = event("d", "p", "u1", "karpenter", "NotTriggerScaleUp", "another writer", 60);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);

    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u1", got), 3);
    assert_int_equal(get(pe, "p", "u2", got), 0); /* another pod under the name */
    assert_int_equal(get(pe, "p", NULL, got), 3);
    bool seen_refusal = false;
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(got[i]->reason, "NotTriggerScaleUp") &&
            !strcmp(got[i]->component, "cluster-autoscaler")) {
            assert_string_equal(got[i]->message,
                                "pod didn't trigger scale-up: 1 max node group size reached");
            assert_int_equal(pod_event_time(got[i]), 100);
            seen_refusal = true;
        }
    assert_true(seen_refusal);

    /* the same Event object, repeated later: replaced */
    e = event("a", "p", "u1", "cluster-autoscaler", "NotTriggerScaleUp", "again", 300);
    e.count = 5;
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "ml/p");
    struct pod_events_stats st;
    pod_events_stats(pe, &st);
    assert_int_equal(st.pods, 1);
    assert_int_equal(st.events, 3);

    /* a deletion removes only the object it names */
    e = event("zzz", "p", "u1", "cluster-autoscaler", "TriggeredScaleUp", "", 0);
    assert_int_equal(pod_events_apply(pe, &e, true, 0, key), K_OK);
    assert_string_equal(key, "");
    e = event("b", "p", "u1", "cluster-autoscaler", "TriggeredScaleUp", "", 0);
    assert_int_equal(pod_events_apply(pe, &e, true, 0, key), K_OK);
    assert_string_equal(key, "ml/p");
    assert_int_equal(get(pe, "p", "u1", got), 2);

    pod_events_forget_pod(pe, "ml", "p");
    assert_int_equal(get(pe, "p", NULL, got), 0);
    pod_events_stats(pe, &st);
    assert_int_equal(st.pods, 0);
    assert_int_equal(st.events, 0);
    assert_int_equal(st.bytes, 0);
    pod_events_free(pe);
}

/* Not about a pod, or no uid: ignored. Past max_pods: refused and counted. Past
 * POD_EVENTS_PER_POD reasons: the oldest makes room. */
static void test_bounds(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(2);
    assert_non_null(pe);
    char key[256];
    struct kevent e = event("n", "node-1", "u", "cluster-autoscaler", "ScaleDown", "x", 10);
    snprintf(e.obj_kind, sizeof(e.obj_kind), "Node");
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "");
    e = event("n", "p", "", "karpenter", "Nominated", "x", 10);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "");

    for (int i = 0; i < POD_EVENTS_PER_POD + 3; i++) {
        char reason[32];
        snprintf(reason, sizeof(reason), "Reason%d", i);
        e = event(reason, "p", "u", "karpenter", reason, "m", 100 + i);
        assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    }
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), POD_EVENTS_PER_POD);
    for (size_t i = 0; i < POD_EVENTS_PER_POD; i++)
        assert_true(pod_event_time(got[i]) >= 103); /* the three oldest went */

    e = event("q", "q", "u", "karpenter", "Nominated", "m", 1);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    e = event("r", "r", "u", "karpenter", "Nominated", "m", 1);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_ETOOBIG);
    struct pod_events_stats st;
    pod_events_stats(pe, &st);
    assert_int_equal(st.pods, 2);
    assert_int_equal(st.refused, 1);

    /* a message is kept whole up to its bound */
    char big[POD_EVENTS_MESSAGE_MAX + 1];
    memset(big, 'x', POD_EVENTS_MESSAGE_MAX);
    big[POD_EVENTS_MESSAGE_MAX] = '\0';
    e = event("q2", "q", "u", "karpenter", "FailedScheduling", big, 5);
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_int_equal(get(pe, "q", "u", got), 2);
    pod_events_free(pe);
}

static void count_key(void *ctx, const char *key)
{
    int *n = ctx;
    assert_string_equal(key, "ml/p");
    (*n)++;
}

/* A relist of one writer sweeps that writer's records it did not see again, and names the
 * pods that lost some; the other writer's records stay. */
static void test_relist_sweeps_one_writer(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    struct kevent a = event("a", "p", "u", "cluster-autoscaler", "TriggeredScaleUp", "m", 10);
    struct kevent b = event("b", "p", "u", "karpenter", "Nominated", "m", 10);
    struct kevent c = event("c", "p", "u", "karpenter", "FailedScheduling", "m", 10);
    assert_int_equal(pod_events_apply(pe, &a, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &b, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &c, false, 0, NULL), K_OK);
    pod_events_sync_begin(pe, "karpenter");
    assert_int_equal(pod_events_apply(pe, &b, false, 0, NULL), K_OK); /* still listed */
    int lost = 0;
    pod_events_sync_end(pe, "karpenter", count_key, &lost);
    assert_int_equal(lost, 1);
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), 2);
    for (size_t i = 0; i < 2; i++)
        assert_string_not_equal(got[i]->reason, "FailedScheduling");

    /* the record back as an Event */
    struct kevent back;
    pod_event_to_kevent(got[0], "ml", "p", &back);
    assert_string_equal(back.obj_kind, "Pod");
    assert_string_equal(back.obj_name, "p");
    assert_string_equal(back.obj_uid, "u");
    assert_int_equal(back.last_timestamp, 10);
    pod_events_free(pe);
}

/* An Event in another namespace than the pod's (allowed for Events with an eventTime) speaks
 * for no pod there; nor does an Event whose strings are not terminated. */
static void test_other_namespace_ignored(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    char key[256];
    struct kevent e = event("x", "p", "u", "karpenter", "Nominated",
                            "Pod should schedule on: nodeclaim/forged", 100);
    snprintf(e.ns, sizeof(e.ns), "evil");
    e.event_time = 100;
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "");
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), 0);

    e = event("x", "p", "u", "karpenter", "Nominated", "m", 100);
    memset(e.reason, 'R', sizeof(e.reason)); /* no terminator */
    assert_int_equal(pod_events_apply(pe, &e, false, 0, key), K_OK);
    assert_string_equal(key, "");
    assert_int_equal(get(pe, "p", "u", got), 0);
    pod_events_free(pe);
}

/* An Event dated after `not_after` keeps no newer Event of its kind out, and is the first to
 * make room. */
static void test_future_times_do_not_pin(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    char key[256];
    const int64_t now = 1000000, not_after = now + 300;
    struct kevent e = event("forged", "p", "u", "cluster-autoscaler", "TriggeredScaleUp",
                            "pod triggered scale-up: [{g 0->1 (max: 4)}]", now);
    e.event_time = 253402300799; /* 9999-12-31T23:59:59Z */
    assert_int_equal(pod_events_apply(pe, &e, false, not_after, key), K_OK);
    e = event("real", "p", "u", "cluster-autoscaler", "TriggeredScaleUp",
              "pod triggered scale-up: [{real 0->1 (max: 4)}]", now + 60);
    assert_int_equal(pod_events_apply(pe, &e, false, not_after, key), K_OK);
    assert_string_equal(key, "ml/p");
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), 1);
    assert_string_equal(got[0]->event_name, "real");

    /* eight kinds, one of them dated in the future: a ninth replaces that one */
    for (int i = 0; i < POD_EVENTS_PER_POD - 1; i++) {
        char reason[32];
        snprintf(reason, sizeof(reason), "Reason%d", i);
        e = event(reason, "p", "u", "karpenter", reason, "m", now + i);
        if (i == 3)
            e.last_timestamp = now + 1000000;
        assert_int_equal(pod_events_apply(pe, &e, false, not_after, key), K_OK);
    }
    e = event("ninth", "p", "u", "karpenter", "Ninth", "m", now + 100);
    assert_int_equal(pod_events_apply(pe, &e, false, not_after, key), K_OK);
    size_t n = get(pe, "p", "u", got);
    assert_int_equal(n, POD_EVENTS_PER_POD);
    for (size_t i = 0; i < n; i++)
        assert_string_not_equal(got[i]->event_name, "Reason3");
    pod_events_free(pe);
}

/* A relist that lists an older Event of a kind whose newer Event is gone keeps the listed one:
 * the record of an Event deleted while the watch was down does not outlive the relist. */
static void test_relist_replaces_unlisted_newer(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    struct kevent gone =
        event("gone", "p", "u", "cluster-autoscaler", "NotTriggerScaleUp",
              "pod didn't trigger scale-up: 1 in backoff after failed scale-up", 200);
    struct kevent old = event("old", "p", "u", "cluster-autoscaler", "NotTriggerScaleUp",
                              "pod didn't trigger scale-up: 1 max node group size reached", 100);
    assert_int_equal(pod_events_apply(pe, &gone, false, 0, NULL), K_OK);
    pod_events_sync_begin(pe, "cluster-autoscaler");
    assert_int_equal(pod_events_apply(pe, &old, false, 0, NULL), K_OK);
    pod_events_sync_end(pe, "cluster-autoscaler", NULL, NULL);
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), 1);
    assert_string_equal(got[0]->event_name, "old");

    /* both listed, the older first: the newer is what stays */
    pod_events_sync_begin(pe, "cluster-autoscaler");
    assert_int_equal(pod_events_apply(pe, &old, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &gone, false, 0, NULL), K_OK);
    pod_events_sync_end(pe, "cluster-autoscaler", NULL, NULL);
    assert_int_equal(get(pe, "p", "u", got), 1);
    assert_string_equal(got[0]->event_name, "gone");
    /* ... and the newer first */
    pod_events_sync_begin(pe, "cluster-autoscaler");
    assert_int_equal(pod_events_apply(pe, &gone, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &old, false, 0, NULL), K_OK);
    pod_events_sync_end(pe, "cluster-autoscaler", NULL, NULL);
    assert_int_equal(get(pe, "p", "u", got), 1);
    assert_string_equal(got[0]->event_name, "gone");
    pod_events_free(pe);
}

static bool keep_p(void *ctx, const char *key)
{
    (void)ctx;
    return strcmp(key, "ml/p") == 0;
}

/* After a relist of the pods, only the pods the caller still keeps Events for keep records. */
static void test_retain(void **state)
{
    (void)state;
    struct pod_events *pe = pod_events_new(0);
    assert_non_null(pe);
    struct kevent a = event("a", "p", "u", "karpenter", "Nominated", "m", 10);
    struct kevent b = event("b", "q", "u", "karpenter", "Nominated", "m", 10);
    struct kevent c = event("c", "q", "u", "cluster-autoscaler", "TriggeredScaleUp", "m", 10);
    assert_int_equal(pod_events_apply(pe, &a, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &b, false, 0, NULL), K_OK);
    assert_int_equal(pod_events_apply(pe, &c, false, 0, NULL), K_OK);
    pod_events_retain(pe, keep_p, NULL);
    const struct pod_event *got[POD_EVENTS_PER_POD];
    assert_int_equal(get(pe, "p", "u", got), 1);
    assert_int_equal(get(pe, "q", "u", got), 0);
    struct pod_events_stats st;
    pod_events_stats(pe, &st);
    assert_int_equal(st.pods, 1);
    assert_int_equal(st.events, 1);
    pod_events_free(pe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newest_per_reason),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_relist_sweeps_one_writer),
        cmocka_unit_test(test_other_namespace_ignored),
        cmocka_unit_test(test_future_times_do_not_pin),
        cmocka_unit_test(test_relist_replaces_unlisted_newer),
        cmocka_unit_test(test_retain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
