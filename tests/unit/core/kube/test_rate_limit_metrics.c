/* Tests for core/kube/rate_limit_metrics.c: the client-side rate limit's counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/rate_limit_metrics.h"
#include "util/buf.h"
#include "util/result.h"

static const char WANT[] =
    "# HELP gputri_kube_client_rate_limiter_throttled_requests_total Requests to the API server "
    "that waited for the client-side rate limit (--kube-api-qps, --kube-api-burst).\n"
    "# TYPE gputri_kube_client_rate_limiter_throttled_requests_total counter\n"
    "gputri_kube_client_rate_limiter_throttled_requests_total 7\n"
    "# HELP gputri_kube_client_rate_limiter_wait_seconds_total Seconds requests to the API server "
    "waited for the client-side rate limit.\n"
    "# TYPE gputri_kube_client_rate_limiter_wait_seconds_total counter\n"
    "gputri_kube_client_rate_limiter_wait_seconds_total 3.000000250\n";

static void test_render(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 4096);
    assert_int_equal(kube_rate_limit_metrics_render(7, 3000000250ull, &b), K_OK);
    assert_string_equal(buf_cstr(&b), WANT);
    buf_reset(&b);
    /* nothing waited: both at 0; seconds keep their nine decimals (a float Prometheus reads) */
    assert_int_equal(kube_rate_limit_metrics_render(0, 0, &b), K_OK);
    assert_non_null(
        strstr(buf_cstr(&b), "\ngputri_kube_client_rate_limiter_throttled_requests_total 0\n"));
    assert_non_null(
        strstr(buf_cstr(&b), "\ngputri_kube_client_rate_limiter_wait_seconds_total 0.000000000\n"));
    buf_reset(&b);
    /* the largest counts fit */
    assert_int_equal(kube_rate_limit_metrics_render(UINT64_MAX, UINT64_MAX, &b), K_OK);
    assert_non_null(strstr(buf_cstr(&b), " 18446744073709551615\n"));
    assert_non_null(strstr(buf_cstr(&b), " 18446744073.709551615\n"));
    buf_cleanup(&b);
}

/* append renders what kube_rate_limit_stats() says; a full buffer is the buf's error */
static void test_append(void **state)
{
    (void)state;
    uint64_t n, ns;
    kube_rate_limit_stats(&n, &ns);
    struct buf want, got;
    buf_init(&want, 4096);
    buf_init(&got, 4096);
    assert_int_equal(kube_rate_limit_metrics_render(n, ns, &want), K_OK);
    assert_int_equal(kube_rate_limit_metrics_append(&got), K_OK);
    assert_string_equal(buf_cstr(&got), buf_cstr(&want));
    buf_cleanup(&got);
    buf_init(&got, 16);
    assert_int_not_equal(kube_rate_limit_metrics_append(&got), K_OK);
    buf_cleanup(&got);
    buf_cleanup(&want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_append),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
