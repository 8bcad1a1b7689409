/*
 * Tests for controller/pod_ledger.c: what the controller remembers about a pod - the cause
 * written to which uid, the gpu-fits grace on the injected clock, owed Events, pending marks -
 * and that a record goes with its last part.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pod_ledger.h"
#include "util/result.h"

struct fixture {
    struct clock_fake clk;
    struct clock clock;
    struct pod_ledger *l;
};

static int setup(void **state)
{
    static struct fixture f;
    clock_fake_init(&f.clk, 1764513000000);
    f.clock = clock_fake_clock(&f.clk);
    f.l = pod_ledger_new(&f.clock);
    assert_non_null(f.l);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    pod_ledger_free(f->l);
    return 0;
}

static void test_written_until_seen(void **state)
{
    struct fixture *f = *state;
    struct pod_written w;
    assert_false(pod_ledger_written(f->l, "team/train", &w));
    assert_int_equal(pod_ledger_set_written(f->l, "team/train", "uid-1", CAUSE_EXHAUSTED), K_OK);
    assert_true(pod_ledger_written(f->l, "team/train", &w));
    assert_string_equal(w.uid, "uid-1");
    assert_int_equal(w.cause, CAUSE_EXHAUSTED);
    assert_false(pod_ledger_written(f->l, "team/other", NULL));

    /* the watch shows the old cause, none, or a word that is no cause: still remembered */
    pod_ledger_seen(f->l, "team/train", "taint");
    pod_ledger_seen(f->l, "team/train", NULL);
    pod_ledger_seen(f->l, "team/train", "exhausted-ish");
    assert_true(pod_ledger_written(f->l, "team/train", NULL));
    /* a newer write replaces it */
    assert_int_equal(pod_ledger_set_written(f->l, "team/train", "uid-1", CAUSE_TAINT), K_OK);
    pod_ledger_seen(f->l, "team/train", "exhausted");
    assert_true(pod_ledger_written(f->l, "team/train", &w));
    assert_int_equal(w.cause, CAUSE_TAINT);
    /* seen: forgotten, and the record with it */
    pod_ledger_seen(f->l, "team/train", "taint");
    assert_false(pod_ledger_written(f->l, "team/train", NULL));
    assert_int_equal(pod_ledger_len(f->l), 0);
}

static void test_fits_grace_on_the_clock(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(pod_ledger_fits_wait(f->l, "team/train", 10000), 10000);
    clock_fake_advance_ms(&f->clk, 4000);
    assert_int_equal(pod_ledger_fits_wait(f->l, "team/train", 10000), 6000);
    clock_fake_advance_ms(&f->clk, 6000);
    assert_int_equal(pod_ledger_fits_wait(f->l, "team/train", 10000), 0);
    clock_fake_advance_ms(&f->clk, 60000);
    assert_int_equal(pod_ledger_fits_wait(f->l, "team/train", 10000), 0);
    /* no longer fitting: the grace starts again */
    pod_ledger_fits_forget(f->l, "team/train");
    assert_int_equal(pod_ledger_len(f->l), 0);
    assert_int_equal(pod_ledger_fits_wait(f->l, "team/train", 10000), 10000);
    pod_ledger_fits_forget(f->l, "team/absent"); /* nothing to forget */
    assert_int_equal(pod_ledger_len(f->l), 1);
}

static struct reconcile_plan plan_for(const char *uid, enum cause cause)
{
    struct reconcile_plan p = {.kind = RECONCILE_WRITE, .cause = cause, .from = -1};
    snprintf(p.ns, sizeof(p.ns), "team");
    snprintf(p.name, sizeof(p.name), "train");
    snprintf(p.uid, sizeof(p.uid), "%s", uid);
    snprintf(p.detail, sizeof(p.detail), "0/2 nodes have a free GPU");
    return p;
}

static void test_owed_event_for_the_same_pod_and_cause(void **state)
{
    struct fixture *f = *state;
    struct reconcile_plan p = plan_for("uid-1", CAUSE_EXHAUSTED), got;
    pod_ledger_owe_event(f->l, "team/train", &p);
    assert_true(pod_ledger_owed_event(f->l, "team/train", "uid-1", "exhausted", &got));
    assert_string_equal(got.detail, p.detail);
    /* still owed until done */
    assert_true(pod_ledger_owed_event(f->l, "team/train", "uid-1", "exhausted", &got));
    pod_ledger_event_done(f->l, "team/train");
    assert_false(pod_ledger_owed_event(f->l, "team/train", "uid-1", "exhausted", &got));
    assert_int_equal(pod_ledger_len(f->l), 0);

    /* another cause now, a recreated pod, or the pod gone: dropped */
    pod_ledger_owe_event(f->l, "team/train", &p);
    assert_false(pod_ledger_owed_event(f->l, "team/train", "uid-1", "taint", &got));
    assert_false(pod_ledger_owed_event(f->l, "team/train", "uid-1", "exhausted", &got));
    pod_ledger_owe_event(f->l, "team/train", &p);
    assert_false(pod_ledger_owed_event(f->l, "team/train", "uid-2", "exhausted", &got));
    pod_ledger_owe_event(f->l, "team/train", &p);
    assert_false(pod_ledger_owed_event(f->l, "team/train", NULL, NULL, &got));
    assert_int_equal(pod_ledger_len(f->l), 0);
}

static void test_pending_mark_and_forget(void **state)
{
    struct fixture *f = *state;
    struct metrics_pending_mark m = {.set = true, .created_ms = 5000, .cause = CAUSE_TAINT}, got;
    snprintf(m.uid, sizeof(m.uid), "uid-1");
    pod_ledger_pending(f->l, "team/train", &got);
    assert_false(got.set);
    pod_ledger_set_pending(f->l, "team/train", &m);
    pod_ledger_pending(f->l, "team/train", &got);
    assert_true(got.set);
    assert_string_equal(got.uid, "uid-1");
    assert_int_equal(got.cause, CAUSE_TAINT);
    /* an unset mark is forgotten; the written cause beside it stays */
    pod_ledger_set_written(f->l, "team/train", "uid-1", CAUSE_TAINT);
    struct metrics_pending_mark none = {0};
    pod_ledger_set_pending(f->l, "team/train", &none);
    pod_ledger_pending(f->l, "team/train", &got);
    assert_false(got.set);
    assert_int_equal(pod_ledger_len(f->l), 1);
    /* the pod is gone: all of it goes */
    pod_ledger_set_pending(f->l, "team/train", &m);
    pod_ledger_fits_wait(f->l, "team/train", 10000);
    pod_ledger_forget(f->l, "team/train");
    assert_false(pod_ledger_written(f->l, "team/train", NULL));
    assert_int_equal(pod_ledger_len(f->l), 0);
}

/* keep(): "team/gone" is not cached, "team/placed" is cached and not pending, the rest pending */
static unsigned keep(void *ctx, const char *key)
{
    (void)ctx;
    if (strcmp(key, "team/gone") == 0)
        return 0;
    if (strcmp(key, "team/placed") == 0)
        return POD_LEDGER_KEEP_POD;
    return POD_LEDGER_KEEP_POD | POD_LEDGER_KEEP_PENDING;
}

static void test_prune_after_relist(void **state)
{
    struct fixture *f = *state;
    struct metrics_pending_mark m = {.set = true, .created_ms = 5000, .cause = -1}, got;
    snprintf(m.uid, sizeof(m.uid), "uid");
    pod_ledger_set_pending(f->l, "team/gone", &m);
    pod_ledger_set_written(f->l, "team/gone", "uid", CAUSE_TAINT);
    pod_ledger_set_pending(f->l, "team/placed", &m);
    pod_ledger_set_pending(f->l, "team/pending", &m);
    pod_ledger_set_pending(f->l, "team/placed-written", &m);
    pod_ledger_set_written(f->l, "team/placed-written", "uid", CAUSE_OK);
    pod_ledger_prune(f->l, keep, NULL);
    assert_false(pod_ledger_written(f->l, "team/gone", NULL));
    pod_ledger_pending(f->l, "team/placed", &got);
    assert_false(got.set);
    pod_ledger_pending(f->l, "team/pending", &got);
    assert_true(got.set);
    assert_true(pod_ledger_written(f->l, "team/placed-written", NULL));
    /* team/pending and team/placed-written (kept as pending by keep()) are left */
    assert_int_equal(pod_ledger_len(f->l), 2);
}

/* The verdict of the last classification, for the re-check policy: set, read, forgotten. */
static void test_verdict(void **state)
{
    struct fixture *f = *state;
    struct requeue_record r;
    pod_ledger_verdict(f->l, "team/p", &r);
    assert_false(r.valid);
    pod_ledger_set_verdict(f->l, "team/p", "uid-1", CAUSE_EXHAUSTED, false);
    pod_ledger_verdict(f->l, "team/p", &r);
    assert_true(r.valid);
    assert_int_equal(r.word, CAUSE_EXHAUSTED);
    assert_string_equal(r.uid, "uid-1");
    assert_int_equal(pod_ledger_len(f->l), 1);
    /* a classification under way: no verdict, and nothing else keeps the record */
    pod_ledger_forget_verdict(f->l, "team/p");
    pod_ledger_verdict(f->l, "team/p", &r);
    assert_false(r.valid);
    assert_int_equal(pod_ledger_len(f->l), 0);
    pod_ledger_set_verdict(f->l, "team/p", "uid-1", CAUSE_TAINT, false);
    pod_ledger_forget(f->l, "team/p");
    pod_ledger_verdict(f->l, "team/p", &r);
    assert_false(r.valid);
}

/* The workers and the pods informer's thread use the ledger at once (run under TSan). */
static void *hammer(void *arg)
{
    struct pod_ledger *l = arg;
    char key[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof(key), "team/p%d", i % 16);
        struct metrics_pending_mark m = {.set = i % 3 != 0};
        pod_ledger_set_written(l, key, "uid", CAUSE_TAINT);
        pod_ledger_fits_wait(l, key, 10000);
        pod_ledger_set_pending(l, key, &m);
        pod_ledger_pending(l, key, &m);
        pod_ledger_seen(l, key, "taint");
        pod_ledger_fits_forget(l, key);
        pod_ledger_set_verdict(l, key, "uid", CAUSE_EXHAUSTED, false);
        struct requeue_record r;
        pod_ledger_verdict(l, key, &r);
        pod_ledger_forget_verdict(l, key);
        if (i % 7 == 0)
            pod_ledger_forget(l, key);
    }
    return NULL;
}

static void test_threads(void **state)
{
    struct fixture *f = *state;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, f->l), 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    struct metrics_pending_mark none = {0};
    char key[32];
    for (int i = 0; i < 16; i++) {
        snprintf(key, sizeof(key), "team/p%d", i);
        pod_ledger_set_pending(f->l, key, &none);
    }
    assert_int_equal(pod_ledger_len(f->l), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_written_until_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fits_grace_on_the_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owed_event_for_the_same_pod_and_cause, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pending_mark_and_forget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_after_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verdict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
