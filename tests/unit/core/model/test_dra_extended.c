/* test_dra_extended.c - core/model/dra_extended.c: which class serves an extended resource, and
 * the pod's extended-resource records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/dra.h"
#include "model/model.h"

static void test_serves(void **state)
{
    (void)state;
    struct dra_class c = {.name = "gpu.nvidia.com", .extended_resource_name = "nvidia.com/gpu"};
    assert_true(dra_extended_class_serves(&c, "nvidia.com/gpu"));
    assert_true(dra_extended_class_serves(&c, "deviceclass.resource.kubernetes.io/gpu.nvidia.com"));
    assert_false(dra_extended_class_serves(&c, "deviceclass.resource.kubernetes.io/gpu"));
    assert_false(dra_extended_class_serves(&c, "amd.com/gpu"));
    assert_false(dra_extended_class_serves(&c, NULL));
    struct dra_class plain = {.name = "mig.nvidia.com"};
    assert_false(dra_extended_class_serves(&plain, "nvidia.com/gpu"));
    assert_true(
        dra_extended_class_serves(&plain, "deviceclass.resource.kubernetes.io/mig.nvidia.com"));
    assert_false(dra_extended_class_serves(NULL, "nvidia.com/gpu"));
}

static void test_wins(void **state)
{
    (void)state;
    struct dra_class old = {.name = "b", .created = 100}, young = {.name = "a", .created = 200};
    assert_true(dra_extended_class_wins(&old, &young));
    assert_false(dra_extended_class_wins(&young, &old));
    struct dra_class tie = {.name = "c", .created = 100};
    assert_true(dra_extended_class_wins(&old, &tie)); /* same age: the smaller name */
    assert_false(dra_extended_class_wins(&tie, &old));
    assert_true(dra_extended_class_wins(&old, NULL));
    assert_false(dra_extended_class_wins(NULL, &old));
}

static struct pod_ext *make_ext(int64_t count, const char *claim)
{
    struct pod_ext *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    e->requests = calloc(1, sizeof(*e->requests));
    assert_non_null(e->requests);
    e->requests[0] = (struct pod_ext_request){
        .resource = strdup("nvidia.com/gpu"), .container = 1, .index = 2, .count = count};
    e->n_requests = 1;
    if (claim) {
        e->claim_name = strdup(claim);
        e->mappings = calloc(1, sizeof(*e->mappings));
        assert_non_null(e->mappings);
        e->mappings[0] = (struct pod_ext_mapping){.container = strdup("main"),
                                                  .resource = strdup("nvidia.com/gpu"),
                                                  .request = strdup("container-1-request-2")};
        e->n_mappings = 1;
    }
    return e;
}

static void test_pod_ext(void **state)
{
    (void)state;
    struct kpod a = {0}, b = {0};
    assert_false(pod_has_ext_requests(&a));
    assert_false(pod_has_ext_requests(NULL));
    assert_true(pod_equal(&a, &b));
    a.ext = make_ext(1, NULL);
    assert_true(pod_has_ext_requests(&a));
    assert_false(pod_equal(&a, &b));
    b.ext = make_ext(1, NULL);
    assert_true(pod_equal(&a, &b));
    pod_ext_free(b.ext);
    b.ext = make_ext(2, NULL);
    assert_false(pod_equal(&a, &b));
    pod_ext_free(b.ext);
    b.ext = make_ext(1, "p-extended-resources-x");
    assert_false(pod_equal(&a, &b));
    pod_ext_free(a.ext);
    a.ext = make_ext(1, "p-extended-resources-x");
    assert_true(pod_equal(&a, &b));
    pod_cleanup(&a);
    pod_cleanup(&b);
    pod_ext_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serves),
        cmocka_unit_test(test_wins),
        cmocka_unit_test(test_pod_ext),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
