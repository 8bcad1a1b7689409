/* Tests for webhook/options.c: defaults, both flag spellings, bad values, required flags,
 * --autoscaler and its discovery interval, --event-verification, --cert-secret and its companions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "util/flags.h"
#include "util/result.h"

#define PARSE(o, err, ...)                                                                         \
    wh_options_parse(sizeof((char *[]){"gputri-webhook", __VA_ARGS__}) / sizeof(char *),           \
                     (char *[]){"gputri-webhook", __VA_ARGS__}, (o), (err), sizeof(err))

static void test_defaults_and_styles(void **state)
{
    (void)state;
    struct wh_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c.pem", "--tls-private-key-file", "k.pem"),
                     K_OK);
    assert_string_equal(o.tls_cert_file, "c.pem");
    assert_string_equal(o.tls_key_file, "k.pem");
    assert_string_equal(o.bind_address, ""); /* every interface, dual-stack */
    assert_int_equal(o.port, 8443);
    assert_true(o.kube_api_qps == FLAGS_KUBE_API_QPS_DEFAULT);
    assert_int_equal(o.kube_api_burst, FLAGS_KUBE_API_BURST_DEFAULT);
    assert_null(o.kubeconfig);
    assert_int_equal(o.max_body, WH_DEFAULT_MAX_BODY);
    assert_false(o.assume_ert);
    assert_int_equal(o.log_format, LOG_FORMAT_TEXT);
    assert_null(o.client_ca_file);
    assert_int_equal(o.events.ns_burst, EVENT_LIMIT_NS_BURST);
    assert_int_equal(o.events.ns_refill_ms, EVENT_LIMIT_NS_REFILL_MS);
    assert_int_equal(o.events.burst, EVENT_LIMIT_BURST);
    assert_int_equal(o.events.refill_ms, EVENT_LIMIT_REFILL_MS);
    assert_int_equal(o.autoscaler, WH_AUTOSCALER_MODE_AUTO);
    assert_int_equal(o.autoscaler_discovery_ms, WH_AUTOSCALER_DISCOVERY_MS);

    assert_int_equal(PARSE(&o, err, "-tls-cert-file=c", "--tls-private-key-file=k",
                           "--bind-address=127.0.0.1", "--port=9443", "--kubeconfig=/kc",
                           "--gpu-resources=nvidia.com/gpu", "--v=3", "--logging-format=json",
                           "--assume-extended-resource-toleration", "--threads=2"),
                     K_OK);
    assert_string_equal(o.bind_address, "127.0.0.1");
    assert_int_equal(o.port, 9443);
    assert_string_equal(o.kubeconfig, "/kc");
    assert_string_equal(o.gpu_resources, "nvidia.com/gpu");
    assert_int_equal(o.verbosity, 3);
    assert_int_equal(o.log_format, LOG_FORMAT_JSON);
    assert_true(o.assume_ert);
    assert_int_equal(o.threads, 2);

    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--client-ca-file=ca.pem", "--events-namespace-burst=5",
                           "--events-namespace-refill-interval=1m", "--events-burst=0",
                           "--events-refill-interval=250ms"),
                     K_OK);
    assert_string_equal(o.client_ca_file, "ca.pem");
    assert_int_equal(o.events.ns_burst, 5);
    assert_int_equal(o.events.ns_refill_ms, 60000);
    assert_int_equal(o.events.burst, 0);
    assert_int_equal(o.events.refill_ms, 250);
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--events-refill-interval=0s"),
                     K_EINVAL);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--events-burst=-1"),
        K_EINVAL);
}

static void test_autoscaler(void **state)
{
    (void)state;
    struct wh_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--autoscaler=karpenter", "--autoscaler-discovery-interval=30s"),
                     K_OK);
    assert_int_equal(o.autoscaler, WH_AUTOSCALER_MODE_KARPENTER);
    assert_int_equal(o.autoscaler_discovery_ms, 30000);
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--autoscaler",
                           "cluster-autoscaler"),
                     K_OK);
    assert_int_equal(o.autoscaler, WH_AUTOSCALER_MODE_CA);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--autoscaler=none"), K_OK);
    assert_int_equal(o.autoscaler, WH_AUTOSCALER_MODE_NONE);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--autoscaler=gke"),
        K_EINVAL);
    assert_non_null(strstr(err, "auto|none|karpenter|cluster-autoscaler"));
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--autoscaler-discovery-interval=0s"),
                     K_EINVAL);
    assert_non_null(strstr(err, "--autoscaler-discovery-interval"));
}

static void test_event_verification(void **state)
{
    (void)state;
    struct wh_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k"), K_OK);
    assert_int_equal(o.event_verification, WH_EVENT_VERIFY_AUTO);
    const char *names[] = {"auto", "lookup", "off"};
    const enum wh_event_verification modes[] = {WH_EVENT_VERIFY_AUTO, WH_EVENT_VERIFY_LOOKUP,
                                                WH_EVENT_VERIFY_OFF};
    for (size_t i = 0; i < 3; i++) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--event-verification=%s", names[i]);
        assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", flag),
                         K_OK);
        assert_int_equal(o.event_verification, modes[i]);
        assert_string_equal(wh_event_verification_name(modes[i]), names[i]);
    }
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--client-ca-file=ca.pem", "--event-verification", "client-cert"),
                     K_OK);
    assert_int_equal(o.event_verification, WH_EVENT_VERIFY_CLIENT_CERT);
    /* client-cert without a CA to check against would write no Event at all */
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--event-verification=client-cert"),
                     K_EINVAL);
    assert_non_null(strstr(err, "--client-ca-file"));
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--event-verification=yes"),
        K_EINVAL);
    assert_non_null(strstr(err, "auto|client-cert|lookup|off"));
}

/* --cert-secret and its companions replace the two certificate files. */
static void test_cert_secret(void **state)
{
    (void)state;
    struct wh_options o;
    char err[256];
    assert_int_equal(
        PARSE(&o, err, "--cert-secret=gputri/gputri-webhook-tls", "--webhook-configuration=gputri"),
        K_OK);
    assert_string_equal(o.cert_secret_ns, "gputri");
    assert_string_equal(o.cert_secret_name, "gputri-webhook-tls");
    assert_string_equal(o.webhook_configuration, "gputri");
    assert_string_equal(o.cert_service, "gputri-webhook");
    assert_int_equal(o.cert_validity_s, 365LL * 86400);
    assert_int_equal(o.ca_validity_s, 3650LL * 86400);
    assert_null(o.tls_cert_file);
    assert_int_equal(PARSE(&o, err, "--cert-secret", "ns/s", "--webhook-configuration", "w",
                           "--cert-service=svc", "--cert-validity=2m", "--ca-validity=1h30m"),
                     K_OK);
    assert_string_equal(o.cert_service, "svc");
    assert_int_equal(o.cert_validity_s, 120);
    assert_int_equal(o.ca_validity_s, 5400);
    /* not both ways; a configuration is needed; NS/NAME; at least a minute */
    assert_int_equal(PARSE(&o, err, "--cert-secret=ns/s", "--webhook-configuration=w",
                           "--tls-cert-file=c", "--tls-private-key-file=k"),
                     K_EINVAL);
    assert_non_null(strstr(err, "one or the other"));
    assert_int_equal(PARSE(&o, err, "--cert-secret=ns/s"), K_EINVAL);
    assert_non_null(strstr(err, "--webhook-configuration"));
    assert_int_equal(PARSE(&o, err, "--cert-secret=s", "--webhook-configuration=w"), K_EINVAL);
    assert_int_equal(PARSE(&o, err, "--cert-secret=ns/", "--webhook-configuration=w"), K_EINVAL);
    assert_int_equal(PARSE(&o, err, "--cert-secret=a/b/c", "--webhook-configuration=w"), K_EINVAL);
    assert_int_equal(
        PARSE(&o, err, "--cert-secret=ns/s", "--webhook-configuration=w", "--cert-validity=59s"),
        K_EINVAL);
    assert_int_equal(
        PARSE(&o, err, "--cert-secret=ns/s", "--webhook-configuration=w", "--ca-validity=forever"),
        K_EINVAL);
}

static void test_errors(void **state)
{
    (void)state;
    struct wh_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--port=8443"), K_EINVAL);
    assert_non_null(strstr(err, "--tls-cert-file"));
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--port=0"),
                     K_EINVAL);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--port=70000"), K_EINVAL);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--logging-format=xml"),
        K_EINVAL);
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--nope"),
                     K_EINVAL);
    assert_non_null(strstr(err, "--nope"));
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "extra"),
                     K_EINVAL);
    assert_int_equal(PARSE(&o, err, "--tls-cert-file"), K_EINVAL);
    /* --kube-api-qps: above 0 or negative; --kube-api-burst: 1 and more */
    assert_int_equal(PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k",
                           "--kube-api-qps=0.5", "--kube-api-burst=3"),
                     K_OK);
    assert_true(o.kube_api_qps == 0.5);
    assert_int_equal(o.kube_api_burst, 3);
    assert_int_equal(
        PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", "--kube-api-qps=-1"), K_OK);
    assert_true(o.kube_api_qps < 0);
    static const char *const bad[] = {
        "--kube-api-qps=0",  "--kube-api-qps=x",   "--kube-api-qps=1e9",  "--kube-api-qps=nan",
        "--kube-api-qps= 5", "--kube-api-burst=0", "--kube-api-burst=1.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            PARSE(&o, err, "--tls-cert-file=c", "--tls-private-key-file=k", (char *)bad[i]),
            K_EINVAL);
        assert_non_null(strstr(err, "--kube-api-"));
    }
    /* --help and --version need nothing else */
    assert_int_equal(PARSE(&o, err, "--help"), K_OK);
    assert_true(o.help);
    assert_int_equal(PARSE(&o, err, "--version"), K_OK);
    assert_true(o.version);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_styles), cmocka_unit_test(test_autoscaler),
        cmocka_unit_test(test_event_verification),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cert_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
