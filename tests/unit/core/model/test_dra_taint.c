/* test_dra_taint.c - core/model/dra_taint.c: toleration match, the allocator's taint check,
 * DeviceTaintRule selection (upstream: resourceclaim/devicetoleration.go, allocator_stable.go,
 * resourceslice/tracker/tracker.go). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/dra.h"

static struct dra_taint taint(const char *key, const char *value, enum dra_taint_effect e)
{
    return (struct dra_taint){.key = (char *)key, .value = (char *)value, .effect = e};
}

static void test_tolerates(void **state)
{
    (void)state;
    struct dra_taint xid = taint("gpu.nvidia.com/xid", "79", DRA_EFFECT_NO_SCHEDULE);
    struct dra_toleration exists_key = {
        .key = "gpu.nvidia.com/xid", .op = DRA_TOL_EXISTS, .any_effect = true};
    struct dra_toleration equal_79 = {
        .key = "gpu.nvidia.com/xid", .op = DRA_TOL_EQUAL, .value = "79", .any_effect = true};
    struct dra_toleration equal_48 = equal_79;
    equal_48.value = "48";
    struct dra_toleration all = {.op = DRA_TOL_EXISTS, .any_effect = true};
    struct dra_toleration wrong_effect = exists_key;
    wrong_effect.any_effect = false;
    wrong_effect.effect = DRA_EFFECT_NO_EXECUTE;
    struct dra_toleration right_effect = wrong_effect;
    right_effect.effect = DRA_EFFECT_NO_SCHEDULE;
    struct dra_toleration other_op = {
        .key = "gpu.nvidia.com/xid", .op = DRA_TOL_OTHER, .any_effect = true};
    assert_true(dra_toleration_tolerates(&exists_key, &xid));
    assert_true(dra_toleration_tolerates(&equal_79, &xid));
    assert_false(dra_toleration_tolerates(&equal_48, &xid));
    assert_true(dra_toleration_tolerates(&all, &xid));
    assert_false(dra_toleration_tolerates(&wrong_effect, &xid));
    assert_true(dra_toleration_tolerates(&right_effect, &xid));
    assert_false(dra_toleration_tolerates(&other_op, &xid));
    /* Equal with no value matches a taint with no value */
    struct dra_taint lost = taint("gpu.nvidia.com/gpu-lost", NULL, DRA_EFFECT_NO_SCHEDULE);
    struct dra_toleration lost_eq = {.key = "gpu.nvidia.com/gpu-lost", .any_effect = true};
    assert_true(dra_toleration_tolerates(&lost_eq, &lost));
    assert_false(dra_toleration_tolerates(&lost_eq, &xid));
}

static void test_blocks(void **state)
{
    (void)state;
    struct dra_taint ns = taint("k", "v", DRA_EFFECT_NO_SCHEDULE);
    struct dra_taint ne = taint("k", "v", DRA_EFFECT_NO_EXECUTE);
    struct dra_taint none = taint("k", "v", DRA_EFFECT_NONE);
    struct dra_taint future = taint("k", "v", DRA_EFFECT_UNKNOWN);
    assert_true(dra_taint_blocks(&ns, NULL, 0));
    assert_true(dra_taint_blocks(&ne, NULL, 0));
    assert_false(dra_taint_blocks(&none, NULL, 0)); /* None never blocks */
    assert_false(dra_taint_blocks(&future, NULL, 0));
    struct dra_toleration tols[2] = {
        {.key = "other", .op = DRA_TOL_EXISTS, .any_effect = true},
        {.key = "k", .op = DRA_TOL_EQUAL, .value = "v", .effect = DRA_EFFECT_NO_EXECUTE}};
    assert_true(dra_taint_blocks(&ns, tols, 2));
    assert_false(dra_taint_blocks(&ne, tols, 2));
    assert_true(dra_taint_blocks(&ne, tols, 1));
}

static void test_rule_selects(void **state)
{
    (void)state;
    struct dra_taint_rule r = {.has_selector = true};
    assert_true(dra_taint_rule_selects(&r, "d", "p", "x")); /* the empty selector: every device */
    r.driver = "d";
    r.pool = "p";
    assert_true(dra_taint_rule_selects(&r, "d", "p", "x"));
    assert_false(dra_taint_rule_selects(&r, "d", "q", "x"));
    assert_false(dra_taint_rule_selects(&r, "e", "p", "x"));
    r.device = "x";
    assert_true(dra_taint_rule_selects(&r, "d", "p", "x"));
    assert_false(dra_taint_rule_selects(&r, "d", "p", "y"));
    struct dra_taint_rule none = {0};
    assert_false(dra_taint_rule_selects(&none, "d", "p", "x")); /* no selector: nothing */
}

static void test_effect_words(void **state)
{
    (void)state;
    assert_string_equal(dra_taint_effect_word(DRA_EFFECT_NO_SCHEDULE), "NoSchedule");
    assert_int_equal(dra_taint_effect_parse("NoExecute"), DRA_EFFECT_NO_EXECUTE);
    assert_int_equal(dra_taint_effect_parse("None"), DRA_EFFECT_NONE);
    assert_int_equal(dra_taint_effect_parse("PreferNoSchedule"), DRA_EFFECT_UNKNOWN);
    assert_int_equal(dra_taint_effect_parse(NULL), DRA_EFFECT_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerates),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_rule_selects),
        cmocka_unit_test(test_effect_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
