/*
 * test_plugin.c - the kubectl-gputri command line (cli/plugin.c): help, version and usage errors
 * with their exit status, and `pods` and `explain` over the recording fake API server
 * (tests/lib/fake_kube.h): the table, the empty answer, the namespace asked for, and kubectl's
 * phrasing of API errors. The arguments themselves are tested in test_args.c, the rows in
 * test_pods.c.
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
#include "objects.h"
#include "plugin.h"
#include "util/result.h"

/* kubectl-gputri's entry point in the shape cmdline.h runs. */
static int call_plugin(int argc, char **argv, FILE *out, FILE *err, void *ctx)
{
    const struct plugin_io io = {.out = out, .err = err, .client = ctx};
    return plugin_main(argc, argv, &io);
}

/* Run kubectl-gputri with the NULL-terminated arguments over the fake. */
static int run(struct cmdline_fixture *fx, ...)
{
    va_list ap;
    va_start(ap, fx);
    int status = cmdline_runv(&fx->r, call_plugin, fx->client, "kubectl-gputri", ap);
    va_end(ap);
    return status;
}

static void test_help_version_usage(void **state)
{
    struct cmdline_fixture *fx = *state;
    assert_int_equal(run(fx, "--help", NULL), 0);
    assert_non_null(strstr(fx->r.out, "Show why GPU pods do not start.\n"));
    assert_non_null(strstr(
        fx->r.out, "  kubectl gputri explain POD [-n NAMESPACE] [-o json|yaml|jsonpath=...]\n"));
    static const char *const flags[] = {"--selector",   "--field-selector", "--watch", "--sort-by",
                                        "--no-headers", "--show-labels",    "--output"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        assert_non_null(strstr(fx->r.out, flags[i]));
    assert_non_null(strstr(fx->r.out, "Exit status: 0 done, 1 error"));
    assert_int_equal(run(fx, "--version", NULL), 0);
    assert_true(strncmp(fx->r.out, "kubectl-gputri ", 15) == 0);
    assert_int_equal(run(fx, "frob", NULL), 2);
    assert_non_null(strstr(fx->r.err, "\nSee 'kubectl gputri --help' for usage.\n"));
    assert_true(strncmp(fx->r.err, "error: ", 7) == 0);
    assert_int_equal(run(fx, "pods", "--gpu-resources", "a*b", NULL), 2);
    assert_non_null(strstr(fx->r.err, "error: invalid --gpu-resources \"a*b\": want names "
                                      "separated by ','"));
    assert_int_equal(run(fx, "pods", "--gpu-device-classes", "*x", NULL), 2);
    assert_non_null(strstr(fx->r.err, "error: invalid --gpu-device-classes \"*x\""));
    assert_int_equal(fake_kube_count(&fx->fake), 0);
}

#define EMPTY_LIST "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}"

/* No pod waiting: nothing on stdout, one line on stderr, as kubectl says "No resources found". */
static void test_pods_none(void **state)
{
    struct cmdline_fixture *fx = *state;
    fake_kube_answer(&fx->fake, 200, 0, EMPTY_LIST);
    assert_int_equal(run(fx, "pods", NULL), 0);
    assert_string_equal(fx->r.out, "");
    assert_string_equal(fx->r.err, "No GPU pods waiting in default namespace.\n");
    assert_non_null(
        strstr(fake_kube_request(&fx->fake, 0)->path, "/api/v1/namespaces/default/pods?"));

    fake_kube_answer(&fx->fake, 200, 0, EMPTY_LIST);
    assert_int_equal(run(fx, "pods", "-A", NULL), 0);
    assert_string_equal(fx->r.err, "No GPU pods waiting.\n");
    /* then the owners whose GPU pods a quota refuses (cli/owner_rows.c) */
    assert_non_null(strstr(fake_kube_request(&fx->fake, 1)->path,
                           "/api/v1/namespaces/default/events?fieldSelector=type%3DWarning%2C"
                           "reason%3DFailedCreate"));
    assert_true(strncmp(fake_kube_request(&fx->fake, 2)->path, "/api/v1/pods?", 13) == 0);

    /* JSON says nothing on stderr: an empty list is an answer */
    fake_kube_answer(&fx->fake, 200, 0, EMPTY_LIST);
    assert_int_equal(run(fx, "pods", "-n", "team", "-o", "json", NULL), 0);
    assert_string_equal(fx->r.err, "");
    assert_non_null(strstr(fx->r.out, "\"items\""));
    assert_non_null(strstr(fake_kube_request(&fx->fake, 4)->path, "/namespaces/team/pods?"));
}

/* A pod the controller annotated is listed from its annotation, without more requests than the
 * owners' Events. */
static void test_pods_annotated(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "train", "4", NULL, "Pending", NULL, 0, "taint");
    json_object *list = json_tokener_parse(EMPTY_LIST);
    json_object_array_add(json_object_object_get(list, "items"), pod);
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(list));
    assert_int_equal(run(fx, "pods", "-n", "team", NULL), 0);
    assert_non_null(strstr(fx->r.out, "NAME"));
    assert_non_null(strstr(fx->r.out, "train"));
    assert_non_null(strstr(fx->r.out, "taint"));
    assert_string_equal(fx->r.err, "");
    assert_int_equal(fake_kube_count(&fx->fake), 2);
    json_object_put(list);
}

/* `nodes`: one LIST of nodes, one of the non-terminal pods (none without nodes); -l goes to the
 * API server. DRA is off here (--gpu-device-classes ""): its discovery is test_nodes.c's. */
static void test_nodes(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *nodes = json_tokener_parse(
        "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}");
    json_object_array_add(json_object_object_get(nodes, "items"),
                          test_node("n0", "2", "2", NULL, NULL));
    json_object *pods = json_tokener_parse(EMPTY_LIST);
    json_object_array_add(json_object_object_get(pods, "items"),
                          test_pod("ml", "holder", "1", "n0", "Running", NULL, 0, NULL));
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(nodes));
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(pods));
    assert_int_equal(run(fx, "nodes", "--gpu-device-classes=", "-o", "wide", NULL), 0);
    assert_string_equal(fx->r.err, "");
    assert_non_null(strstr(fx->r.out, "NODE"));
    assert_non_null(strstr(fx->r.out, "HOLDERS"));
    assert_non_null(strstr(fx->r.out, "ml/holder=1"));
    assert_int_equal(fake_kube_count(&fx->fake), 2);
    assert_true(strncmp(fake_kube_request(&fx->fake, 0)->path, "/api/v1/nodes?", 14) == 0);
    assert_non_null(strstr(fake_kube_request(&fx->fake, 1)->path,
                           "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded"));

    fake_kube_answer(&fx->fake, 200, 0,
                     "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"5\"},"
                     "\"items\":[]}");
    assert_int_equal(run(fx, "nodes", "-l", "pool=a b", "--gpu-device-classes=", NULL), 0);
    assert_string_equal(fx->r.out, "");
    assert_string_equal(fx->r.err,
                        "No GPU resources or GPU devices found on the nodes selected.\n");
    assert_int_equal(fake_kube_count(&fx->fake), 3);
    assert_non_null(
        strstr(fake_kube_request(&fx->fake, 2)->path, "/api/v1/nodes?labelSelector=pool%3Da%20b"));
    json_object_put(nodes);
    json_object_put(pods);
}

static void test_api_errors(void **state)
{
    struct cmdline_fixture *fx = *state;
    fake_kube_answer(&fx->fake, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(run(fx, "explain", "train", "-n", "team", NULL), 1);
    assert_string_equal(fx->r.err, "error: pod \"train\" not found in namespace \"team\"\n");
    assert_string_equal(fake_kube_request(&fx->fake, 0)->path,
                        "/api/v1/namespaces/team/pods/train");

    fake_kube_answer(&fx->fake, 401, 0,
                     "{\"kind\":\"Status\",\"code\":401,\"message\":\"Unauthorized\"}");
    assert_int_equal(run(fx, "pods", NULL), 1);
    assert_string_equal(fx->r.err, "error: unauthorized (401): Unauthorized\n");

    /* the API's message is printed escaped (util/escape.h): ESC, a C1 CSI */
    fake_kube_answer(&fx->fake, 401, 0,
                     "{\"kind\":\"Status\",\"code\":401,\"message\":\"no\\u001b[2J\\u009b2J\"}");
    assert_int_equal(run(fx, "pods", NULL), 1);
    assert_string_equal(fx->r.err, "error: unauthorized (401): no\\x1b[2J\\u009b2J\n");

    fake_kube_fail(&fx->fake, K_ETIMEDOUT);
    assert_int_equal(run(fx, "pods", NULL), 1);
    assert_non_null(strstr(fx->r.err, "error: cannot reach the API server"));
    assert_string_equal(fx->r.out, "");
}

/* Pods of the LIST that do not read as Pods: the rows of the others, then one line that says how
 * many are missing, and exit 1. */
static void test_pods_unreadable(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "train", "4", NULL, "Pending", NULL, 0, "taint");
    json_object *list = json_tokener_parse(EMPTY_LIST);
    json_object *items = json_object_object_get(list, "items");
    json_object_array_add(items, pod);
    json_object_array_add(items, json_tokener_parse("{\"metadata\":{\"namespace\":\"team\"}}"));
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(list));
    assert_int_equal(run(fx, "pods", "-n", "team", NULL), 1);
    assert_non_null(strstr(fx->r.out, "train"));
    assert_string_equal(fx->r.err, "error: malformed response: LIST /api/v1/namespaces/team/pods: "
                                   "1 item could not be read (malformed, or past a bound)\n");
    json_object_put(list);

    /* only unreadable pods: not "No GPU pods waiting" */
    fake_kube_answer(&fx->fake, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{},{}]}");
    assert_int_equal(run(fx, "pods", "-A", NULL), 1);
    assert_string_equal(fx->r.out, "");
    assert_string_equal(fx->r.err, "error: malformed response: LIST /api/v1/pods: 2 items could "
                                   "not be read (malformed, or past a bound)\n");
}

/* explain of a pod that asks for no GPU: the report, from one GET. */
static void test_explain(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "web", NULL, "node-1", "Running", NULL, 0, NULL);
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(pod));
    assert_int_equal(run(fx, "explain", "web", "--namespace=team", NULL), 0);
    assert_non_null(strstr(fx->r.out, "no-request"));
    assert_string_equal(fx->r.err, "");
    assert_int_equal(fake_kube_count(&fx->fake), 1);
    json_object_put(pod);
}

/* The nodes are forbidden (the `view` ClusterRole): the annotated pod keeps its cause, the one
 * that would need a live classification reads "-", one line on stderr, exit 0. */
static void test_pods_live_forbidden(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *list = json_tokener_parse(EMPTY_LIST);
    json_object *items = json_object_object_get(list, "items");
    json_object_array_add(items, test_pod("team", "train", "4", NULL, "Pending", NULL, 0, "taint"));
    json_object_array_add(items, test_pod("team", "fresh", "1", NULL, "Pending", NULL, 0, NULL));
    fake_kube_answer(&fx->fake, 200, 0, json_object_to_json_string(list));
    fake_kube_answer(&fx->fake, 403, 0,
                     "{\"kind\":\"Status\",\"code\":403,\"message\":\"nodes is forbidden: User "
                     "\\\"dev\\\" cannot list resource \\\"nodes\\\" in API group \\\"\\\" at the "
                     "cluster scope\"}");
    fake_kube_answer(&fx->fake, 200, 0, EMPTY_LIST);
    assert_int_equal(run(fx, "pods", "-n", "team", "--gpu-device-classes=", "-o", "json", NULL), 0);
    json_object *got = json_tokener_parse(fx->r.out);
    assert_non_null(got);
    json_object *rows = json_object_object_get(got, "items");
    assert_int_equal(json_object_array_length(rows), 2);
    for (size_t i = 0; i < 2; i++) {
        json_object *r = json_object_array_get_idx(rows, i);
        json_object *meta = json_object_object_get(r, "metadata");
        json_object *st = json_object_object_get(r, "status");
        const char *name = json_object_get_string(json_object_object_get(meta, "name"));
        const char *cause = json_object_get_string(json_object_object_get(st, "cause"));
        assert_non_null(name);
        assert_non_null(cause);
        assert_string_equal(cause, strcmp(name, "train") == 0 ? "taint" : "-");
    }
    assert_string_equal(
        fx->r.err, "kubectl-gputri: nodes is forbidden for you: causes from the annotations "
                   "gputri-controller wrote (1 without one: \"-\"); a live classification "
                   "needs read access to nodes (the ClusterRole gputri-viewer, docs/cli.md)\n");
    json_object_put(got);
    json_object_put(list);
}

/* explain -o yaml with the nodes forbidden: the annotation's answer as the object, not text. */
static void test_explain_output_forbidden(void **state)
{
    struct cmdline_fixture *fx = *state;
    json_object *pod = test_pod("team", "train", "4", NULL, "Pending", NULL, 0, "taint");
    const char *text = json_object_to_json_string(pod);
    fake_kube_answer(&fx->fake, 200, 0, text);
    fake_kube_answer(&fx->fake, 403, 0,
                     "{\"kind\":\"Status\",\"code\":403,\"message\":\"nodes is forbidden: User "
                     "\\\"dev\\\" cannot list resource \\\"nodes\\\" in API group \\\"\\\" at the "
                     "cluster scope\"}");
    fake_kube_answer(&fx->fake, 200, 0, text);
    assert_int_equal(
        run(fx, "explain", "train", "-n", "team", "--gpu-device-classes=", "-o", "yaml", NULL), 0);
    assert_non_null(strstr(fx->r.out, "kind: GPUPodExplanation\n"));
    assert_non_null(strstr(fx->r.out, "  cause: taint\n"));
    assert_non_null(strstr(fx->r.out, "  source: annotation\n"));
    assert_null(strstr(fx->r.out, "Cause:    ")); /* not the text report */
    assert_non_null(strstr(fx->r.err, "ClusterRole gputri-viewer"));
    json_object_put(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_help_version_usage, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_pods_none, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_pods_annotated, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_api_errors, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_pods_unreadable, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_explain, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_nodes, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_pods_live_forbidden, cmdline_setup, cmdline_teardown),
        cmocka_unit_test_setup_teardown(test_explain_output_forbidden, cmdline_setup,
                                        cmdline_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
