/*
 * test_kubeflags.c - kubectl's global flags as gputri and kubectl-gputri take them
 * (cli/kubeflags.c): the table, its getopt rows, the values stored into the overrides, and the
 * --help lines.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kubeflags.h"

/* The table is in name order, as `kubectl options` lists the flags, and names are unique. */
static void test_table(void **state)
{
    (void)state;
    assert_int_equal(kubeflags_count, 14);
    for (size_t i = 1; i < kubeflags_count; i++)
        assert_true(strcmp(kubeflags[i - 1].name, kubeflags[i].name) < 0);
    for (size_t i = 0; i < kubeflags_count; i++) {
        assert_non_null(kubeflags[i].help);
        assert_int_equal(kubeflags[i].takes_value, kubeflags[i].arg != NULL);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(kubeflags[i].id, kubeflags[j].id);
    }
}

/* Every getopt row has its table entry with the same id, and takes a value as the entry says. */
static void test_longopts_agree(void **state)
{
    (void)state;
    static const struct option rows[] = {KUBEFLAGS_LONGOPTS};
    const size_t n = sizeof(rows) / sizeof(rows[0]);
    assert_int_equal(n, kubeflags_count);
    for (size_t i = 0; i < n; i++) {
        const struct kubeflag *f = kubeflag_find(rows[i].name, strlen(rows[i].name));
        assert_non_null(f);
        assert_int_equal(f->id, rows[i].val);
        assert_int_equal(rows[i].has_arg, f->takes_value ? required_argument : optional_argument);
        assert_null(rows[i].flag);
    }
}

static void test_find(void **state)
{
    (void)state;
    const struct kubeflag *f = kubeflag_find("context=foo", 7);
    assert_non_null(f);
    assert_int_equal(f->id, KF_CONTEXT);
    assert_null(kubeflag_find("contex", 6));
    assert_null(kubeflag_find("contexts", 8));
    assert_null(kubeflag_find("namespace", 9)); /* the programs' own flag */
    assert_null(kubeflag_find("", 0));
    f = kubeflag_find("as", 2); /* not as-group or as-uid */
    assert_non_null(f);
    assert_int_equal(f->id, KF_AS);
    f = kubeflag_find_short('s');
    assert_non_null(f);
    assert_int_equal(f->id, KF_SERVER);
    assert_null(kubeflag_find_short('n'));
    assert_null(kubeflag_find_short(0));
}

/* Each flag lands in its field of the overrides; the value is borrowed. */
static void test_set_fields(void **state)
{
    (void)state;
    struct kube_config_overrides ov = {0};
    char err[128] = "";
    static const struct {
        enum kubeflag_id id;
        const char *value;
    } set[] = {
        {KF_CONTEXT, "ctx"},        {KF_CLUSTER, "cl"},  {KF_USER, "u"},
        {KF_SERVER, "https://h"},   {KF_TOKEN, "t0k"},   {KF_CA, "/ca.pem"},
        {KF_CERT, "/c.pem"},        {KF_KEY, "/k.pem"},  {KF_TLS_SERVER_NAME, "sni"},
        {KF_REQUEST_TIMEOUT, "5s"}, {KF_AS, "alice"},    {KF_AS_UID, "1234"},
        {KF_AS_GROUP, "g1"},        {KF_AS_GROUP, "g2"},
    };
    for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
        assert_int_equal(kubeflag_set(&ov, set[i].id, set[i].value, "--x", err, sizeof(err)), 0);
    assert_ptr_equal(ov.context, set[0].value);
    assert_string_equal(ov.cluster, "cl");
    assert_string_equal(ov.user, "u");
    assert_string_equal(ov.server, "https://h");
    assert_string_equal(ov.token, "t0k");
    assert_string_equal(ov.certificate_authority, "/ca.pem");
    assert_string_equal(ov.client_certificate, "/c.pem");
    assert_string_equal(ov.client_key, "/k.pem");
    assert_string_equal(ov.tls_server_name, "sni");
    assert_string_equal(ov.request_timeout, "5s"); /* checked later, when loaded */
    assert_string_equal(ov.as, "alice");
    assert_string_equal(ov.as_uid, "1234");
    assert_int_equal(ov.n_as_groups, 2);
    assert_string_equal(ov.as_groups[0], "g1");
    assert_string_equal(ov.as_groups[1], "g2");
    assert_null(ov.ns);
    assert_false(ov.insecure);
    assert_string_equal(err, "");

    /* a later value replaces an earlier one, as pflag does */
    assert_int_equal(kubeflag_set(&ov, KF_CONTEXT, "other", "--context", err, sizeof(err)), 0);
    assert_string_equal(ov.context, "other");
}

/* --insecure-skip-tls-verify is a boolean: bare, =true or =false, nothing else. */
static void test_insecure(void **state)
{
    (void)state;
    struct kube_config_overrides ov = {0};
    char err[128] = "";
    assert_int_equal(
        kubeflag_set(&ov, KF_INSECURE, NULL, "--insecure-skip-tls-verify", err, sizeof(err)), 0);
    assert_true(ov.insecure);
    assert_int_equal(
        kubeflag_set(&ov, KF_INSECURE, "false", "--insecure-skip-tls-verify", err, sizeof(err)), 0);
    assert_false(ov.insecure);
    assert_int_equal(
        kubeflag_set(&ov, KF_INSECURE, "true", "--insecure-skip-tls-verify", err, sizeof(err)), 0);
    assert_true(ov.insecure);
    assert_int_equal(
        kubeflag_set(&ov, KF_INSECURE, "yes", "--insecure-skip-tls-verify", err, sizeof(err)), -1);
    assert_string_equal(
        err, "invalid argument \"yes\" for --insecure-skip-tls-verify: want true or false");
    assert_true(ov.insecure); /* unchanged */
}

static void test_set_errors(void **state)
{
    (void)state;
    struct kube_config_overrides ov = {0};
    char err[128] = "";
    assert_int_equal(kubeflag_set(&ov, KF_SERVER, "", "-s", err, sizeof(err)), -1);
    assert_string_equal(err, "-s needs a value");
    assert_null(ov.server);
    assert_int_equal(kubeflag_set(&ov, KF_TOKEN, NULL, "--token", err, sizeof(err)), -1);
    assert_string_equal(err, "--token needs a value");
    /* no room for the message is fine */
    assert_int_equal(kubeflag_set(&ov, KF_TOKEN, "", "--token", NULL, 0), -1);

    for (int i = 0; i < KUBE_AS_GROUPS_MAX; i++)
        assert_int_equal(kubeflag_set(&ov, KF_AS_GROUP, "g", "--as-group", err, sizeof(err)), 0);
    assert_int_equal(kubeflag_set(&ov, KF_AS_GROUP, "g", "--as-group", err, sizeof(err)), -1);
    char want[64];
    snprintf(want, sizeof(want), "more than %d --as-group", KUBE_AS_GROUPS_MAX);
    assert_string_equal(err, want);
    assert_int_equal(ov.n_as_groups, KUBE_AS_GROUPS_MAX);
}

/* --help: one line per flag (more where the description breaks), descriptions at the column. */
static void test_usage(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    kubeflags_usage(f, 32);
    fclose(f);
    assert_non_null(
        strstr(text, "  -s, --server URL              address and port of the API server\n"));
    assert_non_null(strstr(text, "      --insecure-skip-tls-verify\n"
                                 "                                do not verify the server's "
                                 "certificate\n"));
    /* a flag as wide as the column puts its description on the next line */
    assert_non_null(strstr(text, "      --request-timeout DURATION\n"
                                 "                                per request"));
    assert_non_null(strstr(text, "seconds; 0 waits forever (default 60s)\n"));
    size_t lines = 0;
    for (char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        assert_true(n <= 80);
        assert_true(n >= 32);
        /* the description (or its continuation) starts at the column; a flag too wide for it
           stands alone, and its description follows on the next line */
        if (!(p[31] == ' ' && p[32] != ' '))
            assert_true(n >= 32 && strncmp(p + n + 1, "                                ", 32) == 0);
        lines++;
        p += n + (p[n] == '\n');
    }
    assert_true(lines >= kubeflags_count);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),    cmocka_unit_test(test_longopts_agree),
        cmocka_unit_test(test_find),     cmocka_unit_test(test_set_fields),
        cmocka_unit_test(test_insecure), cmocka_unit_test(test_set_errors),
        cmocka_unit_test(test_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
