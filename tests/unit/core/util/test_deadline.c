/*
 * Tests for core/util/deadline.c: deadline_wait() on an injected clock (moved by hand, so no
 * test depends on how fast the machine is) and on the system clock.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/deadline.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; /* CLOCK_REALTIME */

static void test_injected_clock(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock c = clock_fake_clock(&f);
    int64_t until = clock_mono_ms(&c) + 1000;
    pthread_mutex_lock(&mu);
    /* Not yet: each call comes back after at most poll_ms of real time, the clock unmoved. */
    for (int i = 0; i < 3; i++)
        assert_false(deadline_wait(&cv, &mu, CLOCK_REALTIME, &c, until, 1));
    clock_fake_advance_ms(&f, 999);
    assert_false(deadline_wait(&cv, &mu, CLOCK_REALTIME, &c, until, 1));
    clock_fake_advance_ms(&f, 1);
    /* Come: true at once, without waiting (poll_ms 0 would otherwise never return). */
    assert_true(deadline_wait(&cv, &mu, CLOCK_REALTIME, &c, until, 0));
    assert_true(deadline_wait(&cv, &mu, CLOCK_REALTIME, &c, until - 5000, 0));
    pthread_mutex_unlock(&mu);
}

static void test_system_clock(void **state)
{
    (void)state;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_t mono_cv;
    pthread_cond_init(&mono_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&mu);
    assert_true(deadline_wait(&mono_cv, &mu, CLOCK_MONOTONIC, NULL, clock_mono_ms(NULL) - 1, 0));
    /* A deadline 2 ms ahead comes after a few waits (spurious wakeups return early). */
    int64_t until = clock_mono_ms(NULL) + 2;
    int calls = 0;
    while (!deadline_wait(&mono_cv, &mu, CLOCK_MONOTONIC, NULL, until, 0))
        assert_true(++calls < 1000);
    assert_true(clock_mono_ms(NULL) >= until);
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&mono_cv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_injected_clock),
        cmocka_unit_test(test_system_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
