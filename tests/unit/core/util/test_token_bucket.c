/* Tests for core/util/token_bucket.c: burst, refill, waits in order, threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/result.h"
#include "util/token_bucket.h"

#define MS 1000000LL

static void test_burst_then_waits(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct token_bucket b;
    assert_int_equal(token_bucket_init(&b, 5, 10, &c), K_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(token_bucket_reserve(&b), 0); /* a full bucket: burst at once */
    /* empty: each next caller waits one more 1/qps, in the order they came */
    assert_int_equal(token_bucket_reserve(&b), 200 * MS);
    assert_int_equal(token_bucket_reserve(&b), 400 * MS);
    /* a second refills 5: two repay the loans, three are there */
    clock_fake_advance_ms(&f, 1000);
    for (int i = 0; i < 3; i++)
        assert_int_equal(token_bucket_reserve(&b), 0);
    assert_int_equal(token_bucket_reserve(&b), 200 * MS);
    /* idle for long: never more than burst */
    clock_fake_advance_ms(&f, 3600 * 1000);
    for (int i = 0; i < 10; i++)
        assert_int_equal(token_bucket_reserve(&b), 0);
    assert_int_equal(token_bucket_reserve(&b), 200 * MS);
    /* a fraction of a token refilled shortens the wait */
    clock_fake_advance_ms(&f, 300); /* -1 + 1.5 = 0.5 */
    assert_int_equal(token_bucket_reserve(&b), 100 * MS);
    token_bucket_destroy(&b);
}

static void test_invalid(void **state)
{
    (void)state;
    struct token_bucket b;
    assert_int_equal(token_bucket_init(&b, 0, 10, NULL), K_EINVAL);
    assert_int_equal(token_bucket_init(&b, -1, 10, NULL), K_EINVAL);
    assert_int_equal(token_bucket_init(&b, 5, 0, NULL), K_EINVAL);
    /* a fractional rate: one token every 4 s */
    assert_int_equal(token_bucket_init(&b, 0.25, 1, NULL), K_OK);
    assert_int_equal(token_bucket_reserve(&b), 0);
    int64_t w = token_bucket_reserve(&b);
    assert_true(w > 3900 * MS && w <= 4000 * MS);
    token_bucket_destroy(&b);
}

#define THREADS 4
#define PER_THREAD 500

struct worker {
    struct token_bucket *b;
    int64_t waits[PER_THREAD];
};

static void *reserve_many(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < PER_THREAD; i++)
        w->waits[i] = token_bucket_reserve(w->b);
    return NULL;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Callers on several threads at one instant: every wait is handed out once, 1/qps apart. */
static void test_threads(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    struct token_bucket b;
    assert_int_equal(token_bucket_init(&b, 1000, 1, &c), K_OK);
    static struct worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].b = &b;
        assert_int_equal(pthread_create(&t[i], NULL, reserve_many, &w[i]), 0);
    }
    static int64_t all[THREADS * PER_THREAD];
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        memcpy(all + i * PER_THREAD, w[i].waits, sizeof(w[i].waits));
    }
    qsort(all, THREADS * PER_THREAD, sizeof(all[0]), cmp64);
    for (int i = 0; i < THREADS * PER_THREAD; i++)
        assert_int_equal(all[i], (int64_t)i * MS);
    token_bucket_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_waits),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
