/* Tests for core/cache/workqueue.c: deduplication, requeue while processing, delays, backoff,
 * the two priorities and the coalescing of low adds. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* High keys are handed out before low ones; each level is FIFO. */
static void test_priority_order(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_low(q, "l1");
    workqueue_add_low(q, "l2");
    workqueue_add(q, "h1");
    workqueue_add_low(q, "l3");
    workqueue_add(q, "h2");
    assert_int_equal(workqueue_len(q), 5);
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_HIGH), 2);
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_LOW), 3);
    expect_key(q, "h1");
    expect_key(q, "h2");
    expect_key(q, "l1");
    workqueue_add(q, "h3"); /* a new pod overtakes the rest of the backlog */
    expect_key(q, "h3");
    expect_key(q, "l2");
    expect_key(q, "l3");
    expect_key(q, NULL);
    workqueue_free(q);
}

/* A key is queued once over both levels; a high add moves a low key up, not the reverse. */
static void test_dedup_and_promotion(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_low(q, "a");
    workqueue_add_low(q, "b");
    workqueue_add_low(q, "c");
    workqueue_add_low(q, "a");
    assert_int_equal(workqueue_len(q), 3);
    clock_fake_advance_ms(&fake, 7);
    workqueue_add(q, "c"); /* promoted */
    assert_int_equal(workqueue_len(q), 3);
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_HIGH), 1);
    workqueue_add_low(q, "c"); /* stays high */
    workqueue_add(q, "d");
    workqueue_add_low(q, "d");
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_HIGH), 2);
    struct workqueue_got got;
    char *key = workqueue_get_info(q, &got);
    assert_string_equal(key, "c");
    assert_int_equal(got.priority, WORKQUEUE_HIGH);
    assert_int_equal(got.queued_ms, 7);                              /* ready since its low add */
    assert_int_equal(got.high_since_ms, clock_mono_ms(&fake_clock)); /* answers the high add */
    workqueue_done(q, key);
    free(key);
    expect_key(q, "d");
    key = workqueue_get_info(q, &got);
    assert_string_equal(key, "a");
    assert_int_equal(got.priority, WORKQUEUE_LOW);
    assert_int_equal(got.high_since_ms, -1);
    workqueue_done(q, key);
    free(key);
    expect_key(q, "b");
    expect_key(q, NULL);
    workqueue_free(q);
}

/* Added while processing: requeued at done() at the higher priority asked. */
static void test_requeue_priority(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_low(q, "a");
    workqueue_add_low(q, "b");
    char *a = workqueue_try_get(q, NULL);
    assert_string_equal(a, "a");
    workqueue_add_low(q, "a");            /* interval 0: not coalesced, requeued low at done */
    workqueue_add(q, "a");                /* ... and now high */
    char *b = workqueue_try_get(q, NULL); /* b, never a second a */
    assert_string_equal(b, "b");
    workqueue_done(q, b);
    free(b);
    workqueue_done(q, a);
    free(a);
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_HIGH), 1);
    expect_key(q, "a");
    expect_key(q, NULL);
    workqueue_free(q);
}

/* A low add within the interval after a take waits until take + interval; high adds do not. */
static void test_coalesce_low(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_set_recheck_interval(q, 1000);
    workqueue_add_low(q, "a");
    expect_key(q, "a"); /* taken at 0 */
    clock_fake_advance_ms(&fake, 100);
    for (int i = 0; i < 50; i++) /* a storm of changes elsewhere */
        workqueue_add_low(q, "a");
    assert_int_equal(workqueue_len(q), 0);
    assert_int_equal(workqueue_delayed_len(q), 1);
    clock_fake_advance_ms(&fake, 899);
    expect_key(q, NULL);
    clock_fake_advance_ms(&fake, 1);
    expect_key(q, "a"); /* at take + interval: once for the whole storm */
    expect_key(q, NULL);
    /* its own change is not delayed */
    workqueue_add(q, "a");
    expect_key(q, "a");
    /* a take cancels a delayed low add: it saw the change */
    clock_fake_advance_ms(&fake, 10);
    workqueue_add_low(q, "a");
    assert_int_equal(workqueue_delayed_len(q), 1);
    workqueue_add(q, "a");
    expect_key(q, "a");
    assert_int_equal(workqueue_delayed_len(q), 0);
    /* ... but not a delayed high add (the key's own timer) */
    workqueue_add_after(q, "a", 5000);
    workqueue_add(q, "a");
    expect_key(q, "a");
    assert_int_equal(workqueue_delayed_len(q), 1);
    /* drop forgets the take: the next low add is not delayed */
    workqueue_drop(q, "a");
    workqueue_add_low(q, "a");
    expect_key(q, "a");
    /* a low add after the interval is at once */
    clock_fake_advance_ms(&fake, 1000);
    workqueue_add_low(q, "a");
    assert_int_equal(workqueue_len(q), 1);
    expect_key(q, "a");
    workqueue_free(q);
}

/* A delayed low add that another take overtook waits for that take + interval; a delayed low
 * merged with a delayed high add keeps the earlier time and the higher priority. */
static void test_coalesce_delayed(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_set_recheck_interval(q, 1000);
    workqueue_add_low(q, "a");
    workqueue_add_low(q, "b");
    expect_key(q, "a");
    expect_key(q, "b");
    clock_fake_advance_ms(&fake, 500);
    workqueue_add_low(q, "a");        /* due at 1000 */
    workqueue_add_low(q, "b");        /* due at 1000 */
    workqueue_add_after(q, "b", 200); /* own timer, earlier: b becomes high at 700 */
    clock_fake_advance_ms(&fake, 200);
    struct workqueue_got got;
    char *key = workqueue_get_info(q, &got);
    assert_string_equal(key, "b");
    assert_int_equal(got.priority, WORKQUEUE_HIGH);
    workqueue_done(q, key);
    free(key);
    expect_key(q, NULL);
    clock_fake_advance_ms(&fake, 300);
    expect_key(q, "a");
    expect_key(q, NULL);
    /* coalescing never loses a change: many keys, each taken again exactly once */
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "ns/p%d", i);
        workqueue_add_low(q, name);
    }
    for (int i = 0; i < 100; i++) {
        char *k = workqueue_try_get(q, NULL);
        assert_non_null(k);
        workqueue_done(q, k);
        free(k);
    }
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 100; i++) {
            snprintf(name, sizeof(name), "ns/p%d", i);
            workqueue_add_low(q, name);
        }
    assert_int_equal(workqueue_delayed_len(q), 100);
    expect_key(q, NULL);
    clock_fake_advance_ms(&fake, 1000);
    assert_int_equal(workqueue_len(q) + workqueue_delayed_len(q), 100);
    for (int i = 0; i < 100; i++) {
        char *k = workqueue_try_get(q, NULL);
        assert_non_null(k);
        workqueue_done(q, k);
        free(k);
    }
    expect_key(q, NULL);
    workqueue_free(q);
}

/* Dropping a low or a parked key; shutdown drops both levels. */
static void test_drop_and_shutdown_levels(void **state)
{
    (void)state;
    struct workqueue *q = new_queue();
    workqueue_add_low(q, "l");
    workqueue_add(q, "h");
    workqueue_add_low(q, "m");
    workqueue_drop(q, "l");
    assert_int_equal(workqueue_len_priority(q, WORKQUEUE_LOW), 1);
    char *h = workqueue_try_get(q, NULL);
    assert_string_equal(h, "h");
    workqueue_add_low(q, "h"); /* parked */
    workqueue_drop(q, "h");    /* its requeue cancelled */
    workqueue_done(q, h);
    free(h);
    expect_key(q, "m");
    expect_key(q, NULL);
    workqueue_add_low(q, "x");
    workqueue_add(q, "y");
    h = workqueue_try_get(q, NULL);
    workqueue_add(q, h); /* parked at shutdown: freed at done */
    workqueue_shutdown(q);
    assert_null(workqueue_try_get(q, NULL));
    workqueue_add_low(q, "z");
    assert_int_equal(workqueue_len(q), 1); /* x stays, dropped at free */
    workqueue_done(q, h);
    free(h);
    workqueue_free(q);
}

/* Threads adding at both levels and workers taking: never one key on two workers (TSan). */
#define T_KEYS 16
#define T_ROUNDS 2000
static struct {
    pthread_mutex_t mu;
    int busy[T_KEYS];
    int overlap;
    int taken;
} tstate = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *t_producer(void *arg)
{
    struct workqueue *q = arg;
    char name[16];
    for (int i = 0; i < T_ROUNDS; i++) {
        snprintf(name, sizeof(name), "k%d", i % T_KEYS);
        if (i % 3)
            workqueue_add_low(q, name);
        else
            workqueue_add(q, name);
    }
    return NULL;
}

static void *t_worker(void *arg)
{
    struct workqueue *q = arg;
    struct workqueue_got got;
    char *key;
    while ((key = workqueue_get_info(q, &got))) {
        int k = atoi(key + 1);
        pthread_mutex_lock(&tstate.mu);
        tstate.overlap += tstate.busy[k]++;
        tstate.taken++;
        pthread_mutex_unlock(&tstate.mu);
        pthread_mutex_lock(&tstate.mu);
        tstate.busy[k]--;
        pthread_mutex_unlock(&tstate.mu);
        workqueue_done(q, key);
        free(key);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new(5, 1000, NULL);
    assert_non_null(q);
    workqueue_set_recheck_interval(q, 1);
    pthread_t prod[2], work[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&work[i], NULL, t_worker, q), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&prod[i], NULL, t_producer, q), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(prod[i], NULL);
    /* drained: the last adds (some delayed by up to 1 ms) are all taken */
    for (int i = 0; i < 1000 && (workqueue_len(q) || workqueue_delayed_len(q)); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    workqueue_shutdown(q);
    for (int i = 0; i < 3; i++)
        pthread_join(work[i], NULL);
    assert_int_equal(tstate.overlap, 0);
    assert_true(tstate.taken >= T_KEYS);
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
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_dedup_and_promotion),
        cmocka_unit_test(test_requeue_priority),
        cmocka_unit_test(test_coalesce_low),
        cmocka_unit_test(test_coalesce_delayed),
        cmocka_unit_test(test_drop_and_shutdown_levels),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
