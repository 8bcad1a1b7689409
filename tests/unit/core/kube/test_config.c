/*
 * test_config.c - kubeconfig and in-cluster loading (core/kube/config.c) against the fixture
 * kubeconfigs in tests/fixtures/kubeconfig/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/config.h"
#include "util/result.h"

#define KC_DIR FIXTURES_DIR "/kubeconfig"

static const char ca_pem[] =
    "-----BEGIN CERTIFICATE-----\nfixture CA, not a real certificate\n-----END CERTIFICATE-----\n";
static const char cert_pem[] =
    "-----BEGIN CERTIFICATE-----\nfixture client cert\n-----END CERTIFICATE-----\n";
static const char key_pem[] =
    "-----BEGIN PRIVATE KEY-----\nfixture key!\n-----END PRIVATE KEY-----\n";

/* Every test starts from an environment with none of the sources set. */
static int clean_env(void **state)
{
    (void)state;
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("GPUTRI_SERVICEACCOUNT_DIR");
    setenv("HOME", "/nonexistent-gputri-home", 1);
    return 0;
}

/* Load and expect failure rc with an error message containing every given fragment. */
static void expect_fail(const char *path, int want_rc, const char *frag1, const char *frag2)
{
    struct kube_config cfg;
    char err[512];
    int rc = kube_config_load(path, &cfg, err, sizeof(err));
    if (rc != want_rc)
        fail_msg("%s: rc %d (%s), want %d; err: %s", path ? path : "(none)", rc, k_strerror(rc),
                 want_rc, err);
    if (frag1 && !strstr(err, frag1))
        fail_msg("error \"%s\" lacks \"%s\"", err, frag1);
    if (frag2 && !strstr(err, frag2))
        fail_msg("error \"%s\" lacks \"%s\"", err, frag2);
    assert_null(strchr(err, '\n'));
    /* The struct is left empty on failure. */
    assert_null(cfg.server);
    assert_null(cfg.token);
    kube_config_cleanup(&cfg);
}

static void load_ok(const char *path, struct kube_config *cfg)
{
    char err[512];
    int rc = kube_config_load(path, cfg, err, sizeof(err));
    if (rc != K_OK)
        fail_msg("%s: rc %d: %s", path ? path : "(none)", rc, err);
}

static void test_current_context_and_data(void **state)
{
    (void)state;
    struct kube_config cfg;
    load_ok(KC_DIR "/data.yaml", &cfg);
    /* The trailing slash is dropped. */
    assert_string_equal(cfg.server, "https://127.0.0.1:40123");
    assert_null(cfg.ca_file);
    assert_int_equal(cfg.ca_pem_len, strlen(ca_pem));
    assert_memory_equal(cfg.ca_pem, ca_pem, cfg.ca_pem_len);
    assert_int_equal(cfg.cert_pem[cfg.cert_pem_len], '\0');
    assert_int_equal(cfg.cert_pem_len, strlen(cert_pem));
    assert_string_equal(cfg.cert_pem, cert_pem);
    assert_int_equal(cfg.key_pem_len, strlen(key_pem));
    assert_string_equal(cfg.key_pem, key_pem);
    assert_null(cfg.cert_file);
    assert_null(cfg.key_file);
    assert_null(cfg.token);
    assert_null(cfg.token_file);
    assert_false(cfg.insecure);
    assert_string_equal(cfg.source, KC_DIR "/data.yaml");
    kube_config_cleanup(&cfg);
    /* Idempotent. */
    kube_config_cleanup(&cfg);
    kube_config_cleanup(NULL);
}

static void test_relative_paths(void **state)
{
    (void)state;
    struct kube_config cfg;
    load_ok(KC_DIR "/files.yaml", &cfg);
    assert_string_equal(cfg.server, "https://api.files.example:6443");
    assert_string_equal(cfg.ca_file, KC_DIR "/certs/ca.crt");
    assert_string_equal(cfg.cert_file, KC_DIR "/certs/client.crt");
    assert_string_equal(cfg.key_file, KC_DIR "/./certs/client.key");
    assert_null(cfg.ca_pem);
    assert_null(cfg.cert_pem);
    assert_null(cfg.key_pem);
    kube_config_cleanup(&cfg);

    load_ok(KC_DIR "/nested/up.yaml", &cfg);
    assert_string_equal(cfg.ca_file, KC_DIR "/nested/../certs/ca.crt");
    assert_string_equal(cfg.token_file, KC_DIR "/nested/../certs/token.txt");
    /* A tokenFile alone is read at load time, whitespace trimmed. */
    assert_string_equal(cfg.token, "file-token-abc123");
    kube_config_cleanup(&cfg);
}

static void test_token_and_insecure(void **state)
{
    (void)state;
    struct kube_config cfg;
    load_ok(KC_DIR "/token.yaml", &cfg);
    assert_string_equal(cfg.server, "https://t.example:443");
    assert_true(cfg.insecure);
    /* A literal token wins; the file is kept for refreshes. */
    assert_string_equal(cfg.token, "literal-token");
    assert_string_equal(cfg.token_file, KC_DIR "/certs/token.txt");
    assert_null(cfg.ca_file);
    assert_null(cfg.ca_pem);
    kube_config_cleanup(&cfg);

    expect_fail(KC_DIR "/insecure_bad.yaml", K_EINVAL, "insecure-skip-tls-verify", "maybe");
}

static void test_anonymous_user(void **state)
{
    (void)state;
    struct kube_config cfg;
    load_ok(KC_DIR "/anonymous.yaml", &cfg);
    assert_string_equal(cfg.server, "http://127.0.0.1:8080");
    assert_null(cfg.token);
    assert_null(cfg.cert_file);
    assert_null(cfg.cert_pem);
    kube_config_cleanup(&cfg);
}

static void test_kubeconfig_list(void **state)
{
    (void)state;
    struct kube_config cfg;
    /* Missing entries are skipped; empty entries ignored; the first definition wins. */
    setenv("KUBECONFIG",
           KC_DIR "/does-not-exist.yaml::" KC_DIR "/list_a.yaml:" KC_DIR "/list_b.yaml", 1);
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://b.example:6443");
    assert_string_equal(cfg.token, "token-from-a");
    /* The CA path is relative to list_b.yaml, the file that defines the cluster. */
    assert_string_equal(cfg.ca_file, KC_DIR "/certs/ca.crt");
    assert_string_equal(cfg.source, KC_DIR "/list_a.yaml");
    kube_config_cleanup(&cfg);

    /* Swapped: list_b's current-context and its definitions win. */
    setenv("KUBECONFIG", KC_DIR "/list_b.yaml:" KC_DIR "/list_a.yaml", 1);
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://b.example:6443");
    assert_string_equal(cfg.token, "token-from-b");
    kube_config_cleanup(&cfg);

    /* An explicit path beats $KUBECONFIG. */
    load_ok(KC_DIR "/token.yaml", &cfg);
    assert_string_equal(cfg.token, "literal-token");
    kube_config_cleanup(&cfg);

    setenv("KUBECONFIG", "/nope/a.yaml:/nope/b.yaml", 1);
    expect_fail(NULL, K_ENOTFOUND, "/nope/a.yaml:/nope/b.yaml", "none of the files exist");

    /* A broken file in the list is an error naming that file. */
    setenv("KUBECONFIG", KC_DIR "/list_a.yaml:" KC_DIR "/bad_yaml.yaml", 1);
    expect_fail(NULL, K_EINVAL, KC_DIR "/bad_yaml.yaml", "line");
}

static void test_missing_file(void **state)
{
    (void)state;
    expect_fail(KC_DIR "/no-such-file.yaml", K_ENOTFOUND, "kubeconfig " KC_DIR "/no-such-file.yaml",
                "No such file");
    /* An explicit path that is missing is an error even when other sources exist. */
    setenv("KUBECONFIG", KC_DIR "/data.yaml", 1);
    expect_fail(KC_DIR "/no-such-file.yaml", K_ENOTFOUND, "no-such-file.yaml", NULL);
    /* Nothing at all. */
    unsetenv("KUBECONFIG");
    expect_fail(NULL, K_ENOTFOUND, "no Kubernetes configuration", ".kube/config");
    unsetenv("HOME");
    expect_fail(NULL, K_ENOTFOUND, "no Kubernetes configuration", NULL);
}

static void test_home_config(void **state)
{
    (void)state;
    /* $HOME/.kube/config: point HOME at a directory holding one. */
    char dir[] = "/tmp/gputri-home-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char kube[64], path[128];
    snprintf(kube, sizeof(kube), "%s/.kube", dir);
    snprintf(path, sizeof(path), "%s/config", kube);
    assert_int_equal(mkdir(kube, 0700), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("current-context: h\nclusters:\n- name: h\n  cluster: {server: https://home.example}\n"
          "contexts:\n- name: h\n  context: {cluster: h}\n",
          f);
    fclose(f);
    setenv("HOME", dir, 1);
    struct kube_config cfg;
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://home.example");
    assert_string_equal(cfg.source, path);
    kube_config_cleanup(&cfg);
    unlink(path);
    rmdir(kube);
    rmdir(dir);
}

/* Writes a kubeconfig whose one cluster has `server` (YAML-quoted) into a temporary file. */
static void write_server_config(char *path, size_t len, const char *server)
{
    snprintf(path, len, "/tmp/gputri-kc-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "current-context: s\nclusters:\n- name: s\n  cluster: {server: \"%s\"}\n"
            "contexts:\n- name: s\n  context: {cluster: s, user: u}\n"
            "users:\n- name: u\n  user: {token: secret}\n",
            server);
    fclose(f);
}

/* Only a prefix is a scheme: "://" later in the server (a query) must not turn off https. */
static void test_server_scheme(void **state)
{
    (void)state;
    static const struct {
        const char *server, *want;
    } cases[] = {
        /* trailing slashes are trimmed, as before */
        {"127.0.0.1:28080/x?a=://", "https://127.0.0.1:28080/x?a=:"},
        {"127.0.0.1:28080", "https://127.0.0.1:28080"},
        {"api.example:6443/p/", "https://api.example:6443/p"},
        {"1http://x.example", "https://1http://x.example"},
        {"x_y://h.example", "https://x_y://h.example"},
        {"https://a.example:6443", "https://a.example:6443"},
        {"HTTPS://a.example", "HTTPS://a.example"},
        {"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
    };
    char path[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_server_config(path, sizeof(path), cases[i].server);
        struct kube_config cfg;
        load_ok(path, &cfg);
        if (strcmp(cfg.server, cases[i].want) != 0)
            fail_msg("server \"%s\" loaded as \"%s\", want \"%s\"", cases[i].server, cfg.server,
                     cases[i].want);
        kube_config_cleanup(&cfg);
        unlink(path);
    }
    /* A scheme that is neither http nor https is refused, not handed to libcurl. */
    write_server_config(path, sizeof(path), "ftp://files.example");
    expect_fail(path, K_EINVAL, "ftp://", "not http or https");
    unlink(path);
    write_server_config(path, sizeof(path), "a+b.c-d://h.example");
    expect_fail(path, K_EINVAL, "a+b.c-d://", NULL);
    unlink(path);
}

/* A token with a control character would inject headers into every request: refused, naming
 * the field, whether literal or from a tokenFile. */
static void test_token_control_chars(void **state)
{
    (void)state;
    char tok[] = "/tmp/gputri-tok-XXXXXX";
    int fd = mkstemp(tok);
    assert_true(fd >= 0);
    FILE *tf = fdopen(fd, "w");
    assert_non_null(tf);
    fputs("abc\r\nX-Injected: yes\n", tf);
    fclose(tf);
    static const char *const users[] = {
        "{token: \"abc\\r\\nX-Injected: yes\"}", "{token: \"abc\\u001bdef\"}",
        "{token: \"abc\\u007fdef\"}", NULL, /* the tokenFile */
    };
    for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
        char path[64], user[128];
        snprintf(path, sizeof(path), "/tmp/gputri-kc-XXXXXX");
        int kfd = mkstemp(path);
        assert_true(kfd >= 0);
        FILE *f = fdopen(kfd, "w");
        assert_non_null(f);
        if (users[i])
            snprintf(user, sizeof(user), "%s", users[i]);
        else
            snprintf(user, sizeof(user), "{tokenFile: \"%s\"}", tok);
        fprintf(f,
                "current-context: s\nclusters:\n- name: s\n  cluster: {server: \"https://h:1\"}\n"
                "contexts:\n- name: s\n  context: {cluster: s, user: u}\n"
                "users:\n- name: u\n  user: %s\n",
                user);
        fclose(f);
        if (users[i])
            expect_fail(path, K_EINVAL, "user \"u\": token contains a control character", NULL);
        else
            expect_fail(path, K_EINVAL, "user \"u\": tokenFile /tmp/gputri-tok-",
                        "contains a control character");
        unlink(path);
    }
    unlink(tok);
    assert_true(kube_header_value_ok("eyJhbGciOi.abc-_~+/="));
    assert_true(kube_header_value_ok("utf-8 \xc3\xa9"));
    assert_false(kube_header_value_ok("a\tb"));
}

static void test_unknown_names(void **state)
{
    (void)state;
    expect_fail(KC_DIR "/unknown_context.yaml", K_EINVAL,
                "kubeconfig " KC_DIR "/unknown_context.yaml: context \"foo\" not found", NULL);
    expect_fail(KC_DIR "/unknown_cluster.yaml", K_EINVAL, "cluster \"missing\" not found", NULL);
    expect_fail(KC_DIR "/unknown_user.yaml", K_EINVAL, "user \"ghost\" not found", NULL);
    expect_fail(KC_DIR "/no_server.yaml", K_EINVAL, "cluster \"c\" has no server", NULL);
    expect_fail(KC_DIR "/no_current_context.yaml", K_EINVAL, "no current-context", NULL);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_fail(KC_DIR "/bad_yaml.yaml", K_EINVAL, "kubeconfig " KC_DIR "/bad_yaml.yaml",
                "invalid YAML at line");
    expect_fail(KC_DIR "/bad_base64.yaml", K_EINVAL, "certificate-authority-data",
                "not valid base64");
    expect_fail(KC_DIR "/missing_ca.yaml", K_ENOTFOUND, "does-not-exist.crt", NULL);
    expect_fail(KC_DIR "/cert_without_key.yaml", K_EINVAL,
                "has a client certificate but no client key", NULL);
    /* A directory is not a kubeconfig. */
    expect_fail(KC_DIR, K_EINVAL, "kubeconfig " KC_DIR, NULL);
    /* A server that is only a scheme used to load as "https:". */
    expect_fail(KC_DIR "/no_host.yaml", K_EINVAL, "server \"https://\" names no host", NULL);
}

static void test_in_cluster(void **state)
{
    (void)state;
    struct kube_config cfg;
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("GPUTRI_SERVICEACCOUNT_DIR", KC_DIR "/serviceaccount", 1);
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.token, "sa-token-xyz");
    assert_string_equal(cfg.token_file, KC_DIR "/serviceaccount/token");
    assert_string_equal(cfg.ca_file, KC_DIR "/serviceaccount/ca.crt");
    assert_string_equal(cfg.source, "in-cluster");
    assert_false(cfg.insecure);
    kube_config_cleanup(&cfg);

    /* IPv6 service address. */
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    kube_config_cleanup(&cfg);

    /* $KUBECONFIG comes before in-cluster. */
    setenv("KUBECONFIG", KC_DIR "/token.yaml", 1);
    load_ok(NULL, &cfg);
    assert_string_equal(cfg.server, "https://t.example:443");
    kube_config_cleanup(&cfg);
    unsetenv("KUBECONFIG");

    /* Without the token file it fails, naming the file. */
    setenv("GPUTRI_SERVICEACCOUNT_DIR", KC_DIR "/no-such-dir", 1);
    expect_fail(NULL, K_ENOTFOUND, "in-cluster: token " KC_DIR "/no-such-dir/token", NULL);

    /* Only the host without the port is not in-cluster: falls through to ~/.kube/config. */
    unsetenv("KUBERNETES_SERVICE_PORT");
    expect_fail(NULL, K_ENOTFOUND, "no Kubernetes configuration", NULL);
}

static void test_null_err_buffer(void **state)
{
    (void)state;
    struct kube_config cfg;
    assert_int_equal(kube_config_load(KC_DIR "/unknown_context.yaml", &cfg, NULL, 0), K_EINVAL);
    char tiny[8];
    assert_int_equal(kube_config_load(KC_DIR "/unknown_context.yaml", &cfg, tiny, sizeof(tiny)),
                     K_EINVAL);
    assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_current_context_and_data, clean_env),
        cmocka_unit_test_setup(test_relative_paths, clean_env),
        cmocka_unit_test_setup(test_token_and_insecure, clean_env),
        cmocka_unit_test_setup(test_token_control_chars, clean_env),
        cmocka_unit_test_setup(test_anonymous_user, clean_env),
        cmocka_unit_test_setup(test_kubeconfig_list, clean_env),
        cmocka_unit_test_setup(test_missing_file, clean_env),
        cmocka_unit_test_setup(test_home_config, clean_env),
        cmocka_unit_test_setup(test_server_scheme, clean_env),
        cmocka_unit_test_setup(test_unknown_names, clean_env),
        cmocka_unit_test_setup(test_bad_input, clean_env),
        cmocka_unit_test_setup(test_in_cluster, clean_env),
        cmocka_unit_test_setup(test_null_err_buffer, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
