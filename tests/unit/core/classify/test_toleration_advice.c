/* test_toleration_advice.c - core/classify/toleration_advice.c: the advice's wording, and that the
 * toleration it names tolerates the taints it is for (match.c, ToleratesTaint) and no more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "classify/match.h"
#include "classify/toleration_advice.h"

#define S(x) ((char *)(x))

static void expect_advice(const struct taint *t, bool any_value, const char *want)
{
    char buf[TOLERATION_ADVICE_MAX];
    size_t n = toleration_advice(buf, sizeof(buf), t, any_value);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_wording(void **state)
{
    (void)state;
    struct taint t = {S("nvidia.com/gpu"), S("present"), S("NoSchedule")};
    expect_advice(&t, false, "{key: nvidia.com/gpu, value: present, effect: NoSchedule}");
    /* the nodes' values differ: every value of the key */
    expect_advice(&t, true, "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}");
    /* no value: Exists (an Exists toleration must have none) */
    t.value = S("");
    expect_advice(&t, false, "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}");
    t.value = NULL;
    expect_advice(&t, false, "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}");
    t = (struct taint){S("maintenance"), S("gpu"), S("NoExecute")};
    expect_advice(&t, false, "{key: maintenance, value: gpu, effect: NoExecute}");
}

/* values YAML would read as a number, a boolean or null are quoted */
static void test_quoting(void **state)
{
    (void)state;
    static const char *const quoted[] = {"true", "False", "yes", "NO",         "on",   "off",
                                         "y",    "null",  "1",   "1733478000", "0x1f", "1e3"};
    for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++) {
        struct taint t = {S("k"), S(quoted[i]), S("NoSchedule")};
        char want[128];
        snprintf(want, sizeof(want), "{key: k, value: \"%s\", effect: NoSchedule}", quoted[i]);
        expect_advice(&t, false, want);
    }
    static const char *const plain[] = {"present", "gpu-a100", "nodes", "truth", "a.1"};
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        struct taint t = {S("k"), S(plain[i]), S("NoSchedule")};
        char want[128];
        snprintf(want, sizeof(want), "{key: k, value: %s, effect: NoSchedule}", plain[i]);
        expect_advice(&t, false, want);
    }
}

/* The advised toleration, as the scheduler reads it, tolerates what it is advised for. */
static void test_tolerates(void **state)
{
    (void)state;
    struct taint a = {S("nvidia.com/gpu"), S("present"), S("NoSchedule")};
    struct taint b = {S("nvidia.com/gpu"), S("reserved"), S("NoSchedule")};
    struct taint none = {S("nvidia.com/gpu"), S(""), S("NoSchedule")};
    /* for a: Equal present */
    struct toleration equal = {S("nvidia.com/gpu"), S("Equal"), S("present"), S("NoSchedule")};
    assert_true(toleration_tolerates_taint(&equal, &a));
    assert_false(toleration_tolerates_taint(&equal, &b)); /* the narrowest: not other values */
    /* for a and b (any_value): Exists */
    struct toleration exists = {S("nvidia.com/gpu"), S("Exists"), S(""), S("NoSchedule")};
    assert_true(toleration_tolerates_taint(&exists, &a));
    assert_true(toleration_tolerates_taint(&exists, &b));
    assert_true(toleration_tolerates_taint(&exists, &none));
    char buf[TOLERATION_ADVICE_MAX];
    toleration_advice(buf, sizeof(buf), &none, false);
    assert_non_null(strstr(buf, "operator: Exists"));
}

/* truncation as snprintf: NUL-terminated, the whole length returned */
static void test_truncation(void **state)
{
    (void)state;
    struct taint t = {S("nvidia.com/gpu"), S("present"), S("NoSchedule")};
    char small[10];
    size_t n = toleration_advice(small, sizeof(small), &t, false);
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_true(n > sizeof(small));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wording),
        cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_tolerates),
        cmocka_unit_test(test_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
