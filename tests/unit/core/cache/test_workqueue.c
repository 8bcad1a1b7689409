/* Tests for core/cache/workqueue.c: deduplication, requeue while processing, delays, backoff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/workqueue.h"

static struct clock_fake fake;
static struct clock fake_clock;

static struct workqueue *new_queue(void)
{
    clock_fake_init(&fake, 0);
    fake_clock = clock_fake_clock(&fake);
    struct workqueue *q = workqueue_new(5, 1000, &fake_clock);
    assert_non_null(q);
    return q;
}

static void expect_key(struct workqueue *q, const char *want)
{
    char *key = workqueue_try_get(q, NULL);
    if (!want) {
        assert_null(key);
        return;
    }
    assert_non_null(key);
    assert_string_equal(key, want);
    workqueue_done(q, key);
    free(key);
}

static void test_dedup(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    workqueue_add(q, "b");
    workqueue_add(q, "a");
    assert_int_equal(workqueue_len(q), 2);
    expect_key(q, "a");
    expect_key(q, "b");
    expect_key(q, NULL);
    workqueue_free(q);
}

static void test_requeue_while_processing(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    char *key = workqueue_try_get(q, NULL);
    assert_string_equal(key, "a");
    workqueue_add(q, "a");                   /* changed while a worker holds it */
    assert_null(workqueue_try_get(q, NULL)); /* never two workers on one key */
    workqueue_done(q, key);
    free(key);
    expect_key(q, "a");
    expect_key(q, NULL);
    workqueue_free(q);
}

static void test_add_after(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_after(q, "late", 100);
    workqueue_add_after(q, "early", 10);
    assert_int_equal(workqueue_delayed_len(q), 2);
    expect_key(q, NULL);
    clock_fake_advance_ms(&fake, 10);
    expect_key(q, "early");
    expect_key(q, NULL);
    clock_fake_advance_ms(&fake, 90);
    expect_key(q, "late");
    workqueue_free(q);
}

static void test_rate_limited_backoff(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    assert_int_equal(workqueue_add_rate_limited(q, "k", 0), 5);
    clock_fake_advance_ms(&fake, 5);
    expect_key(q, "k");
    assert_int_equal(workqueue_add_rate_limited(q, "k", 0), 10);
    clock_fake_advance_ms(&fake, 10);
    expect_key(q, "k");
    assert_int_equal(workqueue_add_rate_limited(q, "k", 0), 20);
    assert_int_equal(workqueue_failures(q, "k"), 3);
    clock_fake_advance_ms(&fake, 20);
    expect_key(q, "k");
    /* Retry-After wins when it is longer */
    assert_int_equal(workqueue_add_rate_limited(q, "k", 3000), 3000);
    clock_fake_advance_ms(&fake, 3000);
    expect_key(q, "k");
    /* capped at max */
    for (int i = 0; i < 20; i++)
        workqueue_add_rate_limited(q, "k", 0);
    assert_int_equal(workqueue_add_rate_limited(q, "k", 0), 1000);
    workqueue_forget(q, "k");
    assert_int_equal(workqueue_failures(q, "k"), 0);
    workqueue_free(q);
}

static void test_drop(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add(q, "a");
    workqueue_add(q, "b");
    workqueue_add_after(q, "c", 50);
    workqueue_drop(q, "a");
    workqueue_drop(q, "c");
    assert_int_equal(workqueue_len(q), 1);
    assert_int_equal(workqueue_delayed_len(q), 0);
    expect_key(q, "b");
    clock_fake_advance_ms(&fake, 100);
    expect_key(q, NULL);
    workqueue_free(q);
}

static void test_shutdown(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_shutdown(q);
    assert_null(workqueue_get(q, NULL));
    workqueue_add(q, "ignored");
    assert_int_equal(workqueue_len(q), 0);
    workqueue_free(q);
}

/* Queued keys are dropped at shutdown, not drained; the key in progress still finishes. */
static void test_shutdown_drops_queued(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    char name[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "ns/p%d", i);
        assert_int_equal(workqueue_add(q, name), 0);
    }
    char *busy = workqueue_get(q, NULL);
    assert_non_null(busy);
    workqueue_add(q, busy); /* would be requeued by done() */
    workqueue_shutdown(q);
    assert_null(workqueue_get(q, NULL));
    assert_null(workqueue_try_get(q, NULL));
    workqueue_done(q, busy);
    free(busy);
    assert_null(workqueue_get(q, NULL));
    workqueue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_requeue_while_processing),
        cmocka_unit_test(test_add_after),
        cmocka_unit_test(test_rate_limited_backoff),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_shutdown),
        cmocka_unit_test(test_shutdown_drops_queued),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
