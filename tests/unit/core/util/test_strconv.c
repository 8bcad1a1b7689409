/* Tests for core/util/strconv.c: whole-string integers in a range. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strconv_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
