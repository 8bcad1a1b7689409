/* test_dra_ext.c - core/classify/dra_ext.c: the requests kube-scheduler builds for a pod's
 * extended resources served by DRA (extendeddynamicresources.go createRequestsAndMappings). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify/dra_ext.h"

static struct dra_class gpu_class = {.name = "gpu.nvidia.com",
                                     .extended_resource_name = "nvidia.com/gpu"};

static const struct dra_class *serves(void *ctx, const char *resource)
{
    (void)ctx;
    return dra_extended_class_serves(&gpu_class, resource) ? &gpu_class : NULL;
}

static const struct dra_view view = {.extended_class = serves};

static size_t build(struct pod_ext_request *reqs, size_t n, struct dra_ext_req *out, size_t max)
{
    struct pod_ext ext = {.requests = reqs, .n_requests = n};
    struct kpod pod = {.ext = &ext};
    return dra_ext_build(&pod, &view, out, max);
}

static void test_long_lived(void **state)
{
    (void)state;
    /* two regular containers (1 and 2), their GPU the third name of the first one's requests */
    struct pod_ext_request reqs[] = {
        {.resource = "amd.com/gpu", .container = 0, .index = 0, .count = 1},
        {.resource = "nvidia.com/gpu", .container = 0, .index = 2, .count = 1},
        {.resource = "nvidia.com/gpu", .container = 1, .index = 0, .count = 3},
    };
    struct dra_ext_req out[8];
    size_t n = build(reqs, 3, out, 8);
    assert_int_equal(n, 2); /* amd.com/gpu: no class serves it */
    assert_string_equal(out[0].name, "container-0-request-2");
    assert_int_equal(out[0].count, 1);
    assert_string_equal(out[1].name, "container-1-request-0");
    assert_int_equal(out[1].count, 3);
    assert_ptr_equal(out[1].cls, &gpu_class);
    assert_string_equal(out[1].resource, "nvidia.com/gpu");
    assert_int_equal(build(reqs, 3, out, 1), 1); /* at most max */
    struct kpod none = {0};
    assert_int_equal(dra_ext_build(&none, &view, out, 8), 0);
    struct dra_view blind = {0};
    struct pod_ext ext = {.requests = reqs, .n_requests = 3};
    struct kpod pod = {.ext = &ext};
    assert_int_equal(dra_ext_build(&pod, &blind, out, 8), 0);
}

static void test_init_containers(void **state)
{
    (void)state;
    /* init 0 asks 4, init 1 (not a sidecar) asks 2, sidecar 2 asks 1, main 3 asks 1: init 0 is
       covered by 2 of the long-lived requests from its index on, so it asks 2 more; init 1 by
       2 as well: nothing; the largest (init 0's 2) is kept */
    struct pod_ext_request reqs[] = {
        {.resource = "nvidia.com/gpu", .container = 0, .count = 4, .short_lived = true},
        {.resource = "nvidia.com/gpu", .container = 1, .count = 2, .short_lived = true},
        {.resource = "nvidia.com/gpu", .container = 2, .count = 1},
        {.resource = "nvidia.com/gpu", .container = 3, .count = 1},
    };
    struct dra_ext_req out[8];
    size_t n = build(reqs, 4, out, 8);
    assert_int_equal(n, 3);
    assert_string_equal(out[0].name, "container-0-request-0");
    assert_int_equal(out[0].count, 2);
    assert_string_equal(out[1].name, "container-2-request-0");
    assert_string_equal(out[2].name, "container-3-request-0");

    /* an init container after a sidecar, the main container asking nothing: the sidecar's
       request (index 0) does not cover it, so it asks its own */
    struct pod_ext_request later[] = {
        {.resource = "nvidia.com/gpu", .container = 0, .count = 1},
        {.resource = "nvidia.com/gpu", .container = 1, .count = 1, .short_lived = true},
    };
    assert_int_equal(build(later, 2, out, 8), 2);
    assert_string_equal(out[0].name, "container-0-request-0");
    assert_string_equal(out[1].name, "container-1-request-0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_lived),
        cmocka_unit_test(test_init_containers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
