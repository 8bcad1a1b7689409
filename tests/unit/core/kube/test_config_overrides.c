/*
 * test_config_overrides.c - kubectl's global flags applied to a kubeconfig
 * (kube_config_load_overrides, core/kube/config.c), the exec stanza, tls-server-name,
 * proxy-url, impersonation, the refused auth kinds and --request-timeout's syntax.
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

#include "kube/config.h"
#include "util/result.h"

static char dir[] = "/tmp/gputri-test-overrides-XXXXXX";
static char path[300];

/* Two contexts over two clusters; users with a token, an exec plugin and a certificate. */
static const char kubeconfig[] =
    "current-context: one\n"
    "contexts:\n"
    "- name: one\n  context: {cluster: c1, user: tok, namespace: ns-one}\n"
    "- name: two\n  context: {cluster: c2, user: plugin}\n"
    "clusters:\n"
    "- name: c1\n  cluster:\n    server: https://127.0.0.1:6443\n"
    "    certificate-authority-data: Q0E=\n    tls-server-name: kubernetes\n"
    "    proxy-url: socks5://127.0.0.1:1080\n"
    "- name: c2\n  cluster: {server: https://c2.example, insecure-skip-tls-verify: true}\n"
    "users:\n"
    "- name: tok\n  user: {token: abc, as: alice, as-groups: [g1, g2]}\n"
    "- name: plugin\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
    "      command: ./bin/get-token\n      args: [--x, y]\n"
    "      env: [{name: A, value: b}]\n      interactiveMode: Never\n"
    "      provideClusterInfo: true\n      installHint: apt install it\n"
    "- name: pathplugin\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
    "command: aws}\n"
    "- name: gcp\n  user:\n    auth-provider: {name: gcp}\n"
    "- name: basic\n  user: {username: u, password: p}\n"
    "- name: v1nomode\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, "
    "command: x}\n"
    "- name: alpha\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
    "command: x}\n"
    "- name: nocommand\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
    "command: \"\"}\n"
    "- name: plugin-and-token\n  user:\n    token: static\n    exec: {apiVersion: "
    "client.authentication.k8s.io/v1beta1, command: x}\n";

static int setup(void **state)
{
    (void)state;
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/config", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(kubeconfig, f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void load(const struct kube_config_overrides *ov, struct kube_config *cfg)
{
    char err[512];
    int rc = kube_config_load_overrides(path, ov, cfg, err, sizeof(err));
    if (rc != K_OK)
        fail_msg("rc %d: %s", rc, err);
}

static void load_fail(const struct kube_config_overrides *ov, const char *frag)
{
    struct kube_config cfg;
    char err[512];
    assert_int_equal(kube_config_load_overrides(path, ov, &cfg, err, sizeof(err)), K_EINVAL);
    if (!strstr(err, frag))
        fail_msg("error \"%s\" lacks \"%s\"", err, frag);
    assert_null(strchr(err, '\n'));
    assert_null(cfg.server);
}

static void test_current_context_fields(void **state)
{
    (void)state;
    struct kube_config cfg;
    load(NULL, &cfg);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");
    assert_string_equal(cfg.tls_server_name, "kubernetes");
    assert_string_equal(cfg.proxy_url, "socks5h://127.0.0.1:1080");
    assert_string_equal(cfg.ns, "ns-one");
    assert_string_equal(cfg.token, "abc");
    assert_string_equal(cfg.impersonate_user, "alice");
    assert_int_equal(cfg.n_impersonate_groups, 2);
    assert_string_equal(cfg.impersonate_groups[1], "g2");
    assert_null(cfg.exec);
    assert_false(cfg.request_timeout_set);
    kube_config_cleanup(&cfg);
}

static void test_context_switch_and_exec(void **state)
{
    (void)state;
    struct kube_config cfg;
    struct kube_config_overrides ov = {.context = "two"};
    load(&ov, &cfg);
    assert_string_equal(cfg.server, "https://c2.example");
    assert_true(cfg.insecure);
    assert_null(cfg.ns);
    assert_null(cfg.token);
    assert_non_null(cfg.exec);
    assert_non_null(cfg.exec_cache);
    char want[400];
    snprintf(want, sizeof(want), "%s/./bin/get-token", dir); /* relative to the kubeconfig */
    assert_string_equal(cfg.exec->command, want);
    assert_int_equal(cfg.exec->nargs, 2);
    assert_string_equal(cfg.exec->args[0], "--x");
    assert_string_equal(cfg.exec->env[0], "A=b");
    assert_int_equal(cfg.exec->interactive, KUBE_EXEC_NEVER);
    assert_true(cfg.exec->provide_cluster_info);
    assert_string_equal(cfg.exec->install_hint, "apt install it");
    assert_string_equal(cfg.exec_cluster.server, "https://c2.example");
    assert_true(cfg.exec_cluster.insecure);
    kube_config_cleanup(&cfg);

    /* A bare command stays a name for the PATH lookup; v1beta1 defaults to IfAvailable. */
    struct kube_config_overrides ov2 = {.user = "pathplugin"};
    load(&ov2, &cfg);
    assert_string_equal(cfg.exec->command, "aws");
    assert_int_equal(cfg.exec->interactive, KUBE_EXEC_IF_AVAILABLE);
    kube_config_cleanup(&cfg);

    /* A token wins over exec, in the kubeconfig or from --token. */
    struct kube_config_overrides ov3 = {.user = "plugin-and-token"};
    load(&ov3, &cfg);
    assert_null(cfg.exec);
    assert_string_equal(cfg.token, "static");
    kube_config_cleanup(&cfg);
    struct kube_config_overrides ov4 = {.context = "two", .token = "flag-token"};
    load(&ov4, &cfg);
    assert_null(cfg.exec);
    assert_string_equal(cfg.token, "flag-token");
    kube_config_cleanup(&cfg);
}

static void test_refused_and_invalid(void **state)
{
    (void)state;
    struct kube_config_overrides ov = {.context = "nope"};
    load_fail(&ov, "context \"nope\" does not exist");
    struct kube_config_overrides ov2 = {.cluster = "nope"};
    load_fail(&ov2, "cluster \"nope\" not found");
    struct kube_config_overrides ov3 = {.user = "gcp"};
    load_fail(&ov3, "auth-provider \"gcp\" is not supported");
    load_fail(&ov3, "gke-gcloud-auth-plugin");
    struct kube_config_overrides ov4 = {.user = "basic"};
    load_fail(&ov4, "basic authentication");
    struct kube_config_overrides ov5 = {.user = "v1nomode"};
    load_fail(&ov5, "interactiveMode must be specified for v1nomode");
    struct kube_config_overrides ov8 = {.user = "nocommand"};
    load_fail(&ov8, "command must be specified for nocommand");
    struct kube_config_overrides ov6 = {.user = "alpha"};
    load_fail(&ov6, "v1alpha1\" is not supported");
    struct kube_config_overrides ov9 = {.context = "two", .as_uid = "7"};
    load_fail(&ov9, "requesting uid, groups or user-extra for plugin without impersonating a user");
    struct kube_config_overrides ov7 = {.request_timeout = "5x"};
    load_fail(&ov7, "Invalid timeout value. Timeout must be a single integer in seconds");
}

static void test_cluster_override_rules(void **state)
{
    (void)state;
    struct kube_config cfg;
    /* --server clears the kubeconfig's tls-server-name... */
    struct kube_config_overrides ov = {.server = "https://10.0.0.1:443"};
    load(&ov, &cfg);
    assert_string_equal(cfg.server, "https://10.0.0.1:443");
    assert_null(cfg.tls_server_name);
    assert_non_null(cfg.ca_pem); /* the CA stays */
    kube_config_cleanup(&cfg);
    /* ...unless --tls-server-name comes with it. */
    struct kube_config_overrides ov2 = {.server = "10.0.0.1", .tls_server_name = "api"};
    load(&ov2, &cfg);
    assert_string_equal(cfg.server, "https://10.0.0.1");
    assert_string_equal(cfg.tls_server_name, "api");
    kube_config_cleanup(&cfg);
    /* --insecure-skip-tls-verify drops the CA data. */
    struct kube_config_overrides ov3 = {.insecure = true};
    load(&ov3, &cfg);
    assert_true(cfg.insecure);
    assert_null(cfg.ca_pem);
    kube_config_cleanup(&cfg);
    /* --certificate-authority replaces CA data and insecure. */
    struct kube_config_overrides ov4 = {.context = "two", .certificate_authority = path};
    load(&ov4, &cfg);
    assert_false(cfg.insecure);
    assert_string_equal(cfg.ca_file, path);
    kube_config_cleanup(&cfg);
    /* --cluster and --user pick entries besides the context's; -n the namespace. */
    struct kube_config_overrides ov5 = {.cluster = "c2", .user = "pathplugin", .ns = "x"};
    load(&ov5, &cfg);
    assert_string_equal(cfg.server, "https://c2.example");
    assert_string_equal(cfg.ns, "x");
    assert_string_equal(cfg.exec->command, "aws");
    kube_config_cleanup(&cfg);
}

static void test_impersonation_and_timeout(void **state)
{
    (void)state;
    struct kube_config cfg;
    struct kube_config_overrides ov = {.as = "bob",
                                       .as_groups = {"ops"},
                                       .n_as_groups = 1,
                                       .as_uid = "42",
                                       .request_timeout = "1m30s"};
    load(&ov, &cfg);
    assert_string_equal(cfg.impersonate_user, "bob");
    assert_int_equal(cfg.n_impersonate_groups, 1);
    assert_string_equal(cfg.impersonate_groups[0], "ops");
    assert_string_equal(cfg.impersonate_uid, "42");
    assert_true(cfg.request_timeout_set);
    assert_int_equal(cfg.request_timeout_ms, 90000);
    kube_config_cleanup(&cfg);
}

static void test_parse_timeout(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(kube_parse_timeout("0", &ms), K_OK);
    assert_int_equal(ms, 0);
    assert_int_equal(kube_parse_timeout("30", &ms), K_OK);
    assert_int_equal(ms, 30000);
    assert_int_equal(kube_parse_timeout("30s", &ms), K_OK);
    assert_int_equal(ms, 30000);
    assert_int_equal(kube_parse_timeout("1m", &ms), K_OK);
    assert_int_equal(ms, 60000);
    assert_int_equal(kube_parse_timeout("1h2m3.5s", &ms), K_OK);
    assert_int_equal(ms, 3723500);
    assert_int_equal(kube_parse_timeout("250ms", &ms), K_OK);
    assert_int_equal(ms, 250);
    /* below a millisecond: the shortest timeout, not none */
    assert_int_equal(kube_parse_timeout("1us", &ms), K_OK);
    assert_int_equal(ms, 1);
    assert_int_equal(kube_parse_timeout("500ns", &ms), K_OK);
    assert_int_equal(ms, 1);
    assert_int_equal(kube_parse_timeout("0.5ms", &ms), K_OK);
    assert_int_equal(ms, 1);
    assert_int_equal(kube_parse_timeout("0s", &ms), K_OK);
    assert_int_equal(ms, 0);
    assert_int_equal(kube_parse_timeout("-1s", &ms), K_OK); /* negative: no limit */
    assert_int_equal(ms, 0);
    assert_int_equal(kube_parse_timeout("-5", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("-", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("1d", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("s", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("1.2.3s", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("", &ms), K_EINVAL);
    assert_int_equal(kube_parse_timeout("100000000000", &ms), K_EINVAL);
}

/* In a pod: --server leaves the service account out; --token and --certificate-authority
 * replace its token and CA (client-go's DeferredLoadingClientConfig and inClusterClientConfig). */
static void test_in_cluster_flags(void **state)
{
    (void)state;
    struct kube_config cfg;
    char err[512];
    setenv("HOME", "/nonexistent-gputri-home", 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("GPUTRI_SERVICEACCOUNT_DIR", FIXTURES_DIR "/kubeconfig/serviceaccount", 1);
    struct kube_config_overrides ov = {.server = "https://other.example:6443"};
    assert_int_equal(kube_config_load_overrides(NULL, &ov, &cfg, err, sizeof(err)), K_OK);
    assert_string_equal(cfg.server, "https://other.example:6443");
    assert_null(cfg.token); /* the service account's token does not go to another server */
    assert_null(cfg.token_file);
    kube_config_cleanup(&cfg);

    struct kube_config_overrides ov2 = {.token = "flag-token", .certificate_authority = "/ca.pem"};
    assert_int_equal(kube_config_load_overrides(NULL, &ov2, &cfg, err, sizeof(err)), K_OK);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.token, "flag-token");
    assert_null(cfg.token_file); /* not re-read from the service account */
    assert_string_equal(cfg.ca_file, "/ca.pem");
    kube_config_cleanup(&cfg);

    struct kube_config_overrides none = {0};
    assert_int_equal(kube_config_load_overrides(NULL, &none, &cfg, err, sizeof(err)), K_OK);
    assert_string_equal(cfg.token, "sa-token-xyz");
    kube_config_cleanup(&cfg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("GPUTRI_SERVICEACCOUNT_DIR");
}

static void test_flags_only(void **state)
{
    (void)state;
    struct kube_config cfg;
    char err[512];
    setenv("HOME", "/nonexistent-gputri-home", 1);
    struct kube_config_overrides ov = {.server = "https://127.0.0.1:1", .token = "t"};
    assert_int_equal(kube_config_load_overrides(NULL, &ov, &cfg, err, sizeof(err)), K_OK);
    assert_string_equal(cfg.server, "https://127.0.0.1:1");
    assert_string_equal(cfg.token, "t");
    kube_config_cleanup(&cfg);
}

static void collect(void *ctx, const char *name)
{
    char *acc = ctx;
    strcat(acc, name);
    strcat(acc, ",");
}

static void test_names(void **state)
{
    (void)state;
    char acc[512] = "";
    assert_int_equal(kube_config_names(path, "contexts", collect, acc), K_OK);
    assert_string_equal(acc, "one,two,");
    acc[0] = '\0';
    assert_int_equal(kube_config_names(path, "clusters", collect, acc), K_OK);
    assert_string_equal(acc, "c1,c2,");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context_fields),
        cmocka_unit_test(test_context_switch_and_exec),
        cmocka_unit_test(test_refused_and_invalid),
        cmocka_unit_test(test_cluster_override_rules),
        cmocka_unit_test(test_impersonation_and_timeout),
        cmocka_unit_test(test_parse_timeout),
        cmocka_unit_test(test_flags_only),
        cmocka_unit_test(test_in_cluster_flags),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
