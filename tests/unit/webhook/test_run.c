/*
 * Tests for webhook/run.c: what the flags name is loaded (exit status 2 for a bad GPU set, 1 for
 * a file that does not load), and the routes served over HTTPS: /healthz, /readyz before the
 * caches synced, /validate and the counters it moves on /metrics.
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

#include "options.h"
#include "run.h"
#include "text.h"
#include "util/result.h"

#define TLS_DIR FIXTURES_DIR "/admission/tls"

/* A kubeconfig naming a port nothing listens on: the informers keep retrying in the
 * background, which is all these tests need of them. */
static const char kubeconfig[] = "current-context: t\n"
                                 "clusters:\n"
                                 "- name: t\n"
                                 "  cluster:\n"
                                 "    server: http://127.0.0.1:1\n"
                                 "contexts:\n"
                                 "- name: t\n"
                                 "  context:\n"
                                 "    cluster: t\n";

static char kc_path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(kc_path, sizeof(kc_path), "/tmp/gputri-run-test.XXXXXX");
    int fd = mkstemp(kc_path);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, kubeconfig, sizeof(kubeconfig) - 1);
    close(fd);
    return n == (ssize_t)sizeof(kubeconfig) - 1 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(kc_path);
    return 0;
}

/* The flags every test starts from: the fixture certificate, loopback, any port. */
static void options(struct wh_options *o)
{
    char kc_flag[96], err[256];
    snprintf(kc_flag, sizeof(kc_flag), "--kubeconfig=%s", kc_path);
    char *argv[] = {"gputri-webhook", "--tls-cert-file=" TLS_DIR "/a.crt",
                    "--tls-private-key-file=" TLS_DIR "/a.key", "--bind-address=127.0.0.1",
                    kc_flag};
    assert_int_equal(wh_options_parse(5, argv, o, err, sizeof(err)), K_OK);
    o->kubeconfig = kc_path; /* kc_flag's storage ends here */
    o->port = 0;
    o->threads = 2;
}

static void get(int port, const char *path, char *out, size_t len)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "curl -sk -w ' %%{http_code}' https://127.0.0.1:%d%s", port, path);
    test_command_output(cmd, out, len);
}

static const char review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"operation\":\"CREATE\",\"namespace\":\"team\",\"name\":\"p\",\"object\":{"
    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"team\"},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}";

static void test_serves(void **state)
{
    (void)state;
    struct wh_options o;
    options(&o);
    struct wh_run *r = NULL;
    assert_int_equal(wh_run_start(&o, &r), 0);
    assert_non_null(r);
    int port = wh_run_port(r);
    assert_true(port > 0);
    char out[4096], got[256], cmd[1024];

    get(port, "/healthz", out, sizeof(out));
    assert_string_equal(out, "ok\n 200");
    /* nothing to list from: the caches never sync */
    get(port, "/readyz", out, sizeof(out));
    assert_string_equal(out, "caches not synced\n 503");

    const char *unchecked = "gputri_webhook_admission_reviews_total{client_certificate="
                            "\"unchecked\"}";
    get(port, "/metrics", out, sizeof(out));
    test_lines_with(out, unchecked, got, sizeof(got));
    assert_string_equal(got, "gputri_webhook_admission_reviews_total{client_certificate="
                             "\"unchecked\"} 0\n");
    test_lines_with(out, "gputri_webhook_events_total{result=\"sent\"}", got, sizeof(got));
    assert_string_equal(got, "gputri_webhook_events_total{result=\"sent\"} 0\n");
    test_lines_with(out, "gputri_webhook_event_verifications_queued_total ", got, sizeof(got));
    assert_string_equal(got, "gputri_webhook_event_verifications_queued_total 0\n");
    test_lines_with(out, "gputri_webhook_event_verifications_total{result=\"absent\"}", got,
                    sizeof(got));
    assert_string_equal(got, "gputri_webhook_event_verifications_total{result=\"absent\"} 0\n");
    test_lines_with(out, "gputri_webhook_event_verifications_pending ", got, sizeof(got));
    assert_string_equal(got, "gputri_webhook_event_verifications_pending 0\n");

    snprintf(cmd, sizeof(cmd),
             "curl -sk -H 'Content-Type: application/json' --data '%s' "
             "https://127.0.0.1:%d/validate",
             review, port);
    test_command_output(cmd, out, sizeof(out));
    assert_non_null(strstr(out, "\"uid\":\"u-1\""));
    assert_non_null(strstr(out, "\"allowed\":true"));
    /* not JSON: 400, and not counted */
    snprintf(cmd, sizeof(cmd),
             "curl -sk -o /dev/null -w '%%{http_code}' -H 'Content-Type: application/json' "
             "--data 'nope' https://127.0.0.1:%d/validate",
             port);
    test_command_output(cmd, out, sizeof(out));
    assert_string_equal(out, "400");

    get(port, "/metrics", out, sizeof(out));
    test_lines_with(out, unchecked, got, sizeof(got));
    assert_string_equal(got, "gputri_webhook_admission_reviews_total{client_certificate="
                             "\"unchecked\"} 1\n");
    wh_run_stop(r, 1000);
    wh_run_stop(NULL, 0);
}

static void test_start_failures(void **state)
{
    (void)state;
    struct wh_options o;
    struct wh_run *r;

    options(&o);
    o.gpu_resources = "nvidia.com/*gpu";
    assert_int_equal(wh_run_start(&o, &r), 2);
    assert_null(r);

    options(&o);
    o.dra_gpu_classes = "gpu.nvidia.com,*x";
    assert_int_equal(wh_run_start(&o, &r), 2);
    assert_null(r);

    options(&o);
    o.tls_cert_file = TLS_DIR "/missing.crt";
    assert_int_equal(wh_run_start(&o, &r), 1);
    assert_null(r);

    options(&o);
    o.client_ca_file = TLS_DIR "/garbage.pem";
    assert_int_equal(wh_run_start(&o, &r), 1);
    assert_null(r);

    options(&o);
    o.kubeconfig = "/nonexistent/kubeconfig";
    assert_int_equal(wh_run_start(&o, &r), 1);
    assert_null(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serves),
        cmocka_unit_test(test_start_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
