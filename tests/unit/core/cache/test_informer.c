/*
 * Tests for core/cache/informer.c: the list-and-watch loop step by step over a recording fake
 * API (tests/lib/fake_kube.h): the requests it makes, the handler calls, relisting on 410 Gone and
 * the backoff after failures. informer_step() returns the delay, so most tests need no thread;
 * one runs the informer's thread on a fake clock.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache/informer.h"
#include "fake_kube.h"
#include "util/result.h"

/* What the handlers saw, as one line per call: "begin", "up NAME", "rm NAME", "end". */
struct seen {
    char calls[32][64];
    int n, restarts;
    pthread_mutex_t mu; /* for api_errors, which a test may wait for */
    pthread_cond_t cv;
    int api_errors;
    long last_api_status;
};

static void add(struct seen *s, const char *what, json_object *obj)
{
    json_object *meta, *name;
    const char *n = "";
    if (obj && json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "name", &name))
        n = json_object_get_string(name);
    assert_true(s->n < 32);
    snprintf(s->calls[s->n++], sizeof(s->calls[0]), "%s%s%s", what, *n ? " " : "", n);
}

static void on_upsert(void *ctx, json_object *obj)
{
    add(ctx, "up", obj);
}

static void on_remove(void *ctx, json_object *obj)
{
    add(ctx, "rm", obj);
}

static void on_begin(void *ctx)
{
    add(ctx, "begin", NULL);
}

static void on_end(void *ctx)
{
    add(ctx, "end", NULL);
}

static void on_restart(void *ctx, int result)
{
    (void)result;
    ((struct seen *)ctx)->restarts++;
}

static void on_api_error(void *ctx, long status)
{
    struct seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->api_errors++;
    s->last_api_status = status;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

struct fixture {
    struct clock_fake clk; /* the informer's clock; fake_kube_answer_after() moves it */
    struct clock fake;
    struct fake_kube api;
    struct kube_client *client;
    struct seen seen;
    struct informer *inf;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_kube_init(&f->api);
    clock_fake_init(&f->clk, 0);
    f->fake = clock_fake_clock(&f->clk);
    f->api.clock = &f->clk;
    pthread_mutex_init(&f->seen.mu, NULL);
    pthread_cond_init(&f->seen.cv, NULL);
    f->client = fake_kube_client(&f->api);
    struct informer_handlers h = {&f->seen, on_upsert,  on_remove,   on_begin,
                                  on_end,   on_restart, on_api_error};
    struct informer_options o = {.name = "pods",
                                 .path = "/api/v1/pods",
                                 .page_size = 2,
                                 .watch_timeout_seconds = 100,
                                 .clock = &f->fake};
    f->inf = informer_new(&f->api.cfg, &o, &h);
    assert_non_null(f->inf);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    informer_free(f->inf);
    kube_client_free(f->client);
    fake_kube_cleanup(&f->api);
    pthread_cond_destroy(&f->seen.cv);
    pthread_mutex_destroy(&f->seen.mu);
    free(f);
    return 0;
}

static void expect_calls(struct seen *s, const char *const *want, int n)
{
    assert_int_equal(s->n, n);
    for (int i = 0; i < n; i++)
        assert_string_equal(s->calls[i], want[i]);
    s->n = 0;
}

/* A LIST page of pods `names` ("" for none) at resourceVersion rv, with a continue token. */
static void answer_page(struct fake_kube *api, const char *rv, const char *cont, const char *a,
                        const char *b)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"%s\",\"continue\":\"%s\"},"
             "\"items\":[{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"1\"}}%s%s%s]}",
             rv, cont, a, b ? ",{\"metadata\":{\"name\":\"" : "", b ? b : "", b ? "\"}}" : "");
    fake_kube_answer(api, 200, 0, body);
}

static void test_lists_in_pages_then_watches(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "tok", "a", "b");
    answer_page(&f->api, "10", "", "c", NULL);
    assert_false(informer_has_synced(f->inf));
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_true(informer_has_synced(f->inf));
    const char *listed[] = {"begin", "up a", "up b", "up c", "end"};
    expect_calls(&f->seen, listed, 5);
    assert_int_equal(fake_kube_count(&f->api), 2);
    assert_string_equal(fake_kube_request(&f->api, 0)->method, "GET");
    /* the first LIST at resourceVersion 0 (the watch cache); the continue page without it */
    assert_string_equal(fake_kube_request(&f->api, 0)->path,
                        "/api/v1/pods?resourceVersion=0&limit=2");
    assert_string_equal(fake_kube_request(&f->api, 1)->path, "/api/v1/pods?limit=2&continue=tok");
    assert_null(fake_kube_request(&f->api, 1)->body);

    /* The watch resumes from the list's resourceVersion; events reach the handlers. */
    fake_kube_answer(&f->api, 200, 0,
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\","
                     "\"resourceVersion\":\"11\"}}}\n"
                     "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\","
                     "\"resourceVersion\":\"12\"}}}\n"
                     "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
                     "\"15\"}}}\n");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    const char *watched[] = {"up d", "rm a"};
    expect_calls(&f->seen, watched, 2);
    assert_int_equal(f->seen.restarts, 1);
    const char *path = fake_kube_request(&f->api, 2)->path;
    assert_non_null(strstr(path, "/api/v1/pods?watch=1&allowWatchBookmarks=true"));
    assert_non_null(strstr(path, "&resourceVersion=10&timeoutSeconds="));
    int timeout = atoi(strstr(path, "timeoutSeconds=") + strlen("timeoutSeconds="));
    assert_true(timeout >= 90 && timeout <= 110);

    /* The stream ended normally after a minute: watch again from the bookmark's
     * resourceVersion. */
    fake_kube_answer_after(&f->api, 60000, 200, "");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_non_null(strstr(fake_kube_request(&f->api, 3)->path, "&resourceVersion=15&"));
}

static void test_gone_relists(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    f->seen.n = 0;
    /* An ERROR event with 410 after the watch ran a while: the version was compacted away. */
    fake_kube_answer_after(&f->api, 60000, 200,
                           "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                           "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_int_equal(f->seen.n, 0);
    answer_page(&f->api, "20", "", "b", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    /* a full relist, bracketed so the store can sweep what was deleted meanwhile, at the last
     * resourceVersion seen and unpaged (the watch cache serves it, never older than that) */
    const char *relisted[] = {"begin", "up b", "end"};
    expect_calls(&f->seen, relisted, 3);
    assert_string_equal(fake_kube_request(&f->api, 0)->path,
                        "/api/v1/pods?resourceVersion=0&limit=2");
    assert_string_equal(fake_kube_request(&f->api, 2)->path, "/api/v1/pods?resourceVersion=10");
    /* a 410 answer to the watch request itself relists too, after a backoff: the watch did not
     * work at all */
    fake_kube_answer(&f->api, 410, 0, "{\"kind\":\"Status\",\"message\":\"gone\"}");
    int64_t wait = informer_step(f->inf, f->client);
    assert_true(wait >= 400 && wait <= 800);
    answer_page(&f->api, "30", "", "c", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, 4)->path, "/api/v1/pods?resourceVersion=20");
    assert_int_equal(f->seen.api_errors, 0);
}

static void test_failures_back_off(void **state)
{
    struct fixture *f = *state;
    /* list failures: 0.8 s doubling, jittered to [backoff/2, backoff] */
    int64_t backoff = 800;
    for (int i = 0; i < 8; i++) {
        fake_kube_fail(&f->api, K_EIO);
        int64_t wait = informer_step(f->inf, f->client);
        assert_true(wait >= backoff / 2 && wait <= backoff);
        backoff = backoff * 2 > 30000 ? 30000 : backoff * 2;
    }
    assert_int_equal(f->seen.api_errors, 8);
    assert_int_equal(f->seen.last_api_status, 0);
    assert_false(informer_has_synced(f->inf));
    /* an incomplete list never ends with sync_end: nothing is swept */
    for (int i = 0; i < f->seen.n; i++)
        assert_string_equal(f->seen.calls[i], "begin");
    f->seen.n = 0;
    /* a LIST that succeeds does not reset the backoff: the next failure waits 15-30 s */
    answer_page(&f->api, "10", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    fake_kube_fail(&f->api, K_EIO);
    int64_t capped = informer_step(f->inf, f->client);
    assert_true(capped >= 15000 && capped <= 30000);
    /* a watch that ran a while does; then the server's Retry-After wins over a shorter
     * backoff */
    fake_kube_answer_after(&f->api, 60000, 200, "");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    fake_kube_answer(&f->api, 429, 7, "{\"kind\":\"Status\",\"message\":\"slow down\"}");
    assert_int_equal(informer_step(f->inf, f->client), 7000);
    assert_int_equal(f->seen.last_api_status, 429);
    /* after a watch that ran a while the backoff starts again from 0.8 s */
    fake_kube_answer_after(&f->api, 60000, 200, "");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    fake_kube_answer(&f->api, 503, 0, "");
    int64_t wait = informer_step(f->inf, f->client);
    assert_true(wait >= 400 && wait <= 800);
    /* the watch failed, not the list: it resumes from where it was */
    fake_kube_answer_after(&f->api, 60000, 200, "");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_non_null(
        strstr(fake_kube_request(&f->api, fake_kube_count(&f->api) - 1)->path, "watch=1"));
}

/* A watch that ends at once with no event backs off like a failure (client-go's "very short
 * watch"), doubling while it repeats, and is no API error; one that ran a while resets it. */
static void test_short_empty_watch_backs_off(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    int64_t backoff = 800;
    for (int i = 0; i < 6; i++) {
        fake_kube_answer(&f->api, 200, 0, "");
        int64_t wait = informer_step(f->inf, f->client);
        assert_true(wait >= backoff / 2 && wait <= backoff);
        backoff *= 2;
    }
    /* 999 ms is still "very short" */
    fake_kube_answer_after(&f->api, 999, 200, "");
    assert_true(informer_step(f->inf, f->client) > 0);
    assert_int_equal(f->seen.api_errors, 0);
    /* still a watch from the same resourceVersion, never a relist */
    for (size_t i = 1; i < fake_kube_count(&f->api); i++)
        assert_non_null(strstr(fake_kube_request(&f->api, i)->path, "&resourceVersion=10&"));
    /* a bookmark alone shows the stream works */
    fake_kube_answer(&f->api, 200, 0,
                     "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
                     "\"15\"}}}\n");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    /* and after it the next short watch starts from the first backoff again */
    fake_kube_answer(&f->api, 200, 0, "");
    int64_t wait = informer_step(f->inf, f->client);
    assert_true(wait >= 400 && wait <= 800);
    /* a quiet watch that ran its full time is normal */
    fake_kube_answer_after(&f->api, 300000, 200, "");
    assert_int_equal(informer_step(f->inf, f->client), 0);
}

/* Every watch is answered 410 at once and every LIST succeeds: the list+watch cycle backs off,
 * doubling, instead of relisting in a tight loop; the LIST does not reset the backoff. */
static void test_gone_at_once_backs_off(void **state)
{
    struct fixture *f = *state;
    int64_t backoff = 800;
    for (int i = 0; i < 7; i++) {
        answer_page(&f->api, "10", "", "a", NULL);
        assert_int_equal(informer_step(f->inf, f->client), 0);
        fake_kube_answer(&f->api, 200, 0,
                         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                         "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n");
        int64_t wait = informer_step(f->inf, f->client);
        assert_true(wait >= backoff / 2 && wait <= backoff);
        backoff = backoff * 2 > 30000 ? 30000 : backoff * 2;
    }
    /* each 410 leads to a LIST, never a watch from the expired version */
    assert_int_equal(fake_kube_count(&f->api), 14);
    assert_string_equal(fake_kube_request(&f->api, 0)->path,
                        "/api/v1/pods?resourceVersion=0&limit=2");
    for (size_t i = 2; i < 14; i += 2)
        assert_string_equal(fake_kube_request(&f->api, i)->path, "/api/v1/pods?resourceVersion=10");
    assert_int_equal(f->seen.api_errors, 0);
}

/* An API server that restarts: the watch fails while it is down (backing off), then its first
 * answer is 410 (its watch cache starts past our version). That 410 is relisted at once, not after
 * the outage's backoff, and the backoff starts again from 0.8 s. */
static void test_gone_after_outage_relists_at_once(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    int64_t wait = 0;
    for (int i = 0; i < 4; i++) {
        fake_kube_fail(&f->api, K_EIO);
        wait = informer_step(f->inf, f->client);
    }
    assert_true(wait >= 3200); /* the outage's backoff has grown */
    fake_kube_answer(&f->api, 200, 0,
                     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                     "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    answer_page(&f->api, "20", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, fake_kube_count(&f->api) - 1)->path,
                        "/api/v1/pods?resourceVersion=10");
    fake_kube_fail(&f->api, K_EIO);
    wait = informer_step(f->inf, f->client);
    assert_true(wait >= 400 && wait <= 800);
}

/* A watch that ended with 410 after running a while. */
static void expire_watch(struct fixture *f)
{
    fake_kube_answer_after(&f->api, 60000, 200,
                           "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                           "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n");
    assert_int_equal(informer_step(f->inf, f->client), 0);
}

/* The relist at the last resourceVersion is itself refused (410 Expired, or 504 "Too large
 * resource version" from a watch cache behind it): in the same step a LIST of the latest state,
 * paged, as client-go's reflector falls back to resourceVersion="" (isLastSyncResourceVersion-
 * Unavailable); once one succeeded, relists use the last version again. */
static void test_relist_falls_back_to_latest(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    expire_watch(f);
    f->seen.n = 0;
    fake_kube_answer(&f->api, 410, 0,
                     "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410,"
                     "\"message\":\"too old resource version: 10 (25)\"}");
    answer_page(&f->api, "30", "", "b", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, 2)->path, "/api/v1/pods?resourceVersion=10");
    assert_string_equal(fake_kube_request(&f->api, 3)->path, "/api/v1/pods?limit=2");
    const char *calls[] = {"begin", "begin", "up b", "end"};
    expect_calls(&f->seen, calls, 4);
    assert_int_equal(f->seen.api_errors, 0);

    /* back to the last version; now the cache is behind it */
    expire_watch(f);
    fake_kube_answer(&f->api, 504, 0,
                     "{\"kind\":\"Status\",\"reason\":\"Timeout\",\"code\":504,"
                     "\"message\":\"Too large resource version: 30, current: 28\"}");
    answer_page(&f->api, "31", "", "b", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, 5)->path, "/api/v1/pods?resourceVersion=30");
    assert_string_equal(fake_kube_request(&f->api, 6)->path, "/api/v1/pods?limit=2");

    /* another 504 is a server failure like any other: back off */
    expire_watch(f);
    fake_kube_answer(&f->api, 504, 0, "{\"kind\":\"Status\",\"message\":\"timeout\"}");
    assert_true(informer_step(f->inf, f->client) > 0);
    assert_int_equal(fake_kube_count(&f->api), 9);
}

/* A first LIST at "0" that came in pages (no watch cache): relists keep the page size. */
static void test_paginated_first_list_keeps_paging(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "tok", "a", "b");
    answer_page(&f->api, "10", "", "c", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    expire_watch(f);
    answer_page(&f->api, "20", "", "a", NULL);
    assert_int_equal(informer_step(f->inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, 3)->path,
                        "/api/v1/pods?resourceVersion=10&limit=2");
}

/* A continue token that expires between pages: the LIST starts over in one response, and the
 * handlers' marking starts over with it (sync_begin again), so what was deleted meanwhile is
 * swept. */
static void test_expired_continue_starts_over(void **state)
{
    struct fixture *f = *state;
    answer_page(&f->api, "10", "tok", "a", "b");
    fake_kube_answer(&f->api, 410, 0,
                     "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                     "\"message\":\"The provided continue parameter is too old\"}");
    answer_page(&f->api, "12", "", "b", "c");
    assert_int_equal(informer_step(f->inf, f->client), 0);
    const char *calls[] = {"begin", "up a", "up b", "begin", "up b", "up c", "end"};
    expect_calls(&f->seen, calls, 7);
    assert_string_equal(fake_kube_request(&f->api, 1)->path, "/api/v1/pods?limit=2&continue=tok");
    assert_string_equal(fake_kube_request(&f->api, 2)->path, "/api/v1/pods?resourceVersion=0");
    assert_int_equal(f->seen.api_errors, 0);
}

/* A LIST whose continue tokens never end is bounded: past the items or pages bound it fails
 * (no sync_end, so nothing is swept), the informer backs off, and the next try lists again. */
static void test_endless_list_is_bounded(void **state)
{
    struct fixture *f = *state;
    struct informer_handlers h = {&f->seen, on_upsert,  on_remove,   on_begin,
                                  on_end,   on_restart, on_api_error};
    struct informer_options o = {.name = "pods",
                                 .path = "/api/v1/pods",
                                 .page_size = 2,
                                 .clock = &f->fake,
                                 .list_max_items = 3};
    struct informer *inf = informer_new(&f->api.cfg, &o, &h);
    assert_non_null(inf);
    answer_page(&f->api, "10", "again", "a", "b");
    answer_page(&f->api, "10", "again", "c", "d");
    int64_t wait = informer_step(inf, f->client);
    assert_true(wait >= 400 && wait <= 800);
    assert_false(informer_has_synced(inf));
    /* items are upserted as they arrive: the fourth is refused */
    const char *calls[] = {"begin", "up a", "up b", "up c"};
    expect_calls(&f->seen, calls, 4);
    assert_int_equal(f->seen.api_errors, 1);
    assert_int_equal(fake_kube_count(&f->api), 2);
    /* the next step starts a new LIST, still at "0": none has succeeded */
    answer_page(&f->api, "11", "", "a", NULL);
    assert_int_equal(informer_step(inf, f->client), 0);
    assert_string_equal(fake_kube_request(&f->api, 2)->path,
                        "/api/v1/pods?resourceVersion=0&limit=2");
    assert_true(informer_has_synced(inf));
    informer_free(inf);

    /* pages without items count too */
    f->seen.n = 0;
    const char *empty = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"10\","
                        "\"continue\":\"again\"},\"items\":[]}";
    for (int i = 0; i < 3; i++)
        fake_kube_answer(&f->api, 200, 0, empty);
    struct kube_error err;
    size_t pages = 0;
    struct informer_list_options lo = {.page_size = 2, .max_pages = 3, .pages = &pages};
    assert_int_equal(informer_list(f->client, "/api/v1/pods", &lo, &h, NULL, 0, &err), K_ETOOBIG);
    assert_int_equal(err.code, K_ETOOBIG);
    assert_non_null(strstr(err.message, "continue tokens do not end"));
    /* the fourth page is not even asked for */
    assert_int_equal(fake_kube_count(&f->api), 3 + 3);
    assert_int_equal(pages, 3);
    const char *begin_only[] = {"begin"};
    expect_calls(&f->seen, begin_only, 1);
}

/* The informer's own thread, on the fake API and the fake clock. */
static void test_thread_waits_on_its_clock(void **state)
{
    struct fixture *f = *state;
    struct clock_fake clk;
    clock_fake_init(&clk, 0);
    struct clock fake = clock_fake_clock(&clk);
    struct informer_handlers h = {&f->seen, on_upsert,  on_remove,   on_begin,
                                  on_end,   on_restart, on_api_error};
    struct informer_options o = {
        .name = "pods", .path = "/api/v1/pods", .clock = &fake, .transport = &f->api.transport};
    struct informer *inf = informer_new(&f->api.cfg, &o, &h);
    assert_non_null(inf);
    answer_page(&f->api, "10", "", "a", NULL);
    fake_kube_fail(&f->api, K_EIO); /* the first watch fails: back off */
    fake_kube_answer(&f->api, 200, 0,
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\","
                     "\"resourceVersion\":\"11\"}}}\n");
    assert_int_equal(informer_start(inf), K_OK);
    assert_true(informer_wait_synced(inf, NULL));
    /* the watch failed: the thread backs off on a clock that stands still, so no third
     * request comes until the clock moves */
    pthread_mutex_lock(&f->seen.mu);
    while (f->seen.api_errors < 1)
        pthread_cond_wait(&f->seen.cv, &f->seen.mu);
    pthread_mutex_unlock(&f->seen.mu);
    assert_int_equal(fake_kube_count(&f->api), 2);
    clock_fake_advance_ms(&clk, 800); /* the longest first backoff */
    fake_kube_wait(&f->api, 4);       /* the watch that delivers b, then the next one */
    assert_non_null(strstr(fake_kube_request(&f->api, 2)->path, "watch=1"));
    assert_non_null(strstr(fake_kube_request(&f->api, 3)->path, "&resourceVersion=11&"));
    informer_stop(inf); /* wakes the thread wherever it waits; what it did is now visible */
    const char *calls[] = {"begin", "up a", "end", "up b"};
    expect_calls(&f->seen, calls, 4);
    /* the first watch failed; the fourth request ("{}") may have failed too before the stop */
    assert_true(f->seen.api_errors >= 1 && f->seen.api_errors <= 2);
    informer_free(inf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lists_in_pages_then_watches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_relists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_at_once_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_after_outage_relists_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_back_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_empty_watch_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_falls_back_to_latest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paginated_first_list_keeps_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_continue_starts_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endless_list_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_waits_on_its_clock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
