/*
 * Tests for core/kube/event_recorder.c: aggregation by count (create, then count patches, a new
 * Event after the ttl or a 404), repeat suppression, the per-namespace and global token
 * buckets, and the asynchronous queue (order, bound, drain deadline). The recording fake API
 * (tests/lib/fake_kube.h) stands in for the server and the fake clock for time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_kube.h"
#include "kube/event_recorder.h"
#include "util/result.h"

#define T0 1764513000000 /* 2025-11-30T14:30:00Z */

struct fixture {
    struct fake_kube api;
    struct kube_client *client;
    struct clock_fake clk;
    struct clock clock;
};

static int setup(void **state)
{
    static struct fixture f;
    memset(&f, 0, sizeof(f));
    fake_kube_init(&f.api);
    clock_fake_init(&f.clk, T0);
    f.clock = clock_fake_clock(&f.clk);
    f.api.clock = &f.clk;
    f.client = fake_kube_client(&f.api);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    kube_client_free(f->client);
    fake_kube_cleanup(&f->api);
    return 0;
}

static struct kube_event_spec spec(const char *uid, const char *reason, const char *message)
{
    struct kube_event_spec e = {
        .ns = "team-a",
        .kind = "Pod",
        .api_version = "v1",
        .name = "train-0",
        .uid = uid,
        .type = "Warning",
        .reason = reason,
        .message = message,
        .component = "gputri",
        .instance = "host-1",
    };
    return e;
}

/* The controller's recorder: aggregation for 10 minutes, at most `max` Events remembered. */
static struct event_recorder *aggregating(struct fixture *f, size_t max)
{
    struct event_recorder *r = event_recorder_new(&(struct event_recorder_options){
        .aggregate_ttl_ms = 600000, .max_entries = max, .clock = &f->clock});
    assert_non_null(r);
    return r;
}

static const char *event_name(const struct fake_request *q)
{
    static char name[320];
    const char *p = strstr(q->body, "\"name\":\"");
    assert_non_null(p);
    p += 8;
    size_t n = strcspn(p, "\"");
    snprintf(name, sizeof(name), "%.*s", (int)n, p);
    return name;
}

static void test_repeat_is_aggregated(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = aggregating(f, 16);
    struct kube_event_spec e = spec("uid-1", "GPUExhausted", "0/1 free");
    struct kube_error err = {0};
    bool updated = true;

    assert_int_equal(event_recorder_record(r, f->client, &e, &updated, &err), K_OK);
    assert_false(updated);
    assert_int_equal(fake_kube_count(&f->api), 1);
    const struct fake_request *q = fake_kube_request(&f->api, 0);
    assert_string_equal(q->method, "POST");
    assert_string_equal(q->path, "/api/v1/namespaces/team-a/events");
    char name[320];
    snprintf(name, sizeof(name), "%s", event_name(q));
    assert_true(strncmp(name, "train-0.", 8) == 0);
    assert_non_null(strstr(q->body, "\"count\":1"));
    assert_non_null(strstr(q->body, "\"reason\":\"GPUExhausted\""));
    assert_non_null(strstr(q->body, "\"uid\":\"uid-1\""));
    assert_non_null(strstr(q->body, "\"reportingComponent\":\"gputri\""));
    assert_non_null(strstr(q->body, "\"reportingInstance\":\"host-1\""));
    assert_non_null(strstr(q->body, "\"firstTimestamp\":\"2025-11-30T14:30:00Z\""));

    /* The same pod and reason a minute later: the Event is patched, not created again. */
    clock_fake_advance_ms(&f->clk, 60000);
    e.message = "0/2 free";
    assert_int_equal(event_recorder_record(r, f->client, &e, &updated, &err), K_OK);
    assert_true(updated);
    assert_int_equal(fake_kube_count(&f->api), 2);
    q = fake_kube_request(&f->api, 1);
    assert_string_equal(q->method, "PATCH");
    char path[400];
    snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/events/%s", name);
    assert_string_equal(q->path, path);
    assert_non_null(strstr(q->body, "\"count\":2"));
    assert_non_null(strstr(q->body, "\"lastTimestamp\":\"2025-11-30T14:31:00Z\""));
    assert_non_null(strstr(q->body, "\"message\":\"0/2 free\""));
    clock_fake_advance_ms(&f->clk, 1000);
    assert_int_equal(event_recorder_record(r, f->client, &e, &updated, &err), K_OK);
    assert_non_null(strstr(fake_kube_request(&f->api, 2)->body, "\"count\":3"));
    assert_int_equal(event_recorder_size(r), 1);

    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 1);
    assert_int_equal(st.updated, 2);
    assert_int_equal(st.failed + st.repeated + st.throttled + st.dropped, 0);
    event_recorder_free(r);
}

static void test_other_reason_or_pod_is_a_new_event(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = aggregating(f, 16);
    struct kube_event_spec e1 = spec("uid-1", "GPUExhausted", "m");
    struct kube_event_spec e2 = spec("uid-1", "GPUTaint", "m");
    struct kube_event_spec e3 = spec("uid-2", "GPUExhausted", "m"); /* same name, new pod */
    struct kube_error err = {0};
    /* all in the same millisecond: the names still differ */
    assert_int_equal(event_recorder_record(r, f->client, &e1, NULL, &err), K_OK);
    assert_int_equal(event_recorder_record(r, f->client, &e2, NULL, &err), K_OK);
    assert_int_equal(event_recorder_record(r, f->client, &e3, NULL, &err), K_OK);
    assert_int_equal(fake_kube_count(&f->api), 3);
    char names[3][320];
    for (int i = 0; i < 3; i++) {
        assert_string_equal(fake_kube_request(&f->api, (size_t)i)->method, "POST");
        snprintf(names[i], sizeof(names[i]), "%s",
                 event_name(fake_kube_request(&f->api, (size_t)i)));
    }
    assert_string_not_equal(names[0], names[1]);
    assert_string_not_equal(names[1], names[2]);
    assert_int_equal(event_recorder_size(r), 3);
    event_recorder_free(r);
}

static void test_expired_or_vanished_event_is_created_again(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = aggregating(f, 16);
    struct kube_event_spec e = spec("uid-1", "GPUExhausted", "m");
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_OK);

    /* Past the ttl: forgotten, so a new Event. */
    clock_fake_advance_ms(&f->clk, 600000);
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_OK);
    assert_string_equal(fake_kube_request(&f->api, 1)->method, "POST");

    /* The server lost it (404): created again, and remembered under the new name. */
    clock_fake_advance_ms(&f->clk, 1000);
    fake_kube_answer(&f->api, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    fake_kube_answer(&f->api, 201, 0, "{}");
    bool updated = true;
    assert_int_equal(event_recorder_record(r, f->client, &e, &updated, &err), K_OK);
    assert_false(updated);
    assert_int_equal(fake_kube_count(&f->api), 4);
    assert_string_equal(fake_kube_request(&f->api, 2)->method, "PATCH");
    assert_string_equal(fake_kube_request(&f->api, 3)->method, "POST");
    char name[320];
    snprintf(name, sizeof(name), "%s", event_name(fake_kube_request(&f->api, 3)));
    clock_fake_advance_ms(&f->clk, 1000);
    assert_int_equal(event_recorder_record(r, f->client, &e, &updated, &err), K_OK);
    assert_true(updated);
    assert_non_null(strstr(fake_kube_request(&f->api, 4)->path, name));

    /* Any other patch failure is returned for the caller's retry; nothing is created. */
    fake_kube_answer(&f->api, 403, 0, "{\"kind\":\"Status\",\"code\":403}");
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_EFORBIDDEN);
    assert_int_equal(fake_kube_count(&f->api), 6);
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 3);
    assert_int_equal(st.updated, 1);
    assert_int_equal(st.failed, 1);
    event_recorder_free(r);
}

static void test_no_uid_is_never_aggregated_and_lru_bounds_memory(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = aggregating(f, 2);
    struct kube_event_spec e = spec(NULL, "GPUExhausted", "m");
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_OK);
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_OK);
    assert_string_equal(fake_kube_request(&f->api, 1)->method, "POST");
    assert_int_equal(event_recorder_size(r), 0);

    struct kube_event_spec a = spec("uid-a", "R", "m"), b = spec("uid-b", "R", "m"),
                           c = spec("uid-c", "R", "m");
    event_recorder_record(r, f->client, &a, NULL, &err);
    clock_fake_advance_ms(&f->clk, 1);
    event_recorder_record(r, f->client, &b, NULL, &err);
    clock_fake_advance_ms(&f->clk, 1);
    event_recorder_record(r, f->client, &a, NULL, &err); /* a used again: b is least recent */
    clock_fake_advance_ms(&f->clk, 1);
    event_recorder_record(r, f->client, &c, NULL, &err); /* evicts b */
    assert_int_equal(event_recorder_size(r), 2);
    size_t before = fake_kube_count(&f->api);
    clock_fake_advance_ms(&f->clk, 1);
    event_recorder_record(r, f->client, &a, NULL, &err);
    assert_string_equal(fake_kube_request(&f->api, before)->method, "PATCH");
    event_recorder_record(r, f->client, &b, NULL, &err);
    assert_string_equal(fake_kube_request(&f->api, before + 1)->method, "POST");
    event_recorder_free(r);
}

/* Without a recorder: a plain create. */
static void test_null_recorder_creates(void **state)
{
    struct fixture *f = *state;
    struct kube_event_spec e = spec("uid-1", "GPUExhausted", "m");
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(NULL, f->client, &e, NULL, &err), K_OK);
    assert_int_equal(event_recorder_record(NULL, f->client, &e, NULL, &err), K_OK);
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_string_equal(fake_kube_request(&f->api, 1)->method, "POST");
    char first[320];
    snprintf(first, sizeof(first), "%s", event_name(fake_kube_request(&f->api, 0)));
    assert_string_not_equal(first, event_name(fake_kube_request(&f->api, 1)));
}

/* ---------------------------------------------------------------- token buckets */

static struct event_recorder *limited(struct fixture *f, struct event_limit_options o)
{
    return event_recorder_new(&(struct event_recorder_options){.limit = &o, .clock = &f->clock});
}

/* How many of n Events about an object in ns are written. */
static int allowed(struct fixture *f, struct event_recorder *r, const char *ns, int n)
{
    struct kube_event_spec e = spec(NULL, "R", "m");
    struct kube_error err = {0};
    e.ns = ns;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int rc = event_recorder_record(r, f->client, &e, NULL, &err);
        assert_true(rc == K_OK || rc == K_ETHROTTLED);
        k += rc == K_OK;
    }
    return k;
}

static void test_namespace_burst_and_refill(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r =
        limited(f, (struct event_limit_options){.ns_burst = 25, .ns_refill_ms = 10000});
    assert_non_null(r);
    assert_int_equal(allowed(f, r, "a", 30), 25); /* the burst, then nothing */
    assert_int_equal(allowed(f, r, "b", 30), 25); /* another namespace has its own */
    clock_fake_advance_ms(&f->clk, 9999);
    assert_int_equal(allowed(f, r, "a", 1), 0);
    clock_fake_advance_ms(&f->clk, 1);
    assert_int_equal(allowed(f, r, "a", 2), 1);  /* one token per 10 s */
    clock_fake_advance_ms(&f->clk, 3600 * 1000); /* never above the burst */
    assert_int_equal(allowed(f, r, "a", 100), 25);
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 76);
    assert_int_equal(st.throttled, 5 + 5 + 1 + 1 + 75);
    event_recorder_free(r);
}

static void test_global_bucket(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r =
        limited(f, (struct event_limit_options){
                       .ns_burst = 25, .ns_refill_ms = 10000, .burst = 40, .refill_ms = 1000});
    assert_int_equal(allowed(f, r, "a", 30), 25);
    assert_int_equal(allowed(f, r, "b", 30), 15); /* the global bucket is empty after 40 */
    assert_int_equal(allowed(f, r, "c", 1), 0);
    clock_fake_advance_ms(&f->clk, 2000);
    /* a refused namespace takes no global token: "a" is empty, "c" gets both new ones */
    assert_int_equal(allowed(f, r, "a", 1), 0);
    assert_int_equal(allowed(f, r, "c", 5), 2);
    event_recorder_free(r);
}

static void test_cluster_scoped_and_off(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r =
        limited(f, (struct event_limit_options){.ns_burst = 2, .ns_refill_ms = 1000});
    assert_int_equal(allowed(f, r, "", 5), 2); /* cluster-scoped: a bucket of its own */
    assert_int_equal(allowed(f, r, "a", 5), 2);
    struct kube_event_spec e = spec(NULL, "R", "m");
    struct kube_error err = {0};
    e.ns = NULL;
    assert_int_equal(event_recorder_record(r, f->client, &e, NULL, &err), K_EINVAL);
    event_recorder_free(r);
    r = limited(f, (struct event_limit_options){0});
    assert_int_equal(allowed(f, r, "a", 100), 100);
    event_recorder_free(r);
    assert_null(limited(f, (struct event_limit_options){.burst = 1, .refill_ms = 0}));
    assert_null(limited(f, (struct event_limit_options){.ns_burst = 1, .ns_refill_ms = -1}));
}

static void test_table_bound(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = limited(
        f, (struct event_limit_options){.ns_burst = 1, .ns_refill_ms = 60000, .max_namespaces = 3});
    char ns[16];
    for (int i = 0; i < 3; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i);
        assert_int_equal(allowed(f, r, ns, 1), 1);
        clock_fake_advance_ms(&f->clk, 10);
    }
    /* all three empty: a fourth replaces the least recently used (ns-0) */
    assert_int_equal(allowed(f, r, "ns-3", 1), 1);
    clock_fake_advance_ms(&f->clk, 10);
    assert_int_equal(allowed(f, r, "ns-1", 1), 0);
    clock_fake_advance_ms(&f->clk, 10);
    assert_int_equal(allowed(f, r, "ns-2", 1), 0);
    clock_fake_advance_ms(&f->clk, 10);
    assert_int_equal(allowed(f, r, "ns-3", 1), 0);
    clock_fake_advance_ms(&f->clk, 10);
    /* ns-0 was forgotten: it comes back with a full bucket, replacing ns-1 (least recent) */
    assert_int_equal(allowed(f, r, "ns-0", 1), 1);
    /* a minute on, ns-3 and ns-0 have their token back and spend it; ns-2 has refilled to
     * full, so a new namespace replaces it rather than the least recently used */
    clock_fake_advance_ms(&f->clk, 60000);
    assert_int_equal(allowed(f, r, "ns-3", 1), 1);
    assert_int_equal(allowed(f, r, "ns-0", 1), 1);
    assert_int_equal(allowed(f, r, "ns-4", 1), 1);
    assert_int_equal(allowed(f, r, "ns-3", 1), 0);
    assert_int_equal(allowed(f, r, "ns-0", 1), 0);
    assert_int_equal(allowed(f, r, "ns-4", 1), 0);
    event_recorder_free(r);
}

/* ---------------------------------------------------------------- the queue */

/* The webhook's recorder: a queue of `cap`, repeats folded for 10 minutes, limits as given. */
static struct event_recorder *queued(struct fixture *f, size_t cap,
                                     const struct event_limit_options *limit)
{
    struct event_recorder *r = event_recorder_new(&(struct event_recorder_options){
        .repeat_window_ms = 600000, .limit = limit, .queue_capacity = cap, .clock = &f->clock});
    assert_non_null(r);
    return r;
}

static bool post(struct event_recorder *r, const char *ns, const char *name, const char *uid,
                 const char *message)
{
    struct kube_event_spec e = {
        .ns = ns,
        .kind = "Deployment",
        .api_version = "apps/v1",
        .name = name,
        .uid = uid,
        .type = "Warning",
        .reason = "GPUUntoleratedTaint",
        .message = message,
        .component = "gputri-webhook",
        .instance = NULL,
    };
    return event_recorder_post(r, &e);
}

static void test_queue_delivers_in_order(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 8, NULL);
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "obj-%d", i);
        assert_true(post(r, "ns", name, i ? "uid" : "", "spec.tolerations: ..."));
        name[0] = 'X'; /* the queue copied it */
    }
    event_recorder_stop(r, 2000);
    assert_int_equal(fake_kube_count(&f->api), 3);
    for (int i = 0; i < 3; i++) {
        const struct fake_request *q = fake_kube_request(&f->api, (size_t)i);
        assert_string_equal(q->path, "/api/v1/namespaces/ns/events");
        snprintf(name, sizeof(name), "\"name\":\"obj-%d\"", i);
        assert_non_null(strstr(q->body, name));
        assert_non_null(strstr(q->body, "\"kind\":\"Deployment\""));
        assert_non_null(strstr(q->body, "\"apiVersion\":\"apps/v1\""));
        assert_non_null(strstr(q->body, "\"type\":\"Warning\""));
        assert_non_null(strstr(q->body, "\"reportingComponent\":\"gputri-webhook\""));
        assert_null(strstr(q->body, "reportingInstance"));
    }
    assert_null(strstr(fake_kube_request(&f->api, 0)->body, "\"uid\""));
    assert_non_null(strstr(fake_kube_request(&f->api, 1)->body, "\"uid\":\"uid\""));
    assert_false(post(r, "ns", "late", NULL, "m"));
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 3);
    assert_int_equal(st.dropped, 1);
    event_recorder_free(r);
}

static void test_queue_bounded(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 2, NULL);
    /* not started: the queue fills and refuses the third */
    assert_true(post(r, "ns", "a", NULL, "m"));
    assert_true(post(r, "ns", "b", NULL, "m"));
    assert_false(post(r, "ns", "c", NULL, "m"));
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    event_recorder_stop(r, 2000);
    assert_int_equal(fake_kube_count(&f->api), 2);
    event_recorder_free(r);
}

static void test_queue_drain_deadline(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 4, NULL);
    for (int i = 0; i < 4; i++) {
        char msg[8];
        snprintf(msg, sizeof(msg), "m%d", i);
        assert_true(post(r, "ns", "p", NULL, msg));
    }
    /* a 100 ms drain, and the first write takes 300 ms: the other three are dropped */
    fake_kube_answer_after(&f->api, 300, 201, "{}");
    event_recorder_close(r, 100);
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    event_recorder_stop(r, 100);
    assert_int_equal(fake_kube_count(&f->api), 1);
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 1);
    assert_int_equal(st.dropped, 3);
    event_recorder_free(r);
}

static void test_repeats_are_not_recorded_again(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 16, NULL);
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    /* a re-apply, then the UPDATE of the controller's annotation: the same warning each time */
    for (int i = 0; i < 5; i++)
        assert_true(post(r, "ns", "p", NULL, "m"));
    assert_true(post(r, "ns", "p", NULL, "another warning"));
    assert_true(post(r, "ns", "other-pod", NULL, "m"));
    event_recorder_stop(r, 1000);
    assert_int_equal(fake_kube_count(&f->api), 3);
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.repeated, 4);
    event_recorder_free(r);
}

static void test_repeats_expire_after_ten_minutes(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 16, NULL);
    assert_true(post(r, "ns", "p", NULL, "m"));
    clock_fake_advance_ms(&f->clk, 10 * 60 * 1000 - 1);
    assert_true(post(r, "ns", "p", NULL, "m")); /* repeat */
    clock_fake_advance_ms(&f->clk, 1);
    assert_true(post(r, "ns", "p", NULL, "m")); /* new again */
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    event_recorder_stop(r, 1000);
    assert_int_equal(fake_kube_count(&f->api), 2);
    event_recorder_free(r);
}

static void test_write_failure_counted(void **state)
{
    struct fixture *f = *state;
    struct event_recorder *r = queued(f, 4, NULL);
    fake_kube_answer(&f->api, 403, 0, "{\"kind\":\"Status\",\"code\":403}");
    assert_int_equal(event_recorder_start(r, f->client), K_OK);
    assert_true(post(r, "ns", "p", NULL, "m"));
    event_recorder_stop(r, 1000);
    assert_int_equal(fake_kube_count(&f->api), 1);
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.created, 0);
    assert_int_equal(st.failed, 1);
    event_recorder_free(r);
}

/* In the queue: repeats take no token, refusals are counted and not remembered. */
static void test_queue_limit(void **state)
{
    struct fixture *f = *state;
    struct event_limit_options o = {.ns_burst = 2, .ns_refill_ms = 10000};
    struct event_recorder *r = queued(f, 16, &o);
    assert_true(post(r, "a", "p", NULL, "m1"));
    assert_true(post(r, "a", "p", NULL, "m1")); /* repeat */
    assert_true(post(r, "a", "p", NULL, "m2"));
    assert_false(post(r, "a", "p", NULL, "m3"));
    struct event_recorder_stats st;
    event_recorder_stats(r, &st);
    assert_int_equal(st.throttled, 1);
    assert_true(post(r, "b", "p", NULL, "m3"));
    /* a refused Event is not remembered as sent: it is queued once a token is back */
    clock_fake_advance_ms(&f->clk, 10000);
    assert_true(post(r, "a", "p", NULL, "m3"));
    event_recorder_stats(r, &st);
    assert_int_equal(st.throttled, 1);
    assert_int_equal(st.repeated, 1);
    assert_int_equal(st.dropped, 0);
    event_recorder_free(r); /* never started: the four queued are dropped */
    assert_int_equal(fake_kube_count(&f->api), 0);
}

static void test_bad_options(void **state)
{
    struct fixture *f = *state;
    assert_null(event_recorder_new(&(struct event_recorder_options){.queue_capacity = 65537}));
    struct event_recorder *r = event_recorder_new(&(struct event_recorder_options){0});
    assert_int_equal(event_recorder_start(r, f->client), K_EINVAL); /* no queue */
    event_recorder_free(r);
    event_recorder_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_repeat_is_aggregated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_reason_or_pod_is_a_new_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_or_vanished_event_is_created_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_uid_is_never_aggregated_and_lru_bounds_memory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_recorder_creates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_burst_and_refill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_global_bucket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_scoped_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_delivers_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_drain_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeats_are_not_recorded_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeats_expire_after_ten_minutes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
