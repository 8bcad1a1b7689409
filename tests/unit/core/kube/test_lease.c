/*
 * test_lease.c - the Lease lock of leader election (core/kube/lease.c) over the recording fake
 * API server: the record read from and written to spec, the PUT that carries the Lease last
 * seen (its resourceVersion), and the errors of each operation.
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
#include "kube/lease.h"
#include "util/result.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/gputri/leases/gputri-controller"
#define LEASE_V7                                                                                   \
    "{\"kind\":\"Lease\",\"metadata\":{\"name\":\"gputri-controller\",\"namespace\":\"gputri\","   \
    "\"resourceVersion\":\"7\"},\"spec\":{\"holderIdentity\":\"pod-a\",\"leaseDurationSeconds\":"  \
    "15,\"acquireTime\":\"2026-11-30T14:30:00.000000Z\",\"renewTime\":"                            \
    "\"2026-11-30T14:30:10.500000Z\",\"leaseTransitions\":3,\"preferredHolder\":\"pod-b\"}}"

struct fixture {
    struct fake_kube fake;
    struct kube_client *client;
    struct kube_lease_lock lock;
    struct lease_lock ops;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    fake_kube_init(&fx->fake);
    fx->client = fake_kube_client(&fx->fake);
    if (!fx->client ||
        kube_lease_lock_init(&fx->lock, fx->client, "gputri", "gputri-controller") != K_OK)
        return -1;
    fx->ops = kube_lease_lock_ops(&fx->lock);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    kube_lease_lock_cleanup(&fx->lock);
    kube_lease_lock_cleanup(&fx->lock); /* idempotent */
    kube_client_free(fx->client);
    fake_kube_cleanup(&fx->fake);
    free(fx);
    return 0;
}

static const struct lease_record MINE = {
    .holder = "pod-b",
    .duration_s = 15,
    .acquire_time = "2026-11-30T14:31:00.000000Z",
    .renew_time = "2026-11-30T14:31:00.000000Z",
    .transitions = 4,
};

static json_object *body_spec(struct fake_kube *f, size_t i, json_object **root)
{
    *root = json_tokener_parse(fake_kube_request(f, i)->body);
    assert_non_null(*root);
    json_object *spec = NULL;
    assert_true(json_object_object_get_ex(*root, "spec", &spec));
    return spec;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static void test_format_time(void **state)
{
    (void)state;
    char t[LEASE_TIME_MAX];
    lease_format_time(1796049000123, t);
    assert_string_equal(t, "2026-11-30T14:30:00.123000Z");
    lease_format_time(0, t);
    assert_string_equal(t, "1970-01-01T00:00:00.000000Z");
}

static void test_record_from_json(void **state)
{
    (void)state;
    struct lease_record r;
    json_object *o = json_tokener_parse(LEASE_V7);
    assert_int_equal(lease_record_from_json(o, &r), K_OK);
    assert_string_equal(r.holder, "pod-a");
    assert_int_equal(r.duration_s, 15);
    assert_string_equal(r.acquire_time, "2026-11-30T14:30:00.000000Z");
    assert_string_equal(r.renew_time, "2026-11-30T14:30:10.500000Z");
    assert_int_equal(r.transitions, 3);
    json_object_put(o);

    /* missing fields are empty; an int32 field out of range is 0 */
    o = json_tokener_parse("{\"spec\":{\"leaseDurationSeconds\":4294967296}}");
    assert_int_equal(lease_record_from_json(o, &r), K_OK);
    assert_string_equal(r.holder, "");
    assert_int_equal(r.duration_s, 0);
    assert_int_equal(r.transitions, 0);
    json_object_put(o);

    o = json_tokener_parse("{\"spec\":\"x\"}");
    assert_int_equal(lease_record_from_json(o, &r), K_EPARSE);
    json_object_put(o);
}

static void test_record_equal(void **state)
{
    (void)state;
    struct lease_record a = MINE, b = MINE;
    assert_true(lease_record_equal(&a, &b));
    b.transitions++;
    assert_false(lease_record_equal(&a, &b));
    b = MINE;
    b.renew_time[5] = 'x';
    assert_false(lease_record_equal(&a, &b));
    b = MINE;
    b.holder[0] = '\0';
    assert_false(lease_record_equal(&a, &b));
}

static void test_init_names_too_long(void **state)
{
    (void)state;
    struct kube_lease_lock l;
    char big[300];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(kube_lease_lock_init(&l, NULL, big, "x"), K_ETOOBIG);
    assert_int_equal(kube_lease_lock_init(&l, NULL, "x", big), K_ETOOBIG);
    kube_lease_lock_cleanup(&l);
}

/* GET reads the record; the update then PUTs that Lease with the new record and its version. */
static void test_get_then_update(void **state)
{
    struct fixture *fx = *state;
    struct lease_record r;
    struct kube_error err = {0};
    fake_kube_answer(&fx->fake, 200, 0, LEASE_V7);
    assert_int_equal(fx->ops.get(fx->ops.ctx, &r, &err), K_OK);
    assert_string_equal(r.holder, "pod-a");
    fake_kube_answer(&fx->fake, 200, 0, "{\"metadata\":{\"resourceVersion\":\"8\"},\"spec\":{}}");
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_OK);
    const struct fake_request *put = fake_kube_request(&fx->fake, 1);
    assert_string_equal(put->method, "PUT");
    assert_string_equal(put->path, LEASE_PATH);
    json_object *root;
    json_object *spec = body_spec(&fx->fake, 1, &root);
    json_object *meta = json_object_object_get(root, "metadata");
    assert_string_equal(str_of(meta, "resourceVersion"), "7");
    assert_string_equal(str_of(spec, "holderIdentity"), "pod-b");
    assert_int_equal(json_object_get_int(json_object_object_get(spec, "leaseDurationSeconds")), 15);
    assert_string_equal(str_of(spec, "acquireTime"), "2026-11-30T14:31:00.000000Z");
    assert_int_equal(json_object_get_int(json_object_object_get(spec, "leaseTransitions")), 4);
    /* spec fields of others stay */
    assert_string_equal(str_of(spec, "preferredHolder"), "pod-b");
    json_object_put(root);

    /* the next update starts from what the server answered (version 8) */
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_OK);
    spec = body_spec(&fx->fake, 2, &root);
    assert_string_equal(str_of(json_object_object_get(root, "metadata"), "resourceVersion"), "8");
    json_object_put(root);
}

/* A 409 on the PUT is handed back: the Lease moved on since it was read. */
static void test_update_conflict(void **state)
{
    struct fixture *fx = *state;
    struct lease_record r;
    struct kube_error err = {0};
    fake_kube_answer(&fx->fake, 200, 0, LEASE_V7);
    assert_int_equal(fx->ops.get(fx->ops.ctx, &r, &err), K_OK);
    fake_kube_answer(&fx->fake, 409, 0,
                     "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\","
                     "\"code\":409}");
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_ECONFLICT);
    assert_int_equal(err.http_status, 409);
}

/* Nothing to update before a get or create: refused without a request. */
static void test_update_before_read(void **state)
{
    struct fixture *fx = *state;
    struct kube_error err = {0};
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_EINVAL);
    assert_int_equal(err.code, K_EINVAL);
    assert_string_equal(err.message, "Lease gputri/gputri-controller updated before it was read");
    assert_int_equal(fake_kube_count(&fx->fake), 0);
}

/* No Lease: get says K_ENOTFOUND; create POSTs one holding every election field. */
static void test_create(void **state)
{
    struct fixture *fx = *state;
    struct lease_record r;
    struct kube_error err = {0};
    fake_kube_answer(&fx->fake, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(fx->ops.get(fx->ops.ctx, &r, &err), K_ENOTFOUND);
    fake_kube_answer(&fx->fake, 201, 0, LEASE_V7);
    struct lease_record released = MINE;
    released.holder[0] = '\0';
    assert_int_equal(fx->ops.create(fx->ops.ctx, &released, &err), K_OK);
    const struct fake_request *post = fake_kube_request(&fx->fake, 1);
    assert_string_equal(post->method, "POST");
    assert_string_equal(post->path, "/apis/coordination.k8s.io/v1/namespaces/gputri/leases");
    json_object *root;
    json_object *spec = body_spec(&fx->fake, 1, &root);
    assert_string_equal(str_of(root, "kind"), "Lease");
    assert_string_equal(str_of(root, "apiVersion"), "coordination.k8s.io/v1");
    json_object *meta = json_object_object_get(root, "metadata");
    assert_string_equal(str_of(meta, "name"), "gputri-controller");
    assert_string_equal(str_of(meta, "namespace"), "gputri");
    /* holderIdentity "" is written, not left out (client-go sets every field) */
    assert_string_equal(str_of(spec, "holderIdentity"), "");
    assert_string_equal(str_of(spec, "renewTime"), "2026-11-30T14:31:00.000000Z");
    json_object_put(root);
    /* the created Lease is the one the next update replaces */
    fake_kube_answer(&fx->fake, 200, 0, "{}");
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_OK);
    spec = body_spec(&fx->fake, 2, &root);
    assert_string_equal(str_of(json_object_object_get(root, "metadata"), "resourceVersion"), "7");
    json_object_put(root);

    /* another candidate was first */
    fake_kube_answer(&fx->fake, 409, 0,
                     "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409}");
    assert_int_equal(fx->ops.create(fx->ops.ctx, &MINE, &err), K_ECONFLICT);
}

/* A Lease without a spec is malformed; the cached one is not replaced by it. */
static void test_get_without_spec(void **state)
{
    struct fixture *fx = *state;
    struct lease_record r;
    struct kube_error err = {0};
    fake_kube_answer(&fx->fake, 200, 0, "{\"kind\":\"Lease\"}");
    assert_int_equal(fx->ops.get(fx->ops.ctx, &r, &err), K_EPARSE);
    assert_int_equal(err.code, K_EPARSE);
    assert_string_equal(err.message, "Lease gputri/gputri-controller has no spec");
    assert_int_equal(fx->ops.update(fx->ops.ctx, &MINE, &err), K_EINVAL);
    fake_kube_fail(&fx->fake, K_EIO);
    assert_int_equal(fx->ops.get(fx->ops.ctx, &r, &err), K_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_time),
        cmocka_unit_test(test_record_from_json),
        cmocka_unit_test(test_record_equal),
        cmocka_unit_test(test_init_names_too_long),
        cmocka_unit_test_setup_teardown(test_get_then_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_before_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_without_spec, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
