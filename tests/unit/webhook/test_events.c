/*
 * Tests for webhook/events.c: which admission reviews become Warning Events (one per warning,
 * about the reviewed object), and which do not (no verified caller, a dry run, no namespace or
 * name); which path each review takes under each --event-verification mode. The recorder's
 * queue writes to the recording fake API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "events.h"
#include "fake_kube.h"
#include "util/result.h"
#include "warnings.h"

/* A review of Deployment team/train with two warnings. */
static void review(struct admission_result *r)
{
    memset(r, 0, sizeof(*r));
    warn_list_init(&r->warnings);
    snprintf(r->ns, sizeof(r->ns), "team");
    snprintf(r->kind, sizeof(r->kind), "Deployment");
    snprintf(r->api_version, sizeof(r->api_version), "apps/v1");
    snprintf(r->name, sizeof(r->name), "train");
    snprintf(r->uid, sizeof(r->uid), "uid-1");
    snprintf(r->operation, sizeof(r->operation), "CREATE");
    assert_true(warn_add(&r->warnings, WARN_REASON_TAINT, "taint %s", "gpu=true:NoSchedule"));
    assert_true(warn_add(&r->warnings, WARN_REASON_QUOTA, "quota %d", 4));
}

/* Posts r as the webhook does, writes what was queued, and returns the requests made. */
static size_t posted(const struct admission_result *r, bool may_record, size_t *taken,
                     struct fake_kube *api)
{
    struct event_recorder *rec = event_recorder_new(
        &(struct event_recorder_options){.repeat_window_ms = 600000, .queue_capacity = 16});
    assert_non_null(rec);
    struct kube_client *c = fake_kube_client(api);
    *taken = wh_events_post(rec, r, may_record, "host-1");
    assert_int_equal(event_recorder_start(rec, c), K_OK);
    event_recorder_stop(rec, 5000);
    event_recorder_free(rec);
    kube_client_free(c);
    return fake_kube_count(api);
}

static void test_one_event_per_warning(void **state)
{
    (void)state;
    struct admission_result r;
    struct fake_kube api;
    size_t taken;
    review(&r);
    fake_kube_init(&api);
    assert_int_equal(posted(&r, true, &taken, &api), 2);
    assert_int_equal(taken, 2);
    const struct fake_request *q = fake_kube_request(&api, 0);
    assert_string_equal(q->method, "POST");
    assert_string_equal(q->path, "/api/v1/namespaces/team/events");
    assert_non_null(strstr(q->body, "\"kind\":\"Deployment\""));
    assert_non_null(strstr(q->body, "\"apiVersion\":\"apps/v1\""));
    assert_non_null(strstr(q->body, "\"name\":\"train\""));
    assert_non_null(strstr(q->body, "\"uid\":\"uid-1\""));
    assert_non_null(strstr(q->body, "\"type\":\"Warning\""));
    assert_non_null(strstr(q->body, "\"reason\":\"GPUUntoleratedTaint\""));
    assert_non_null(strstr(q->body, "\"message\":\"taint gpu=true:NoSchedule\""));
    assert_non_null(strstr(q->body, "\"reportingComponent\":\"gputri-webhook\""));
    assert_non_null(strstr(q->body, "\"reportingInstance\":\"host-1\""));
    assert_non_null(strstr(fake_kube_request(&api, 1)->body, "\"reason\":\"GPUQuotaExceeded\""));
    fake_kube_cleanup(&api);
}

static void test_reviews_without_events(void **state)
{
    (void)state;
    struct admission_result r;
    struct fake_kube api;
    size_t taken;

    review(&r); /* no verified client certificate */
    fake_kube_init(&api);
    assert_int_equal(posted(&r, false, &taken, &api), 0);
    assert_int_equal(taken, 0);
    fake_kube_cleanup(&api);

    review(&r);
    r.dry_run = true;
    fake_kube_init(&api);
    assert_int_equal(posted(&r, true, &taken, &api), 0);
    fake_kube_cleanup(&api);

    review(&r); /* a cluster-scoped object */
    r.ns[0] = '\0';
    fake_kube_init(&api);
    assert_int_equal(posted(&r, true, &taken, &api), 0);
    fake_kube_cleanup(&api);

    review(&r); /* a CREATE with generateName: no name yet */
    r.name[0] = '\0';
    fake_kube_init(&api);
    assert_int_equal(posted(&r, true, &taken, &api), 0);
    fake_kube_cleanup(&api);
}

static void test_paths_by_mode(void **state)
{
    (void)state;
    struct admission_result r;
    review(&r); /* a CREATE with a uid */
    /* auto: the API server's certificate at once, anyone else after a lookup */
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, true, true, &r), WH_EVENT_DIRECT);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, true, false, &r), WH_EVENT_LOOKUP);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, false, false, &r), WH_EVENT_LOOKUP);
    /* no CA: a "verified" flag cannot mean anything */
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, false, true, &r), WH_EVENT_LOOKUP);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_CLIENT_CERT, true, true, &r), WH_EVENT_DIRECT);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_CLIENT_CERT, true, false, &r), WH_EVENT_NONE);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_LOOKUP, true, true, &r), WH_EVENT_LOOKUP);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_OFF, true, true, &r), WH_EVENT_NONE);

    /* an UPDATE, or a CREATE without a uid, cannot be looked up; the API server's still posts */
    snprintf(r.operation, sizeof(r.operation), "UPDATE");
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, false, false, &r), WH_EVENT_NONE);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, true, true, &r), WH_EVENT_DIRECT);
    review(&r);
    r.uid[0] = '\0';
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_LOOKUP, false, false, &r), WH_EVENT_NONE);

    /* never: a dry run, no warnings, no namespace */
    review(&r);
    r.dry_run = true;
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, true, true, &r), WH_EVENT_NONE);
    review(&r);
    warn_list_init(&r.warnings);
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, true, true, &r), WH_EVENT_NONE);
    review(&r);
    r.ns[0] = '\0';
    assert_int_equal(wh_events_path(WH_EVENT_VERIFY_AUTO, false, false, &r), WH_EVENT_NONE);

    enum wh_event_verification m = WH_EVENT_VERIFY_OFF;
    assert_true(wh_event_verification_parse("client-cert", &m));
    assert_int_equal(m, WH_EVENT_VERIFY_CLIENT_CERT);
    assert_false(wh_event_verification_parse("Auto", &m));
    assert_false(wh_event_verification_parse(NULL, &m));
    assert_int_equal(m, WH_EVENT_VERIFY_CLIENT_CERT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_event_per_warning),
        cmocka_unit_test(test_reviews_without_events),
        cmocka_unit_test(test_paths_by_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
