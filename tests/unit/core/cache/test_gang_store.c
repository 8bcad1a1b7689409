/* test_gang_store.c - core/cache/gang_store.c: groups, relists, Events, facts for a pod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache/gang_store.h"
#include "util/result.h"

static struct gang_group group(enum gang_kind k, const char *name, int64_t min)
{
    struct gang_group g = {.kind = k, .min = min, .gang = true};
    strcpy(g.ns, "ns");
    strcpy(g.name, name);
    return g;
}

static void gone_count(void *ctx, const struct gang_group *g)
{
    (void)g;
    (*(int *)ctx)++;
}

static void test_store(void **state)
{
    (void)state;
    struct gang_store *s = gang_store_new();
    assert_non_null(s);
    struct gang_group g = group(GANG_KAI, "pg", 4);
    bool changed;
    assert_int_equal(gang_store_put(s, &g, &changed), K_OK);
    assert_true(changed);
    assert_int_equal(gang_store_put(s, &g, &changed), K_OK);
    assert_false(changed);
    assert_int_equal(gang_store_count(s, GANG_KAI), 1);

    struct pod_gang link = {GANG_KAI, "pg", NULL, NULL};
    struct kpod pod = {.ns = "ns", .name = "p", .gang = &link};
    struct gang_facts f = {0};
    assert_true(gang_store_facts(s, &pod, &f));
    assert_false(f.read);
    assert_true(f.found);
    assert_int_equal(f.group.min, 4);
    gang_store_set_read(s, GANG_KAI, true);

    /* Events: a queue refusal is kept, a later unrelated one clears it */
    assert_false(gang_store_event(s, GANG_KAI, "ns", "pg", "Scheduled", "ok", 10));
    assert_true(gang_store_event(s, GANG_KAI, "ns", "pg", "Unschedulable",
                                 "Non-preemptible workload is over quota.", 20));
    assert_false(gang_store_event(s, GANG_KAI, "ns", "pg", "Unschedulable",
                                  "Non-preemptible workload is over quota.", 21));
    memset(&f, 0, sizeof(f));
    gang_store_facts(s, &pod, &f);
    assert_true(f.read);
    assert_string_equal(f.event_reason, "Unschedulable");
    assert_false(gang_store_event(s, GANG_KAI, "ns", "pg", "Other", "older", 5));
    assert_true(gang_store_event(s, GANG_KAI, "ns", "pg", "Scheduled", "pod group is ready", 30));
    memset(&f, 0, sizeof(f));
    gang_store_facts(s, &pod, &f);
    assert_string_equal(f.event_reason, "");

    /* relist: the group not listed again is gone */
    int gone = 0;
    gang_store_sync_begin(s, GANG_KAI);
    gang_store_sync_end(s, GANG_KAI, gone_count, &gone);
    assert_int_equal(gone, 1);
    assert_int_equal(gang_store_count(s, GANG_KAI), 0);
    memset(&f, 0, sizeof(f));
    gang_store_facts(s, &pod, &f);
    assert_false(f.found);

    assert_int_equal(gang_store_put(s, &g, NULL), K_OK);
    gang_store_remove(s, GANG_KAI, "ns", "pg");
    assert_int_equal(gang_store_count(s, GANG_KAI), 0);
    struct kpod plain = {.ns = "ns", .name = "q"};
    assert_false(gang_store_facts(s, &plain, &f));
    assert_false(gang_store_facts(NULL, &pod, &f));
    gang_store_free(s);
}

/* Events naming groups that do not exist (anyone may write them) make at most
 * GANG_STORE_MAX_EVENT_ONLY records; a held group's Event is still kept past that, and a group
 * put later still finds its room. */
static void test_event_only_bound(void **state)
{
    (void)state;
    struct gang_store *s = gang_store_new();
    assert_non_null(s);
    struct gang_group held = group(GANG_PODGROUP, "held", 2);
    assert_int_equal(gang_store_put(s, &held, NULL), K_OK);
    char name[32];
    for (int i = 0; i < GANG_STORE_MAX_EVENT_ONLY + 500; i++) {
        snprintf(name, sizeof(name), "forged-%d", i);
        assert_int_equal(gang_store_event(s, GANG_PODGROUP, "ns", name, "Unschedulable",
                                          "Non-preemptible workload is over quota.", 10),
                         i < GANG_STORE_MAX_EVENT_ONLY);
    }
    assert_int_equal(gang_store_dropped(s), 500);
    assert_true(gang_store_event(s, GANG_PODGROUP, "ns", "held", "Unschedulable",
                                 "Non-preemptible workload is over quota.", 10));
    /* a forged group's record takes its group when one is put; then one more Event-only fits */
    struct gang_group late = group(GANG_PODGROUP, "forged-0", 2);
    assert_int_equal(gang_store_put(s, &late, NULL), K_OK);
    assert_true(gang_store_event(s, GANG_PODGROUP, "ns", "one-more", "Unschedulable",
                                 "Non-preemptible workload is over quota.", 10));
    assert_false(gang_store_event(s, GANG_PODGROUP, "ns", "two-more", "Unschedulable",
                                  "Non-preemptible workload is over quota.", 10));
    /* a forged Event deleted (its namespace went): its record goes, room for another */
    gang_store_event_gone(s, GANG_PODGROUP, "ns", "forged-1");
    gang_store_event_gone(s, GANG_PODGROUP, "ns", "held"); /* a held group keeps its word */
    assert_true(gang_store_event(s, GANG_PODGROUP, "ns", "two-more", "Unschedulable",
                                 "Non-preemptible workload is over quota.", 10));
    struct pod_gang held_link = {GANG_PODGROUP, "held", NULL, NULL};
    struct kpod held_pod = {.ns = "ns", .name = "p", .gang = &held_link};
    struct gang_facts hf = {0};
    assert_true(gang_store_facts(s, &held_pod, &hf));
    assert_string_equal(hf.event_reason, "Unschedulable");
    struct gang_group other = group(GANG_PODGROUP, "new-group", 2);
    assert_int_equal(gang_store_put(s, &other, NULL), K_OK);
    assert_int_equal(gang_store_count(s, GANG_PODGROUP), 3);
    gang_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_event_only_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
