/* Tests for core/util/duration.c: kubectl's AGE text, case by case at every boundary of
 * apimachinery's HumanDuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/duration.h"

static void test_duration_human(void **state)
{
    (void)state;
    static const struct {
        int64_t s;
        const char *want;
    } cases[] = {
        {-2, "<invalid>"},
        {-1, "0s"},
        {0, "0s"},
        {119, "119s"},
        {120, "2m"},
        {121, "2m1s"},
        {599, "9m59s"},
        {600, "10m"},
        {10799, "179m"},
        {10800, "3h"},
        {10860, "3h1m"},
        {8 * 3600 - 1, "7h59m"},
        {8 * 3600, "8h"},
        {48 * 3600 - 1, "47h"},
        {48 * 3600, "2d"},
        {49 * 3600, "2d1h"},
        {8 * 86400 - 1, "7d23h"},
        {8 * 86400, "8d"},
        {730 * 86400 - 1, "729d"},
        {730 * 86400, "2y"},
        {731 * 86400, "2y1d"},
        {(int64_t)8 * 365 * 86400, "8y"},
        {(int64_t)8 * 365 * 86400 + 86400, "8y"},
        {INT64_MAX, "292471208677y"},
    };
    char out[DURATION_HUMAN_MAX];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duration_human(cases[i].s, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
    }
    char tiny[3];
    duration_human(3600 * 5, tiny, sizeof(tiny));
    assert_string_equal(tiny, "5h");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_human),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
