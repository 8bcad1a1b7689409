/*
 * Tests for controller/leader.c: the election state machine driven by a fake clock and a fake
 * Lease store that behaves like the API server (resourceVersion-guarded updates).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "leader.h"
#include "util/result.h"

/* ---------------------------------------------------------------- fakes */

static void advance(struct clock_fake *c, int64_t ms)
{
    clock_fake_advance_ms(c, ms);
}

/* The API server's copy of the Lease. */
struct fake_server {
    int exists;
    struct lease_record rec;
    int version; /* resourceVersion */
    int fail;    /* K_* every request returns while set */
    int gets, creates, updates;
};

/* One client's lock: remembers the version it last read or wrote, as the Kubernetes lock does. */
struct fake_lock {
    struct fake_server *srv;
    int seen_version;
};

static int fl_get(void *ctx, struct lease_record *rec, struct kube_error *err)
{
    struct fake_lock *l = ctx;
    l->srv->gets++;
    if (l->srv->fail)
        return err->code = l->srv->fail;
    if (!l->srv->exists)
        return err->code = K_ENOTFOUND;
    *rec = l->srv->rec;
    l->seen_version = l->srv->version;
    return K_OK;
}

static int fl_create(void *ctx, const struct lease_record *rec, struct kube_error *err)
{
    struct fake_lock *l = ctx;
    l->srv->creates++;
    if (l->srv->fail)
        return err->code = l->srv->fail;
    if (l->srv->exists)
        return err->code = K_ECONFLICT;
    l->srv->exists = 1;
    l->srv->rec = *rec;
    l->seen_version = ++l->srv->version;
    return K_OK;
}

static int fl_update(void *ctx, const struct lease_record *rec, struct kube_error *err)
{
    struct fake_lock *l = ctx;
    l->srv->updates++;
    if (l->srv->fail)
        return err->code = l->srv->fail;
    if (!l->srv->exists)
        return err->code = K_ENOTFOUND;
    if (l->seen_version != l->srv->version)
        return err->code = K_ECONFLICT;
    l->srv->rec = *rec;
    l->seen_version = ++l->srv->version;
    return K_OK;
}

struct candidate {
    struct fake_lock lock;
    struct leader_elector *le;
};

static struct clock_fake clk;
static struct fake_server srv;

static void candidate_init(struct candidate *c, const char *id)
{
    c->lock.srv = &srv;
    c->lock.seen_version = 0;
    struct lease_lock ops = {&c->lock, fl_get, fl_create, fl_update};
    struct leader_options o = {id, 6000, 4000, 1000};
    struct clock lc = clock_fake_clock(&clk);
    c->le = leader_new(&o, &ops, &lc);
    assert_non_null(c->le);
}

static int setup(void **state)
{
    (void)state;
    memset(&srv, 0, sizeof(srv));
    clock_fake_init(&clk, 1764513000000); /* 2025-11-30T14:30:00Z */
    return 0;
}

/* ---------------------------------------------------------------- tests */

static void test_options_validated(void **state)
{
    (void)state;
    struct fake_lock fl = {&srv, 0};
    struct lease_lock ops = {&fl, fl_get, fl_create, fl_update};
    struct leader_options bad1 = {"a", 4000, 4000, 1000}; /* renew deadline == lease duration */
    struct leader_options bad2 = {"a", 6000, 4000, 4000}; /* retry period == renew deadline */
    struct leader_options bad3 = {"", 6000, 4000, 1000};  /* no identity */
    assert_null(leader_new(&bad1, &ops, NULL));
    assert_null(leader_new(&bad2, &ops, NULL));
    assert_null(leader_new(&bad3, &ops, NULL));
}

static void test_first_candidate_creates_the_lease(void **state)
{
    (void)state;
    struct candidate a;
    candidate_init(&a, "host_a");
    assert_false(leader_is_leading(a.le));
    assert_true(leader_step(a.le));
    assert_true(leader_is_leading(a.le));
    assert_int_equal(srv.creates, 1);
    assert_string_equal(srv.rec.holder, "host_a");
    assert_int_equal(srv.rec.duration_s, 6);
    assert_int_equal(srv.rec.transitions, 0);
    assert_string_equal(srv.rec.renew_time, "2025-11-30T14:30:00.000000Z");
    assert_string_equal(srv.rec.acquire_time, srv.rec.renew_time);

    /* Renewal keeps acquireTime and moves renewTime. */
    advance(&clk, 1000);
    assert_true(leader_step(a.le));
    assert_string_equal(srv.rec.acquire_time, "2025-11-30T14:30:00.000000Z");
    assert_string_equal(srv.rec.renew_time, "2025-11-30T14:30:01.000000Z");
    assert_int_equal(srv.rec.transitions, 0);
    leader_free(a.le);
}

static void test_follower_waits_while_the_lease_is_renewed(void **state)
{
    (void)state;
    struct candidate a, b;
    candidate_init(&a, "host_a");
    candidate_init(&b, "host_b");
    assert_true(leader_step(a.le));
    for (int i = 0; i < 20; i++) {
        assert_false(leader_step(b.le));
        advance(&clk, 1000);
        assert_true(leader_step(a.le));
    }
    assert_false(leader_is_leading(b.le));
    char h[64];
    leader_observed_holder(b.le, h, sizeof(h));
    assert_string_equal(h, "host_a");
    assert_string_equal(srv.rec.holder, "host_a");
    leader_free(a.le);
    leader_free(b.le);
}

static void test_takeover_after_the_lease_duration(void **state)
{
    (void)state;
    struct candidate a, b;
    candidate_init(&a, "host_a");
    candidate_init(&b, "host_b");
    assert_true(leader_step(a.le));
    assert_false(leader_step(b.le)); /* b observes a's record now */

    /* a dies. b's clock, not the record's timestamps, decides: the lease stays valid for 6 s
     * from when b first saw the record unchanged. */
    advance(&clk, 5999);
    assert_false(leader_step(b.le));
    advance(&clk, 1);
    assert_true(leader_step(b.le));
    assert_true(leader_is_leading(b.le));
    assert_string_equal(srv.rec.holder, "host_b");
    assert_int_equal(srv.rec.transitions, 1);

    /* a comes back (e.g. a long pause): its renewal finds another holder and it stops at once. */
    assert_true(leader_is_leading(a.le) == false); /* renew deadline long gone */
    assert_false(leader_step(a.le));
    assert_false(leader_is_leading(a.le));
    assert_string_equal(srv.rec.holder, "host_b");
    leader_free(a.le);
    leader_free(b.le);
}

static void test_clock_skew_in_the_record_does_not_matter(void **state)
{
    (void)state;
    struct candidate b;
    candidate_init(&b, "host_b");
    /* A record renewed "an hour ago" by a skewed clock, but seen for the first time now. */
    srv.exists = 1;
    srv.version = 7;
    snprintf(srv.rec.holder, sizeof(srv.rec.holder), "host_a");
    srv.rec.duration_s = 6;
    snprintf(srv.rec.renew_time, sizeof(srv.rec.renew_time), "2025-11-30T13:30:00.000000Z");
    assert_false(leader_step(b.le));
    advance(&clk, 3000);
    assert_false(leader_step(b.le));
    advance(&clk, 3000);
    assert_true(leader_step(b.le));
    leader_free(b.le);
}

static void test_renew_deadline_stops_the_leader(void **state)
{
    (void)state;
    struct candidate a;
    candidate_init(&a, "host_a");
    assert_true(leader_step(a.le));
    srv.fail = K_ESERVER;
    advance(&clk, 1000);
    assert_true(leader_step(a.le)); /* one failure: still within the 4 s deadline */
    advance(&clk, 2000);
    assert_true(leader_step(a.le));
    assert_true(leader_is_leading(a.le));
    /* Writes must stop at the deadline even before the next step notices. */
    advance(&clk, 1000);
    assert_false(leader_is_leading(a.le));
    assert_false(leader_step(a.le));
    /* The API is back: a re-acquires its own lease (transitions unchanged: same holder). */
    srv.fail = 0;
    advance(&clk, 1000);
    assert_true(leader_step(a.le));
    assert_int_equal(srv.rec.transitions, 0);
    leader_free(a.le);
}

static void test_conflict_lets_only_one_win(void **state)
{
    (void)state;
    struct candidate a, b;
    candidate_init(&a, "host_a");
    candidate_init(&b, "host_b");
    /* An expired lease of a dead holder, seen by both. */
    srv.exists = 1;
    srv.version = 3;
    snprintf(srv.rec.holder, sizeof(srv.rec.holder), "host_dead");
    srv.rec.duration_s = 6;
    assert_false(leader_step(a.le));
    assert_false(leader_step(b.le));
    advance(&clk, 6000);
    /* Both read version 3; a writes first, b's update then carries a stale version. */
    struct lease_record r;
    struct kube_error err = {0};
    assert_int_equal(fl_get(&b.lock, &r, &err), K_OK);
    assert_true(leader_step(a.le));
    struct lease_record mine = r;
    snprintf(mine.holder, sizeof(mine.holder), "host_b");
    assert_int_equal(fl_update(&b.lock, &mine, &err), K_ECONFLICT);
    /* and b's own step sees a fresh holder and stays a follower */
    assert_false(leader_step(b.le));
    assert_string_equal(srv.rec.holder, "host_a");
    leader_free(a.le);
    leader_free(b.le);
}

static void test_release_hands_over_at_once(void **state)
{
    (void)state;
    struct candidate a, b;
    candidate_init(&a, "host_a");
    candidate_init(&b, "host_b");
    assert_true(leader_step(a.le));
    assert_false(leader_step(b.le));
    advance(&clk, 500);
    assert_int_equal(leader_release(a.le), K_OK);
    assert_false(leader_is_leading(a.le));
    assert_string_equal(srv.rec.holder, "");
    assert_int_equal(srv.rec.duration_s, 1);
    /* An empty holder is free to take without waiting for the lease duration. */
    advance(&clk, 500);
    assert_true(leader_step(b.le));
    assert_int_equal(srv.rec.transitions, 1);
    /* Releasing when not leading writes nothing. */
    int updates = srv.updates;
    assert_int_equal(leader_release(a.le), K_OK);
    assert_int_equal(srv.updates, updates);
    leader_free(a.le);
    leader_free(b.le);
}

/* A renewal the API server applied but whose answer the shutdown cut short: the Lease is at a
 * version the leader never saw. The release still hands it back; a Lease someone else took
 * meanwhile is left alone. */
static void test_release_after_a_lost_renewal_answer(void **state)
{
    (void)state;
    struct candidate a, b;
    candidate_init(&a, "host_a");
    candidate_init(&b, "host_b");
    assert_true(leader_step(a.le));
    srv.version++; /* our renewal, applied, its answer lost */
    assert_int_equal(leader_release(a.le), K_OK);
    assert_false(leader_is_leading(a.le));
    assert_string_equal(srv.rec.holder, "");
    assert_int_equal(srv.rec.duration_s, 1);
    /* b leads now; then a Lease taken over behind b's back is not b's to release */
    advance(&clk, 500);
    assert_true(leader_step(b.le));
    snprintf(srv.rec.holder, sizeof(srv.rec.holder), "host_c");
    srv.version++;
    int updates = srv.updates;
    assert_int_equal(leader_release(b.le), K_ECONFLICT);
    assert_false(leader_is_leading(b.le));
    assert_string_equal(srv.rec.holder, "host_c");
    assert_int_equal(srv.updates, updates + 1); /* one try, then the read shows host_c */
    leader_free(a.le);
    leader_free(b.le);
}

static void test_retry_delay_has_jitter_only_while_following(void **state)
{
    (void)state;
    struct candidate a;
    candidate_init(&a, "host_a");
    for (int i = 0; i < 50; i++) {
        int64_t d = leader_next_delay_ms(a.le);
        assert_true(d >= 1000 && d <= 2200);
    }
    assert_true(leader_step(a.le));
    assert_int_equal(leader_next_delay_ms(a.le), 1000);
    leader_free(a.le);
}

static void test_format_time(void **state)
{
    (void)state;
    char t[LEASE_TIME_MAX];
    lease_format_time(1764513000123, t);
    assert_string_equal(t, "2025-11-30T14:30:00.123000Z");
    lease_format_time(0, t);
    assert_string_equal(t, "1970-01-01T00:00:00.000000Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_options_validated, setup),
        cmocka_unit_test_setup(test_first_candidate_creates_the_lease, setup),
        cmocka_unit_test_setup(test_follower_waits_while_the_lease_is_renewed, setup),
        cmocka_unit_test_setup(test_takeover_after_the_lease_duration, setup),
        cmocka_unit_test_setup(test_clock_skew_in_the_record_does_not_matter, setup),
        cmocka_unit_test_setup(test_renew_deadline_stops_the_leader, setup),
        cmocka_unit_test_setup(test_conflict_lets_only_one_win, setup),
        cmocka_unit_test_setup(test_release_hands_over_at_once, setup),
        cmocka_unit_test_setup(test_release_after_a_lost_renewal_answer, setup),
        cmocka_unit_test_setup(test_retry_delay_has_jitter_only_while_following, setup),
        cmocka_unit_test_setup(test_format_time, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
