/* Tests for core/util/strconv.c: whole-string integers in a range, and durations. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/result.h"
#include "util/strconv.h"

static void test_strconv_long(void **state)
{
    (void)state;
    long v = 42;
    assert_int_equal(strconv_long("7", 0, 10, &v), K_OK);
    assert_int_equal(v, 7);
    assert_int_equal(strconv_long("-3", -5, 5, &v), K_OK);
    assert_int_equal(v, -3);
    assert_int_equal(strconv_long("+10", 0, 10, &v), K_OK);
    assert_int_equal(v, 10);
    v = 42;
    const char *bad[] = {"", " 1", "1 ", "1x", "0x10", "11", "-1", "99999999999999999999", "1.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(strconv_long(bad[i], 0, 10, &v), K_EINVAL);
    assert_int_equal(v, 42);
    assert_int_equal(strconv_long(NULL, 0, 10, &v), K_EINVAL);
    assert_int_equal(strconv_long("9223372036854775807", 0, LONG_MAX, &v), K_OK);
    assert_int_equal(v, LONG_MAX);
}

#define DAY_MS ((int64_t)24 * 3600000)

static void test_strconv_duration_ms(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t ms;
    } good[] = {
        {"15s", 15000}, {"500ms", 500}, {"1m", 60000},          {"1h", 3600000}, {"1m30s", 90000},
        {"10", 10000},  {"1.5s", 1500}, {"1h1m1s1ms", 3661001}, {"24h", DAY_MS}, {"0.5ms", 0},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t v = -1;
        int rc = strconv_duration_ms(good[i].s, DAY_MS, &v);
        if (good[i].ms == 0) {
            assert_int_equal(rc, K_EINVAL); /* truncates to zero */
            continue;
        }
        assert_int_equal(rc, K_OK);
        assert_int_equal(v, good[i].ms);
    }
    int64_t v = 42;
    const char *bad[] = {"",   "s",   "-1s", "0",   "0s",   "1x",    "1m30",  "5 s",
                         "ms", "1sm", "nan", "inf", "infh", "nanms", "1e999s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(strconv_duration_ms(bad[i], DAY_MS, &v), K_EINVAL);
    assert_int_equal(strconv_duration_ms(NULL, DAY_MS, &v), K_EINVAL);
    /* Above the bound, however large: the term is bounded before it is converted. */
    const char *big[] = {"25h",    "24h1ms",  "86400001ms",
                         "1e300h", "1e308ms", "9223372036854775808s",
                         "23h61m", "1e18"};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        assert_int_equal(strconv_duration_ms(big[i], DAY_MS, &v), K_ETOOBIG);
    assert_int_equal(v, 42);
}

static void test_strconv_hex_digit(void **state)
{
    (void)state;
    assert_int_equal(strconv_hex_digit('0'), 0);
    assert_int_equal(strconv_hex_digit('9'), 9);
    assert_int_equal(strconv_hex_digit('a'), 10);
    assert_int_equal(strconv_hex_digit('f'), 15);
    assert_int_equal(strconv_hex_digit('A'), 10);
    assert_int_equal(strconv_hex_digit('F'), 15);
    assert_int_equal(strconv_hex_digit('g'), -1);
    assert_int_equal(strconv_hex_digit('G'), -1);
    assert_int_equal(strconv_hex_digit('/'), -1);
    assert_int_equal(strconv_hex_digit(':'), -1);
    assert_int_equal(strconv_hex_digit(0), -1);
    assert_int_equal(strconv_hex_digit(0xc3), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strconv_long),
        cmocka_unit_test(test_strconv_duration_ms),
        cmocka_unit_test(test_strconv_hex_digit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
