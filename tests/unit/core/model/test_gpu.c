/* test_gpu.c - core/model/gpu.c: parsing GPU resource sets and matching names against them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cmocka.h>

#include "model/gpu.h"
#include "util/result.h"

static void test_default_set(void **state)
{
    (void)state;
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, GPU_SET_DEFAULT), K_OK);
    static const struct {
        const char *name;
        bool gpu;
    } cases[] = {
        {"nvidia.com/gpu", true},
        {"nvidia.com/gpu.shared", true},
        {"nvidia.com/mig-1g.5gb", true},
        {"nvidia.com/mig-3g.20gb", true},
        {"amd.com/gpu", true},
        {"gpu.intel.com/i915", true},
        {"gpu.intel.com/xe", true},
        {"tke.cloud.tencent.com/qgpu-core", true},
        {"tke.cloud.tencent.com/qgpu-memory", true},
        {"alpha.kubernetes.io/nvidia-gpu", true},
        {"cpu", false},
        {"memory", false},
        {"nvidia.com/gpu.sharedx", false},
        {"nvidia.com/gpumem", false},
        {"nvidia.com/mig", false},
        {"amd.com/gpux", false},
        {"ephemeral-storage", false},
        {"hugepages-2Mi", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (gpu_set_contains(&set, cases[i].name) != cases[i].gpu)
            fail_msg("gpu_set_contains(%s) != %d", cases[i].name, cases[i].gpu);
    gpu_set_cleanup(&set);
    assert_null(set.patterns);
    assert_int_equal(set.n, 0);
}

static void test_custom_set(void **state)
{
    (void)state;
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, " example.com/gpu , ,vendor.io/* ,"), K_OK);
    assert_int_equal(set.n, 2);
    assert_string_equal(set.patterns[0], "example.com/gpu");
    assert_string_equal(set.patterns[1], "vendor.io/*");
    assert_true(gpu_set_contains(&set, "example.com/gpu"));
    assert_true(gpu_set_contains(&set, "vendor.io/anything"));
    assert_false(gpu_set_contains(&set, "nvidia.com/gpu"));
    assert_false(gpu_set_contains(&set, "example.com/gpu2"));
    gpu_set_cleanup(&set);
}

static void test_rejects(void **state)
{
    (void)state;
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, ""), K_EINVAL);
    assert_int_equal(gpu_set_parse(&set, " , ,"), K_EINVAL);
    assert_int_equal(gpu_set_parse(&set, "a*b"), K_EINVAL);
    assert_null(set.patterns);
    assert_int_equal(gpu_set_parse(&set, "nvidia.com/gpu,*x"), K_EINVAL);
    assert_null(set.patterns);

    /* the reason a message gives for each rejection, and none for what parses */
    assert_string_equal(gpu_set_invalid_reason(""), "no resource names");
    assert_string_equal(gpu_set_invalid_reason(" , ,"), "no resource names");
    assert_string_equal(gpu_set_invalid_reason("a*b"), "'*' may only end a name");
    assert_string_equal(gpu_set_invalid_reason("nvidia.com/gpu,*x"), "'*' may only end a name");
    assert_null(gpu_set_invalid_reason(GPU_SET_DEFAULT));
    assert_null(gpu_set_invalid_reason(" vendor.io/* ,"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_set),
        cmocka_unit_test(test_custom_set),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
