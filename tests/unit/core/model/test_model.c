/* test_model.c - core/model/model.c: saturating arithmetic and resource lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "util/result.h"

static void test_saturating_arithmetic(void **state)
{
    (void)state;
    assert_true(int64_add_sat(2, 3) == 5);
    assert_true(int64_add_sat(INT64_MAX, 1) == INT64_MAX);
    assert_true(int64_add_sat(INT64_MAX, INT64_MAX) == INT64_MAX);
    assert_true(int64_add_sat(INT64_MIN, -1) == INT64_MIN);
    assert_true(int64_add_sat(INT64_MAX, INT64_MIN) == -1);
    assert_true(int64_sub_sat(5, 3) == 2);
    assert_true(int64_sub_sat(INT64_MAX, -1) == INT64_MAX);
    assert_true(int64_sub_sat(0, INT64_MIN) == INT64_MAX);
    assert_true(int64_sub_sat(INT64_MIN, 1) == INT64_MIN);
    assert_true(int64_sub_sat(-1, INT64_MAX) == INT64_MIN);
}

/* 1,001 amounts of 9223372036854775807 sum to INT64_MAX, not to a wrapped (free-looking) value. */
static void test_resource_list_add_saturates(void **state)
{
    (void)state;
    struct resource_list l = {0};
    for (int i = 0; i < 1001; i++)
        assert_int_equal(resource_list_add(&l, "nvidia.com/gpu", INT64_MAX), K_OK);
    assert_true(resource_list_get(&l, "nvidia.com/gpu") == INT64_MAX);
    assert_int_equal(l.n, 1);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", INT64_MIN), K_OK);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", -5), K_OK);
    assert_true(resource_list_get(&l, "amd.com/gpu") == INT64_MIN);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", 7), K_OK);
    assert_true(resource_list_get(&l, "amd.com/gpu") == INT64_MIN + 7);
    resource_list_cleanup(&l);
    assert_int_equal(l.n, 0);
}

/* A list holds RESOURCE_LIST_MAX names; a new name past that fails and leaves the list alone. */
static void test_resource_list_cap(void **state)
{
    (void)state;
    struct resource_list l = {0};
    char name[32];
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "example.com/r%d", i);
        assert_int_equal(resource_list_add(&l, name, i + 1), K_OK);
    }
    assert_int_equal(resource_list_add(&l, "example.com/one-too-many", 1), K_ETOOBIG);
    assert_int_equal(l.n, RESOURCE_LIST_MAX);
    assert_true(resource_list_get(&l, "example.com/one-too-many") == 0);
    /* names already listed still add */
    assert_int_equal(resource_list_add(&l, "example.com/r0", 1), K_OK);
    assert_true(resource_list_get(&l, "example.com/r0") == 2);
    resource_list_cleanup(&l);
}

/* pod_pack_names(): one block, the same strings, a NULL field stays NULL, freed by pod_cleanup. */
static void test_pod_pack_names(void **state)
{
    (void)state;
    struct kpod p = {0};
    p.ns = strdup("team-a");
    p.name = strdup("trainer-0");
    p.uid = strdup("00000000-0000-4000-0001-000000000001");
    p.cause = strdup("exhausted");
    assert_int_equal(pod_pack_names(&p), K_OK);
    assert_non_null(p.packed);
    assert_ptr_equal(p.ns, p.packed);
    assert_string_equal(p.ns, "team-a");
    assert_string_equal(p.name, "trainer-0");
    assert_string_equal(p.uid, "00000000-0000-4000-0001-000000000001");
    assert_null(p.node_name);
    assert_string_equal(p.cause, "exhausted");
    assert_int_equal(pod_pack_names(&p), K_OK); /* already packed: unchanged */
    assert_string_equal(p.name, "trainer-0");
    pod_cleanup(&p);
    assert_null(p.packed);
    struct kpod empty = {0};
    assert_int_equal(pod_pack_names(&empty), K_OK);
    pod_cleanup(&empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saturating_arithmetic),
        cmocka_unit_test(test_resource_list_add_saturates),
        cmocka_unit_test(test_resource_list_cap),
        cmocka_unit_test(test_pod_pack_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
