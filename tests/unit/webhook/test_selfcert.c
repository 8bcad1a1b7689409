/*
 * test_selfcert.c - webhook/selfcert.c against the recording fake API server
 * (tests/lib/fake_kube.h) on a fake clock: the first start creates the Secret and fills the
 * caBundle; a replica that loses the create (409) serves the winner's pair; a CA rotation keeps
 * the old CA in the bundle and serves a certificate of the new CA only once the caBundle has had
 * it for the settle time; a serving certificate is renewed at 2/3 of its lifetime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake_kube.h"
#include "http/tls_source.h"
#include "pki/certgen.h"
#include "selfcert.h"
#include "util/result.h"

#define NS "gputri"
#define SECRET_PATH "/api/v1/namespaces/gputri/secrets/gputri-webhook-tls"
#define SECRETS_PATH "/api/v1/namespaces/gputri/secrets"
#define VWC_PATH "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/gputri"
#define HOST "gputri-webhook.gputri.svc"
#define NOT_FOUND                                                                                  \
    "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}"
#define CONFLICT "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\",\"code\":409}"
#define T0_MS 1796000000000LL /* 2026-11-30 */

struct fixture {
    struct fake_kube fake;
    struct clock_fake clk;
    struct clock clock;
    struct tls_source *tls;
    struct selfcert *sc;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    char err[256];
    fake_kube_init(&fx->fake);
    clock_fake_init(&fx->clk, T0_MS);
    fx->clock = clock_fake_clock(&fx->clk);
    const char *names[] = {HOST};
    assert_int_equal(tls_source_new_self_signed(HOST, names, 1, &fx->tls, err, sizeof(err)), K_OK);
    struct selfcert_options o = {
        .secret_namespace = NS,
        .secret_name = "gputri-webhook-tls",
        .webhook_configuration = "gputri",
        .service = "gputri-webhook",
        .ca_validity_s = 300,
        .cert_validity_s = 240,
        .clock = &fx->clock,
    };
    assert_int_equal(
        selfcert_new(&o, fake_kube_client(&fx->fake), fx->tls, &fx->sc, err, sizeof(err)), K_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    selfcert_free(fx->sc);
    tls_source_free(fx->tls);
    fake_kube_cleanup(&fx->fake);
    free(fx);
    return 0;
}

/* A ValidatingWebhookConfiguration with two webhooks and caBundle b64 (NULL: none). */
static char *vwc_json(const char *b64)
{
    char *s = NULL;
    const char *cc = b64 ? "\"caBundle\":\"" : "";
    const char *end = b64 ? "\"" : "";
    if (!b64)
        b64 = "";
    assert_true(asprintf(&s,
                         "{\"metadata\":{\"name\":\"gputri\",\"resourceVersion\":\"7\"},"
                         "\"webhooks\":[{\"name\":\"a.gputri.io\",\"clientConfig\":{%s%s%s}},"
                         "{\"name\":\"b.gputri.io\",\"clientConfig\":{%s%s%s}}]}",
                         cc, b64, end, cc, b64, end) > 0);
    return s;
}

static void answer_vwc(struct fake_kube *f, const char *b64)
{
    char *v = vwc_json(b64);
    fake_kube_answer(f, 200, 0, v);
    free(v);
}

/* Secret data key `k` of a request body, decoded (free() it). */
static char *data_pem(json_object *secret, const char *k)
{
    json_object *data, *v;
    char *out;
    size_t len;
    assert_true(json_object_object_get_ex(secret, "data", &data));
    assert_true(json_object_object_get_ex(data, k, &v));
    assert_int_equal(certgen_unbase64(json_object_get_string(v), &out, &len), K_OK);
    return out;
}

static size_t n_certs(const char *pem)
{
    size_t n = 0;
    for (const char *p = pem; (p = strstr(p, "BEGIN CERTIFICATE")); p++)
        n++;
    return n;
}

static void assert_request(struct fake_kube *f, size_t i, const char *method, const char *path)
{
    const struct fake_request *r = fake_kube_request(f, i);
    assert_string_equal(r->method, method);
    assert_string_equal(r->path, path);
}

/* The Secret a request body held, as the API server would answer a GET (resourceVersion rv). */
static char *as_stored(json_object *body, const char *rv)
{
    json_object *copy = NULL, *meta;
    assert_int_equal(json_object_deep_copy(body, &copy, NULL), 0);
    assert_true(json_object_object_get_ex(copy, "metadata", &meta));
    json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
    char *s = strdup(json_object_to_json_string(copy));
    json_object_put(copy);
    return s;
}

static char *b64(const char *pem)
{
    char *out;
    assert_int_equal(certgen_base64(pem, strlen(pem), &out), K_OK);
    return out;
}

/* A Secret a request wrote: its body, as the API server would answer a GET of it, and the
 * PEMs the tests look at. */
struct written {
    json_object *body;
    char *stored, *ca, *crt, *ca64;
};

static void written_at(struct fake_kube *f, size_t i, const char *rv, struct written *w)
{
    w->body = fake_kube_body_json(f, i);
    w->stored = as_stored(w->body, rv);
    w->ca = data_pem(w->body, "ca.crt");
    w->crt = data_pem(w->body, "tls.crt");
    w->ca64 = b64(w->ca);
}

static void written_cleanup(struct written *w)
{
    json_object_put(w->body);
    free(w->stored);
    free(w->ca);
    free(w->crt);
    free(w->ca64);
}

/* Script a pass that finds caBundle ca64 and Secret `stored`, and rewrites the Secret (the PUT
 * answered with resourceVersion rv). */
static void answer_rewrite(struct fake_kube *f, const char *ca64, const char *stored,
                           const char *rv)
{
    char put[64];
    snprintf(put, sizeof(put), "{\"metadata\":{\"resourceVersion\":\"%s\"}}", rv);
    answer_vwc(f, ca64);
    fake_kube_answer(f, 200, 0, stored);
    fake_kube_answer(f, 200, 0, put);
}

/* the first pass's next look: at the serving certificate's rotation point, 2/3 into its lifetime
 * (240 s, backdated 60 s: 200 s after notBefore, 140 s from now, plus a second) */
#define FIRST_NEXT_MS 141000

/* First start: no Secret, no caBundle; *w is what was created (resourceVersion "5"). */
static void first_pass(struct fixture *fx, struct written *w)
{
    int64_t next;
    answer_vwc(&fx->fake, NULL);                    /* GET webhook configuration */
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND); /* GET Secret */
    fake_kube_answer(&fx->fake, 201, 0, "{\"metadata\":{\"resourceVersion\":\"5\"}}"); /* POST */
    answer_vwc(&fx->fake, NULL);               /* publish: GET */
    fake_kube_answer(&fx->fake, 200, 0, "{}"); /* publish: PATCH */
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_int_equal(fake_kube_count(&fx->fake), 5);
    assert_request(&fx->fake, 0, "GET", VWC_PATH);
    assert_request(&fx->fake, 1, "GET", SECRET_PATH);
    assert_request(&fx->fake, 2, "POST", SECRETS_PATH);
    assert_request(&fx->fake, 3, "GET", VWC_PATH);
    assert_request(&fx->fake, 4, "PATCH", VWC_PATH);
    written_at(&fx->fake, 2, "5", w);
    assert_int_equal(next, FIRST_NEXT_MS);
}

static void test_creates_secret_and_ca_bundle(void **state)
{
    struct fixture *fx = *state;
    struct written w;
    assert_false(selfcert_ready(fx->sc));
    first_pass(fx, &w);
    char *key = data_pem(w.body, "tls.key"), *cakey = data_pem(w.body, "ca.key");
    char err[256];
    json_object *t;
    assert_true(json_object_object_get_ex(w.body, "type", &t));
    assert_string_equal(json_object_get_string(t), "kubernetes.io/tls");
    assert_int_equal(n_certs(w.ca), 1);
    assert_int_equal(certgen_verify(w.ca, w.crt, HOST, T0_MS / 1000, err, sizeof(err)), K_OK);
    assert_int_equal(certgen_key_matches(w.crt, key), K_OK);
    assert_int_equal(certgen_key_matches(w.ca, cakey), K_OK);
    /* the caBundle of every webhook is base64(ca.crt), sent with the resourceVersion read */
    json_object *patch = fake_kube_body_json(&fx->fake, 4), *hooks, *cc, *v, *meta;
    assert_true(json_object_object_get_ex(patch, "webhooks", &hooks));
    assert_int_equal(json_object_array_length(hooks), 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(
            json_object_object_get_ex(json_object_array_get_idx(hooks, i), "clientConfig", &cc));
        assert_true(json_object_object_get_ex(cc, "caBundle", &v));
        assert_string_equal(json_object_get_string(v), w.ca64);
    }
    assert_true(json_object_object_get_ex(patch, "metadata", &meta));
    assert_true(json_object_object_get_ex(meta, "resourceVersion", &v));
    assert_string_equal(json_object_get_string(v), "7");
    assert_true(selfcert_ready(fx->sc));
    assert_int_equal(tls_source_generation(fx->tls), 2); /* self-signed, then the Secret's */
    struct selfcert_stats st;
    selfcert_stats(fx->sc, &st);
    assert_int_equal(st.created, 1);
    assert_int_equal(st.bundles, 1);
    assert_int_equal(st.conflicts, 0);
    json_object_put(patch);
    free(key);
    free(cakey);
    written_cleanup(&w);
}

/* Another replica created the Secret first: 409 on the POST, read, serve the winner's pair. */
static void test_lost_create_serves_the_winners_pair(void **state)
{
    struct fixture *fx = *state;
    struct written w;
    first_pass(fx, &w); /* the "winner": what this fixture wrote once */
    struct selfcert *other;
    char err[256];
    int64_t next;
    const char *names[] = {HOST};
    struct tls_source *tls;
    struct fake_kube f2;
    fake_kube_init(&f2);
    assert_int_equal(tls_source_new_self_signed(HOST, names, 1, &tls, err, sizeof(err)), K_OK);
    struct selfcert_options o = {.secret_namespace = NS,
                                 .secret_name = "gputri-webhook-tls",
                                 .webhook_configuration = "gputri",
                                 .service = "gputri-webhook",
                                 .clock = &fx->clock};
    assert_int_equal(selfcert_new(&o, fake_kube_client(&f2), tls, &other, err, sizeof(err)), K_OK);
    answer_vwc(&f2, w.ca64);                  /* the winner published already */
    fake_kube_answer(&f2, 404, 0, NOT_FOUND); /* GET Secret: not yet */
    fake_kube_answer(&f2, 409, 0, CONFLICT);  /* POST: AlreadyExists */
    fake_kube_answer(&f2, 200, 0, w.stored);  /* GET Secret again */
    assert_int_equal(selfcert_reconcile(other, &next), K_OK);
    assert_int_equal(fake_kube_count(&f2), 4); /* nothing else written: caBundle already right */
    assert_request(&f2, 3, "GET", SECRET_PATH);
    assert_true(selfcert_ready(other));
    struct selfcert_stats st;
    selfcert_stats(other, &st);
    assert_int_equal(st.conflicts, 1);
    assert_int_equal(st.created, 0);
    assert_int_equal(st.bundles, 0);
    selfcert_free(other);
    tls_source_free(tls);
    fake_kube_cleanup(&f2);
    written_cleanup(&w);
}

/* The CA at 2/3 of its lifetime: a new CA first in the bundle, the old one kept; the serving
 * certificate switches to the new CA only after the caBundle had it for the settle time. */
static void test_ca_rotation_keeps_old_ca_until_settled(void **state)
{
    struct fixture *fx = *state;
    struct written w, ca_rot, leaf_rot;
    int64_t next;
    char err[256];
    first_pass(fx, &w);
    size_t n0 = fake_kube_count(&fx->fake);

    /* CA: 300 s backdated 60 s (a quarter of the shorter lifetime) -> rotation 240 s after
     * notBefore, 180 s from T0; the serving certificate is valid until T0 + 240 */
    clock_fake_advance_ms(&fx->clk, 181 * 1000);
    answer_rewrite(&fx->fake, w.ca64, w.stored, "6");
    answer_vwc(&fx->fake, w.ca64);             /* publish: GET */
    fake_kube_answer(&fx->fake, 200, 0, "{}"); /* publish: PATCH */
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_request(&fx->fake, n0 + 2, "PUT", SECRET_PATH);
    assert_request(&fx->fake, n0 + 4, "PATCH", VWC_PATH);
    written_at(&fx->fake, n0 + 2, "6", &ca_rot);
    char *first = NULL;
    assert_int_equal(n_certs(ca_rot.ca), 2);
    assert_non_null(strstr(ca_rot.ca, w.ca)); /* the old CA stays, second */
    assert_int_equal(certgen_first_pem(ca_rot.ca, &first), K_OK);
    assert_string_not_equal(first, w.ca);
    assert_string_equal(ca_rot.crt, w.crt); /* not yet: the API server does not know the new CA */
    assert_int_equal(next, SELFCERT_SETTLE_MS);
    assert_true(selfcert_ready(fx->sc)); /* the old pair, trusted through the old CA */
    struct selfcert_stats st;
    selfcert_stats(fx->sc, &st);
    assert_int_equal(st.ca, 1);

    /* after the settle time: a serving certificate of the new CA */
    size_t n1 = fake_kube_count(&fx->fake);
    clock_fake_advance_ms(&fx->clk, SELFCERT_SETTLE_MS);
    answer_rewrite(&fx->fake, ca_rot.ca64, ca_rot.stored, "8");
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_int_equal(fake_kube_count(&fx->fake), n1 + 3); /* the caBundle was right already */
    written_at(&fx->fake, n1 + 2, "8", &leaf_rot);
    time_t now = (time_t)(T0_MS / 1000 + 186);
    assert_int_equal(certgen_verify(first, leaf_rot.crt, HOST, now, err, sizeof(err)), K_OK);
    assert_int_not_equal(certgen_verify(w.ca, leaf_rot.crt, HOST, now, err, sizeof(err)), K_OK);
    assert_string_equal(leaf_rot.ca, ca_rot.ca);
    assert_true(selfcert_ready(fx->sc));
    selfcert_stats(fx->sc, &st);
    assert_int_equal(st.serving, 2);
    free(first);
    written_cleanup(&leaf_rot);
    written_cleanup(&ca_rot);
    written_cleanup(&w);
}

/* The serving certificate at 2/3 of its lifetime: a new one from the same CA. */
static void test_serving_rotation(void **state)
{
    struct fixture *fx = *state;
    struct written w, rot;
    int64_t next;
    char err[256];
    first_pass(fx, &w);
    size_t n0 = fake_kube_count(&fx->fake);
    unsigned long gen = tls_source_generation(fx->tls);
    clock_fake_advance_ms(&fx->clk, FIRST_NEXT_MS);
    answer_rewrite(&fx->fake, w.ca64, w.stored, "6");
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_int_equal(fake_kube_count(&fx->fake), n0 + 3);
    written_at(&fx->fake, n0 + 2, "6", &rot);
    assert_string_not_equal(rot.crt, w.crt);
    assert_string_equal(rot.ca, w.ca);
    assert_int_equal(
        certgen_verify(w.ca, rot.crt, HOST, (time_t)(T0_MS / 1000 + 141), err, sizeof(err)), K_OK);
    assert_int_equal(tls_source_generation(fx->tls), gen + 1);
    written_cleanup(&rot);
    written_cleanup(&w);
}

/* No webhook configuration yet (installed after the webhook started): the Secret is made and
 * served, but not ready; looked at again after retry_ms. */
static void test_missing_configuration_not_ready(void **state)
{
    struct fixture *fx = *state;
    int64_t next;
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND);
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND);
    fake_kube_answer(&fx->fake, 201, 0, "{\"metadata\":{\"resourceVersion\":\"1\"}}");
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_int_equal(fake_kube_count(&fx->fake), 3);
    assert_false(selfcert_ready(fx->sc));
    assert_int_equal(next, SELFCERT_RETRY_MS);
}

/* A Secret someone else wrote whose ca.crt cannot sign (a serving certificate with its key, put
 * there by hand or by another tool): no serving certificate it signs ever verifies, so a new CA
 * is made, in one write, not a new serving certificate on every attempt of every pass. */
static void test_ca_that_cannot_sign_is_replaced(void **state)
{
    struct fixture *fx = *state;
    char err[256];
    struct certgen_options o;
    certgen_options_init(&o);
    o.now = (time_t)(T0_MS / 1000);
    o.service = "gputri-webhook";
    o.namespace_name = NS;
    struct certgen_bundle leaf;
    assert_int_equal(certgen_generate(&o, &leaf, err, sizeof(err)), K_OK);
    /* the serving certificate as ca.crt (certgen refuses to sign with it) and as tls.crt */
    char *crt64 = b64(leaf.tls_cert_pem), *key64 = b64(leaf.tls_key_pem), *secret;
    assert_true(
        asprintf(&secret,
                 "{\"metadata\":{\"name\":\"gputri-webhook-tls\",\"namespace\":\"gputri\","
                 "\"resourceVersion\":\"3\"},\"type\":\"kubernetes.io/tls\",\"data\":{"
                 "\"ca.crt\":\"%s\",\"ca.key\":\"%s\",\"tls.crt\":\"%s\",\"tls.key\":\"%s\"}}",
                 crt64, key64, crt64, key64) > 0);
    answer_vwc(&fx->fake, crt64);                /* GET webhook configuration */
    fake_kube_answer(&fx->fake, 200, 0, secret); /* GET Secret */
    fake_kube_answer(&fx->fake, 200, 0, "{\"metadata\":{\"resourceVersion\":\"4\"}}"); /* PUT */
    answer_vwc(&fx->fake, crt64);              /* publish: GET */
    fake_kube_answer(&fx->fake, 200, 0, "{}"); /* publish: PATCH */
    int64_t next;
    assert_int_equal(selfcert_reconcile(fx->sc, &next), K_OK);
    assert_request(&fx->fake, 2, "PUT", SECRET_PATH);
    struct written w;
    written_at(&fx->fake, 2, "4", &w);
    assert_int_equal(certgen_verify(w.ca, w.crt, HOST, T0_MS / 1000, err, sizeof(err)), K_OK);
    assert_true(selfcert_ready(fx->sc));
    written_cleanup(&w);
    free(secret);
    free(crt64);
    free(key64);
    certgen_bundle_cleanup(&leaf);
}

static void test_options_refused(void **state)
{
    (void)state;
    struct selfcert *sc = NULL;
    char err[256];
    struct fake_kube f;
    fake_kube_init(&f);
    struct selfcert_options o = {.secret_namespace = NS,
                                 .secret_name = "gputri-webhook-tls",
                                 .webhook_configuration = "gputri",
                                 .service = "gputri-webhook",
                                 .cert_validity_s = 30};
    assert_int_equal(selfcert_new(&o, fake_kube_client(&f), NULL, &sc, err, sizeof(err)), K_EINVAL);
    assert_null(sc);
    o.cert_validity_s = 0;
    o.service = "Bad_Name";
    assert_int_equal(selfcert_new(&o, fake_kube_client(&f), NULL, &sc, err, sizeof(err)), K_EINVAL);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_creates_secret_and_ca_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_create_serves_the_winners_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_rotation_keeps_old_ca_until_settled, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_serving_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_configuration_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_that_cannot_sign_is_replaced, setup, teardown),
        cmocka_unit_test(test_options_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
