/*
 * test_owner_alive.c - core/triage/owner_alive.c: a refused owner looked up by GET, over the
 * recording fake API (tests/lib/fake_kube.h).
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
#include "triage/owner_alive.h"
#include "util/result.h"

static void test_alive(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    struct quota_owner o = {.kind = QUOTA_OWNER_REPLICASET};
    snprintf(o.ns, sizeof(o.ns), "ml");
    snprintf(o.name, sizeof(o.name), "trainer-6d4cf");
    snprintf(o.uid, sizeof(o.uid), "u1");
    struct kube_error err = {0};

    fake_kube_answer(&f, 200, 0, "{\"metadata\":{\"name\":\"trainer-6d4cf\",\"uid\":\"u1\"}}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_OK);
    assert_string_equal(fake_kube_request(&f, 0)->path,
                        "/apis/apps/v1/namespaces/ml/replicasets/trainer-6d4cf");
    fake_kube_answer(&f, 200, 0, "{\"metadata\":{\"name\":\"trainer-6d4cf\",\"uid\":\"u2\"}}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_ENOTFOUND); /* replaced */
    fake_kube_answer(&f, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_ENOTFOUND);
    fake_kube_answer(&f, 403, 0, "{\"kind\":\"Status\",\"code\":403}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_EFORBIDDEN);

    o.kind = QUOTA_OWNER_STATEFULSET;
    fake_kube_answer(&f, 200, 0, "{\"metadata\":{}}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_OK); /* no uid said: there */
    assert_string_equal(fake_kube_request(&f, 4)->path,
                        "/apis/apps/v1/namespaces/ml/statefulsets/trainer-6d4cf");
    o.kind = QUOTA_OWNER_JOB;
    snprintf(o.name, sizeof(o.name), "a/b");
    fake_kube_answer(&f, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(triage_owner_alive(c, &o, &err), K_ENOTFOUND);
    assert_string_equal(fake_kube_request(&f, 5)->path, "/apis/batch/v1/namespaces/ml/jobs/a%2Fb");
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_alive)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
