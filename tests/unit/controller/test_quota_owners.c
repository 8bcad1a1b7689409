/*
 * test_quota_owners.c - controller/quota_owners.c: the table of owners whose GPU pods a quota
 * refuses: one entry per owner uid from its newest Event, deletions of that Event only, the
 * bound, relists, and forgetting an owner that got a pod or whose refusal went stale.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "quota_owners.h"

static struct quota_owner owner(enum quota_owner_kind kind, const char *uid, const char *event,
                                int64_t at, const char *used)
{
    struct quota_owner o = {.kind = kind};
    snprintf(o.ns, sizeof(o.ns), "ns");
    snprintf(o.name, sizeof(o.name), "%s", uid);
    snprintf(o.uid, sizeof(o.uid), "%s", uid);
    snprintf(o.event_name, sizeof(o.event_name), "%s", event);
    snprintf(o.q.quota, sizeof(o.q.quota), "q");
    snprintf(o.q.key, sizeof(o.q.key), "requests.nvidia.com/gpu");
    snprintf(o.q.used, sizeof(o.q.used), "%s", used);
    o.q.at = at;
    return o;
}

static void test_table(void **state)
{
    (void)state;
    struct quota_owners *t = quota_owners_new(2);
    assert_non_null(t);
    size_t counts[QUOTA_OWNER_KINDS];
    uint64_t refused;

    struct quota_owner a1 = owner(QUOTA_OWNER_JOB, "a", "a.1", 100, "0");
    struct quota_owner a2 = owner(QUOTA_OWNER_JOB, "a", "a.2", 110, "0");
    struct quota_owner a3 = owner(QUOTA_OWNER_JOB, "a", "a.3", 120, "1");
    assert_int_equal(quota_owners_apply(t, &a1, false), QUOTA_OWNERS_NEW);
    assert_int_equal(quota_owners_apply(t, &a2, false), QUOTA_OWNERS_SAME); /* same numbers */
    assert_int_equal(quota_owners_apply(t, &a1, false), QUOTA_OWNERS_SAME); /* older: kept */
    assert_int_equal(quota_owners_apply(t, &a3, false), QUOTA_OWNERS_CHANGED);
    /* deleting an Event the entry no longer comes from changes nothing */
    assert_int_equal(quota_owners_apply(t, &a1, true), QUOTA_OWNERS_SAME);

    struct quota_owner b = owner(QUOTA_OWNER_REPLICASET, "b", "b.1", 100, "0");
    struct quota_owner c = owner(QUOTA_OWNER_STATEFULSET, "c", "c.1", 100, "0");
    assert_int_equal(quota_owners_apply(t, &b, false), QUOTA_OWNERS_NEW);
    assert_int_equal(quota_owners_apply(t, &c, false), QUOTA_OWNERS_FULL);
    quota_owners_counts(t, counts, &refused);
    assert_int_equal(counts[QUOTA_OWNER_JOB], 1);
    assert_int_equal(counts[QUOTA_OWNER_REPLICASET], 1);
    assert_int_equal(counts[QUOTA_OWNER_STATEFULSET], 0);
    assert_int_equal(refused, 1);

    /* b gets a pod after its refusal: forgotten, as admitted; a is still refused */
    quota_owners_note_pod(t, "b", 100); /* same second: one it had before */
    struct quota_owner gone[4];
    bool admitted[4];
    assert_int_equal(quota_owners_expire_noted(t, 130, gone, admitted, 4), 0);
    quota_owners_note_pod(t, "b", 101);
    quota_owners_note_pod(t, NULL, 200);
    quota_owners_note_pod(t, "nobody", 200);
    assert_int_equal(quota_owners_expire_noted(t, 130, gone, admitted, 4), 1);
    assert_string_equal(gone[0].uid, "b");
    assert_true(admitted[0]);

    /* a's refusal goes stale: forgotten, not admitted */
    assert_int_equal(quota_owners_expire_noted(t, 121 + QUOTA_OWNER_WINDOW, gone, admitted, 4), 1);
    assert_string_equal(gone[0].uid, "a");
    assert_false(admitted[0]);
    quota_owners_counts(t, counts, NULL);
    assert_int_equal(counts[QUOTA_OWNER_JOB] + counts[QUOTA_OWNER_REPLICASET], 0);

    /* due for a deletion check: at once, then not again for 30 s */
    struct quota_owner d = owner(QUOTA_OWNER_JOB, "d", "d.1", 1000, "0");
    assert_int_equal(quota_owners_apply(t, &d, false), QUOTA_OWNERS_NEW);
    struct quota_owner due[2];
    assert_int_equal(quota_owners_due(t, 1030, 30, due, 2), 1);
    assert_string_equal(due[0].uid, "d");
    assert_int_equal(quota_owners_due(t, 1059, 30, due, 2), 0);
    assert_int_equal(quota_owners_due(t, 1060, 30, due, 2), 1);
    assert_true(quota_owners_forget(t, "d"));
    assert_false(quota_owners_forget(t, "d"));

    /* the deletion of the Event an entry came from removes it */
    assert_int_equal(quota_owners_apply(t, &c, false), QUOTA_OWNERS_NEW);
    assert_int_equal(quota_owners_apply(t, &c, true), QUOTA_OWNERS_REMOVED);

    /* a relist keeps what it saw again */
    assert_int_equal(quota_owners_apply(t, &a1, false), QUOTA_OWNERS_NEW);
    assert_int_equal(quota_owners_apply(t, &b, false), QUOTA_OWNERS_NEW);
    quota_owners_sync_begin(t);
    assert_int_equal(quota_owners_apply(t, &b, false), QUOTA_OWNERS_SAME);
    quota_owners_sync_end(t);
    quota_owners_counts(t, counts, NULL);
    assert_int_equal(counts[QUOTA_OWNER_JOB], 0);
    assert_int_equal(counts[QUOTA_OWNER_REPLICASET], 1);
    quota_owners_free(t);
    quota_owners_free(NULL);
}

/* One namespace forging FailedCreate Events for thousands of owners fills its share of the
 * table only: another namespace's owner is still kept. */
static void test_namespace_share(void **state)
{
    (void)state;
    struct quota_owners *t = quota_owners_new(64);
    assert_non_null(t);
    size_t share = 64 / QUOTA_OWNER_NS_SHARE;
    char uid[32];
    for (size_t i = 0; i < 1000; i++) {
        snprintf(uid, sizeof(uid), "forged-%zu", i);
        struct quota_owner o = owner(QUOTA_OWNER_JOB, uid, uid, 100, "0");
        assert_int_equal(quota_owners_apply(t, &o, false),
                         i < share ? QUOTA_OWNERS_NEW : QUOTA_OWNERS_FULL);
    }
    /* a forged owner already kept is still updated */
    struct quota_owner again = owner(QUOTA_OWNER_JOB, "forged-0", "forged-0.2", 101, "1");
    assert_int_equal(quota_owners_apply(t, &again, false), QUOTA_OWNERS_CHANGED);
    struct quota_owner other = owner(QUOTA_OWNER_REPLICASET, "real", "real.1", 100, "0");
    snprintf(other.ns, sizeof(other.ns), "team-b");
    assert_int_equal(quota_owners_apply(t, &other, false), QUOTA_OWNERS_NEW);
    size_t counts[QUOTA_OWNER_KINDS];
    uint64_t refused;
    quota_owners_counts(t, counts, &refused);
    assert_int_equal(counts[QUOTA_OWNER_JOB], share);
    assert_int_equal(counts[QUOTA_OWNER_REPLICASET], 1);
    assert_int_equal(refused, 1000 - share);
    quota_owners_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table),
                                       cmocka_unit_test(test_namespace_share)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
