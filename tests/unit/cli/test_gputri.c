/*
 * test_gputri.c - the gputri command line (cli/gputri.c): help and version, every usage error
 * and its exit status 2, the checks of the namespace and pod name, and the answers and API
 * errors of triage/explain through the recording fake API server (tests/lib/fake_kube.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cmdline.h"
#include "gputri.h"
#include "objects.h"
#include "util/result.h"

/* gputri's entry point in the shape cmdline.h runs. */
static int call_gputri(int argc, char **argv, FILE *out, FILE *err, void *ctx)
{
    const struct gputri_io io = {.out = out, .err = err, .client = ctx};
    return gputri_main(argc, argv, &io);
}

/* Run gputri with the NULL-terminated arguments over the fake. */
static int run(struct cmdline_fixture *fx, ...)
{
    va_list ap;
    va_start(ap, fx);
    int status = cmdline_runv(&fx->r, call_gputri, fx->client, "gputri", ap);
    va_end(ap);
    return status;
}

static void test_help_and_version(void **state)
{
    struct cmdline_fixture *fx = *state;
    assert_int_equal(run(fx, "help", NULL), 0);
    assert_non_null(strstr(fx->r.out, "  gputri triage NAMESPACE POD"));
    assert_non_null(strstr(fx->r.out, "kubectl's global flags (kubectl options):\n"));
    assert_non_null(strstr(fx->r.out, "--no-scheduler-grace-period D"));
    assert_non_null(strstr(fx->r.out, "2 usage error.\n"));
    assert_int_equal(run(fx, "version", NULL), 0);
    assert_true(strncmp(fx->r.out, "gputri ", 7) == 0);
    assert_int_equal(run(fx, "version", "x", NULL), 2);
    assert_string_equal(fx->r.err, "gputri: version takes no arguments\nRun 'gputri --help' for "
                                   "usage.\n");
    /* no command: the usage, on stderr */
    assert_int_equal(run(fx, NULL), 2);
    assert_non_null(strstr(fx->r.err, "Usage:\n"));
    assert_string_equal(fx->r.out, "");
    assert_int_equal(fake_kube_count(&fx->fake), 0);
}

/* Every usage error exits 2 with its message, before any request. */
static void test_usage_errors(void **state)
{
    struct cmdline_fixture *fx = *state;
    static const struct {
        const char *args[6];
        const char *want;
    } cases[] = {
        {{"frob"},
         "gputri: unknown command \"frob\" (want triage, explain, nodes, help or version)"},
        {{"triage", "ns"},
         "gputri: triage needs NAMESPACE and POD (or -n NAMESPACE POD)\nRun 'gputri --help' for "
         "usage.\n"},
        {{"triage", "-n", "ns"}, "gputri: triage needs POD\n"},
        {{"triage", "-n", "ns", "a", "b"},
         "gputri: triage: too many arguments (from \"b\"); want POD with -n NAMESPACE\n"},
        {{"triage", "--namespace=", "p"}, "gputri: --namespace needs a value"},
        {{"triage", "-n", "Team", "p"}, "gputri: invalid namespace \"Team\""},
        /* one dash is a letter, never an abbreviated long option; nor is a cut --name */
        {{"triage", "-u", "x", "ns", "p"}, "gputri: unknown option -u\n"},
        {{"-kubeconfig", "x", "triage", "ns", "p"}, "gputri: unknown option -k\n"},
        {{"triage", "--names", "x", "p"}, "gputri: unknown option --names\n"},
        {{"--no-sched=1s", "triage", "ns", "p"}, "gputri: unknown option --no-sched\n"},
        {{"explain", "ns", "p", "q"},
         "gputri: explain: too many arguments (from \"q\"); want NAMESPACE POD\n"},
        {{"triage", "Team", "p"}, "gputri: invalid namespace \"Team\": a DNS label"},
        {{"triage", "team-", "p"}, "gputri: invalid namespace \"team-\""},
        {{"triage", "a.b", "p"}, "gputri: invalid namespace \"a.b\""},
        {{"triage", "ns", "p_1"}, "gputri: invalid pod name \"p_1\": a DNS subdomain"},
        {{"triage", "ns", "p."}, "gputri: invalid pod name"},
        {{"--no-scheduler-grace-period", "0s", "triage", "ns", "p"},
         "gputri: invalid --no-scheduler-grace-period \"0s\": "},
        {{"--insecure-skip-tls-verify=maybe", "triage", "ns", "p"},
         "gputri: invalid argument \"maybe\" for --insecure-skip-tls-verify: want true or false"},
        {{"-s", "", "triage", "ns", "p"}, "gputri: -s needs a value"},
        {{"--token", "", "triage", "ns", "p"}, "gputri: --token needs a value"},
        {{"--token=", "triage", "ns", "p"}, "gputri: --token needs a value"},
        {{"--bogus", "triage", "ns", "p"}, "gputri: unknown option --bogus"},
        {{"triage", "ns", "p", "--context"}, "gputri: option --context needs a value"},
        {{"--gpu-resources", "a*b", "triage", "ns", "p"},
         "gputri: invalid --gpu-resources \"a*b\""},
        {{"--gpu-device-classes", "*x", "triage", "ns", "p"},
         "gputri: invalid --gpu-device-classes \"*x\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const *a = cases[i].args;
        run(fx, a[0], a[1], a[2], a[3], a[4], a[5], NULL);
        if (fx->r.status != 2 || !strstr(fx->r.err, cases[i].want))
            fail_msg("case %zu: status %d, stderr \"%s\", want \"%s\"", i, fx->r.status, fx->r.err,
                     cases[i].want);
    }
    /* the longest names the API server accepts pass the check (and reach the API) */
    char ns[64], name[254];
    memset(ns, 'n', 63), ns[63] = '\0';
    memset(name, 'p', 253), name[253] = '\0';
    name[100] = '.';
    fake_kube_answer(&fx->fake, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(run(fx, "triage", ns, name, NULL), 1);
    char ns64[65];
    memset(ns64, 'n', 64), ns64[64] = '\0';
    assert_int_equal(run(fx, "triage", ns64, "p", NULL), 2);
    assert_int_equal(fake_kube_count(&fx->fake), 1);
}

/* -n/--namespace as kubectl takes it (-n NS, -nNS, -n=NS, --namespace NS, --namespace=NS, before
 * or after the command) asks for the same pod as NAMESPACE POD. */
static void test_namespace_flag(void **state)
{
    struct cmdline_fixture *fx = *state;
    static const char *const forms[][4] = {
        {"triage", "team", "train"},
        {"triage", "-n", "team", "train"},
        {"-nteam", "triage", "train"},
        {"triage", "train", "-n=team"},
        {"triage", "--namespace", "team", "train"},
        {"--namespace=team", "triage", "train"},
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        fake_kube_answer(&fx->fake, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
        size_t before = fake_kube_count(&fx->fake);
        int st = run(fx, forms[i][0], forms[i][1], forms[i][2], forms[i][3], NULL);
        if (st != 1 || strcmp(fx->r.err, "gputri: pod team/train not found\n") != 0 ||
            fake_kube_count(&fx->fake) != before + 1)
            fail_msg("form %zu: status %d, stderr \"%s\"", i, st, fx->r.err);
        assert_string_equal(fake_kube_request(&fx->fake, before)->path,
                            "/api/v1/namespaces/team/pods/train");
    }
}

static void test_api_errors(void **state)
{
    struct cmdline_fixture *fx = *state;
    fake_kube_answer(&fx->fake, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.err, "gputri: pod team/train not found\n");
    assert_string_equal(fake_kube_request(&fx->fake, 0)->path,
                        "/api/v1/namespaces/team/pods/train");

    fake_kube_answer(&fx->fake, 403, 0,
                     "{\"kind\":\"Status\",\"code\":403,\"message\":\"pods \\\"train\\\" is "
                     "forbidden\"}");
    assert_int_equal(run(fx, "explain", "team", "train", NULL), 1);
    assert_string_equal(fx->r.err, "gputri: forbidden (403): pods \"train\" is forbidden\n");

    fake_kube_fail(&fx->fake, K_EIO);
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_non_null(strstr(fx->r.err, "gputri: cannot reach the API server"));

    fake_kube_answer(&fx->fake, 409, 0, "{\"kind\":\"Status\",\"code\":409,\"message\":\"odd\"}");
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.err, "gputri: conflict (409): odd\n");

    /* the API's message is printed escaped (util/escape.h): ESC, a C1 CSI */
    fake_kube_answer(&fx->fake, 409, 0,
                     "{\"kind\":\"Status\",\"code\":409,\"message\":\"odd\\u001b[2J\\u009b2J\"}");
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.err, "gputri: conflict (409): odd\\x1b[2J\\u009b2J\n");
}

/* A pod that asks for no GPU: triage prints the word, explain the report. */
static void test_answers(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "web", NULL, "node-1", "Running", NULL, 0, NULL);
    const char *text = json_object_to_json_string(pod);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "triage", "team", "web", NULL), 0);
    assert_string_equal(fx->r.out, "no-request\n");
    assert_string_equal(fx->r.err, "");
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "--gpu-device-classes=", "explain", "team", "web", NULL), 0);
    assert_non_null(strstr(fx->r.out, "no-request"));
    assert_string_equal(fx->r.err, "");
    /* explain -o: the report as an object, in kubectl's formats for one object */
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(
        run(fx, "--gpu-device-classes=", "explain", "-n", "team", "web", "-o", "json", NULL), 0);
    json_object *o = json_tokener_parse(fx->r.out);
    assert_non_null(o);
    assert_string_equal(json_object_get_string(json_object_object_get(o, "kind")),
                        "GPUPodExplanation");
    assert_string_equal(json_object_get_string(
                            json_object_object_get(json_object_object_get(o, "status"), "cause")),
                        "no-request");
    json_object_put(o);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "--gpu-device-classes=", "explain", "team", "web",
                         "--output=jsonpath={.status.cause}", NULL),
                     0);
    assert_string_equal(fx->r.out, "no-request");
    json_object_put(pod);
}

/* -o is explain's, in the formats for one object; a usage error before any request otherwise. */
static void test_output_usage(void **state)
{
    struct cmdline_fixture *fx = *state;
    assert_int_equal(run(fx, "triage", "team", "web", "-o", "json", NULL), 2);
    assert_string_equal(fx->r.err, "gputri: -o is for explain; triage prints one word\n"
                                   "Run 'gputri --help' for usage.\n");
    assert_int_equal(run(fx, "explain", "team", "web", "-o", "wide", NULL), 2);
    assert_non_null(strstr(fx->r.err, "gputri: invalid -o \"wide\": explain prints json, yaml"));
    assert_int_equal(run(fx, "explain", "team", "web", "-o", "xml", NULL), 2);
    assert_non_null(strstr(fx->r.err, "gputri: invalid -o \"xml\": "));
    assert_int_equal(run(fx, "help", NULL), 0);
    assert_non_null(strstr(fx->r.out, "-o, --output FORMAT   explain only"));
    assert_int_equal(fake_kube_count(&fx->fake), 0);
}

/* A NodeList whose items do not read as Nodes: no verdict ("the cluster has no Node objects"
 * would be one) but one line that says how many, and exit 1; a pod too large to be one object. */
static void test_unreadable_items(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "train", "1", NULL, "Pending", NULL, 0, NULL);
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(pod));
    fake_kube_answer(&fx->fake, 200, 0,
                     "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"5\"},"
                     "\"items\":[{\"metadata\":{}},{\"metadata\":{\"name\":7}}]}");
    assert_int_equal(run(fx, "--gpu-device-classes=", "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.out, "");
    assert_string_equal(fx->r.err, "gputri: malformed response: LIST /api/v1/nodes: 2 items "
                                   "could not be read (malformed, or past a bound)\n");
    assert_string_equal(fake_kube_request(&fx->fake, 1)->path, "/api/v1/nodes?limit=500");
    json_object_put(pod);

    fake_kube_answer(&fx->fake, 200, 0, "{\"kind\":\"Pod\",\"metadata\":{\"name\":[]}}");
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.err, "gputri: malformed response: GET "
                                   "/api/v1/namespaces/team/pods/train: the pod could not be read "
                                   "(malformed, or past a bound)\n");

    size_t big = KUBE_MAX_OBJECT + 1;
    char *text = malloc(big);
    assert_non_null(text);
    memset(text, ' ', big);
    text[0] = '{';
    text[big - 1] = '}';
    fake_kube_answer_bytes(&fx->fake, 200, text, big);
    free(text);
    assert_int_equal(run(fx, "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.out, "");
    assert_non_null(strstr(fx->r.err, "gputri: input too large: GET /api/v1/namespaces/team/pods/"
                                      "train: response larger than 4194304 bytes\n"));
}

/* `gputri nodes` is the plugin's nodes command, with the plugin's flags (plugin.h; the rows are
 * test_nodes.c's, the plugin's I/O test_plugin.c's). */
static void test_nodes(void **state)
{
    struct cmdline_fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0,
                     "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"1\"},"
                     "\"items\":[]}");
    assert_int_equal(run(fx, "--gpu-device-classes", "", "nodes", "-o", "json", NULL), 0);
    assert_non_null(strstr(fx->r.out, "\"kind\": \"GPUNodeList\""));
    assert_int_equal(run(fx, "--v=2", "nodes", "stray", NULL), 2);
    assert_true(strncmp(fx->r.err, "error: nodes takes no arguments", 31) == 0);
    assert_int_equal(fake_kube_count(&fx->fake), 1);
}

/* The pod may be read, the nodes may not (the `view` ClusterRole): the controller's answer from
 * the annotations, when it was written from managedFields, a note on stderr, exit 0; without an
 * annotation one line and exit 1. */
static void test_forbidden_nodes(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "train", "1", NULL, "Pending", NULL, 0, "exhausted");
    json_object *meta = json_object_object_get(pod, "metadata");
    json_object_object_add(json_object_object_get(meta, "annotations"), "gputri/detail",
                           json_object_new_string("every GPU is taken"));
    json_object *mf = json_tokener_parse(
        "[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"time\":\"2026-12-06T10:00:00Z\","
        "\"fieldsV1\":{\"f:spec\":{}}},"
        "{\"manager\":\"gputri-controller\",\"operation\":\"Update\","
        "\"time\":\"2026-12-06T10:05:00Z\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":"
        "{\"f:gputri/cause\":{},\"f:gputri/detail\":{}}}}}]");
    json_object_object_add(meta, "managedFields", mf);
    const char *text = json_object_to_json_string(pod);
    static const char denied[] =
        "{\"kind\":\"Status\",\"code\":403,\"message\":\"nodes is forbidden: User "
        "\\\"system:serviceaccount:team:dev\\\" cannot list resource \\\"nodes\\\" in API group "
        "\\\"\\\" at the cluster scope\"}";
    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "--gpu-device-classes=", "triage", "team", "train", NULL), 0);
    assert_string_equal(fx->r.out, "exhausted\n");
    assert_non_null(strstr(fx->r.err,
                           "gputri: nodes is forbidden for you: the answer "
                           "gputri-controller wrote on the pod (gputri/cause, written "));
    assert_non_null(strstr(fx->r.err, "ClusterRole gputri-viewer"));
    assert_non_null(strchr(fx->r.err, '\n'));
    assert_null(strchr(fx->r.err, '\n')[1] ? fx->r.err : NULL);

    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "--gpu-device-classes=", "explain", "team", "train", NULL), 0);
    assert_non_null(strstr(fx->r.out, "Pod:      team/train\nCause:    exhausted\n"
                                      "Detail:   every GPU is taken\n"
                                      "Written:  2026-12-06T10:05:00Z ("));
    /* explain -o json: the same answer as an object, no per-node member (nothing was read) */
    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(
        run(fx, "--gpu-device-classes=", "explain", "team", "train", "-o", "json", NULL), 0);
    json_object *o = json_tokener_parse(fx->r.out);
    assert_non_null(o);
    json_object *st = json_object_object_get(o, "status");
    assert_string_equal(json_object_get_string(json_object_object_get(st, "cause")), "exhausted");
    assert_string_equal(json_object_get_string(json_object_object_get(st, "source")), "annotation");
    assert_string_equal(json_object_get_string(json_object_object_get(st, "written")),
                        "2026-12-06T10:05:00Z");
    assert_null(json_object_object_get(o, "nodes"));
    json_object_put(o);
    assert_non_null(strstr(fx->r.err, "ClusterRole gputri-viewer"));
    json_object_put(pod);

    /* no annotation: nothing on stdout, one line, exit 1 */
    pod = test_pod("team", "train", "1", NULL, "Pending", NULL, 0, NULL);
    text = json_object_to_json_string(pod);
    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(run(fx, "--gpu-device-classes=", "triage", "team", "train", NULL), 1);
    assert_string_equal(fx->r.out, "");
    assert_non_null(strstr(fx->r.err, "gputri: nodes is forbidden for you and the pod carries no "
                                      "answer of gputri-controller"));
    /* the pod itself became unreadable: the original denial */
    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    fake_kube_answer(&fx->fake, 403, 0, denied);
    assert_int_equal(run(fx, "--gpu-device-classes=", "triage", "team", "train", NULL), 1);
    assert_non_null(strstr(fx->r.err, "gputri: forbidden (403): nodes is forbidden"));
    json_object_put(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_help_and_version, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_namespace_flag, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_api_errors, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_answers, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_items, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_nodes, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_forbidden_nodes, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_output_usage, cmdline_setup, cmdline_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
