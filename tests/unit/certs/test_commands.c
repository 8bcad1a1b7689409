/*
 * test_commands.c - gputri-certs' command line (certs/commands.c): generate into a directory
 * (files, modes, the refusal to replace a CA, renewal with an existing one, a client
 * certificate), the usage errors and their exit status 2, publishing through the recording fake
 * API server (tests/lib/fake_kube.h) after the API server was reached, and inspect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "commands.h"
#include "cmdline.h"
#include "util/result.h"

struct fixture {
    struct cmdline_fixture *c; /* the fake API server and the last run */
    char dir[64];              /* a fresh directory per test */
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    void *c = NULL;
    if (!fx || cmdline_setup(&c) != 0)
        return -1;
    fx->c = c;
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/gputri-certs-test-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
    int rc = system(cmd);
    void *c = fx->c;
    cmdline_teardown(&c);
    free(fx);
    return rc == 0 ? 0 : -1;
}

/* What the entry point takes besides argv: the client (NULL: from a kubeconfig), the time. */
struct certs_ctx {
    struct kube_client *client;
    time_t now;
};

static int call_certs(int argc, char **argv, FILE *out, FILE *err, void *ctx)
{
    const struct certs_ctx *cc = ctx;
    const struct certs_io io = {.out = out, .err = err, .client = cc->client, .now = cc->now};
    return certs_main(argc, argv, &io);
}

/*
 * Run gputri-certs with the NULL-terminated arguments; the fake client when `api`; at `now`
 * (0: the clock's).
 */
static struct cmdline_run *run(struct fixture *fx, bool api, time_t now, ...)
{
    struct certs_ctx cc = {api ? fx->c->client : NULL, now};
    va_list ap;
    va_start(ap, now);
    cmdline_runv(&fx->c->r, call_certs, &cc, "gputri-certs", ap);
    va_end(ap);
    return &fx->c->r;
}

/* The path of `name` in the test's directory; four calls may be used at once. */
static char *path_in(struct fixture *fx, const char *name)
{
    static char p[4][128];
    static unsigned next;
    char *s = p[next++ % 4];
    snprintf(s, sizeof(p[0]), "%s/%s", fx->dir, name);
    return s;
}

static int mode_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (int)(st.st_mode & 0777);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static void test_generate_writes_files(void **state)
{
    struct fixture *fx = *state;
    char out_dir[96];
    snprintf(out_dir, sizeof(out_dir), "%s/a/b", fx->dir); /* created with its parents */
    struct cmdline_run *r = run(fx, false, 0, "generate", "--out-dir", out_dir, "--dns",
                                "x.example,y.example", "--ip", "10.0.0.1", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->err, "");
    assert_non_null(strstr(r->out, "/a/b/{ca.crt,ca.key,tls.crt,tls.key}\n"));
    assert_non_null(strstr(r->out, "serving certificate for gputri-webhook.gputri.svc (new CA)"));
    assert_int_equal(mode_of(path_in(fx, "a/b/ca.crt")), 0644);
    assert_int_equal(mode_of(path_in(fx, "a/b/ca.key")), 0600);
    assert_int_equal(mode_of(path_in(fx, "a/b/tls.crt")), 0644);
    assert_int_equal(mode_of(path_in(fx, "a/b/tls.key")), 0600);
    assert_int_equal(mode_of(path_in(fx, "a/b/client.crt")), -1);

    /* the SANs, through inspect */
    r = run(fx, false, 0, "inspect", path_in(fx, "a/b/tls.crt"), NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "  subject:     CN=gputri-webhook.gputri.svc\n"));
    assert_non_null(strstr(r->out, "DNS:gputri-webhook.gputri.svc.cluster.local, DNS:x.example, "
                                   "DNS:y.example, IP:10.0.0.1"));
    assert_non_null(strstr(r->out, "  ca:          false\n"));
    assert_non_null(strstr(r->out, "days left)\n"));
}

/* An existing CA key is not replaced without --force; --ca-cert/--ca-key renew with it. */
static void test_ca_kept_or_renewed(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(run(fx, false, 0, "generate", "--out-dir", fx->dir, NULL)->status, 0);
    char *ca1 = slurp(path_in(fx, "ca.crt"));
    struct cmdline_run *r = run(fx, false, 0, "generate", "--out-dir", fx->dir, NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "ca.key exists; renew with --ca-cert "));
    assert_non_null(strstr(r->err, "or pass --force to replace the CA\n"));

    char ca_cert[128], ca_key[128];
    snprintf(ca_cert, sizeof(ca_cert), "%s/ca.crt", fx->dir);
    snprintf(ca_key, sizeof(ca_key), "%s/ca.key", fx->dir);
    char *tls1 = slurp(path_in(fx, "tls.crt"));
    r = run(fx, false, 0, "generate", "--out-dir", fx->dir, "--ca-cert", ca_cert, "--ca-key",
            ca_key, NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "(existing CA)"));
    char *ca2 = slurp(path_in(fx, "ca.crt")), *tls2 = slurp(path_in(fx, "tls.crt"));
    assert_string_equal(ca1, ca2);
    assert_string_not_equal(tls1, tls2);

    r = run(fx, false, 0, "generate", "--out-dir", fx->dir, "--force", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "(new CA)"));
    char *ca3 = slurp(path_in(fx, "ca.crt"));
    assert_string_not_equal(ca1, ca3);
    free(ca1), free(ca2), free(ca3), free(tls1), free(tls2);
}

static void test_client_certificate(void **state)
{
    struct fixture *fx = *state;
    struct cmdline_run *r =
        run(fx, false, 0, "generate", "--out-dir", fx->dir, "--client-cn", "kube-apiserver",
            "--key-type", "ed25519", "--cert-days", "10", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "{ca.crt,ca.key,tls.crt,tls.key,client.crt,client.key}"));
    assert_non_null(strstr(r->out, "client certificate for CN kube-apiserver, valid until "));
    assert_int_equal(mode_of(path_in(fx, "client.key")), 0600);
    r = run(fx, false, 0, "inspect", path_in(fx, "client.crt"), path_in(fx, "tls.crt"), NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "CN=kube-apiserver"));
    assert_non_null(strstr(r->out, "  key:         Ed25519\n"));
    assert_true(strstr(r->out, "(10 days left)") || strstr(r->out, "(9 days left)"));
}

/* Every usage error exits 2 and says what is wrong; nothing is written. */
static void test_usage_errors(void **state)
{
    struct fixture *fx = *state;
    static const struct {
        const char *args[6];
        const char *want;
    } cases[] = {
        {{NULL}, "missing command (generate or inspect)"},
        {{"frobnicate"}, "unknown command frobnicate"},
        {{"generate"}, "generate needs --out-dir and/or --secret"},
        {{"generate", "--out-dir", "D", "--ca-cert", "c"}, "--ca-cert and --ca-key must be given"},
        {{"generate", "--out-dir", "D", "--key-type", "dsa"}, "invalid --key-type"},
        {{"generate", "--out-dir", "D", "--ca-days", "0"}, "invalid --ca-days (want 1..36500): 0"},
        {{"generate", "--out-dir", "D", "--cert-days", "x"}, "invalid --cert-days"},
        {{"generate", "--out-dir", "D", "--service", ""},
         "no names: give --service, --dns or --ip"},
        {{"generate", "--out-dir", "D", "--namespace", ""}, "--namespace must not be empty"},
        {{"generate", "--out-dir", "D", "extra"}, "unexpected argument extra"},
        {{"generate", "--bogus"}, "unknown flag --bogus"},
        {{"generate", "--out-dir"}, "missing value for --out-dir"},
        {{"generate", "--out-dir", "D", "--gpu-resources", "x"}, "--gpu-resources does not apply"},
        {{"inspect"}, "inspect needs at least one FILE"},
        {{"--bogus"}, "unknown flag --bogus"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const *a = cases[i].args;
        struct cmdline_run *r = run(fx, false, 0, a[0], a[0] ? a[1] : NULL,
                                    a[0] && a[1] ? a[2] : NULL, a[0] && a[1] && a[2] ? a[3] : NULL,
                                    a[0] && a[1] && a[2] && a[3] ? a[4] : NULL, NULL);
        if (r->status != 2 || !strstr(r->err, cases[i].want))
            fail_msg("case %zu: status %d, stderr \"%s\", want \"%s\"", i, r->status, r->err,
                     cases[i].want);
    }
    assert_int_equal(access("D", F_OK), -1);
    struct cmdline_run *r = run(fx, false, 0, "generate", NULL);
    assert_string_equal(r->err, "gputri-certs: generate needs --out-dir and/or --secret\n"
                                "Run 'gputri-certs --help' for usage.\n");

    /* 33 --dns names: more than the command keeps */
    char many[33 * 4];
    many[0] = '\0';
    for (int i = 0; i < 33; i++)
        strcat(many, i ? ",d" : "d");
    r = run(fx, false, 0, "generate", "--out-dir", fx->dir, "--dns", many, NULL);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "too many --dns names"));
    /* a name certgen refuses is a usage error too */
    r = run(fx, false, 0, "generate", "--out-dir", fx->dir, "--dns", "Not_A_Name", NULL);
    assert_int_equal(r->status, 2);
}

static void test_help_and_version(void **state)
{
    struct fixture *fx = *state;
    struct cmdline_run *r = run(fx, false, 0, "help", NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "Usage:\n"));
    assert_non_null(strstr(r->out, "Exit status: 0 done, 1 failed, 2 usage error.\n"));
    r = run(fx, false, 0, "version", NULL);
    assert_int_equal(r->status, 0);
    assert_true(strncmp(r->out, "gputri-certs ", 13) == 0);
}

#define NOT_FOUND "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}"

/* --secret and --webhook-config: the API server is reached first, then files, then the cluster. */
static void test_publish(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->c->fake, 200, 0, "{\"major\":\"1\",\"minor\":\"34\"}"); /* /version */
    fake_kube_answer(&fx->c->fake, 404, 0, NOT_FOUND);                            /* GET secret */
    fake_kube_answer(&fx->c->fake, 201, 0, "{}");                                 /* POST */
    fake_kube_answer(&fx->c->fake, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"3\"},\"webhooks\":[{\"clientConfig\":{}"
                     "}]}");
    fake_kube_answer(&fx->c->fake, 200, 0, "{}"); /* PATCH */
    struct cmdline_run *r = run(fx, true, 0, "generate", "--out-dir", fx->dir, "--namespace", "ops",
                                "--secret", "wh-tls", "--webhook-config", "gputri", NULL);
    assert_int_equal(r->status, 0);
    assert_string_equal(r->err, "");
    assert_non_null(strstr(r->out, "secret/wh-tls created in namespace ops\n"));
    assert_non_null(strstr(r->out, "validatingwebhookconfiguration/gputri caBundle set on 1 "
                                   "webhook\n"));
    assert_int_equal(fake_kube_count(&fx->c->fake), 5);
    assert_string_equal(fake_kube_request(&fx->c->fake, 0)->path, "/version");
    assert_string_equal(fake_kube_request(&fx->c->fake, 2)->path, "/api/v1/namespaces/ops/secrets");
    assert_string_equal(fake_kube_request(&fx->c->fake, 4)->method, "PATCH");
    assert_int_equal(mode_of(path_in(fx, "tls.key")), 0600);
}

/* An API server that refuses: nothing is written. */
static void test_api_refused_before_files(void **state)
{
    struct fixture *fx = *state;
    /* with ESC and a C1 CSI in the message, printed escaped (util/escape.h) */
    fake_kube_answer(&fx->c->fake, 401, 0,
                     "{\"kind\":\"Status\",\"code\":401,\"message\":\"no\\u001b[2J\\u009b2J\"}");
    char out_dir[96];
    snprintf(out_dir, sizeof(out_dir), "%s/never", fx->dir);
    struct cmdline_run *r =
        run(fx, true, 0, "generate", "--out-dir", out_dir, "--secret", "s", NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "gputri-certs: API server : unauthorized (401)"));
    assert_non_null(strstr(r->err, "unauthorized (401): no\\x1b[2J\\u009b2J\n"));
    assert_int_equal(access(out_dir, F_OK), -1);
    assert_int_equal(fake_kube_count(&fx->c->fake), 1);
}

/* Publishing fails after the files were written: the message says how to publish that CA. */
static void test_publish_fails_after_files(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->c->fake, 200, 0, "{}");
    fake_kube_answer(&fx->c->fake, 200, 0, "{\"type\":\"Opaque\"}");
    struct cmdline_run *r =
        run(fx, true, 0, "generate", "--out-dir", fx->dir, "--secret", "wh-tls", NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "gputri-certs: secret gputri/wh-tls: invalid input: secret "
                                   "wh-tls has type Opaque"));
    assert_non_null(strstr(r->err, "publish it with --ca-cert "));
    assert_int_equal(mode_of(path_in(fx, "ca.key")), 0600);
}

/* --secret alone writes no files; the Secret holds the certificates. */
static void test_secret_only(void **state)
{
    struct fixture *fx = *state;
    fake_kube_answer(&fx->c->fake, 200, 0, "{}");
    fake_kube_answer(&fx->c->fake, 200, 0, "{\"type\":\"kubernetes.io/tls\"}");
    fake_kube_answer(&fx->c->fake, 200, 0, "{}");
    struct cmdline_run *r = run(fx, true, 0, "generate", "--secret", "wh-tls", NULL);
    assert_int_equal(r->status, 0);
    assert_null(strstr(r->out, "wrote"));
    assert_non_null(strstr(r->out, "secret/wh-tls updated in namespace gputri\n"));
    const struct fake_request *patch = fake_kube_request(&fx->c->fake, 2);
    assert_string_equal(patch->method, "PATCH");
    assert_non_null(strstr(patch->body, "\"tls.crt\":\"LS0tLS1CRUdJTi")); /* -----BEGIN */
}

static void test_inspect_errors_and_expiry(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(run(fx, false, 0, "generate", "--out-dir", fx->dir, NULL)->status, 0);
    /* a year and a half on, the serving certificate has expired */
    struct cmdline_run *r =
        run(fx, false, time(NULL) + 548 * 86400, "inspect", path_in(fx, "tls.crt"), NULL);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "(expired)\n"));
    /* the CA is a CA */
    r = run(fx, false, 0, "inspect", path_in(fx, "ca.crt"), NULL);
    assert_non_null(strstr(r->out, "  ca:          true\n"));
    /* a missing file fails, the others are still shown */
    r = run(fx, false, 0, "inspect", path_in(fx, "nope.crt"), path_in(fx, "ca.crt"), NULL);
    assert_int_equal(r->status, 1);
    assert_non_null(strstr(r->err, "nope.crt"));
    assert_non_null(strstr(r->out, "ca.crt:\n"));
    /* a file that is no certificate */
    r = run(fx, false, 0, "inspect", path_in(fx, "tls.key"), NULL);
    assert_int_equal(r->status, 1);
    assert_true(strncmp(r->err, "gputri-certs: ", 14) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_generate_writes_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_kept_or_renewed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_certificate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_and_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_refused_before_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_fails_after_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inspect_errors_and_expiry, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
