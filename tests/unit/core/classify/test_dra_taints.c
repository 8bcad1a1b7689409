/* test_dra_taints.c - core/classify/dra_taints.c: which taint keeps a request off a device (the
 * device's own, then DeviceTaintRules'), and how the detail names it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify/dra_taints.h"

static struct dra_taint_rule rules[2] = {
    {.name = "maint",
     .has_selector = true,
     .pool = "n0",
     .taint = {.key = "maintenance", .value = "true", .effect = DRA_EFFECT_NO_EXECUTE}},
    {.name = "info", .has_selector = true, .taint = {.key = "note", .effect = DRA_EFFECT_NONE}},
};

static size_t view_rules(void *ctx, const char *driver, const char *pool, const char *device,
                         const struct dra_taint_rule **buf, size_t cap)
{
    (void)ctx;
    size_t n = 0;
    for (size_t i = 0; i < 2; i++)
        if (dra_taint_rule_selects(&rules[i], driver, pool, device)) {
            if (n < cap)
                buf[n] = &rules[i];
            n++;
        }
    return n;
}

static void test_blocking_taint(void **state)
{
    (void)state;
    struct dra_taint own[2] = {
        {.key = "note", .effect = DRA_EFFECT_NONE},
        {.key = "gpu.nvidia.com/xid", .value = "79", .effect = DRA_EFFECT_NO_SCHEDULE}};
    struct dra_device d = {.name = "gpu-0", .taints = own, .n_taints = 2};
    struct dra_exact e = {0};
    struct dra_view v = {.device_taint_rules = view_rules};
    const struct dra_taint_rule *rule;
    /* the device's own blocking taint first (the None one is skipped) */
    assert_ptr_equal(dra_device_blocking_taint(&v, &e, "d", "n0", &d, &rule), &own[1]);
    assert_null(rule);
    /* tolerated: the rule's NoExecute taint is next */
    struct dra_toleration xid = {
        .key = "gpu.nvidia.com/xid", .op = DRA_TOL_EXISTS, .any_effect = true};
    e.tolerations = &xid;
    e.n_tolerations = 1;
    assert_ptr_equal(dra_device_blocking_taint(&v, &e, "d", "n0", &d, &rule), &rules[0].taint);
    assert_ptr_equal(rule, &rules[0]);
    /* the rule selects pool n0 only */
    assert_null(dra_device_blocking_taint(&v, &e, "d", "n1", &d, &rule));
    /* no rules in the view */
    struct dra_view bare = {0};
    assert_null(dra_device_blocking_taint(&bare, &e, "d", "n0", &d, &rule));
}

static void test_put(void **state)
{
    (void)state;
    char buf[512];
    struct line l = {buf, sizeof(buf), 0, false};
    struct dra_slice s = {.name = "n0-gpu", .pool = "n0"};
    struct dra_device d = {.name = "gpu-0"};
    struct dra_taint xid = {
        .key = "gpu.nvidia.com/xid", .value = "79", .effect = DRA_EFFECT_NO_SCHEDULE};
    dra_put_device_taint(&l, &s, &d, &xid, NULL);
    line_finish(&l);
    assert_non_null(strstr(buf, "device gpu-0 (pool n0) has taint gpu.nvidia.com/xid=79:NoSchedule "
                                "(ResourceSlice n0-gpu)"));
    assert_non_null(strstr(buf, "the driver marked GPU gpu-0 unhealthy: XID 79"));
    l = (struct line){buf, sizeof(buf), 0, false};
    dra_put_device_taint(&l, &s, &d, &rules[0].taint, &rules[0]);
    line_finish(&l);
    assert_non_null(strstr(buf, "maintenance=true:NoExecute (DeviceTaintRule maint)"));
    assert_non_null(strstr(buf, "tolerate it in the request"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_taint),
        cmocka_unit_test(test_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
