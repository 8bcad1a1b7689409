/* Tests for controller/metrics_auth.c: bearer tokens, TokenReview and SubjectAccessReview through a
 * fake transport, 401/403/429/500, and the decision cache and the review rate limits on a fake
 * clock. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/config.h"
#include "metrics_auth.h"
#include "util/result.h"

/* The API server: tokens "good" (user reader, allowed), "other" (user nobody, denied), "bad"
 * (not authenticated), "boom" (TokenReview fails with 500), "sarfail" (user broken, whose
 * SubjectAccessReview fails with 500). */
struct fake {
    int tokenreviews, sars;
    char last_sar[1024];
    char resp[1024];
};

static int rt(void *ctx, const char *method, const char *path, const char *body, size_t body_len,
              long *status, int *retry_after, const char **resp, size_t *resp_len)
{
    struct fake *f = ctx;
    (void)body_len;
    *retry_after = 0;
    *status = 201;
    assert_string_equal(method, "POST");
    json_object *req = json_tokener_parse(body);
    json_object *spec = json_object_object_get(req, "spec");
    if (strcmp(path, "/apis/authentication.k8s.io/v1/tokenreviews") == 0) {
        f->tokenreviews++;
        const char *tok = json_object_get_string(json_object_object_get(spec, "token"));
        const char *user = strcmp(tok, "good") == 0      ? "reader"
                           : strcmp(tok, "other") == 0   ? "nobody"
                           : strcmp(tok, "sarfail") == 0 ? "broken"
                                                         : NULL;
        if (strcmp(tok, "boom") == 0) {
            *status = 500;
            snprintf(f->resp, sizeof(f->resp), "{\"kind\":\"Status\",\"code\":500}");
        } else if (user) {
            snprintf(f->resp, sizeof(f->resp),
                     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"%s\",\"uid\":"
                     "\"u1\",\"groups\":[\"g1\",\"system:authenticated\"],\"extra\":{\"k\":["
                     "\"v\"]}}}}",
                     user);
        } else {
            snprintf(f->resp, sizeof(f->resp), "{\"status\":{\"authenticated\":false}}");
        }
    } else {
        assert_string_equal(path, "/apis/authorization.k8s.io/v1/subjectaccessreviews");
        f->sars++;
        snprintf(f->last_sar, sizeof(f->last_sar), "%s",
                 json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
        const char *user = json_object_get_string(json_object_object_get(spec, "user"));
        json_object *nra = json_object_object_get(spec, "nonResourceAttributes");
        bool allowed =
            strcmp(user, "reader") == 0 &&
            strcmp(json_object_get_string(json_object_object_get(nra, "path")), "/metrics") == 0 &&
            strcmp(json_object_get_string(json_object_object_get(nra, "verb")), "get") == 0;
        if (strcmp(user, "broken") == 0) {
            *status = 500;
            snprintf(f->resp, sizeof(f->resp), "{\"kind\":\"Status\",\"code\":500}");
        } else {
            snprintf(f->resp, sizeof(f->resp), "{\"status\":{\"allowed\":%s}}",
                     allowed ? "true" : "false");
        }
    }
    json_object_put(req);
    *resp = f->resp;
    *resp_len = strlen(f->resp);
    return K_OK;
}

struct fx {
    struct fake f;
    struct kube_config cfg;
    struct kube_transport tr;
    struct kube_client *client;
    struct clock_fake clk;
    struct clock clock;
    struct metrics_auth *a;
};

static int setup(void **state)
{
    static struct fx x;
    memset(&x, 0, sizeof(x));
    x.cfg.server = "https://k";
    x.tr = (struct kube_transport){.ctx = &x.f, .round_trip = rt};
    x.client = kube_client_new_transport(&x.cfg, &x.tr, "test");
    clock_fake_init(&x.clk, 0);
    x.clock = clock_fake_clock(&x.clk);
    x.a = metrics_auth_new(x.client, &x.clock);
    *state = &x;
    return 0;
}

static int teardown(void **state)
{
    struct fx *x = *state;
    metrics_auth_free(x->a);
    kube_client_free(x->client);
    return 0;
}

static unsigned check(struct fx *x, const char *auth, char *msg)
{
    return metrics_auth_check(x->a, "GET", "/metrics", auth, msg, 256);
}

static void test_no_or_malformed_token(void **state)
{
    struct fx *x = *state;
    char msg[256];
    assert_int_equal(check(x, NULL, msg), 401);
    assert_string_equal(msg, "Unauthorized");
    assert_int_equal(check(x, "Basic dXNlcjpwdw==", msg), 401);
    assert_int_equal(check(x, "Bearer", msg), 401);
    assert_int_equal(check(x, "Bearer ", msg), 401);
    assert_int_equal(check(x, "Bearer  good", msg), 401); /* the token is the empty part */
    assert_int_equal(x->f.tokenreviews, 0);
    assert_int_equal(check(x, "Bearer bad", msg), 401); /* reviewed: not authenticated */
    assert_int_equal(x->f.tokenreviews, 1);
    assert_int_equal(x->f.sars, 0);
}

static void test_allowed_and_cached(void **state)
{
    struct fx *x = *state;
    char msg[256];
    assert_int_equal(check(x, "Bearer good", msg), 0);
    assert_int_equal(x->f.tokenreviews, 1);
    assert_int_equal(x->f.sars, 1);
    /* the SubjectAccessReview carries the user's identity and the non-resource URL */
    assert_non_null(strstr(x->f.last_sar, "\"user\":\"reader\""));
    assert_non_null(strstr(x->f.last_sar, "\"uid\":\"u1\""));
    assert_non_null(strstr(x->f.last_sar, "\"groups\":[\"g1\",\"system:authenticated\"]"));
    assert_non_null(strstr(x->f.last_sar, "\"extra\":{\"k\":[\"v\"]}"));
    assert_non_null(strstr(x->f.last_sar, "\"nonResourceAttributes\":{\"path\":\"/metrics\","
                                          "\"verb\":\"get\"}"));
    /* the scheme in any case, a third part ignored, as the API server reads it: same token */
    assert_int_equal(check(x, "bearer good extra", msg), 0);
    clock_fake_advance_ms(&x->clk, METRICS_AUTH_ALLOW_TTL_MS - 1);
    assert_int_equal(check(x, "Bearer good", msg), 0);
    assert_int_equal(x->f.tokenreviews, 1);
    clock_fake_advance_ms(&x->clk, 1);
    assert_int_equal(check(x, "Bearer good", msg), 0);
    assert_int_equal(x->f.tokenreviews, 2);
    assert_int_equal(x->f.sars, 2);
    assert_int_equal(metrics_auth_reviews(x->a), 4);
}

static void test_denied(void **state)
{
    struct fx *x = *state;
    char msg[256];
    assert_int_equal(check(x, "Bearer other", msg), 403);
    assert_string_equal(msg, "Authorization denied for user nobody");
    assert_int_equal(check(x, "Bearer other", msg), 403);
    assert_string_equal(msg, "Authorization denied for user nobody");
    assert_int_equal(x->f.sars, 1);
    clock_fake_advance_ms(&x->clk, METRICS_AUTH_DENY_TTL_MS);
    assert_int_equal(check(x, "Bearer other", msg), 403);
    assert_int_equal(x->f.sars, 2);
    /* another verb or path is another decision */
    assert_int_equal(metrics_auth_check(x->a, "GET", "/other", "Bearer good", msg, sizeof(msg)),
                     403);
}

static void test_failures_not_cached(void **state)
{
    struct fx *x = *state;
    char msg[256];
    assert_int_equal(check(x, "Bearer boom", msg), 401);
    assert_string_equal(msg, "Authentication failed");
    assert_int_equal(check(x, "Bearer boom", msg), 401);
    assert_int_equal(x->f.tokenreviews, 2);
    assert_int_equal(check(x, "Bearer sarfail", msg), 500);
    assert_string_equal(msg, "Authorization for user broken failed");
    assert_int_equal(check(x, "Bearer sarfail", msg), 500);
    assert_int_equal(x->f.sars, 2);
}

static void test_cache_bound(void **state)
{
    struct fx *x = *state;
    char msg[256], auth[64];
    assert_int_equal(check(x, "Bearer good", msg), 0);
    /* more distinct tokens than the cache holds, at the rate the review budget allows: every one
     * is decided, the cache stays bounded, and the reader's allowed entry stays */
    for (int i = 0; i < METRICS_AUTH_CACHE + 10; i++) {
        snprintf(auth, sizeof(auth), "Bearer nope-%d", i);
        assert_int_equal(check(x, auth, msg), 401);
        clock_fake_advance_ms(&x->clk, METRICS_AUTH_REFILL_MS);
    }
    assert_true((METRICS_AUTH_CACHE + 10) * METRICS_AUTH_REFILL_MS < METRICS_AUTH_ALLOW_TTL_MS);
    assert_int_equal(x->f.tokenreviews, 1 + METRICS_AUTH_CACHE + 10);
    assert_int_equal(check(x, "Bearer good", msg), 0);
    assert_int_equal(x->f.sars, 1);
    /* the first of them was pushed out: reviewed again */
    assert_int_equal(check(x, "Bearer nope-0", msg), 401);
    assert_int_equal(x->f.tokenreviews, 2 + METRICS_AUTH_CACHE + 10);
}

static unsigned check_from(struct fx *x, const char *client, const char *auth, char *msg)
{
    return metrics_auth_check_client(x->a, client, "GET", "/metrics", auth, msg, 256);
}

/* Each client may cause METRICS_AUTH_CLIENT_BURST reviews at once, then one every
 * METRICS_AUTH_CLIENT_REFILL_MS; cached decisions cost nothing. */
static void test_rate_limit_per_client(void **state)
{
    struct fx *x = *state;
    char msg[256], auth[64];
    for (int i = 0; i < METRICS_AUTH_CLIENT_BURST; i++) {
        snprintf(auth, sizeof(auth), "Bearer bogus-%d", i);
        assert_int_equal(check_from(x, "10.0.0.1", auth, msg), 401);
    }
    assert_int_equal(check_from(x, "10.0.0.1", "Bearer bogus-x", msg), 429);
    assert_string_equal(msg, "Too many token reviews, try again later");
    assert_int_equal(x->f.tokenreviews, METRICS_AUTH_CLIENT_BURST);
    assert_int_equal(check_from(x, "10.0.0.1", "Bearer bogus-0", msg), 401); /* cached */
    assert_int_equal(check_from(x, "10.0.0.2", "Bearer bogus-x", msg), 401); /* its own bucket */
    clock_fake_advance_ms(&x->clk, METRICS_AUTH_CLIENT_REFILL_MS - 1);
    assert_int_equal(check_from(x, "10.0.0.1", "Bearer bogus-y", msg), 429);
    clock_fake_advance_ms(&x->clk, 1);
    assert_int_equal(check_from(x, "10.0.0.1", "Bearer bogus-y", msg), 401);
    assert_int_equal(check_from(x, "10.0.0.1", "Bearer bogus-z", msg), 429);
    assert_int_equal(x->f.tokenreviews, METRICS_AUTH_CLIENT_BURST + 2);
    assert_int_equal(metrics_auth_reviews(x->a), METRICS_AUTH_CLIENT_BURST + 2);
}

/* All clients together cause at most METRICS_AUTH_BURST reviews at once, however many addresses
 * they come from. */
static void test_rate_limit_all_clients(void **state)
{
    struct fx *x = *state;
    char msg[256], auth[64], client[32];
    for (int i = 0; i < METRICS_AUTH_BURST; i++) {
        snprintf(auth, sizeof(auth), "Bearer bogus-%d", i);
        snprintf(client, sizeof(client), "10.0.1.%d", i);
        assert_int_equal(check_from(x, client, auth, msg), 401);
    }
    assert_int_equal(check_from(x, "10.0.2.1", "Bearer bogus-x", msg), 429);
    assert_int_equal(check(x, "Bearer bogus-x", msg), 429);
    assert_int_equal(x->f.tokenreviews, METRICS_AUTH_BURST);
    clock_fake_advance_ms(&x->clk, METRICS_AUTH_REFILL_MS);
    assert_int_equal(check_from(x, "10.0.2.1", "Bearer bogus-x", msg), 401);
}

/* A reader allowed before is reviewed again when its decision expires, even with its client's
 * and every bucket empty: a flood does not cost it a scrape. */
static void test_known_reader_not_limited(void **state)
{
    struct fx *x = *state;
    char msg[256], auth[64], client[32];
    assert_int_equal(check_from(x, "10.0.0.9", "Bearer good", msg), 0);
    clock_fake_advance_ms(&x->clk, METRICS_AUTH_ALLOW_TTL_MS);
    int i = 0;
    for (; i < METRICS_AUTH_CLIENT_BURST; i++) { /* the reader's address */
        snprintf(auth, sizeof(auth), "Bearer bogus-%d", i);
        assert_int_equal(check_from(x, "10.0.0.9", auth, msg), 401);
    }
    for (; i < METRICS_AUTH_BURST; i++) { /* and others: the budget of all is spent too */
        snprintf(auth, sizeof(auth), "Bearer bogus-%d", i);
        snprintf(client, sizeof(client), "10.0.1.%d", i);
        assert_int_equal(check_from(x, client, auth, msg), 401);
    }
    assert_int_equal(check_from(x, "10.0.0.9", "Bearer bogus-x", msg), 429);
    assert_int_equal(check_from(x, "10.0.3.1", "Bearer bogus-x", msg), 429);
    assert_int_equal(check_from(x, "10.0.0.9", "Bearer good", msg), 0);
    assert_int_equal(x->f.sars, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_or_malformed_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allowed_and_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_denied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_not_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_per_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_all_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_known_reader_not_limited, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
