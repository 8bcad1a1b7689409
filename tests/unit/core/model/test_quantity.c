/* test_quantity.c - core/model/quantity.c against the grammar and rounding of quantity.go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/quantity.h"
#include "util/result.h"

struct qcase {
    const char *text;
    int64_t value;
    int64_t milli;
};

static const struct qcase good[] = {
    {"0", 0, 0},
    {"1", 1, 1000},
    {"+1", 1, 1000},
    {"-1", -1, -1000},
    {"2", 2, 2000},
    {"000123", 123, 123000},
    {"0.0", 0, 0},
    {"-0", 0, 0},
    {"+0.000", 0, 0},
    {"500m", 1, 500},
    {"1500m", 2, 1500},
    {"-1500m", -2, -1500},
    {"100m", 1, 100},
    {"0.5", 1, 500},
    {"-0.5", -1, -500},
    {"1.5", 2, 1500},
    {".5", 1, 500},
    {"1.", 1, 1000},
    {"1.G", 1000000000, 1000000000000},
    {"1.0000000001", 2, 1001},
    {"1k", 1000, 1000000},
    {"1M", 1000000, 1000000000},
    {"1G", 1000000000, 1000000000000},
    {"1T", 1000000000000, 1000000000000000},
    {"1P", 1000000000000000, 1000000000000000000},
    {"1E", 1000000000000000000, INT64_MAX},
    {"9E", 9000000000000000000, INT64_MAX},
    {"10E", INT64_MAX, INT64_MAX},
    {"-10E", INT64_MIN, INT64_MIN},
    {"1n", 1, 1},
    {"1u", 1, 1},
    {"1000000n", 1, 1},
    {"1000001n", 1, 2},
    {"-1n", -1, -1},
    {"1Ki", 1024, 1024000},
    {"1Mi", 1048576, 1048576000},
    {"100Mi", 104857600, 104857600000},
    {"1Gi", 1073741824, 1073741824000},
    {"1Ti", 1099511627776, 1099511627776000},
    {"1Pi", 1125899906842624, 1125899906842624000},
    {"1Ei", 1152921504606846976, INT64_MAX},
    {"7Ei", 8070450532247928832, INT64_MAX},
    {"8Ei", INT64_MAX, INT64_MAX},
    {"-8Ei", INT64_MIN, INT64_MIN},
    {"0.5Ki", 512, 512000},
    {"1.5Gi", 1610612736, 1610612736000},
    {"2.5Mi", 2621440, 2621440000},
    {"0.001Ki", 2, 1024},
    {"1e3", 1000, 1000000},
    {"1E3", 1000, 1000000},
    {"1e+3", 1000, 1000000},
    {"1e-3", 1, 1},
    {"-1e-3", -1, -1},
    {"1.5e3", 1500, 1500000},
    {"12e-1", 2, 1200},
    {"1e0", 1, 1000},
    {"0e30", 0, 0},
    {"0.000e99", 0, 0},
    {"1e30", INT64_MAX, INT64_MAX},
    {"1e400", INT64_MAX, INT64_MAX},
    {"1e-400", 1, 1},
    {"1e-30", 1, 1},
    {"0.000000000000000000000000001", 1, 1},
    {"9223372036854775807", INT64_MAX, INT64_MAX},
    {"9223372036854775808", INT64_MAX, INT64_MAX},
    {"-9223372036854775808", INT64_MIN, INT64_MIN},
    {"-9223372036854775809", INT64_MIN, INT64_MIN},
    {"123456789012345678901234567890", INT64_MAX, INT64_MAX},
    {"9223372036854775.807k", INT64_MAX, INT64_MAX},
    {"9223372036854775807m", 9223372036854776, INT64_MAX},
    {"4", 4, 4000},
};

static const char *const bad[] = {
    "",    " 1",    "1 ",    "1x",  "Ki",    "1ki",  "1KI",  "1K",
    "1e",  "1e3.5", "--1",   "+-1", "1.5.5", "1Mi3", "1ee3", "+",
    "-",   ".",     "-.",    "1e+", "0x10",  "1,5",  "1/2",  "1Gi ",
    "abc", "1 Gi",  "1e3e3", "1iB", "1mi",   "1Ei1", "1E3x", "1e99999999999999999999",
    "1m3", "1Mi-1", "e3",    "1+",  "1.5-",  "1\n",  "1\t",  "١",
};

static void test_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t v = 42, m = 42;
        int rc = quantity_parse(good[i].text, &v);
        if (rc != K_OK || v != good[i].value)
            fail_msg("quantity_parse(\"%s\"): rc %d value %lld, want %lld", good[i].text, rc,
                     (long long)v, (long long)good[i].value);
        rc = quantity_parse_milli(good[i].text, &m);
        if (rc != K_OK || m != good[i].milli)
            fail_msg("quantity_parse_milli(\"%s\"): rc %d milli %lld, want %lld", good[i].text, rc,
                     (long long)m, (long long)good[i].milli);
    }
}

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v = 42, m = 42;
        if (quantity_parse(bad[i], &v) != K_EINVAL || v != 42)
            fail_msg("quantity_parse(\"%s\") accepted (%lld)", bad[i], (long long)v);
        if (quantity_parse_milli(bad[i], &m) != K_EINVAL || m != 42)
            fail_msg("quantity_parse_milli(\"%s\") accepted (%lld)", bad[i], (long long)m);
    }
    int64_t v;
    assert_int_equal(quantity_parse(NULL, &v), K_EINVAL);
}

static void test_long_input(void **state)
{
    (void)state;
    /* 600 digits of fraction: exact arithmetic, no float */
    char text[700] = "0.";
    size_t n = 2;
    for (int i = 0; i < 600; i++)
        text[n++] = '0';
    text[n++] = '1';
    text[n] = '\0';
    int64_t v;
    assert_int_equal(quantity_parse(text, &v), K_OK);
    assert_int_equal(v, 1);
    text[0] = '3';
    text[n - 1] = '0';
    assert_int_equal(quantity_parse(text, &v), K_OK);
    assert_int_equal(v, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_long_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
