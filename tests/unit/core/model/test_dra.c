/* test_dra.c - core/model/dra.c: the driver a class selects, qualified names, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/dra.h"
#include "model/gpu.h"
#include "util/result.h"

static void expect_driver(const char *expr, const char *want)
{
    char *got = dra_selector_driver(expr);
    if (!want) {
        if (got)
            fail_msg("%s: got %s, want none", expr ? expr : "(null)", got);
        return;
    }
    if (!got)
        fail_msg("%s: got none, want %s", expr, want);
    assert_string_equal(got, want);
    free(got);
}

static void test_selector_driver(void **state)
{
    (void)state;
    expect_driver("device.driver == 'gpu.nvidia.com'", "gpu.nvidia.com");
    expect_driver("  device.driver==\"gpu.amd.com\"  ", "gpu.amd.com");
    expect_driver("'gpu.intel.com' == device.driver", "gpu.intel.com");
    expect_driver("(device.driver == 'x.example.com')", "x.example.com");
    expect_driver("device.driver == 'a' && device.attributes['a'].type == 'gpu'", "a");
    expect_driver("device.driver == 'a' && (x || y)", "a");
    expect_driver("device.driver == 'a' && x || y", NULL);
    expect_driver("device.driver == 'a' && x == '||'", "a");
    expect_driver("device.driver == 'a' && x ? y : z", NULL);
    expect_driver("device.driver == 'a' && (x", NULL);
    expect_driver("device.driver == 'a' || x", NULL);
    expect_driver("device.driver != 'a'", NULL);
    expect_driver("device.drivers == 'a'", NULL);
    expect_driver("device.driver == 'a\\'b'", NULL);
    expect_driver("device.driver == ''", NULL);
    expect_driver("device.driver == '''a'''", NULL);
    expect_driver("(device.driver == 'a'", NULL);
    expect_driver("", NULL);
    expect_driver(NULL, NULL);
}

static void test_qualify_and_lookup(void **state)
{
    (void)state;
    char *q = dra_qualify("gpu.nvidia.com", "productName");
    assert_string_equal(q, "gpu.nvidia.com/productName");
    free(q);
    q = dra_qualify("gpu.nvidia.com", "resource.kubernetes.io/pcieRoot");
    assert_string_equal(q, "resource.kubernetes.io/pcieRoot");
    free(q);

    struct dra_attribute attrs[] = {{.name = "d/a", .kind = DRA_ATTR_INT, .i = 3}};
    struct dra_capacity caps[] = {{.name = "d/memory", .value = "40Gi"}};
    struct dra_device dev = {
        .name = "gpu-0", .attrs = attrs, .n_attrs = 1, .caps = caps, .n_caps = 1};
    assert_ptr_equal(dra_device_attribute(&dev, "d/a"), &attrs[0]);
    assert_null(dra_device_attribute(&dev, "d/b"));
    assert_ptr_equal(dra_device_capacity(&dev, "d/memory"), &caps[0]);
    assert_null(dra_device_capacity(&dev, "d/a"));
}

static void test_default_dra_gpu_set(void **state)
{
    (void)state;
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, DRA_GPU_SET_DEFAULT), K_OK);
    assert_true(gpu_set_contains(&set, "gpu.nvidia.com"));
    assert_true(gpu_set_contains(&set, "mig.nvidia.com"));
    assert_true(gpu_set_contains(&set, "gpu.intel.com"));
    assert_true(gpu_set_contains(&set, "gpu.amd.com"));
    assert_true(gpu_set_contains(&set, "gpu.example.com"));
    assert_false(gpu_set_contains(&set, "nic.example.com"));
    assert_false(gpu_set_contains(&set, "compute-domain.nvidia.com"));
    gpu_set_cleanup(&set);
}

static void test_cleanup_null_safe(void **state)
{
    (void)state;
    dra_class_cleanup(NULL);
    dra_slice_cleanup(NULL);
    dra_claim_cleanup(NULL);
    dra_template_cleanup(NULL);
    dra_claim_spec_cleanup(NULL);
    pod_claim_refs_free(NULL, 0);
    pod_claim_statuses_free(NULL, 0);
    struct dra_claim c = {0};
    dra_claim_cleanup(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selector_driver),
        cmocka_unit_test(test_qualify_and_lookup),
        cmocka_unit_test(test_default_dra_gpu_set),
        cmocka_unit_test(test_cleanup_null_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
