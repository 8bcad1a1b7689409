/*
 * test_publish.c - the webhook's TLS Secret and caBundle put into the cluster (core/pki/publish.c),
 * against the recording fake API server (tests/lib/fake_kube.h): which requests go out, what
 * their bodies hold, and how 404, 409 and a Secret of another type are met.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake_kube.h"
#include "pki/publish.h"
#include "util/result.h"

#define SECRET_PATH "/api/v1/namespaces/gputri-system/secrets/gputri-webhook-tls"
#define VWC_PATH                                                                                   \
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/gputri-webhook"
#define NOT_FOUND                                                                                  \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"not "         \
    "found\",\"reason\":\"NotFound\",\"code\":404}"
#define CONFLICT                                                                                   \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"the object "  \
    "has been modified\",\"reason\":\"Conflict\",\"code\":409}"

/* PEM stand-ins: publish only base64-encodes them ("CERT" -> "Q0VSVA==" and so on). */
static struct certgen_bundle bundle = {
    .ca_cert_pem = "CA", .tls_cert_pem = "CERT", .tls_key_pem = "KEY"};

struct fixture {
    struct fake_kube fake;
    struct kube_client *client;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    fake_kube_init(&fx->fake);
    fx->client = fake_kube_client(&fx->fake);
    *state = fx;
    return fx->client ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    kube_client_free(fx->client);
    fake_kube_cleanup(&fx->fake);
    free(fx);
    return 0;
}

static const char *str_at(json_object *o, const char *a, const char *b)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, a, &v))
        return NULL;
    if (b && !json_object_object_get_ex(v, b, &v))
        return NULL;
    return json_object_get_string(v);
}

static void assert_tls_data(json_object *o)
{
    assert_string_equal(str_at(o, "data", "tls.crt"), "Q0VSVA==");
    assert_string_equal(str_at(o, "data", "tls.key"), "S0VZ");
    assert_string_equal(str_at(o, "data", "ca.crt"), "Q0E=");
}

/* The Secret gputri-system/gputri-webhook-tls from `bundle`. */
static int put_secret(struct fixture *fx, bool *created, struct kube_error *err)
{
    return publish_tls_secret(fx->client, "gputri-system", "gputri-webhook-tls", &bundle, created,
                              err);
}

/* No Secret yet: GET 404, then POST of a kubernetes.io/tls Secret with our labels. */
static void test_secret_created(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND);
    fake_kube_answer(&fx->fake, 201, 0, "{}");
    bool created = false;
    struct kube_error err = {0};
    assert_int_equal(put_secret(fx, &created, &err), K_OK);
    assert_true(created);
    assert_int_equal(fake_kube_count(&fx->fake), 2);
    assert_string_equal(fake_kube_request(&fx->fake, 0)->method, "GET");
    assert_string_equal(fake_kube_request(&fx->fake, 0)->path, SECRET_PATH);
    const struct fake_request *post = fake_kube_request(&fx->fake, 1);
    assert_string_equal(post->method, "POST");
    assert_string_equal(post->path, "/api/v1/namespaces/gputri-system/secrets");
    json_object *o = fake_kube_body_json(&fx->fake, 1);
    assert_string_equal(str_at(o, "kind", NULL), "Secret");
    assert_string_equal(str_at(o, "type", NULL), "kubernetes.io/tls");
    assert_string_equal(str_at(o, "metadata", "name"), "gputri-webhook-tls");
    assert_string_equal(str_at(o, "metadata", "namespace"), "gputri-system");
    json_object *labels = NULL;
    assert_true(
        json_object_object_get_ex(json_object_object_get(o, "metadata"), "labels", &labels));
    assert_string_equal(str_at(labels, "app.kubernetes.io/managed-by", NULL), "gputri-certs");
    assert_tls_data(o);
    json_object_put(o);
}

/* An existing TLS Secret gets a merge patch of the three keys only. */
static void test_secret_patched(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0,
                     "{\"kind\":\"Secret\",\"type\":\"kubernetes.io/tls\",\"data\":{\"other\":"
                     "\"eA==\"}}");
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    bool created = true;
    struct kube_error err = {0};
    assert_int_equal(put_secret(fx, &created, &err), K_OK);
    assert_false(created);
    assert_int_equal(fake_kube_count(&fx->fake), 2);
    const struct fake_request *p = fake_kube_request(&fx->fake, 1);
    assert_string_equal(p->method, "PATCH");
    assert_string_equal(p->path, SECRET_PATH);
    json_object *o = fake_kube_body_json(&fx->fake, 1);
    assert_tls_data(o);
    assert_int_equal(json_object_object_length(o), 1); /* data alone: metadata stays */
    assert_int_equal(json_object_object_length(json_object_object_get(o, "data")), 3);
    json_object_put(o);
}

/* Created by someone else between our GET and POST: read it again and patch it. */
static void test_secret_create_race(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND);
    fake_kube_answer(&fx->fake, 409, 0,
                     "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"AlreadyExists\","
                     "\"code\":409}");
    fake_kube_answer(&fx->fake, 200, 0, "{\"type\":\"kubernetes.io/tls\"}");
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    bool created = true;
    struct kube_error err = {0};
    assert_int_equal(put_secret(fx, &created, &err), K_OK);
    assert_false(created);
    assert_int_equal(fake_kube_count(&fx->fake), 4);
    assert_string_equal(fake_kube_request(&fx->fake, 2)->method, "GET");
    assert_string_equal(fake_kube_request(&fx->fake, 3)->method, "PATCH");
}

/* A Secret of another type (no type is Opaque) cannot become a TLS one: nothing is written. */
static void test_secret_of_other_type(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0, "{\"kind\":\"Secret\"}");
    bool created = true;
    struct kube_error err = {0};
    assert_int_equal(put_secret(fx, &created, &err), K_EINVAL);
    assert_false(created);
    assert_int_equal(err.code, K_EINVAL);
    assert_string_equal(err.message, "secret gputri-webhook-tls has type Opaque, not "
                                     "kubernetes.io/tls; delete it first");
    assert_int_equal(fake_kube_count(&fx->fake), 1);
}

/* The API server's refusal is handed back with its status; a name too long sends nothing. */
static void test_secret_errors(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 403, 0,
                     "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"secrets is "
                     "forbidden\",\"reason\":\"Forbidden\",\"code\":403}");
    bool created;
    struct kube_error err = {0};
    assert_int_equal(put_secret(fx, &created, &err), K_EFORBIDDEN);
    assert_int_equal(err.http_status, 403);
    assert_non_null(strstr(err.message, "secrets is forbidden"));

    char long_name[400];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(publish_tls_secret(fx->client, "ns", long_name, &bundle, &created, &err),
                     K_EINVAL);
    assert_int_equal(fake_kube_count(&fx->fake), 1);
}

#define VWC_TWO_HOOKS                                                                              \
    "{\"metadata\":{\"name\":\"gputri-webhook\",\"resourceVersion\":\"41\"},\"webhooks\":["        \
    "{\"name\":\"a.gputri.io\",\"clientConfig\":{\"service\":{\"name\":\"s\"},\"caBundle\":"       \
    "\"b2xk\"},\"sideEffects\":\"None\"},"                                                         \
    "{\"name\":\"b.gputri.io\",\"clientConfig\":{\"url\":\"https://x\"}}]}"

/* Every webhook's caBundle is set; the whole list goes back with the resourceVersion. */
static void test_ca_bundle(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0, VWC_TWO_HOOKS);
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    int n = -1;
    struct kube_error err = {0};
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_OK);
    assert_int_equal(n, 2);
    assert_int_equal(fake_kube_count(&fx->fake), 2);
    assert_string_equal(fake_kube_request(&fx->fake, 0)->path, VWC_PATH);
    const struct fake_request *p = fake_kube_request(&fx->fake, 1);
    assert_string_equal(p->method, "PATCH");
    assert_string_equal(p->path, VWC_PATH);
    json_object *o = fake_kube_body_json(&fx->fake, 1);
    assert_string_equal(str_at(o, "metadata", "resourceVersion"), "41");
    json_object *hooks = json_object_object_get(o, "webhooks");
    assert_int_equal(json_object_array_length(hooks), 2);
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(str_at(json_object_array_get_idx(hooks, i), "clientConfig", "caBundle"),
                            "Q0E=");
    /* the rest of each webhook goes back as it was */
    assert_string_equal(str_at(json_object_array_get_idx(hooks, 0), "sideEffects", NULL), "None");
    json_object_put(o);
}

/* A 409 (changed in between) is retried from a fresh GET, a few times, then given up. */
static void test_ca_bundle_conflict(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0, VWC_TWO_HOOKS);
    fake_kube_answer(&fx->fake, 409, 0, CONFLICT);
    fake_kube_answer(&fx->fake, 200, 0, VWC_TWO_HOOKS);
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    int n = 0;
    struct kube_error err = {0};
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_OK);
    assert_int_equal(n, 2);
    assert_int_equal(fake_kube_count(&fx->fake), 4);

    for (int i = 0; i < 5; i++) {
        fake_kube_answer(&fx->fake, 200, 0, VWC_TWO_HOOKS);
        fake_kube_answer(&fx->fake, 409, 0, CONFLICT);
    }
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_ECONFLICT);
    assert_int_equal(n, 0);
    assert_int_equal(fake_kube_count(&fx->fake), 14);
}

static void test_ca_bundle_odd_objects(void **state)
{
    struct fixture *fx = *state;
    int n = -1;
    struct kube_error err = {0};
    fake_kube_answer(&fx->fake, 200, 0, "{\"webhooks\":[]}");
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_EINVAL);
    assert_string_equal(err.message,
                        "validatingwebhookconfiguration gputri-webhook has no webhooks");
    fake_kube_answer(&fx->fake, 200, 0, "{\"webhooks\":[{\"name\":\"a\"}]}");
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_EPARSE);
    assert_string_equal(
        err.message, "validatingwebhookconfiguration gputri-webhook: webhook without clientConfig");
    fake_kube_answer(&fx->fake, 404, 0, NOT_FOUND);
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_ENOTFOUND);
    assert_int_equal(n, 0);
    assert_int_equal(fake_kube_count(&fx->fake), 3); /* no PATCH after any of them */
    /* no resourceVersion: the patch goes without one */
    fake_kube_answer(&fx->fake, 200, 0, "{\"webhooks\":[{\"clientConfig\":{}}]}");
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    assert_int_equal(publish_ca_bundle(fx->client, "gputri-webhook", "CA", &n, &err), K_OK);
    assert_int_equal(n, 1);
    json_object *o = fake_kube_body_json(&fx->fake, 4);
    assert_null(json_object_object_get(o, "metadata"));
    json_object_put(o);
}

/* A Secret's data value as the webhook reads it: base64 PEM text, nothing else. */
static void test_secret_pem(void **state)
{
    (void)state;
    json_object *data = json_tokener_parse(
        "{\"tls.crt\":\"Q0VSVA==\",\"empty\":\"\",\"nul\":\"QQBC\",\"bad\":\"*\",\"n\":7}");
    assert_non_null(data);
    char *pem = publish_secret_pem(data, "tls.crt");
    assert_string_equal(pem, "CERT");
    free(pem);
    assert_null(publish_secret_pem(data, "empty"));   /* empty */
    assert_null(publish_secret_pem(data, "nul"));     /* "A\0B" */
    assert_null(publish_secret_pem(data, "bad"));     /* not base64 */
    assert_null(publish_secret_pem(data, "n"));       /* not a string */
    assert_null(publish_secret_pem(data, "missing")); /* absent */
    assert_null(publish_secret_pem(NULL, "tls.crt"));
    json_object_put(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_secret_created, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_patched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_create_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_of_other_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_bundle_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_bundle_odd_objects, setup, teardown),
        cmocka_unit_test(test_secret_pem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
