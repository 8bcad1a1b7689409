/*
 * test_discovery_loop.c - core/cache/discovery_loop.c: the check runs on the thread at start
 * (unless the caller ran it) and when poked; stop is said once; destroy after a stop and on its
 * own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "cache/discovery_loop.h"
#include "fake_kube.h"
#include "util/result.h"

static atomic_int runs;

static void check(void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&runs, 1);
}

static bool wait_runs(int n)
{
    for (int i = 0; i < 500 && atomic_load(&runs) < n; i++) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(&runs) >= n;
}

/* A loop of `check` every minute, on a fake API server, with the run count at 0. */
static void init_loop(struct fake_kube *f, struct discovery_loop *d)
{
    fake_kube_init(f);
    atomic_store(&runs, 0);
    assert_int_equal(discovery_loop_init(d, &f->cfg, &f->transport, "test", 60000, 0, check, NULL),
                     K_OK);
}

static void test_runs_and_stops(void **state)
{
    (void)state;
    struct fake_kube f;
    struct discovery_loop d;
    init_loop(&f, &d);
    assert_non_null(d.client);
    assert_int_equal(discovery_loop_start(&d, false), K_OK);
    assert_true(wait_runs(1)); /* at once */
    discovery_loop_poke(&d);
    assert_true(wait_runs(2)); /* poked */
    assert_true(discovery_loop_stop(&d));
    assert_false(discovery_loop_stop(&d));
    discovery_loop_destroy(&d);
    fake_kube_cleanup(&f);
}

static void test_checked_by_caller(void **state)
{
    (void)state;
    struct fake_kube f;
    struct discovery_loop d;
    init_loop(&f, &d);
    assert_int_equal(discovery_loop_start(&d, true), K_OK);
    struct timespec ts = {0, 100 * 1000000};
    nanosleep(&ts, NULL);
    assert_int_equal(atomic_load(&runs), 0); /* the next one an interval from now */
    discovery_loop_destroy(&d);              /* stops it */
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_and_stops),
        cmocka_unit_test(test_checked_by_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
