/* test_periodic.c - core/util/periodic.c: a run at start (or not), runs when poked, stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/periodic.h"

static atomic_int runs;

static void count(void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&runs, 1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void wait_runs(int n)
{
    while (atomic_load(&runs) < n) /* bounded by ctest's timeout */
        sleep_ms(5);
}

static void test_now_and_poke(void **state)
{
    (void)state;
    atomic_store(&runs, 0);
    struct periodic p;
    periodic_init(&p, 3600 * 1000, 0, count, NULL);
    assert_int_equal(periodic_start(&p, true), 0);
    wait_runs(1);
    periodic_poke(&p);
    wait_runs(2);
    sleep_ms(50);
    assert_int_equal(atomic_load(&runs), 2); /* the interval is an hour */
    assert_int_equal(*periodic_stop_flag(&p), 0);
    periodic_stop(&p);
    assert_int_not_equal(*periodic_stop_flag(&p), 0);
    periodic_stop(&p); /* idempotent */
    periodic_destroy(&p);
}

static void test_later_and_gap(void **state)
{
    (void)state;
    atomic_store(&runs, 0);
    struct periodic p;
    periodic_init(&p, 60, 200, count, NULL);
    int64_t t0 = clock_mono_ms(NULL);
    assert_int_equal(periodic_start(&p, false), 0); /* the first run one interval from now */
    sleep_ms(20);
    assert_int_equal(atomic_load(&runs), 0);
    wait_runs(1);
    assert_true(clock_mono_ms(NULL) - t0 >= 60);
    wait_runs(3); /* and every 60 ms after */
    periodic_destroy(&p);
}

static void test_never_started(void **state)
{
    (void)state;
    struct periodic p;
    periodic_init(&p, 1000, 0, count, NULL);
    periodic_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_now_and_poke),
        cmocka_unit_test(test_later_and_gap),
        cmocka_unit_test(test_never_started),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
