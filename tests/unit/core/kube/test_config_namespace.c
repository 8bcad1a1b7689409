/* Tests for the namespace core/kube/config.c reads: the default namespace as kubectl picks it. */
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

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/gputri-config-ns-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("POD_NAMESPACE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[8][256];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* The namespace kube_config_load() finds, "default" when none is set, "(error)" on failure. */
static const char *namespace_of(const char *explicit_path)
{
    static char ns[256];
    struct kube_config cfg;
    char err[256];
    if (kube_config_load(explicit_path, &cfg, err, sizeof(err)) != K_OK) {
        snprintf(ns, sizeof(ns), "(error)");
        return ns;
    }
    snprintf(ns, sizeof(ns), "%s", cfg.ns ? cfg.ns : "default");
    kube_config_cleanup(&cfg);
    return ns;
}

#define CONFIG(current, contexts)                                                                  \
    "apiVersion: v1\nkind: Config\n" current "clusters:\n- name: c\n  cluster:\n"                  \
    "    server: https://127.0.0.1:6443\nusers:\n- name: u\n  user: {}\ncontexts:\n" contexts

static void test_context_namespace(void **state)
{
    (void)state;
    const char *kc = write_file(
        "a",
        CONFIG("current-context: dev\n",
               "- name: prod\n  context: {cluster: c, user: u, namespace: prod-ns}\n"
               "- name: dev\n  context:\n    cluster: c\n    user: u\n    namespace: team-a\n"));
    assert_string_equal(namespace_of(kc), "team-a");
}

static void test_no_namespace_is_default(void **state)
{
    (void)state;
    const char *kc =
        write_file("b", CONFIG("current-context: dev\n", "- name: dev\n  context: {cluster: c}\n"));
    assert_string_equal(namespace_of(kc), "default");
    /* a missing file is an error, reported by kube_config_load() itself */
    assert_string_equal(namespace_of("/nonexistent/kubeconfig"), "(error)");
    kc = write_file("c", CONFIG("", "- name: dev\n  context: {cluster: c, namespace: x}\n"));
    assert_string_equal(namespace_of(kc), "(error)"); /* no current-context */
    kc = write_file("d", "{{{ not yaml");
    assert_string_equal(namespace_of(kc), "(error)");
}

static void test_kubeconfig_list_merges(void **state)
{
    (void)state;
    /* current-context from the first file that sets it; the context from the first defining it */
    const char *one = write_file("one", CONFIG("", "- name: dev\n  context: {cluster: c}\n"));
    const char *two = write_file("two", CONFIG("current-context: dev\n",
                                               "- name: dev\n  context: {cluster: c, namespace: "
                                               "shadowed}\n- name: x\n  context: {cluster: c}\n"));
    char list[600];
    snprintf(list, sizeof(list), "%s/missing:%s:%s", dir, one, two);
    setenv("KUBECONFIG", list, 1);
    assert_string_equal(namespace_of(NULL),
                        "default"); /* "one" defines dev first, without a namespace */
    snprintf(list, sizeof(list), "%s:%s", two, one);
    setenv("KUBECONFIG", list, 1);
    assert_string_equal(namespace_of(NULL), "shadowed");
    /* --kubeconfig wins over $KUBECONFIG */
    const char *three =
        write_file("three", CONFIG("current-context: p\n",
                                   "- name: p\n  context: {cluster: c, namespace: z}\n"));
    assert_string_equal(namespace_of(three), "z");
    unsetenv("KUBECONFIG");
}

static void test_in_cluster(void **state)
{
    (void)state;
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("GPUTRI_SERVICEACCOUNT_DIR", dir, 1);
    write_file("namespace", "gputri-system\n");
    write_file("token", "abc\n");
    assert_string_equal(namespace_of(NULL), "gputri-system");
    setenv("POD_NAMESPACE", "from-env", 1);
    assert_string_equal(namespace_of(NULL), "from-env");
    unsetenv("POD_NAMESPACE");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("GPUTRI_SERVICEACCOUNT_DIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_namespace),
        cmocka_unit_test(test_no_namespace_is_default),
        cmocka_unit_test(test_kubeconfig_list_merges),
        cmocka_unit_test(test_in_cluster),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
