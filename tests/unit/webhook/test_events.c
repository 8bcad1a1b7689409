/* Tests for webhook/events.c: asynchronous delivery, copies, the bound, and draining at stop. */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "events.h"
#include "util/result.h"

struct recorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    char names[16][64], reasons[16][64], kinds[16][64], types[16][16], components[16][64];
    int uid_null[16];
    int fail;
    /* a slow sink without sleeping: the first call waits until `open`, and every call moves
     * the fake clock `clk` (when set) forward by cost_ms */
    bool gated, entered, open;
    struct clock_fake *clk;
    int cost_ms;
};

static int record(void *ctx, const struct kube_event_spec *e)
{
    struct recorder *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->gated) {
        r->entered = true;
        pthread_cond_broadcast(&r->cv);
        while (!r->open)
            pthread_cond_wait(&r->cv, &r->mu);
        r->gated = false;
    }
    if (r->clk)
        clock_fake_advance_ms(r->clk, r->cost_ms);
    if (r->n < 16) {
        snprintf(r->names[r->n], 64, "%s", e->name);
        snprintf(r->reasons[r->n], 64, "%s", e->reason);
        snprintf(r->kinds[r->n], 64, "%s", e->kind);
        snprintf(r->types[r->n], 16, "%s", e->type);
        snprintf(r->components[r->n], 64, "%s", e->component);
        r->uid_null[r->n] = e->uid == NULL;
    }
    r->n++;
    pthread_mutex_unlock(&r->mu);
    return r->fail ? K_EFORBIDDEN : K_OK;
}

static void test_delivers_in_order(void **state)
{
    (void)state;
    struct recorder r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct event_queue *q = event_queue_new(8, record, &r, "gputri-webhook", "host-1");
    assert_non_null(q);
    assert_int_equal(event_queue_start(q), K_OK);
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "obj-%d", i);
        assert_true(event_queue_push(q, "ns", "Deployment", "apps/v1", name, i ? "uid" : "",
                                     "GPUUntoleratedTaint", "spec.tolerations: ..."));
        name[0] = 'X'; /* the queue copied it */
    }
    event_queue_stop(q, 2000);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.names[0], "obj-0");
    assert_string_equal(r.names[2], "obj-2");
    assert_string_equal(r.reasons[1], "GPUUntoleratedTaint");
    assert_string_equal(r.kinds[1], "Deployment");
    assert_string_equal(r.types[0], "Warning");
    assert_string_equal(r.components[0], "gputri-webhook");
    assert_true(r.uid_null[0]);
    assert_false(r.uid_null[1]);
    assert_int_equal(event_queue_sent(q), 3);
    assert_int_equal(event_queue_dropped(q), 0);
    assert_false(event_queue_push(q, "ns", "Pod", "v1", "late", NULL, "R", "m"));
    event_queue_free(q);
}

static void test_bounded(void **state)
{
    (void)state;
    struct recorder r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct event_queue *q = event_queue_new(2, record, &r, "gputri-webhook", NULL);
    assert_non_null(q);
    /* not started: the queue fills and refuses the third */
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "a", NULL, "R", "m"));
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "b", NULL, "R", "m"));
    assert_false(event_queue_push(q, "ns", "Pod", "v1", "c", NULL, "R", "m"));
    assert_int_equal(event_queue_dropped(q), 1);
    assert_int_equal(event_queue_start(q), K_OK);
    event_queue_stop(q, 2000);
    assert_int_equal(r.n, 2);
    event_queue_free(q);
}

static void test_push_does_not_wait_for_the_sink(void **state)
{
    (void)state;
    struct clock_fake clk;
    clock_fake_init(&clk, 0);
    struct clock fake = clock_fake_clock(&clk);
    /* every delivery takes 300 ms of the fake clock */
    struct recorder r = {.mu = PTHREAD_MUTEX_INITIALIZER,
                         .cv = PTHREAD_COND_INITIALIZER,
                         .gated = true,
                         .clk = &clk,
                         .cost_ms = 300};
    struct event_queue *q = event_queue_new(4, record, &r, "gputri-webhook", NULL);
    event_queue_set_clock(q, &fake);
    assert_int_equal(event_queue_start(q), K_OK);
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m0"));
    pthread_mutex_lock(&r.mu);
    while (!r.entered)
        pthread_cond_wait(&r.cv, &r.mu);
    pthread_mutex_unlock(&r.mu);
    /* the sink is stuck on m0: pushes still return at once (else this would hang) */
    for (int i = 1; i < 4; i++) {
        char msg[8];
        snprintf(msg, sizeof(msg), "m%d", i);
        assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", msg));
    }
    /* a 100 ms drain: m0 finishes (300 ms), the deadline has passed, the rest is dropped */
    event_queue_close(q, 100);
    pthread_mutex_lock(&r.mu);
    r.open = true;
    pthread_cond_broadcast(&r.cv);
    pthread_mutex_unlock(&r.mu);
    event_queue_stop(q, 100);
    assert_int_equal(r.n, 1);
    assert_int_equal(event_queue_sent(q), 1);
    assert_int_equal(event_queue_dropped(q), 3);
    event_queue_free(q);
}

static void test_repeats_expire_after_ten_minutes(void **state)
{
    (void)state;
    struct clock_fake clk;
    clock_fake_init(&clk, 0);
    struct clock fake = clock_fake_clock(&clk);
    struct recorder r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct event_queue *q = event_queue_new(16, record, &r, "gputri-webhook", NULL);
    event_queue_set_clock(q, &fake);
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m"));
    clock_fake_advance_ms(&clk, 10 * 60 * 1000 - 1);
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m")); /* repeat */
    clock_fake_advance_ms(&clk, 1);
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m")); /* new again */
    assert_int_equal(event_queue_start(q), K_OK);
    event_queue_stop(q, 1000);
    assert_int_equal(r.n, 2);
    event_queue_free(q);
}

static void test_repeats_are_not_recorded_again(void **state)
{
    (void)state;
    struct recorder r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct event_queue *q = event_queue_new(16, record, &r, "gputri-webhook", NULL);
    assert_int_equal(event_queue_start(q), K_OK);
    /* a re-apply, then the UPDATE of the controller's annotation: the same warning each time */
    for (int i = 0; i < 5; i++)
        assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m"));
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "another warning"));
    assert_true(event_queue_push(q, "ns", "Pod", "v1", "other-pod", NULL, "R", "m"));
    event_queue_stop(q, 1000);
    assert_int_equal(r.n, 3);
    event_queue_free(q);
}

static void test_sink_failure_counted(void **state)
{
    (void)state;
    struct recorder r = {
        .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .fail = 1};
    struct event_queue *q = event_queue_new(4, record, &r, NULL, NULL);
    assert_int_equal(event_queue_start(q), K_OK);
    event_queue_push(q, "ns", "Pod", "v1", "p", NULL, "R", "m");
    event_queue_stop(q, 1000);
    assert_int_equal(r.n, 1);
    assert_int_equal(event_queue_sent(q), 0);
    event_queue_free(q);
}

static void test_bad_args(void **state)
{
    (void)state;
    assert_null(event_queue_new(0, record, NULL, NULL, NULL));
    assert_null(event_queue_new(4, NULL, NULL, NULL, NULL));
    event_queue_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delivers_in_order),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_push_does_not_wait_for_the_sink),
        cmocka_unit_test(test_repeats_are_not_recorded_again),
        cmocka_unit_test(test_repeats_expire_after_ten_minutes),
        cmocka_unit_test(test_sink_failure_counted),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
