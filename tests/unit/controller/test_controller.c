/* Tests for controller/controller.c: the DRA discovery check at start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller_internal.h"
#include "fake_kube.h"
#include "util/result.h"

static bool served(const struct gpu_set *dra_classes, long status, size_t *requests)
{
    struct fake_kube api;
    fake_kube_init(&api);
    struct gpu_set gpus;
    gpu_set_parse(&gpus, GPU_SET_DEFAULT);
    struct controller_options o = {.instance = "test", .dra_classes = dra_classes};
    struct controller *c = controller_new(&api.cfg, &gpus, &o);
    assert_non_null(c);
    fake_kube_answer(&api, status, 0,
                     status == 200 ? "{\"kind\":\"APIResourceList\",\"groupVersion\":"
                                     "\"resource.k8s.io/v1\",\"resources\":[]}"
                                   : "{\"kind\":\"Status\",\"code\":404}");
    struct kube_client *client = fake_kube_client(&api);
    bool on = controller_dra_served(c, client);
    *requests = fake_kube_count(&api);
    if (*requests)
        assert_string_equal(fake_kube_request(&api, 0)->path, "/apis/resource.k8s.io/v1");
    kube_client_free(client);
    controller_free(c);
    gpu_set_cleanup(&gpus);
    fake_kube_cleanup(&api);
    return on;
}

static void test_dra_discovery(void **state)
{
    (void)state;
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    size_t n;
    assert_true(served(&dra, 200, &n));
    assert_int_equal(n, 1);
    /* an API server without resource.k8s.io/v1: run without DRA */
    assert_false(served(&dra, 404, &n));
    assert_int_equal(n, 1);
    /* --gpu-device-classes= (empty): DRA off, nothing asked */
    assert_false(served(NULL, 200, &n));
    assert_int_equal(n, 0);
    gpu_set_cleanup(&dra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dra_discovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
