/* Tests for core/util/flags.c: the common flags through getopt_long_only, and --v's range. */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/flags.h"
#include "util/result.h"

enum { OPT_OWN = FLAG_FIRST_OWN };

/* Runs getopt_long_only over argv (NULL-terminated) with the common rows and one own flag;
 * returns the first result other than FLAGS_STORED, or FLAGS_STORED; *own counts --own. */
static enum flags_result parse(char **argv, struct flags_common *c, int *own, char *err,
                               size_t errlen)
{
    static const struct option longopts[] = {
        FLAGS_COMMON_LONGOPTS,
        {"own", no_argument, NULL, OPT_OWN},
        {NULL, 0, NULL, 0},
    };
    int argc = 0;
    while (argv[argc])
        argc++;
    optind = 1;
    opterr = 0;
    memset(c, 0, sizeof(*c));
    *own = 0;
    int opt;
    while ((opt = getopt_long_only(argc, argv, ":" FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        if (opt == OPT_OWN) {
            (*own)++;
            continue;
        }
        enum flags_result fr = flags_common_apply(c, opt, optarg, err, errlen);
        if (fr != FLAGS_STORED)
            return fr;
    }
    return FLAGS_STORED;
}

static void test_common_flags(void **state)
{
    (void)state;
    struct flags_common c;
    char err[128];
    int own;
    char *all[] = {"prog", "--kubeconfig=/kc", "-gpu-resources", "amd.com/gpu", "--own", "--v=4",
                   NULL};
    assert_int_equal(parse(all, &c, &own, err, sizeof(err)), FLAGS_STORED);
    assert_string_equal(c.kubeconfig, "/kc");
    assert_string_equal(c.gpu_resources, "amd.com/gpu");
    assert_int_equal(c.verbosity, 4);
    assert_int_equal(own, 1);
    assert_false(c.help);
    assert_false(c.version);

    char *none[] = {"prog", NULL};
    assert_int_equal(parse(none, &c, &own, err, sizeof(err)), FLAGS_STORED);
    assert_null(c.kubeconfig);
    assert_null(c.gpu_resources);
    assert_int_equal(c.verbosity, 0);

    char *short_v[] = {"prog", "-v", "10", "-h", "--version", NULL};
    assert_int_equal(parse(short_v, &c, &own, err, sizeof(err)), FLAGS_STORED);
    assert_int_equal(c.verbosity, 10);
    assert_true(c.help);
    assert_true(c.version);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct flags_common c;
    char err[128];
    int own;
    const char *bad[] = {"--v=11", "--v=-1", "--v=x", "--v=", "--v=3 "};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"prog", (char *)bad[i], NULL};
        err[0] = 0;
        assert_int_equal(parse(argv, &c, &own, err, sizeof(err)), FLAGS_INVALID);
        assert_non_null(strstr(err, "for --v (0..10)"));
    }
    char *unknown[] = {"prog", "--nope", NULL};
    assert_int_equal(parse(unknown, &c, &own, err, sizeof(err)), FLAGS_OTHER);
    char *missing[] = {"prog", "--kubeconfig", NULL};
    assert_int_equal(parse(missing, &c, &own, err, sizeof(err)), FLAGS_OTHER);

    int v = 7;
    assert_int_equal(flags_verbosity("0", &v), K_OK);
    assert_int_equal(v, 0);
    assert_int_equal(flags_verbosity("11", &v), K_EINVAL);
    assert_int_equal(flags_verbosity(NULL, &v), K_EINVAL);
    assert_int_equal(v, 0);
}

/* flags_common_take(): the loop's other flags - stored, a missing value, unknown, a bad --v. */
static void test_take(void **state)
{
    (void)state;
    static const struct option longopts[] = {FLAGS_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
    struct {
        const char *arg;
        int rc;
        const char *err;
    } cases[] = {
        {"--kubeconfig=/kc", K_OK, ""},
        {"--kubeconfig", K_EINVAL, "flag --kubeconfig needs a value"},
        {"--nope", K_EINVAL, "unknown flag --nope"},
        {"--v=x", K_EINVAL, "for --v (0..10)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[] = {"prog", (char *)cases[i].arg, NULL};
        struct flags_common c = {0};
        char err[128] = "";
        optind = 1;
        opterr = 0;
        int opt = getopt_long_only(2, argv, ":" FLAGS_COMMON_SHORTOPTS, longopts, NULL);
        assert_int_equal(flags_common_take(&c, opt, optarg, argv, optind, err, sizeof(err)),
                         cases[i].rc);
        if (!strstr(err, cases[i].err))
            fail_msg("%s: error \"%s\", want \"%s\"", cases[i].arg, err, cases[i].err);
        if (cases[i].rc == K_OK)
            assert_string_equal(c.kubeconfig, "/kc");
    }
}

static int usage_calls;
static void usage(FILE *out)
{
    (void)out;
    usage_calls++;
}

static void test_answer(void **state)
{
    (void)state;
    usage_calls = 0;
    assert_false(flags_answer(&(struct flags_common){0}, "prog", usage));
    assert_int_equal(usage_calls, 0);
    assert_true(flags_answer(&(struct flags_common){.help = true, .version = true}, "prog", usage));
    assert_int_equal(usage_calls, 1); /* help wins */
    assert_true(flags_answer(&(struct flags_common){.version = true}, "prog", usage));
    assert_int_equal(usage_calls, 1);
}

static void test_usage(void **state)
{
    (void)state;
    char buf[2048] = {0};
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    assert_non_null(f);
    flags_usage(f, FLAGS_USAGE_CONFIG | FLAGS_USAGE_BASIC, 6, 26, "nvidia.com/gpu");
    fclose(f);
    assert_string_equal(
        buf, "      --kubeconfig PATH   kubeconfig (default: $KUBECONFIG, in-cluster,\n"
             "                          ~/.kube/config); its current-context is used\n"
             "      --gpu-resources LIST comma-separated GPU resource names; a trailing *\n"
             "                          is a prefix (default: nvidia.com/gpu)\n"
             "  -v, --v N               log verbosity (default 0)\n"
             "  -h, --help              show this help\n"
             "      --version           print the version\n");
    /* Every line fits 80 columns up to column 31. */
    memset(buf, 0, sizeof(buf));
    f = fmemopen(buf, sizeof(buf) - 1, "w");
    flags_usage(f, FLAGS_USAGE_CONFIG | FLAGS_USAGE_KUBE_API | FLAGS_USAGE_BASIC, 2, 31, "");
    fclose(f);
    assert_non_null(strstr(buf, "  --kube-api-qps QPS"));
    assert_non_null(strstr(buf, "  --kube-api-burst N"));
    for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1)
        assert_true(nl - line <= 80);
}

static void test_kube_api(void **state)
{
    (void)state;
    double q = 1;
    int b = 1;
    const char *why = NULL;
    assert_int_equal(flags_kube_api_qps("50", &q, &why), K_OK);
    assert_true(q == 50);
    assert_int_equal(flags_kube_api_qps("0.25", &q, &why), K_OK);
    assert_true(q == 0.25);
    assert_int_equal(flags_kube_api_qps("-1", &q, &why), K_OK); /* no limit */
    assert_true(q == -1);
    static const char *const bad_qps[] = {"0", "-0", "", " 1", "1 ", "5x", "inf", "nan", "1e7"};
    for (size_t i = 0; i < sizeof(bad_qps) / sizeof(bad_qps[0]); i++) {
        q = 7;
        why = NULL;
        assert_int_equal(flags_kube_api_qps(bad_qps[i], &q, &why), K_EINVAL);
        assert_true(q == 7);
        assert_non_null(why);
    }
    assert_int_equal(flags_kube_api_burst("100", &b, &why), K_OK);
    assert_int_equal(b, 100);
    assert_int_equal(flags_kube_api_burst("0", &b, &why), K_EINVAL);
    assert_int_equal(flags_kube_api_burst("2.5", &b, &why), K_EINVAL);
    assert_int_equal(flags_kube_api_burst("1000001", &b, &why), K_EINVAL);
    assert_int_equal(b, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_flags), cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_take),         cmocka_unit_test(test_answer),
        cmocka_unit_test(test_usage),        cmocka_unit_test(test_kube_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
