/* Tests for cli/args.c: the kubectl plugin's pflag-style command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"

#define ARGV(...) ((char *const[]){"kubectl-gputri", __VA_ARGS__})
#define ARGC(...) ((int)(sizeof((char *[]){"kubectl-gputri", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, err, ...)                                                                         \
    plugin_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (a), (err), sizeof(err))

static void test_pods_defaults(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "pods"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_PODS);
    assert_null(a.ns);
    assert_false(a.all_namespaces);
    assert_null(a.output);
    assert_null(a.label_selector);
    assert_false(a.watch);
    assert_null(a.kubeconfig);
    assert_null(a.gpu_resources);
    assert_int_equal(a.verbosity, 0);
}

static void test_namespace_spellings(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "pods", "-n", "ml"), 0);
    assert_string_equal(a.ns, "ml");
    assert_int_equal(PARSE(&a, err, "pods", "-nml"), 0);
    assert_string_equal(a.ns, "ml");
    assert_int_equal(PARSE(&a, err, "pods", "-n=ml"), 0);
    assert_string_equal(a.ns, "ml");
    assert_int_equal(PARSE(&a, err, "pods", "--namespace", "ml"), 0);
    assert_string_equal(a.ns, "ml");
    assert_int_equal(PARSE(&a, err, "--namespace=ml", "pods"), 0); /* flags before the command */
    assert_string_equal(a.ns, "ml");
    assert_int_equal(a.cmd, PLUGIN_CMD_PODS);
    assert_int_equal(PARSE(&a, err, "pods", "-n", "a", "-n", "b"), 0); /* last wins */
    assert_string_equal(a.ns, "b");
}

static void test_all_namespaces_and_output(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "pods", "-A"), 0);
    assert_true(a.all_namespaces);
    assert_int_equal(PARSE(&a, err, "pods", "--all-namespaces"), 0);
    assert_true(a.all_namespaces);
    assert_int_equal(PARSE(&a, err, "pods", "-A", "--all-namespaces=false"), 0);
    assert_false(a.all_namespaces);
    assert_int_equal(PARSE(&a, err, "pods", "-o", "wide"), 0);
    assert_string_equal(a.output, "wide");
    assert_int_equal(PARSE(&a, err, "pods", "-ojson"), 0);
    assert_string_equal(a.output, "json");
    assert_int_equal(PARSE(&a, err, "pods", "--output=json", "-A"), 0);
    assert_string_equal(a.output, "json");
    assert_int_equal(PARSE(&a, err, "pods", "-Ao", "wide"), 0); /* combined shorthands */
    assert_true(a.all_namespaces);
    assert_string_equal(a.output, "wide");
    assert_int_equal(PARSE(&a, err, "pods", "-o", "jsonpath={.items[*].metadata.name}"), 0);
    assert_string_equal(a.output, "jsonpath={.items[*].metadata.name}");
    assert_int_equal(PARSE(&a, err, "pods", "-o=custom-columns=N:.metadata.name"), 0);
    assert_string_equal(a.output, "custom-columns=N:.metadata.name");
}

static void expect_usage(int rc, const char *err, const char *needle)
{
    assert_int_equal(rc, PLUGIN_EXIT_USAGE);
    if (!strstr(err, needle))
        fail_msg("\"%s\" does not contain \"%s\"", err, needle);
    assert_null(strchr(err, '\n'));
}

static void test_selection_and_printing_flags(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "pods", "-l", "app=x", "--field-selector", "spec.nodeName=",
                           "-w", "--sort-by=.status.cause", "--no-headers", "--show-labels"),
                     0);
    assert_string_equal(a.label_selector, "app=x");
    assert_string_equal(a.field_selector, "spec.nodeName=");
    assert_string_equal(a.sort_by, ".status.cause");
    assert_true(a.watch && a.no_headers && a.show_labels);
    assert_int_equal(PARSE(&a, err, "pods", "--selector=app", "--watch=false"), 0);
    assert_string_equal(a.label_selector, "app");
    assert_false(a.watch);
    assert_int_equal(PARSE(&a, err, "pods", "-Awl", "a=b"), 0);
    assert_true(a.all_namespaces && a.watch);
    assert_string_equal(a.label_selector, "a=b");
    expect_usage(PARSE(&a, err, "pods", "-l", ""), err, "-l needs a selector");
    expect_usage(PARSE(&a, err, "pods", "--sort-by", "{.a"), err, "--sort-by {.a:");
    expect_usage(PARSE(&a, err, "pods", "-o", "jsonpath={.a"), err, "error parsing jsonpath");
    expect_usage(PARSE(&a, err, "pods", "-o", "custom-columns=x"), err,
                 "expected <header>:<json-path-expr>");
    expect_usage(PARSE(&a, err, "explain", "p", "-w"), err, "explain works on one pod");
    assert_int_equal(PARSE(&a, err, "explain", "p", "-o", "yaml"), 0);
    assert_string_equal(a.output, "yaml");
}

static void test_global_flags(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(
        PARSE(&a, err, "--kubeconfig", "/tmp/kc", "pods", "--gpu-resources=amd.com/gpu", "--v=4"),
        0);
    assert_string_equal(a.kubeconfig, "/tmp/kc");
    assert_string_equal(a.gpu_resources, "amd.com/gpu");
    assert_null(a.gpu_device_classes);
    assert_int_equal(a.verbosity, 4);
    assert_int_equal(PARSE(&a, err, "pods", "-v", "2"), 0);
    assert_int_equal(a.verbosity, 2);
    assert_int_equal(PARSE(&a, err, "pods", "--gpu-device-classes=gpu.nvidia.com,tpu.*"), 0);
    assert_string_equal(a.gpu_device_classes, "gpu.nvidia.com,tpu.*");
    assert_int_equal(PARSE(&a, err, "explain", "p", "--gpu-device-classes="), 0);
    assert_string_equal(a.gpu_device_classes, "");
    assert_int_equal(a.no_scheduler_grace, 0); /* the default */
    assert_int_equal(PARSE(&a, err, "pods", "--no-scheduler-grace-period=5m"), 0);
    assert_int_equal(a.no_scheduler_grace, 300);
    assert_int_equal(PARSE(&a, err, "explain", "p", "--no-scheduler-grace-period", "1m30s"), 0);
    assert_int_equal(a.no_scheduler_grace, 90);
}

static void test_explain(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "explain", "trainer-0", "-n", "ml"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_EXPLAIN);
    assert_string_equal(a.pod, "trainer-0");
    assert_string_equal(a.ns, "ml");
    assert_int_equal(PARSE(&a, err, "explain", "pod/trainer-0"), 0);
    assert_string_equal(a.pod, "trainer-0");
    assert_int_equal(PARSE(&a, err, "explain", "pods/trainer-0"), 0);
    assert_string_equal(a.pod, "trainer-0");
    assert_int_equal(PARSE(&a, err, "explain", "--", "-odd-name"), 0); /* "--" ends the flags */
    assert_string_equal(a.pod, "-odd-name");
}

static void test_help_and_version(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "--help"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_HELP);
    assert_int_equal(PARSE(&a, err, "pods", "-h"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_HELP);
    assert_int_equal(PARSE(&a, err, "explain", "--help"), 0); /* help wins over a missing POD */
    assert_int_equal(a.cmd, PLUGIN_CMD_HELP);
    assert_int_equal(PARSE(&a, err, "help"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_HELP);
    assert_int_equal(PARSE(&a, err, "--version"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_VERSION);
    assert_int_equal(PARSE(&a, err, "version"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_VERSION);
    assert_string_equal(plugin_cmd_name(PLUGIN_CMD_EXPLAIN), "explain");
}

/* Every usage error returns 2 and names the problem in one line. */

static void test_usage_errors(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    expect_usage(plugin_parse_args(1, ARGV(NULL), &a, err, sizeof(err)), err,
                 "command is required");
    expect_usage(PARSE(&a, err, "frobnicate"), err, "unknown command \"frobnicate\"");
    expect_usage(PARSE(&a, err, "pods", "--bogus"), err, "unknown flag: --bogus");
    expect_usage(PARSE(&a, err, "pods", "-x"), err, "unknown shorthand flag: 'x' in -x");
    expect_usage(PARSE(&a, err, "pods", "-n"), err, "flag needs an argument");
    expect_usage(PARSE(&a, err, "pods", "--namespace"), err, "flag needs an argument: --namespace");
    expect_usage(PARSE(&a, err, "pods", "-n="), err, "needs a namespace name");
    expect_usage(PARSE(&a, err, "pods", "-o", "toml"), err,
                 "unable to match a printer suitable for the output format \"toml\"");
    expect_usage(PARSE(&a, err, "pods", "extra"), err, "pods takes no arguments");
    expect_usage(PARSE(&a, err, "pods", "-A=maybe"), err, "want true or false");
    expect_usage(PARSE(&a, err, "pods", "--v=loud"), err, "invalid argument \"loud\" for --v");
    expect_usage(PARSE(&a, err, "pods", "--no-scheduler-grace-period=500ms"), err,
                 "a duration of at least 1s");
    expect_usage(PARSE(&a, err, "pods", "--no-scheduler-grace-period=25h"), err, "at most 24h");
    expect_usage(PARSE(&a, err, "pods", "--no-scheduler-grace-period=soon"), err,
                 "invalid argument \"soon\" for --no-scheduler-grace-period");
    expect_usage(PARSE(&a, err, "pods", "--context"), err, "flag needs an argument: --context");
    expect_usage(PARSE(&a, err, "pods", "--context="), err, "--context needs a value");
    expect_usage(PARSE(&a, err, "pods", "--insecure-skip-tls-verify=yes"), err,
                 "want true or false");
    expect_usage(PARSE(&a, err, "explain"), err, "explain needs a pod name");
    expect_usage(PARSE(&a, err, "explain", "a", "b"), err, "explain takes one pod");
    expect_usage(PARSE(&a, err, "explain", "deploy/x"), err, "explain takes a pod name");
    expect_usage(PARSE(&a, err, "explain", "p", "-A"), err, "use -n NAMESPACE, not -A");
    expect_usage(PARSE(&a, err, "explain", "p", "-o", "wide"), err,
                 "explain prints text, or -o json, yaml, jsonpath=");
    assert_int_equal(PARSE(&a, err, "explain", "p", "-o", "jsonpath={.status.cause}"), 0);
    /* a tiny error buffer is still NUL-terminated */
    char small[8];
    assert_int_equal(plugin_parse_args(ARGC("pods", "--bogus"), ARGV("pods", "--bogus"), &a, small,
                                       sizeof(small)),
                     PLUGIN_EXIT_USAGE);
    assert_int_equal(strlen(small), 7);
}

/* kubectl's global flags, in kubectl's spellings, anywhere on the line. */
static void test_kubectl_global_flags(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "--context", "prod", "pods", "-A", "--cluster=c", "--user", "u",
                           "-s", "https://k:6443", "--token", "t", "--as=alice", "--as-group", "g1",
                           "--as-group=g2", "--as-uid", "7", "--insecure-skip-tls-verify",
                           "--tls-server-name", "kubernetes", "--request-timeout", "30s",
                           "--certificate-authority", "ca.crt", "--client-certificate=c.crt",
                           "--client-key", "c.key"),
                     0);
    assert_int_equal(a.cmd, PLUGIN_CMD_PODS);
    assert_true(a.all_namespaces);
    assert_string_equal(a.ov.context, "prod");
    assert_string_equal(a.ov.cluster, "c");
    assert_string_equal(a.ov.user, "u");
    assert_string_equal(a.ov.server, "https://k:6443");
    assert_string_equal(a.ov.token, "t");
    assert_string_equal(a.ov.as, "alice");
    assert_int_equal(a.ov.n_as_groups, 2);
    assert_string_equal(a.ov.as_groups[1], "g2");
    assert_string_equal(a.ov.as_uid, "7");
    assert_true(a.ov.insecure);
    assert_string_equal(a.ov.tls_server_name, "kubernetes");
    assert_string_equal(a.ov.request_timeout, "30s");
    assert_string_equal(a.ov.certificate_authority, "ca.crt");
    assert_string_equal(a.ov.client_certificate, "c.crt");
    assert_string_equal(a.ov.client_key, "c.key");
    assert_int_equal(PARSE(&a, err, "pods", "--insecure-skip-tls-verify=false", "-shttps://x"), 0);
    assert_false(a.ov.insecure);
    assert_string_equal(a.ov.server, "https://x");
    /* Positionals are kept for completion, even on a usage error. */
    assert_int_equal(PARSE(&a, err, "explain"), PLUGIN_EXIT_USAGE);
    assert_int_equal(a.npos, 1);
    assert_string_equal(a.pos[0], "explain");
    assert_true(plugin_flag_takes_value("--context"));
    assert_true(plugin_flag_takes_value("-n"));
    assert_false(plugin_flag_takes_value("--context=x"));
    assert_false(plugin_flag_takes_value("-A"));
    assert_false(plugin_flag_takes_value("--insecure-skip-tls-verify"));
}

static void test_nodes(void **state)
{
    (void)state;
    struct plugin_args a;
    char err[256];
    assert_int_equal(PARSE(&a, err, "nodes"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_NODES);
    assert_string_equal(plugin_cmd_name(a.cmd), "nodes");
    assert_null(a.label_selector);
    assert_null(a.resource);
    assert_int_equal(
        PARSE(&a, err, "no", "-l", "pool=gpu", "--resource=nvidia.com/gpu", "-o", "wide"), 0);
    assert_int_equal(a.cmd, PLUGIN_CMD_NODES);
    assert_string_equal(a.label_selector, "pool=gpu");
    assert_string_equal(a.resource, "nvidia.com/gpu");
    assert_string_equal(a.output, "wide");
    assert_int_equal(PARSE(&a, err, "--selector=a in (b,c)", "node", "-n", "ml"), 0);
    assert_string_equal(a.label_selector,
                        "a in (b,c)"); /* -n is ignored, as kubectl get nodes does */
    assert_int_equal(PARSE(&a, err, "nodes", "n1"), PLUGIN_EXIT_USAGE);
    assert_string_equal(err, "nodes takes no arguments, got \"n1\"");
    assert_int_equal(PARSE(&a, err, "nodes", "--resource="), PLUGIN_EXIT_USAGE);
    assert_int_equal(PARSE(&a, err, "pods", "--resource", "x"), PLUGIN_EXIT_USAGE);
    assert_string_equal(err, "--resource works with nodes only");
    assert_int_equal(PARSE(&a, err, "explain", "p", "-l", "x=y"), PLUGIN_EXIT_USAGE);
    assert_non_null(strstr(err, "explain works on one pod: -l"));
    assert_true(plugin_flag_takes_value("-l"));
    assert_true(plugin_flag_takes_value("--resource"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pods_defaults),
        cmocka_unit_test(test_kubectl_global_flags),
        cmocka_unit_test(test_namespace_spellings),
        cmocka_unit_test(test_all_namespaces_and_output),
        cmocka_unit_test(test_selection_and_printing_flags),
        cmocka_unit_test(test_global_flags),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
