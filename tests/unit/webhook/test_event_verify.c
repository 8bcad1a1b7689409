/*
 * Tests for webhook/event_verify.c: a review's Events are posted only once the object it names is
 * read back with the review's uid and creation time (within the age bound, once per uid); an
 * object absent until the give-up time, found with another identity, or a failing API gives
 * none; the queue drops its oldest review when full; the object's path per kind, and names that
 * are refused. Time is a fake clock; lookups run through wh_verify_run_due against the recording
 * fake API, and Events through a recorder writing to a second one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "event_verify.h"
#include "fake_kube.h"
#include "util/result.h"
#include "warnings.h"

#define WALL_MS 1700000000000LL        /* 2023-11-14T22:13:20Z */
#define CREATED "2023-11-14T22:13:20Z" /* = WALL_MS */
#define POD_PATH "/api/v1/namespaces/team/pods/train-0"

struct world {
    struct clock_fake fc;
    struct clock clock;
    struct fake_kube api;    /* the lookups */
    struct fake_kube events; /* the recorder's writes */
    struct kube_client *c, *ec;
    struct event_recorder *rec;
    struct wh_verify *v;
};

static void world_init(struct world *w, size_t capacity)
{
    memset(w, 0, sizeof(*w));
    clock_fake_init(&w->fc, WALL_MS);
    w->clock = clock_fake_clock(&w->fc);
    fake_kube_init(&w->api);
    fake_kube_init(&w->events);
    w->c = fake_kube_client(&w->api);
    w->ec = fake_kube_client(&w->events);
    w->rec = event_recorder_new(&(struct event_recorder_options){.queue_capacity = 64});
    assert_non_null(w->rec);
    assert_int_equal(event_recorder_start(w->rec, w->ec), K_OK);
    w->v = wh_verify_new(
        &(struct wh_verify_options){.capacity = capacity, .instance = "host-1", .clock = &w->clock},
        w->rec);
    assert_non_null(w->v);
}

/* Stops both, returns the Events written. */
static size_t world_events(struct world *w)
{
    wh_verify_free(w->v);
    w->v = NULL;
    event_recorder_stop(w->rec, 5000);
    return fake_kube_count(&w->events);
}

static void world_cleanup(struct world *w)
{
    wh_verify_free(w->v);
    event_recorder_free(w->rec);
    kube_client_free(w->c);
    kube_client_free(w->ec);
    fake_kube_cleanup(&w->api);
    fake_kube_cleanup(&w->events);
}

/* A CREATE review of Pod team/train-0 with uid `uid` and two warnings. */
static void review(struct admission_result *r, const char *uid)
{
    memset(r, 0, sizeof(*r));
    warn_list_init(&r->warnings);
    snprintf(r->ns, sizeof(r->ns), "team");
    snprintf(r->kind, sizeof(r->kind), "Pod");
    snprintf(r->api_version, sizeof(r->api_version), "v1");
    snprintf(r->name, sizeof(r->name), "train-0");
    snprintf(r->uid, sizeof(r->uid), "%s", uid);
    snprintf(r->created, sizeof(r->created), CREATED);
    snprintf(r->operation, sizeof(r->operation), "CREATE");
    assert_true(warn_add(&r->warnings, WARN_REASON_TAINT, "taint %s", "gpu=true:NoSchedule"));
    assert_true(warn_add(&r->warnings, WARN_REASON_RUNTIMECLASS, "no RuntimeClass"));
}

static void answer_object(struct fake_kube *api, const char *uid, const char *created)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"train-0\",\"namespace\":\"team\","
             "\"uid\":\"%s\",\"creationTimestamp\":\"%s\"}}",
             uid, created);
    fake_kube_answer(api, 200, 0, body);
}

static void answer_404(struct fake_kube *api)
{
    fake_kube_answer(api, 404, 0, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
}

static void test_found_with_the_uid(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    /* nothing is looked up before the first delay */
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0);
    clock_fake_advance_ms(&w.fc, WH_VERIFY_FIRST_DELAY_MS);
    answer_object(&w.api, "uid-1", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    assert_string_equal(fake_kube_request(&w.api, 0)->method, "GET");
    assert_string_equal(fake_kube_request(&w.api, 0)->path, POD_PATH);
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.verified, 1);
    assert_int_equal(st.pending, 0);
    assert_int_equal(world_events(&w), 2);
    const struct fake_request *q = fake_kube_request(&w.events, 0);
    assert_string_equal(q->path, "/api/v1/namespaces/team/events");
    assert_non_null(strstr(q->body, "\"uid\":\"uid-1\""));
    assert_non_null(strstr(q->body, "\"name\":\"train-0\""));
    assert_non_null(strstr(q->body, "\"reportingInstance\":\"host-1\""));
    world_cleanup(&w);
}

/* Not stored yet at the first lookup (another webhook still deciding): found at the second. */
static void test_found_later(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_404(&w.api);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    clock_fake_advance_ms(&w.fc, 1999);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0); /* the second waits 2 s */
    clock_fake_advance_ms(&w.fc, 1);
    answer_object(&w.api, "uid-1", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.verified, 1);
    assert_int_equal(world_events(&w), 2);
    world_cleanup(&w);
}

/* Queues one review, answers its 5 lookups (at 1, 3, 7, 15, 31 s) with `status`, and returns
 * the counters after the give-up and how many Events were written. */
static size_t given_up(long status, struct wh_verify_stats *st)
{
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    const int64_t waits[] = {1000, 2000, 4000, 8000, 16000};
    for (size_t i = 0; i < 5; i++) {
        clock_fake_advance_ms(&w.fc, waits[i]);
        fake_kube_answer(&w.api, status, 0, "{\"kind\":\"Status\"}");
        assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    }
    wh_verify_stats(w.v, st);
    assert_int_equal(st->pending, 0);
    clock_fake_advance_ms(&w.fc, 60000);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0);
    assert_int_equal(fake_kube_count(&w.api), 5);
    size_t n = world_events(&w);
    world_cleanup(&w);
    return n;
}

/* Never created (refused after this webhook, or forged): absent; an API refusing: failed. */
static void test_given_up(void **state)
{
    (void)state;
    struct wh_verify_stats st;
    assert_int_equal(given_up(404, &st), 0);
    assert_int_equal(st.absent, 1);
    assert_int_equal(st.failed, 0);
    assert_int_equal(given_up(403, &st), 0);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.absent, 0);
}

/* A forged review naming a live object: another uid, another creation time, an object older
 * than the age bound, or a second review of a uid verified before. */
static void test_mismatch(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);

    /* {review's uid, review's creationTimestamp, object's uid, object's creationTimestamp} */
    const char *cases[][4] = {
        {"uid-forged", CREATED, "uid-real", CREATED},
        {"uid-real", "2023-11-14T22:00:00Z", "uid-real", CREATED},
        {"uid-old", "2023-11-14T22:00:00Z", "uid-old", "2023-11-14T22:00:00Z"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        review(&r, cases[i][0]);
        snprintf(r.created, sizeof(r.created), "%s", cases[i][1]);
        assert_true(wh_verify_queue(w.v, &r));
        clock_fake_advance_ms(&w.fc, 1000);
        answer_object(&w.api, cases[i][2], cases[i][3]);
        assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    }

    /* the real one, then a copy of it */
    review(&r, "uid-real");
    assert_true(wh_verify_queue(w.v, &r));
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_object(&w.api, "uid-real", CREATED);
    answer_object(&w.api, "uid-real", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 2);

    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 5);
    assert_int_equal(st.mismatch, 4);
    assert_int_equal(st.verified, 1);
    assert_int_equal(world_events(&w), 2);
    world_cleanup(&w);
}

static void test_full_queue_drops_oldest(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 2);
    const char *uids[] = {"uid-1", "uid-2", "uid-3"};
    for (size_t i = 0; i < 3; i++) {
        review(&r, uids[i]);
        assert_true(wh_verify_queue(w.v, &r));
        clock_fake_advance_ms(&w.fc, 10);
    }
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 3);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(st.pending, 2);
    clock_fake_advance_ms(&w.fc, 1000);
    answer_object(&w.api, "uid-2", CREATED);
    answer_object(&w.api, "uid-3", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 2);
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.verified, 2);
    /* what still waits at stop is dropped */
    review(&r, "uid-4");
    assert_true(wh_verify_queue(w.v, &r));
    wh_verify_stop(w.v);
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.pending, 0);
    assert_int_equal(world_events(&w), 4);
    world_cleanup(&w);
}

static void test_not_queued(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "");
    assert_false(wh_verify_queue(w.v, &r)); /* no uid */
    review(&r, "uid-1");
    warn_list_init(&r.warnings);
    assert_false(wh_verify_queue(w.v, &r)); /* no warnings */
    review(&r, "uid-1");
    snprintf(r.kind, sizeof(r.kind), "ConfigMap");
    assert_false(wh_verify_queue(w.v, &r));
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 0);
    world_cleanup(&w);
}

static void test_paths(void **state)
{
    (void)state;
    struct admission_result r;
    char p[512];
    review(&r, "u");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, POD_PATH);
    snprintf(r.kind, sizeof(r.kind), "Deployment");
    assert_false(wh_verify_path(&r, p, sizeof(p))); /* a core Deployment */
    snprintf(r.api_version, sizeof(r.api_version), "apps/v1");
    snprintf(r.name, sizeof(r.name), "train.v2");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, "/apis/apps/v1/namespaces/team/deployments/train.v2");
    snprintf(r.kind, sizeof(r.kind), "CronJob");
    snprintf(r.api_version, sizeof(r.api_version), "batch/v1");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, "/apis/batch/v1/namespaces/team/cronjobs/train.v2");
    snprintf(r.kind, sizeof(r.kind), "ResourceClaimTemplate");
    snprintf(r.api_version, sizeof(r.api_version), "resource.k8s.io/v1beta2");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(
        p, "/apis/resource.k8s.io/v1beta2/namespaces/team/resourceclaimtemplates/train.v2");
    assert_false(wh_verify_path(&r, p, 20)); /* no room */

    /* names no object can have: never a path of another object */
    const char *bad_names[] = {"", "..", "a/../../b", "A", "a..b", "-a", "a.", "a b", "a%2Fb"};
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        review(&r, "u");
        snprintf(r.name, sizeof(r.name), "%s", bad_names[i]);
        assert_false(wh_verify_path(&r, p, sizeof(p)));
    }
    review(&r, "u");
    snprintf(r.ns, sizeof(r.ns), "team.a"); /* a namespace is a label */
    assert_false(wh_verify_path(&r, p, sizeof(p)));
    review(&r, "u");
    snprintf(r.api_version, sizeof(r.api_version), "v1/x");
    assert_false(wh_verify_path(&r, p, sizeof(p)));
    snprintf(r.api_version, sizeof(r.api_version), "/v1");
    assert_false(wh_verify_path(&r, p, sizeof(p)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_with_the_uid),
        cmocka_unit_test(test_found_later),
        cmocka_unit_test(test_given_up),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_full_queue_drops_oldest),
        cmocka_unit_test(test_not_queued),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
