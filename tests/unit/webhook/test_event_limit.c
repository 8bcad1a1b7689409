/* Tests for webhook/event_limit.c: per-namespace and global token buckets on a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "event_limit.h"
#include "events.h"
#include "util/result.h"

static int allowed(struct event_limit *l, const char *ns, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += event_limit_allow(l, ns);
    return k;
}

static void test_namespace_burst_and_refill(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct event_limit_options o = {.ns_burst = 25, .ns_refill_ms = 10000};
    struct event_limit *l = event_limit_new(&o, &c);
    assert_non_null(l);
    assert_int_equal(allowed(l, "a", 30), 25); /* the burst, then nothing */
    assert_int_equal(allowed(l, "b", 30), 25); /* another namespace has its own */
    clock_fake_advance_ms(&f, 9999);
    assert_false(event_limit_allow(l, "a"));
    clock_fake_advance_ms(&f, 1);
    assert_true(event_limit_allow(l, "a")); /* one token per 10 s */
    assert_false(event_limit_allow(l, "a"));
    clock_fake_advance_ms(&f, 3600 * 1000); /* never above the burst */
    assert_int_equal(allowed(l, "a", 100), 25);
    event_limit_free(l);
}

static void test_global_bucket(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct event_limit_options o = {
        .ns_burst = 25, .ns_refill_ms = 10000, .burst = 40, .refill_ms = 1000};
    struct event_limit *l = event_limit_new(&o, &c);
    assert_int_equal(allowed(l, "a", 30), 25);
    assert_int_equal(allowed(l, "b", 30), 15); /* the global bucket is empty after 40 */
    assert_false(event_limit_allow(l, "c"));
    clock_fake_advance_ms(&f, 2000);
    /* a refused namespace takes no global token: "a" is empty, "c" gets both new ones */
    assert_false(event_limit_allow(l, "a"));
    assert_int_equal(allowed(l, "c", 5), 2);
    event_limit_free(l);
}

static void test_cluster_scoped_and_off(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct event_limit_options o = {.ns_burst = 2, .ns_refill_ms = 1000};
    struct event_limit *l = event_limit_new(&o, &c);
    assert_int_equal(allowed(l, NULL, 5), 2);
    assert_int_equal(allowed(l, "", 5), 0); /* NULL and "" are the same bucket */
    event_limit_free(l);
    struct event_limit_options off = {0};
    l = event_limit_new(&off, &c);
    assert_int_equal(allowed(l, "a", 1000), 1000);
    event_limit_free(l);
    struct event_limit_options bad = {.burst = 1, .refill_ms = 0};
    assert_null(event_limit_new(&bad, &c));
}

static void test_table_bound(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct event_limit_options o = {.ns_burst = 1, .ns_refill_ms = 60000, .max_namespaces = 3};
    struct event_limit *l = event_limit_new(&o, &c);
    char ns[16];
    for (int i = 0; i < 3; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i);
        assert_true(event_limit_allow(l, ns));
        clock_fake_advance_ms(&f, 10);
    }
    /* all three empty: a fourth replaces the least recently used (ns-0) */
    assert_true(event_limit_allow(l, "ns-3"));
    clock_fake_advance_ms(&f, 10);
    assert_false(event_limit_allow(l, "ns-1"));
    clock_fake_advance_ms(&f, 10);
    assert_false(event_limit_allow(l, "ns-2"));
    clock_fake_advance_ms(&f, 10);
    assert_false(event_limit_allow(l, "ns-3"));
    clock_fake_advance_ms(&f, 10);
    /* ns-0 was forgotten: it comes back with a full bucket, replacing ns-1 (least recent) */
    assert_true(event_limit_allow(l, "ns-0"));
    /* a minute on, ns-3 and ns-0 have their token back and spend it; ns-2 has refilled to
     * full, so a new namespace replaces it rather than the least recently used */
    clock_fake_advance_ms(&f, 60000);
    assert_true(event_limit_allow(l, "ns-3"));
    assert_true(event_limit_allow(l, "ns-0"));
    assert_true(event_limit_allow(l, "ns-4"));
    assert_false(event_limit_allow(l, "ns-3"));
    assert_false(event_limit_allow(l, "ns-0"));
    assert_false(event_limit_allow(l, "ns-4"));
    event_limit_free(l);
}

static int sink(void *ctx, const struct kube_event_spec *e)
{
    (void)ctx;
    (void)e;
    return K_OK;
}

/* In the queue: repeats take no token, refusals are counted. */
static void test_queue_limit(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct event_limit_options o = {.ns_burst = 2, .ns_refill_ms = 10000};
    struct event_limit *l = event_limit_new(&o, &c);
    struct event_queue *q = event_queue_new(16, sink, NULL, "gputri-webhook", NULL);
    event_queue_set_clock(q, &c);
    event_queue_set_limit(q, l);
    assert_true(event_queue_push(q, "a", "Pod", "v1", "p", NULL, "R", "m1"));
    assert_true(event_queue_push(q, "a", "Pod", "v1", "p", NULL, "R", "m1")); /* repeat */
    assert_true(event_queue_push(q, "a", "Pod", "v1", "p", NULL, "R", "m2"));
    assert_false(event_queue_push(q, "a", "Pod", "v1", "p", NULL, "R", "m3"));
    assert_int_equal(event_queue_throttled(q), 1);
    assert_true(event_queue_push(q, "b", "Pod", "v1", "p", NULL, "R", "m3"));
    /* a refused Event is not remembered as sent: it is queued once a token is back */
    clock_fake_advance_ms(&f, 10000);
    assert_true(event_queue_push(q, "a", "Pod", "v1", "p", NULL, "R", "m3"));
    assert_int_equal(event_queue_throttled(q), 1);
    assert_int_equal(event_queue_dropped(q), 0);
    event_queue_free(q);
    event_limit_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespace_burst_and_refill),
        cmocka_unit_test(test_global_bucket),
        cmocka_unit_test(test_cluster_scoped_and_off),
        cmocka_unit_test(test_table_bound),
        cmocka_unit_test(test_queue_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
