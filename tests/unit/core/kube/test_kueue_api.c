/*
 * test_kueue_api.c - core/kube/kueue_api.c: the version of kueue.x-k8s.io read (v1beta2, else
 * v1beta1) from the APIGroup document, the Workloads' paths, and discovery through a fake API
 * server (404: not served).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake_kube.h"
#include "kube/kueue_api.h"
#include "util/result.h"

#define GROUP(versions)                                                                            \
    "{\"kind\":\"APIGroup\",\"name\":\"kueue.x-k8s.io\",\"versions\":[" versions "]}"

static enum kueue_api_version choose(const char *doc)
{
    json_object *o = json_tokener_parse(doc);
    enum kueue_api_version v = kueue_api_choose(o);
    json_object_put(o);
    return v;
}

static void test_choose(void **state)
{
    (void)state;
    assert_int_equal(choose(GROUP("{\"version\":\"v1beta1\"},{\"version\":\"v1beta2\"}")),
                     KUEUE_API_V1BETA2);
    assert_int_equal(choose(GROUP("{\"version\":\"v1beta1\"}")), KUEUE_API_V1BETA1);
    assert_int_equal(choose(GROUP("{\"version\":\"v1alpha1\"}")), KUEUE_API_NONE);
    assert_int_equal(choose("{\"name\":\"resource.k8s.io\",\"versions\":[{\"version\":"
                            "\"v1beta2\"}]}"),
                     KUEUE_API_NONE);
    assert_int_equal(kueue_api_choose(NULL), KUEUE_API_NONE);
}

static void test_paths(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(kueue_workloads_path(KUEUE_API_V1BETA2, NULL, buf, sizeof(buf)),
                        "/apis/kueue.x-k8s.io/v1beta2/workloads");
    assert_string_equal(kueue_workloads_path(KUEUE_API_V1BETA1, "ns", buf, sizeof(buf)),
                        "/apis/kueue.x-k8s.io/v1beta1/namespaces/ns/workloads");
    assert_string_equal(kueue_workloads_path(KUEUE_API_NONE, "ns", buf, sizeof(buf)), "");
    assert_string_equal(kueue_api_version_name(KUEUE_API_V1BETA2), "v1beta2");
    assert_string_equal(kueue_api_version_name(KUEUE_API_VERSION_COUNT), "none");
}

static void test_discover_and_probe(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    fake_kube_answer(&f, 200, 0, GROUP("{\"version\":\"v1beta2\"}"));
    fake_kube_answer(&f, 200, 0, GROUP("{\"version\":\"v1beta2\"}"));
    fake_kube_answer(&f, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    fake_kube_answer(&f, 500, 0, "{\"kind\":\"Status\",\"code\":500}");
    struct kube_client *c = fake_kube_client(&f);
    struct kueue_api_probe p = {0};
    assert_true(kueue_api_probe_step(c, &p)); /* the first answer */
    assert_int_equal(p.version, KUEUE_API_V1BETA2);
    assert_false(kueue_api_probe_step(c, &p)); /* the same */
    assert_true(kueue_api_probe_step(c, &p));  /* 404: gone */
    assert_int_equal(p.version, KUEUE_API_NONE);
    assert_false(kueue_api_probe_step(c, &p)); /* a failure keeps the version */
    assert_int_equal(p.version, KUEUE_API_NONE);
    assert_true(p.failure_said);
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/kueue.x-k8s.io");
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_discover_and_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
