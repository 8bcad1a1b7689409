/* test_result.c - the K_* values' descriptions and which of them a retry may cure
 * (core/util/result.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/result.h"

/* Every value has its own description; anything else is "unknown error". */
static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(k_strerror(K_OK), "success");
    assert_string_equal(k_strerror(K_EGONE), "resource version too old (410 Gone)");
    assert_string_equal(k_strerror(K_ETHROTTLED), "too many requests (429)");
    for (int a = K_OK; a <= K_ECANCELED; a++) {
        assert_non_null(k_strerror(a));
        assert_string_not_equal(k_strerror(a), "unknown error");
        for (int b = K_OK; b < a; b++)
            assert_string_not_equal(k_strerror(a), k_strerror(b));
    }
    assert_string_equal(k_strerror(K_ECANCELED + 1), "unknown error");
    assert_string_equal(k_strerror(-1), "unknown error");
}

/* Transport failures, timeouts, 429 and 5xx are retried; answers about the request are not. */
static void test_retryable(void **state)
{
    (void)state;
    const int yes[] = {K_EIO, K_ETIMEDOUT, K_ETHROTTLED, K_ESERVER};
    const int no[] = {K_OK,    K_ENOMEM,    K_ETOOBIG,   K_EINVAL,     K_EPARSE,
                      K_EGONE, K_ECONFLICT, K_ENOTFOUND, K_EFORBIDDEN, K_EUNAUTHORIZED,
                      K_EHTTP, K_ECANCELED, -1};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(k_result_retryable(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(k_result_retryable(no[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_retryable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
