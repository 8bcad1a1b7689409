/* Tests for cli/complete.c: the output kubectl reads from kubectl_complete-gputri. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "complete.h"
#include "fake_kube.h"
#include "util/result.h"

#define ARGV(...) ((char *const[]){"kubectl_complete-gputri", __VA_ARGS__})
#define ARGC(...)                                                                                  \
    ((int)(sizeof((char *[]){"kubectl_complete-gputri", __VA_ARGS__}) / sizeof(char *)))

struct fake {
    size_t many; /* namespaces: this many distinct names, as a server ignoring limit= sends */
    char asked[64];
    char ns[64];
    char context[64];
};

static void fake_list(void *ctx, const struct plugin_args *a, const char *what, const char *ns,
                      void (*add)(void *add_ctx, const char *name), void *add_ctx)
{
    struct fake *f = ctx;
    snprintf(f->asked, sizeof(f->asked), "%s", what);
    snprintf(f->ns, sizeof(f->ns), "%s", ns ? ns : "");
    snprintf(f->context, sizeof(f->context), "%s", a->ov.context ? a->ov.context : "");
    if (strcmp(what, "pods") == 0) {
        add(add_ctx, "train-0");
        add(add_ctx, "train-1");
        add(add_ctx, "infer");
        add(add_ctx, "train-0"); /* once only */
    } else if (strcmp(what, "namespaces") == 0 && f->many) {
        for (size_t i = 0; i < f->many; i++) {
            char name[32];
            snprintf(name, sizeof(name), "ns-%06zu", i);
            add(add_ctx, name);
        }
    } else if (strcmp(what, "namespaces") == 0) {
        add(add_ctx, "default");
        add(add_ctx, "gpu-triage");
    } else if (strcmp(what, "contexts") == 0) {
        add(add_ctx, "prod");
        add(add_ctx, "staging");
        add(add_ctx, "bad\nname");
        add(add_ctx, "esc\x1b[2J");
        add(add_ctx, "csi\xc2\x9b"
                     "2J");
        add(add_ctx, "caf\xc3\xa9");
    }
}

static struct fake f;
static char outbuf[4096];

static const char *complete(int argc, char *const *argv)
{
    struct complete_source src = {.ctx = &f, .list = fake_list};
    struct buf out;
    memset(&f, 0, sizeof(f));
    buf_init(&out, 1 << 16);
    assert_int_equal(plugin_complete(argc, argv, &src, &out), K_OK);
    snprintf(outbuf, sizeof(outbuf), "%s", buf_cstr(&out));
    buf_cleanup(&out);
    return outbuf;
}

static void test_commands(void **state)
{
    (void)state;
    const char *o = complete(ARGC(""), ARGV(""));
    assert_non_null(strstr(o, "pods\t"));
    assert_non_null(strstr(o, "explain\t"));
    assert_non_null(strstr(o, "nodes\t"));
    assert_non_null(strstr(o, "\n:4\n"));
    assert_string_equal(complete(ARGC("ex"), ARGV("ex")),
                        "explain\tone pod's cause and every node's step on the ladder\n:4\n");
    /* No word at all (argc 1) is an empty word. */
    assert_non_null(strstr(complete(1, ARGV(NULL)), "pods\t"));
    /* After the command, nothing more for pods. */
    assert_string_equal(complete(ARGC("pods", ""), ARGV("pods", "")), ":4\n");
}

static void test_flags(void **state)
{
    (void)state;
    assert_string_equal(complete(ARGC("pods", "--cont"), ARGV("pods", "--cont")),
                        "--context\n:4\n");
    const char *o = complete(ARGC("pods", "--"), ARGV("pods", "--"));
    assert_non_null(strstr(o, "--namespace\n"));
    assert_non_null(strstr(o, "--as-group\n"));
    assert_non_null(strstr(o, "--request-timeout\n"));
    assert_non_null(strstr(o, "--kubeconfig\n"));
}

static void test_values(void **state)
{
    (void)state;
    assert_string_equal(complete(ARGC("pods", "--context", ""), ARGV("pods", "--context", "")),
                        "prod\nstaging\ncaf\xc3\xa9\n:4\n"); /* no name with a control */
    assert_string_equal(f.asked, "contexts");
    assert_string_equal(complete(ARGC("pods", "--context=st"), ARGV("pods", "--context=st")),
                        "--context=staging\n:4\n");
    assert_string_equal(complete(ARGC("pods", "-n", "g"), ARGV("pods", "-n", "g")),
                        "gpu-triage\n:4\n");
    assert_string_equal(f.asked, "namespaces");
    assert_string_equal(complete(ARGC("pods", "-o", ""), ARGV("pods", "-o", "")),
                        "wide\tadds PHASE, NODE, SOURCE and DETAIL\njson\nyaml\nname\n"
                        "custom-columns=\tHEADER:PATH,...\njsonpath=\ta kubectl JSONPath template\n"
                        "jsonpath-as-json=\ta kubectl JSONPath template\n:4\n");
    assert_string_equal(complete(ARGC("pods", "-o", "j"), ARGV("pods", "-o", "j")),
                        "json\njsonpath=\ta kubectl JSONPath template\n"
                        "jsonpath-as-json=\ta kubectl JSONPath template\n:4\n");
    assert_string_equal(
        complete(ARGC("pods", "--sort-by", ".status.c"), ARGV("pods", "--sort-by", ".status.c")),
        ".status.cause\n:4\n");
    /* A file: the shell completes file names (directive 0). */
    assert_string_equal(
        complete(ARGC("pods", "--kubeconfig", ""), ARGV("pods", "--kubeconfig", "")), ":0\n");
    assert_string_equal(complete(ARGC("--client-key", "c"), ARGV("--client-key", "c")), ":0\n");
    /* The token's value is not completed. */
    assert_string_equal(complete(ARGC("pods", "--token", ""), ARGV("pods", "--token", "")), ":4\n");
}

/* More names than a completion shows: the first COMPLETE_MAX_CANDIDATES, each once. */
static void test_many_names(void **state)
{
    (void)state;
    struct complete_source src = {.ctx = &f, .list = fake_list};
    struct buf out;
    memset(&f, 0, sizeof(f));
    f.many = 3 * COMPLETE_MAX_CANDIDATES;
    buf_init(&out, 1 << 20);
    assert_int_equal(plugin_complete(ARGC("pods", "-n", ""), ARGV("pods", "-n", ""), &src, &out),
                     K_OK);
    size_t lines = 0;
    for (size_t i = 0; i < out.len; i++)
        lines += out.data[i] == '\n';
    assert_int_equal(lines, COMPLETE_MAX_CANDIDATES + 1); /* and the directive */
    assert_non_null(strstr(buf_cstr(&out), "ns-000000\n"));
    assert_null(strstr(buf_cstr(&out), "ns-002048\n"));
    buf_cleanup(&out);
}

static void test_pod_names(void **state)
{
    (void)state;
    assert_string_equal(complete(ARGC("explain", "-n", "ml", "--context", "prod", "tr"),
                                 ARGV("explain", "-n", "ml", "--context", "prod", "tr")),
                        "train-0\ntrain-1\n:4\n");
    assert_string_equal(f.asked, "pods");
    assert_string_equal(f.ns, "ml");
    assert_string_equal(f.context, "prod"); /* the line's flags reach the API lookup */
    /* Only one pod for explain. */
    assert_string_equal(complete(ARGC("explain", "infer", ""), ARGV("explain", "infer", "")),
                        ":4\n");
}

static void add_name(void *ctx, const char *name)
{
    struct buf *b = ctx;
    assert_int_equal(buf_printf(b, "%s;", name), K_OK);
}

/* The program's source: one LIST of one page, the names of the items, nothing on failure. */
static void test_kube_list(void **state)
{
    (void)state;
    struct fake_kube api;
    fake_kube_init(&api);
    struct kube_client *c = fake_kube_client(&api);
    assert_non_null(c);
    struct plugin_args a = {0};
    struct buf names;
    buf_init(&names, 4096);
    fake_kube_answer(&api, 200, 0,
                     "{\"kind\":\"PodList\",\"metadata\":{\"continue\":\"more\"},\"items\":["
                     "{\"metadata\":{\"name\":\"train-0\"}},{\"metadata\":{}},"
                     "{\"metadata\":{\"name\":\"train-1\"}}]}");
    complete_kube_list(c, &a, "pods", "team", add_name, &names);
    assert_string_equal(buf_cstr(&names), "train-0;train-1;");
    assert_int_equal(fake_kube_count(&api), 1); /* no second page */
    const char *path = fake_kube_request(&api, 0)->path;
    assert_true(strncmp(path, "/api/v1/namespaces/team/pods?", 29) == 0);
    assert_non_null(strstr(path, "limit=500"));

    /* no namespace on the line: the context's, else default */
    buf_reset(&names);
    fake_kube_answer(&api, 200, 0, "{\"items\":[{\"metadata\":{\"name\":\"kube-system\"}}]}");
    complete_kube_list(c, &a, "pods", NULL, add_name, &names);
    assert_true(strncmp(fake_kube_request(&api, 1)->path, "/api/v1/namespaces/default/pods?", 32) ==
                0);
    buf_reset(&names);
    fake_kube_answer(&api, 200, 0, "{\"items\":[{\"metadata\":{\"name\":\"kube-system\"}}]}");
    complete_kube_list(c, &a, "namespaces", NULL, add_name, &names);
    assert_string_equal(buf_cstr(&names), "kube-system;");
    assert_true(strncmp(fake_kube_request(&api, 2)->path, "/api/v1/namespaces?", 19) == 0);

    /* an error gives no names */
    buf_reset(&names);
    fake_kube_answer(&api, 403, 0, "{\"kind\":\"Status\",\"code\":403}");
    complete_kube_list(c, &a, "pods", "team", add_name, &names);
    assert_string_equal(buf_cstr(&names), "");
    /* kubeconfig names come from the kubeconfig, without a request */
    a.kubeconfig = FIXTURES_DIR "/kubeconfig/no-such-file";
    complete_kube_list(c, &a, "contexts", NULL, add_name, &names);
    assert_string_equal(buf_cstr(&names), "");
    /* without a client and without a usable kubeconfig: no names, no request */
    complete_kube_list(NULL, &a, "pods", "team", add_name, &names);
    assert_string_equal(buf_cstr(&names), "");
    assert_int_equal(fake_kube_count(&api), 4);
    buf_cleanup(&names);
    kube_client_free(c);
    fake_kube_cleanup(&api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),   cmocka_unit_test(test_flags),
        cmocka_unit_test(test_values),     cmocka_unit_test(test_pod_names),
        cmocka_unit_test(test_many_names), cmocka_unit_test(test_kube_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
