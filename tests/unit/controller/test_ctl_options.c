/*
 * Tests for controller/ctl_options.c: the controller's defaults, both flag spellings, bad
 * values, flags that go together, and the leader-election identity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl_options.h"
#include "model/gpu.h"
#include "util/result.h"

#define PARSE(o, err, ...)                                                                         \
    ctl_options_parse(sizeof((char *[]){"gputri-controller", __VA_ARGS__}) / sizeof(char *),       \
                      (char *[]){"gputri-controller", __VA_ARGS__}, (o), (err), sizeof(err))

static int setup(void **state)
{
    (void)state;
    setenv("GPUTRI_SERVICEACCOUNT_DIR", "/nonexistent", 1);
    return 0;
}

static void test_defaults(void **state)
{
    (void)state;
    struct ctl_options o;
    char err[256];
    char *argv[] = {"gputri-controller"};
    assert_int_equal(ctl_options_parse(1, argv, &o, err, sizeof(err)), K_OK);
    assert_int_equal(o.run.workers, 2);
    assert_int_equal(o.run.resync_seconds, 300);
    assert_false(o.run.recheck_all);
    assert_int_equal(o.run.recheck_interval_ms, 1000);
    assert_int_equal(o.run.leader_elect, 0);
    assert_string_equal(o.run.lease_namespace, "default");
    assert_string_equal(o.run.lease_name, "gputri-controller");
    assert_int_equal(o.run.lease_duration_ms, 15000);
    assert_int_equal(o.run.renew_deadline_ms, 10000);
    assert_int_equal(o.run.retry_period_ms, 2000);
    assert_string_equal(o.run.metrics_addr, "0");
    assert_string_equal(o.run.health_addr, "0");
    assert_int_equal(o.run.metrics_secure, 0);
    assert_int_equal(o.run.no_scheduler_grace, 0);
    assert_null(o.run.dra_classes);
    assert_null(o.common.kubeconfig);
    assert_string_equal(o.gpu_resources, GPU_SET_DEFAULT);
    assert_string_equal(o.dra_gpu_classes, DRA_GPU_SET_DEFAULT);
    assert_int_equal(o.log_format, LOG_FORMAT_TEXT);
    assert_true(o.kube_api_qps == FLAGS_KUBE_API_QPS_DEFAULT);
    assert_int_equal(o.kube_api_burst, FLAGS_KUBE_API_BURST_DEFAULT);
    assert_false(o.common.help);
    assert_int_equal(PARSE(&o, err, "--kube-api-qps=2.5", "-kube-api-burst", "7"), K_OK);
    assert_true(o.kube_api_qps == 2.5);
    assert_int_equal(o.kube_api_burst, 7);
}

static void test_flags_both_spellings(void **state)
{
    (void)state;
    struct ctl_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--workers=4", "-resync-period", "60",
                           "--recheck-interval=250ms", "--logging-format=json",
                           "--metrics-bind-address=:8080", "--health-probe-bind-address", ":8081",
                           "--leader-elect", "--leader-elect-lease-duration=30s",
                           "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=1s",
                           "--leader-elect-resource-namespace=gputri-system",
                           "--leader-elect-resource-name=lease",
                           "--gpu-device-classes=", "--no-scheduler-grace-period=1m30s",
                           "--kubeconfig=/kc", "--gpu-resources=nvidia.com/gpu", "--v=3"),
                     K_OK);
    assert_int_equal(o.run.workers, 4);
    assert_int_equal(o.run.resync_seconds, 60);
    assert_int_equal(o.run.recheck_interval_ms, 250);
    assert_int_equal(o.log_format, LOG_FORMAT_JSON);
    assert_string_equal(o.run.metrics_addr, ":8080");
    assert_string_equal(o.run.health_addr, ":8081");
    assert_int_equal(o.run.leader_elect, 1);
    assert_int_equal(o.run.lease_duration_ms, 30000);
    assert_int_equal(o.run.renew_deadline_ms, 20000);
    assert_int_equal(o.run.retry_period_ms, 1000);
    assert_string_equal(o.run.lease_namespace, "gputri-system");
    assert_string_equal(o.run.lease_name, "lease");
    assert_string_equal(o.dra_gpu_classes, "");
    assert_int_equal(o.run.no_scheduler_grace, 90);
    assert_string_equal(o.common.kubeconfig, "/kc");
    assert_string_equal(o.gpu_resources, "nvidia.com/gpu");
    assert_int_equal(o.common.verbosity, 3);

    /* the recheck interval may be zero: every change re-checks at once */
    assert_int_equal(PARSE(&o, err, "--recheck-interval=0"), K_OK);
    assert_int_equal(o.run.recheck_interval_ms, 0);
    assert_int_equal(PARSE(&o, err, "--recheck-interval", "0s"), K_OK);
    assert_int_equal(o.run.recheck_interval_ms, 0);

    /* Go's ParseBool spellings for the optional booleans */
    assert_int_equal(PARSE(&o, err, "--leader-elect=false", "--metrics-secure=T",
                           "--metrics-tls-cert-file=c.pem", "--metrics-tls-private-key-file=k.pem"),
                     K_OK);
    assert_int_equal(o.run.leader_elect, 0);
    assert_int_equal(o.run.metrics_secure, 1);
    assert_string_equal(o.run.metrics_cert_file, "c.pem");
    assert_string_equal(o.run.metrics_key_file, "k.pem");

    assert_int_equal(PARSE(&o, err, "--recheck=all"), K_OK);
    assert_true(o.run.recheck_all);
    assert_int_equal(PARSE(&o, err, "--recheck", "targeted"), K_OK);
    assert_false(o.run.recheck_all);
    assert_int_equal(PARSE(&o, err, "--help"), K_OK);
    assert_true(o.common.help);
}

static void expect_error(int rc, const char *err, const char *want)
{
    assert_int_equal(rc, K_EINVAL);
    if (!strstr(err, want))
        fail_msg("error \"%s\", want \"%s\" in it", err, want);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct ctl_options o;
    char err[256];
    expect_error(PARSE(&o, err, "--recheck=some"), err, "--recheck must be targeted or all");
    expect_error(PARSE(&o, err, "--no-such-flag"), err, "unknown flag --no-such-flag");
    expect_error(PARSE(&o, err, "--workers"), err, "needs a value");
    expect_error(PARSE(&o, err, "--workers=0"), err, "invalid value 0 for --workers");
    expect_error(PARSE(&o, err, "--logging-format=xml"), err, "text or json");
    expect_error(PARSE(&o, err, "--kube-api-qps=0"), err, "invalid value 0 for --kube-api-qps");
    expect_error(PARSE(&o, err, "--kube-api-burst=0"), err, "invalid value 0 for --kube-api-burst");
    expect_error(PARSE(&o, err, "--leader-elect=yes"), err, "want true or false");
    expect_error(PARSE(&o, err, "--leader-elect-lease-duration=25h"), err, "too long");
    expect_error(PARSE(&o, err, "--leader-elect-retry-period=soon"), err, "invalid duration");
    expect_error(PARSE(&o, err, "--recheck-interval=-1s"), err,
                 "invalid duration -1s for --recheck-interval");
    expect_error(PARSE(&o, err, "--recheck-interval=often"), err,
                 "invalid duration often for --recheck-interval");
    expect_error(PARSE(&o, err, "--no-scheduler-grace-period=500ms"), err,
                 "--no-scheduler-grace-period");
    expect_error(PARSE(&o, err, "--v=x"), err, "");
    expect_error(PARSE(&o, err, "extra"), err, "unexpected argument extra");
    expect_error(PARSE(&o, err, "--metrics-tls-cert-file=c.pem"), err, "go together");
    expect_error(PARSE(&o, err, "--leader-elect", "--leader-elect-retry-period=10s"), err,
                 "retry period < renew deadline < lease duration");
    /* the durations are only checked when leader election is on */
    assert_int_equal(PARSE(&o, err, "--leader-elect-retry-period=10s"), K_OK);
}

static void test_lease_namespace_from_the_service_account(void **state)
{
    (void)state;
    char dir[] = "/tmp/gputri-test-sa-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/namespace", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("gputri-system\n", f);
    fclose(f);
    setenv("GPUTRI_SERVICEACCOUNT_DIR", dir, 1);
    struct ctl_options o;
    char err[256];
    char *argv[] = {"gputri-controller"};
    assert_int_equal(ctl_options_parse(1, argv, &o, err, sizeof(err)), K_OK);
    assert_string_equal(o.run.lease_namespace, "gputri-system");
    setenv("GPUTRI_SERVICEACCOUNT_DIR", "/nonexistent", 1);
    remove(path);
    rmdir(dir);
}

static void test_identity(void **state)
{
    (void)state;
    char a[300], b[300];
    ctl_options_identity("node-1", a, sizeof(a));
    ctl_options_identity("node-1", b, sizeof(b));
    /* host + "_" + a version 4 UUID, different every time */
    assert_int_equal(strlen(a), strlen("node-1_") + 36);
    assert_memory_equal(a, "node-1_", 7);
    assert_int_equal(a[7 + 14], '4');
    assert_non_null(strchr("89ab", a[7 + 19]));
    assert_string_not_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flags_both_spellings),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_lease_namespace_from_the_service_account),
        cmocka_unit_test(test_identity),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
