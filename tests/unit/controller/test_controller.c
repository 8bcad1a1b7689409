/* Tests for controller/controller.c: following the DRA API version discovery chose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "controller_internal.h"
#include "fake_routes.h"
#include "util/result.h"

#define GROUP(versions)                                                                            \
    "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\",\"versions\":"      \
    "[" versions "]}"
#define EMPTY_LIST "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}"

static void wait_synced(struct dra_informers *w)
{
    while (!dra_informers_synced(w)) { /* bounded by ctest's timeout */
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static void test_dra_follow(void **state)
{
    (void)state;
    struct fake_routes api;
    fake_routes_init(&api);
    struct gpu_set gpus, dra;
    gpu_set_parse(&gpus, GPU_SET_DEFAULT);
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct controller_options o = {.instance = "test", .dra_classes = &dra};
    struct controller *c = controller_new(&api.cfg, &gpus, &o);
    assert_non_null(c);
    assert_non_null(c->dra_watch);
    /* the same informers, over the fake API */
    dra_informers_free(c->dra_watch);
    struct informer_handlers h[DRA_KIND_COUNT];
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        h[k] = controller_dra_handlers(c, (enum dra_kind)k);
    struct dra_informers_options io = {.discovery_transport = &api.transport,
                                       .transport = &api.transport};
    c->dra_watch = dra_informers_new(&api.cfg, c->dra, h, &io);
    assert_non_null(c->dra_watch);

    /* 1.33: v1beta1 and v1beta2 served; v1beta2 is read */
    fake_routes_set(
        &api, "/apis/resource.k8s.io", 200,
        GROUP("{\"groupVersion\":\"resource.k8s.io/v1beta1\",\"version\":\"v1beta1\"},"
              "{\"groupVersion\":\"resource.k8s.io/v1beta2\",\"version\":\"v1beta2\"}"));
    fake_routes_set(&api, "/apis/resource.k8s.io/v1beta2/*", 200, EMPTY_LIST);
    assert_int_equal(dra_informers_check(c->dra_watch), K_OK);
    assert_int_equal(dra_informers_version(c->dra_watch), DRA_API_V1BETA2);
    wait_synced(c->dra_watch);
    assert_true(controller_dra_follow(c));
    assert_true(atomic_load(&c->dra_synced));
    assert_false(controller_dra_follow(c)); /* nothing new */
    assert_true(fake_routes_count(&api, "/apis/resource.k8s.io/v1beta2/resourceslices") >= 1);
    assert_int_equal(fake_routes_count(&api, "/apis/resource.k8s.io/v1/"), 0);

    /* the same answer again: no change, the informers stay */
    assert_int_equal(dra_informers_check(c->dra_watch), K_OK);
    assert_true(dra_informers_synced(c->dra_watch));
    assert_false(controller_dra_follow(c));

    /* DRA switched off: the store is not used any more */
    fake_routes_set(&api, "/apis/resource.k8s.io", 0, NULL);
    assert_int_equal(dra_informers_check(c->dra_watch), K_OK);
    assert_int_equal(dra_informers_version(c->dra_watch), DRA_API_NONE);
    assert_true(controller_dra_follow(c));
    assert_false(atomic_load(&c->dra_synced));
    assert_false(controller_dra_follow(c));

    controller_free(c);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra);
    fake_routes_cleanup(&api);
}

static void test_dra_off(void **state)
{
    (void)state;
    struct fake_routes api;
    fake_routes_init(&api);
    struct gpu_set gpus;
    gpu_set_parse(&gpus, GPU_SET_DEFAULT);
    /* --gpu-device-classes= (empty): DRA off, nothing asked */
    struct controller_options o = {.instance = "test"};
    struct controller *c = controller_new(&api.cfg, &gpus, &o);
    assert_non_null(c);
    assert_null(c->dra_watch);
    assert_false(controller_dra_follow(c));
    controller_free(c);
    gpu_set_cleanup(&gpus);
    fake_routes_cleanup(&api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dra_follow),
        cmocka_unit_test(test_dra_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
