/*
 * Tests for core/http/lanes.c: order in a lane, lanes independent of each other, a full lane and
 * a long wait answered shed, stopping with jobs queued. Jobs block on a gate the test opens, so
 * no test depends on how fast the machine is (the long wait is a lower bound).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/lanes.h"
#include "util/result.h"

struct job {
    struct lane_job lj;
    int id;
    bool gated;       /* waits for the gate to open before it returns */
    atomic_int state; /* 0 queued, 1 running, 2 done */
    atomic_bool shed; /* run shed */
    atomic_int order; /* 1-based place among the jobs run */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static atomic_int ran;

static void open_gate(void)
{
    pthread_mutex_lock(&mu);
    gate_open = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void run(void *ctx, struct lane_job *lj, bool shed)
{
    (void)ctx;
    struct job *j = (struct job *)(void *)((char *)lj - offsetof(struct job, lj));
    atomic_store(&j->state, 1);
    atomic_store(&j->shed, shed);
    if (j->gated && !shed) {
        pthread_mutex_lock(&mu);
        while (!gate_open)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
    }
    atomic_store(&j->order, atomic_fetch_add(&ran, 1) + 1);
    atomic_store(&j->state, 2);
}

static void wait_state(struct job *j, int state)
{
    for (int i = 0; i < 10000 && atomic_load(&j->state) < state; i++)
        usleep(1000);
    assert_true(atomic_load(&j->state) >= state);
}

static int setup(void **state)
{
    (void)state;
    gate_open = false;
    atomic_store(&ran, 0);
    return 0;
}

static struct lanes *start(const struct http_lane_options *o, unsigned n)
{
    struct lanes *l = NULL;
    char err[128];
    assert_int_equal(lanes_start(o, n, run, NULL, "test", &l, err, sizeof(err)), K_OK);
    return l;
}

/* One worker: jobs run one after the other in the order queued. */
static void test_fifo(void **state)
{
    (void)state;
    struct http_lane_options o[1] = {{.workers = 1}};
    struct lanes *l = start(o, 1);
    struct job j[5];
    memset(j, 0, sizeof(j));
    j[0].gated = true;
    for (int i = 0; i < 5; i++)
        assert_true(lanes_submit(l, 0, &j[i].lj));
    wait_state(&j[0], 1);
    open_gate();
    for (int i = 0; i < 5; i++) {
        wait_state(&j[i], 2);
        assert_int_equal(atomic_load(&j[i].order), i + 1);
        assert_false(atomic_load(&j[i].shed));
    }
    struct lane_stats st;
    lanes_stats(l, 0, &st);
    assert_int_equal(st.run, 5);
    assert_int_equal(st.shed, 0);
    lanes_close(l);
    lanes_free(l);
}

/* A lane whose workers are all busy holds up none of the other lane's jobs. */
static void test_lanes_independent(void **state)
{
    (void)state;
    struct http_lane_options o[2] = {{.workers = 1}, {.workers = 2, .nice = 5}};
    struct lanes *l = start(o, 2);
    struct job slow[3], fast[4];
    memset(slow, 0, sizeof(slow));
    memset(fast, 0, sizeof(fast));
    for (int i = 0; i < 3; i++) {
        slow[i].gated = true;
        lanes_submit(l, 1, &slow[i].lj);
    }
    wait_state(&slow[0], 1);
    wait_state(&slow[1], 1);
    for (int i = 0; i < 4; i++) {
        lanes_submit(l, 0, &fast[i].lj);
        wait_state(&fast[i], 2);
    }
    assert_int_equal(atomic_load(&slow[2].state), 0); /* still queued behind the two */
    struct lane_stats st;
    lanes_stats(l, 1, &st);
    assert_int_equal(st.busy, 2);
    assert_int_equal(st.queued, 1);
    open_gate();
    wait_state(&slow[2], 2);
    lanes_close(l);
    lanes_free(l);
}

/* A full lane refuses the job: it is the caller's again, never run. */
static void test_full_lane_sheds(void **state)
{
    (void)state;
    struct http_lane_options o[1] = {{.workers = 1, .max_queued = 2}};
    struct lanes *l = start(o, 1);
    struct job j[4];
    memset(j, 0, sizeof(j));
    for (int i = 0; i < 4; i++)
        j[i].gated = true;
    assert_true(lanes_submit(l, 0, &j[0].lj));
    wait_state(&j[0], 1);
    assert_true(lanes_submit(l, 0, &j[1].lj));
    assert_true(lanes_submit(l, 0, &j[2].lj));
    assert_false(lanes_submit(l, 0, &j[3].lj)); /* the queue holds 2 */
    assert_int_equal(atomic_load(&j[3].state), 0);
    open_gate();
    for (int i = 0; i < 3; i++) {
        wait_state(&j[i], 2);
        assert_false(atomic_load(&j[i].shed));
    }
    struct lane_stats st;
    lanes_stats(l, 0, &st);
    assert_int_equal(st.run, 3);
    assert_int_equal(st.shed, 1);
    lanes_close(l);
    lanes_free(l);
}

/* A job that waited longer than max_wait_ms for a worker is run shed. The limit is far above
 * the time an idle worker takes to pick up j[0], even on a loaded machine or under valgrind. */
static void test_long_wait_sheds(void **state)
{
    (void)state;
    struct http_lane_options o[1] = {{.workers = 1, .max_wait_ms = 1000}};
    struct lanes *l = start(o, 1);
    struct job j[2];
    memset(j, 0, sizeof(j));
    j[0].gated = true;
    lanes_submit(l, 0, &j[0].lj);
    wait_state(&j[0], 1);
    lanes_submit(l, 0, &j[1].lj);
    usleep(1100 * 1000); /* j[1] has waited at least 1100 ms when the worker takes it */
    open_gate();
    wait_state(&j[1], 2);
    assert_false(atomic_load(&j[0].shed));
    assert_true(atomic_load(&j[1].shed));
    lanes_close(l);
    lanes_free(l);
}

/* Closing runs what is queued shed and lets the running job finish; later submissions are
 * refused until the lanes are freed. */
static void test_stop_with_queued(void **state)
{
    (void)state;
    struct http_lane_options o[1] = {{.workers = 1}};
    struct lanes *l = start(o, 1);
    struct job j[3];
    memset(j, 0, sizeof(j));
    j[0].gated = true;
    lanes_submit(l, 0, &j[0].lj);
    wait_state(&j[0], 1);
    lanes_submit(l, 0, &j[1].lj);
    lanes_submit(l, 0, &j[2].lj);
    open_gate();
    lanes_close(l);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&j[i].state), 2);
    assert_false(atomic_load(&j[0].shed));
    struct job late;
    memset(&late, 0, sizeof(late));
    assert_false(lanes_submit(l, 0, &late.lj));
    assert_int_equal(atomic_load(&late.state), 0);
    lanes_close(l); /* idempotent */
    lanes_free(l);
}

static void test_bad_lane_count(void **state)
{
    (void)state;
    struct http_lane_options o[1] = {{.workers = 1}};
    struct lanes *l = NULL;
    char err[128];
    assert_int_equal(lanes_start(o, 0, run, NULL, "test", &l, err, sizeof(err)), K_EINVAL);
    assert_null(l);
    assert_int_equal(lanes_start(o, HTTP_MAX_LANES + 1, run, NULL, "test", &l, err, sizeof(err)),
                     K_EINVAL);
    lanes_close(NULL);
    lanes_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fifo, setup),
        cmocka_unit_test_setup(test_lanes_independent, setup),
        cmocka_unit_test_setup(test_full_lane_sheds, setup),
        cmocka_unit_test_setup(test_long_wait_sheds, setup),
        cmocka_unit_test_setup(test_stop_with_queued, setup),
        cmocka_unit_test_setup(test_bad_lane_count, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
