/*
 * test_exec.c - exec credential plugins (core/kube/exec.c): ExecCredential response parsing,
 * KUBERNETES_EXEC_INFO, the credential cache on an injected clock, running a real plugin script
 * without a shell, and the client's re-run and retry after a 401.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/exec.h"
#include "text.h"
#include "util/clock.h"
#include "util/result.h"

#define V1 KUBE_EXEC_API_V1

static int parse(const char *json, struct kube_exec_cred *c, char *err, size_t errlen)
{
    return kube_exec_parse_response(json, strlen(json), V1, c, err, errlen);
}

static void test_parse_token(void **state)
{
    (void)state;
    struct kube_exec_cred c;
    char err[256];
    assert_int_equal(parse("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\","
                           "\"status\":{\"token\":\"abc\",\"expirationTimestamp\":"
                           "\"2026-01-02T03:04:05Z\"}}\n",
                           &c, err, sizeof(err)),
                     K_OK);
    assert_string_equal(c.token, "abc");
    assert_null(c.cert_pem);
    assert_int_equal(c.expiry_wall_ms, INT64_C(1767323045000));
    kube_exec_cred_cleanup(&c);

    /* A certificate and key; no expiry. */
    assert_int_equal(parse("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\","
                           "\"status\":{\"clientCertificateData\":\"CERT\","
                           "\"clientKeyData\":\"KEY\"}}",
                           &c, err, sizeof(err)),
                     K_OK);
    assert_null(c.token);
    assert_string_equal(c.cert_pem, "CERT");
    assert_int_equal(c.key_pem_len, 3);
    assert_int_equal(c.expiry_wall_ms, 0);
    kube_exec_cred_cleanup(&c);
    kube_exec_cred_cleanup(&c); /* idempotent */
}

static void expect_parse_error(const char *json, const char *frag)
{
    struct kube_exec_cred c;
    char err[256] = "";
    assert_int_equal(parse(json, &c, err, sizeof(err)), K_EINVAL);
    if (!strstr(err, frag))
        fail_msg("error \"%s\" lacks \"%s\"", err, frag);
    assert_null(c.token);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_parse_error("not json", "not an ExecCredential");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\"} x", "not an");
    expect_parse_error("{\"kind\":\"Pod\",\"apiVersion\":\"" V1 "\"}", "want ExecCredential");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" KUBE_EXEC_API_V1BETA1
                       "\",\"status\":{\"token\":\"a\"}}",
                       "plugin returned version " KUBE_EXEC_API_V1BETA1);
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\"}",
                       "didn't return a status");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{}}",
                       "didn't return a token or cert/key pair");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                       "\",\"status\":{\"clientCertificateData\":\"C\"}}",
                       "only");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                       "\",\"status\":{\"token\":\"a\\nb\"}}",
                       "control character");
    expect_parse_error("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                       "\",\"status\":{\"token\":\"a\",\"expirationTimestamp\":\"tomorrow\"}}",
                       "not RFC 3339");
}

/* Output under KUBE_EXEC_MAX_OUTPUT bytes whose tree would be hundreds of MiB is refused within
 * the value budget (kube/read_budget.h), not built. */
static void test_parse_tree_budget(void **state)
{
    (void)state;
    char *json =
        test_empty_objects("{\"kind\":\"ExecCredential\",\"x\":[", KUBE_EXEC_MAX_OUTPUT - 64, "]}");
    expect_parse_error(json, "not an ExecCredential JSON object: ");
    free(json);
}

static void test_rfc3339(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(clock_parse_rfc3339_ms("1970-01-01T00:00:01.5Z", &ms), true);
    assert_int_equal(ms, 1500);
    assert_int_equal(clock_parse_rfc3339_ms("1970-01-01T01:00:00+01:00", &ms), true);
    assert_int_equal(ms, 0);
    assert_int_equal(clock_parse_rfc3339_ms("1970-01-01T00:00:00", &ms), false);
    assert_int_equal(clock_parse_rfc3339_ms("1970-13-01T00:00:00Z", &ms), false);
    assert_int_equal(clock_parse_rfc3339_ms("1970-01-01T00:00:00Zx", &ms), false);
}

static void test_exec_info(void **state)
{
    (void)state;
    struct kube_exec_config ec = {.api_version = V1, .provide_cluster_info = true};
    struct kube_exec_cluster cl = {.server = "https://k:6443",
                                   .tls_server_name = "kubernetes",
                                   .proxy_url = "http://p:3128",
                                   .ca_pem = "CA",
                                   .ca_pem_len = 2,
                                   .insecure = false};
    char *j = kube_exec_info_json(&ec, &cl, false);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"kind\":\"ExecCredential\""));
    assert_non_null(strstr(j, "\"interactive\":false"));
    assert_non_null(strstr(j, "\"server\":\"https://k:6443\""));
    assert_non_null(strstr(j, "\"tls-server-name\":\"kubernetes\""));
    assert_non_null(strstr(j, "\"certificate-authority-data\":\"Q0E=\""));
    assert_non_null(strstr(j, "\"proxy-url\":\"http://p:3128\""));
    free(j);
    ec.provide_cluster_info = false;
    j = kube_exec_info_json(&ec, &cl, true);
    assert_non_null(strstr(j, "\"interactive\":true"));
    assert_null(strstr(j, "cluster"));
    free(j);
}

/* ---- the cache, with a fake runner and a fake clock ---- */

struct fake_runner {
    int runs;
    const char *reply; /* printf format with the run number */
    int rc;
    bool interactive; /* what the last run was told */
};

static int fake_run(void *ctx, const struct kube_exec_config *ec, const char *info,
                    bool interactive, char **out, size_t *out_len, char *err, size_t errlen)
{
    struct fake_runner *f = ctx;
    (void)ec;
    f->interactive = interactive;
    assert_non_null(strstr(info, "ExecCredential"));
    f->runs++;
    if (f->rc) {
        snprintf(err, errlen, "exec: executable x failed with exit code 3");
        return f->rc;
    }
    /* f->reply has one "%d", the run number. */
    const char *pct = strstr(f->reply, "%d");
    assert_non_null(pct);
    assert_true(asprintf(out, "%.*s%d%s", (int)(pct - f->reply), f->reply, f->runs, pct + 2) > 0);
    *out_len = strlen(*out);
    return K_OK;
}

static void test_cache_expiry(void **state)
{
    (void)state;
    struct clock_fake fc;
    clock_fake_init(&fc, INT64_C(1767323045000) - 60000); /* one minute before the expiry */
    struct clock clk = clock_fake_clock(&fc);
    struct fake_runner fr = {.reply = "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                                      "\",\"status\":{\"token\":\"t%d\",\"expirationTimestamp\":"
                                      "\"2026-01-02T03:04:05Z\"}}"};
    struct kube_exec_config ec = {
        .command = "x", .api_version = V1, .user = "u", .interactive = KUBE_EXEC_NEVER};
    struct kube_exec_cache *c = kube_exec_cache_new(&ec, NULL, &clk, fake_run, &fr);
    struct kube_exec_cred cred;
    uint64_t gen = 0, gen2 = 0;
    char err[256];

    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t1");
    kube_exec_cred_cleanup(&cred);
    clock_fake_advance_ms(&fc, 59999);
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen2, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t1"); /* still valid: cached */
    assert_int_equal(gen, gen2);
    kube_exec_cred_cleanup(&cred);
    assert_int_equal(fr.runs, 1);

    clock_fake_advance_ms(&fc, 1); /* at the expiry: run again; the new one never expires */
    fr.reply =
        "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"token\":\"t%d\"}}";
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen2, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t2");
    assert_int_not_equal(gen, gen2);
    kube_exec_cred_cleanup(&cred);
    assert_int_equal(kube_exec_cache_runs(c), 2);

    /* A 401 on an older generation keeps the newer credential; on the current one drops it. */
    kube_exec_cache_invalidate(c, gen);
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t2");
    kube_exec_cred_cleanup(&cred);
    kube_exec_cache_invalidate(c, gen);
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t3");
    kube_exec_cred_cleanup(&cred);

    /* A failing plugin: the error names the user. */
    kube_exec_cache_invalidate(c, gen);
    fr.rc = K_EIO;
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_EIO);
    assert_non_null(strstr(err, "exec plugin of user \"u\": exec: executable x failed"));
    kube_exec_cache_free(c);
}

static void test_cache_no_expiry_and_always(void **state)
{
    (void)state;
    struct clock_fake fc;
    clock_fake_init(&fc, 1000);
    struct clock clk = clock_fake_clock(&fc);
    struct fake_runner fr = {.reply = "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                                      "\",\"status\":{\"token\":\"t%d\"}}"};
    struct kube_exec_config ec = {
        .command = "x", .api_version = V1, .user = "u", .interactive = KUBE_EXEC_ALWAYS};
    struct kube_exec_cache *c = kube_exec_cache_new(&ec, NULL, &clk, fake_run, &fr);
    struct kube_exec_cred cred;
    uint64_t gen;
    char err[256];
    if (!isatty(0)) {
        /* Always needs a terminal; the tests' stdin is not one. */
        assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_EINVAL);
        assert_non_null(strstr(err, "not a terminal"));
        assert_int_equal(fr.runs, 0);
    }
    ec.interactive = KUBE_EXEC_NEVER;
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    kube_exec_cred_cleanup(&cred);
    clock_fake_advance_ms(&fc, INT64_C(365) * 24 * 3600 * 1000);
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "t1"); /* no expirationTimestamp: kept */
    kube_exec_cred_cleanup(&cred);
    kube_exec_cache_free(c);
}

/* Several threads ask at once (the controller's workers and informers): the plugin runs once. */
struct getter {
    struct kube_exec_cache *c;
    int rc;
    char token[32];
};

static void *get_thread(void *arg)
{
    struct getter *g = arg;
    struct kube_exec_cred cred;
    uint64_t gen;
    char err[256];
    for (int i = 0; i < 50; i++) {
        g->rc = kube_exec_cache_get(g->c, &cred, &gen, err, sizeof(err));
        if (g->rc)
            return NULL;
        snprintf(g->token, sizeof(g->token), "%s", cred.token);
        kube_exec_cred_cleanup(&cred);
    }
    return NULL;
}

static void test_cache_threads(void **state)
{
    (void)state;
    struct fake_runner fr = {.reply = "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                                      "\",\"status\":{\"token\":\"t%d\"}}"};
    struct kube_exec_config ec = {
        .command = "x", .api_version = V1, .user = "u", .interactive = KUBE_EXEC_NEVER};
    struct kube_exec_cache *c = kube_exec_cache_new(&ec, NULL, NULL, fake_run, &fr);
    pthread_t t[4];
    struct getter g[4];
    for (int i = 0; i < 4; i++) {
        g[i] = (struct getter){.c = c};
        assert_int_equal(pthread_create(&t[i], NULL, get_thread, &g[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(g[i].rc, K_OK);
        assert_string_equal(g[i].token, "t1");
    }
    assert_int_equal(kube_exec_cache_runs(c), 1);
    kube_exec_cache_free(c);
}

/* ---- a real plugin: a script run without a shell in between ---- */

static char tmpdir[] = "/tmp/gputri-test-exec-XXXXXX";

static void write_script(const char *name, const char *body)
{
    chmod(test_write_file(tmpdir, name, body), 0755);
}

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/gputri-test-exec-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_run_real(void **state)
{
    (void)state;
    write_script(
        "plugin.sh",
        "#!/bin/sh\n"
        "echo \"$1 $GREETING\" >&2\n"
        "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 7;; esac\n"
        "read x && exit 8\n" /* stdin is /dev/null: read fails */
        "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\","
        "\"status\":{\"token\":\"tok-%s\"}}' \"" V1 "\" \"$2\"\n");
    write_script("fail.sh", "#!/bin/sh\nexit 3\n");
    char cmd[256], cmd_fail[256];
    snprintf(cmd, sizeof(cmd), "%s/plugin.sh", tmpdir);
    snprintf(cmd_fail, sizeof(cmd_fail), "%s/fail.sh", tmpdir);
    char *args[] = {"hello", "world"};
    char *env[] = {"GREETING=hi"};
    struct kube_exec_config ec = {.command = cmd,
                                  .args = args,
                                  .nargs = 2,
                                  .env = env,
                                  .nenv = 1,
                                  .api_version = V1,
                                  .user = "u",
                                  .interactive = KUBE_EXEC_NEVER};
    char *out = NULL;
    size_t len = 0;
    char err[256] = "";
    int rc = kube_exec_run(NULL, &ec, "{\"spec\":{\"interactive\":false}}", false, &out, &len, err,
                           sizeof(err));
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    struct kube_exec_cred cred;
    assert_int_equal(kube_exec_parse_response(out, len, V1, &cred, err, sizeof(err)), K_OK);
    assert_string_equal(cred.token, "tok-world");
    kube_exec_cred_cleanup(&cred);
    free(out);

    ec.command = cmd_fail;
    assert_int_equal(kube_exec_run(NULL, &ec, "{}", false, &out, &len, err, sizeof(err)), K_EIO);
    assert_non_null(strstr(err, "failed with exit code 3"));

    /* More than 1 MiB on stdout: refused, the plugin killed. */
    write_script("chatty.sh", "#!/bin/sh\nexec head -c 2000000 /dev/zero\n");
    snprintf(cmd_fail, sizeof(cmd_fail), "%s/chatty.sh", tmpdir);
    ec.command = cmd_fail;
    assert_int_equal(kube_exec_run(NULL, &ec, "{}", false, &out, &len, err, sizeof(err)),
                     K_ETOOBIG);
    assert_non_null(strstr(err, "wrote more than 1048576 bytes; killed"));

    ec.command = "gputri-no-such-plugin";
    ec.install_hint = "install it\nwith apt";
    assert_int_equal(kube_exec_run(NULL, &ec, "{}", false, &out, &len, err, sizeof(err)),
                     K_ENOTFOUND);
    assert_non_null(strstr(err, "executable gputri-no-such-plugin not found; install it with apt"));
}

/* The plugin starts with SIGPIPE at its default and no signal blocked, whatever the caller
 * ignores or blocks (the daemons ignore SIGPIPE). */
static void test_run_signals(void **state)
{
    (void)state;
    write_script("sig.sh", "#!/bin/sh\nexec grep -E '^Sig(Ign|Blk):' /proc/self/status\n");
    char cmd[300], err[256];
    snprintf(cmd, sizeof(cmd), "%s/sig.sh", tmpdir);
    struct kube_exec_config ec = {
        .command = cmd, .api_version = V1, .user = "u", .interactive = KUBE_EXEC_NEVER};
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    sigset_t block, was;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &was);
    char *out = NULL;
    size_t len = 0;
    int rc = kube_exec_run(NULL, &ec, "{}", false, &out, &len, err, sizeof(err));
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    signal(SIGPIPE, old);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    const char *i = strstr(out, "SigIgn:"), *b = strstr(out, "SigBlk:");
    assert_non_null(i);
    assert_non_null(b);
    unsigned long long ign = strtoull(i + 7, NULL, 16), blk = strtoull(b + 7, NULL, 16);
    assert_int_equal(ign & (1ull << (SIGPIPE - 1)), 0);
    assert_int_equal(blk, 0);
    free(out);
}

/* Runs the bare command `name` with PATH set to `path` from directory `cwd`. */
static int run_on_path(const char *name, const char *path, const char *cwd, char **out, char *err,
                       size_t errlen)
{
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char old_cwd[512];
    assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
    assert_int_equal(chdir(cwd), 0);
    setenv("PATH", path, 1);
    struct kube_exec_config ec = {
        .command = (char *)name, .api_version = V1, .user = "u", .interactive = KUBE_EXEC_NEVER};
    size_t len = 0;
    *out = NULL;
    int rc = kube_exec_run(NULL, &ec, "{}", false, out, &len, err, errlen);
    if (old_path)
        setenv("PATH", old_path, 1);
    else
        unsetenv("PATH");
    free(old_path);
    assert_int_equal(chdir(old_cwd), 0);
    return rc;
}

/* A bare command is looked up on $PATH as Go's exec.LookPath does: directories are skipped, and
 * a match through an empty or relative entry (the working directory) is refused (ErrDot). */
static void test_run_path_lookup(void **state)
{
    (void)state;
    char dir[300], bin[300], cwd[300], path[1024], err[256];
    char *out = NULL;
    snprintf(bin, sizeof(bin), "%s/bin", tmpdir);
    snprintf(cwd, sizeof(cwd), "%s/cwd", tmpdir);
    snprintf(dir, sizeof(dir), "%s/dir", tmpdir);
    assert_int_equal(mkdir(bin, 0700), 0);
    assert_int_equal(mkdir(cwd, 0700), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof(path), "%s/bin", cwd);
    assert_int_equal(mkdir(path, 0700), 0);
    write_script("bin/gputri-test-plugin", "#!/bin/sh\nprintf from-bin\n");
    write_script("cwd/gputri-test-plugin", "#!/bin/sh\nprintf from-cwd\n");
    write_script("cwd/bin/gputri-test-plugin", "#!/bin/sh\nprintf from-cwd-bin\n");
    snprintf(path, sizeof(path), "%s/gputri-test-plugin", dir);
    assert_int_equal(mkdir(path, 0700), 0); /* a directory of the plugin's name */

    /* an empty entry, leading, inner or trailing: the working directory, refused */
    const char *prefixes[] = {":", "/nonexistent::", ""};
    const char *suffixes[] = {"", "", ":"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        snprintf(path, sizeof(path), "%s%s%s", prefixes[i], i == 2 ? "/nonexistent" : bin,
                 suffixes[i]);
        assert_int_equal(run_on_path("gputri-test-plugin", path, cwd, &out, err, sizeof(err)),
                         K_EIO);
        assert_null(out);
        assert_non_null(strstr(err, "found relative to the current directory"));
    }
    /* "." and a relative entry: refused too */
    snprintf(path, sizeof(path), ".:%s", bin);
    assert_int_equal(run_on_path("gputri-test-plugin", path, cwd, &out, err, sizeof(err)), K_EIO);
    snprintf(path, sizeof(path), "bin:%s", bin);
    assert_int_equal(run_on_path("gputri-test-plugin", path, cwd, &out, err, sizeof(err)), K_EIO);
    assert_non_null(strstr(err, "found relative to the current directory"));
    /* an absolute entry before the relative one wins */
    snprintf(path, sizeof(path), "%s:.", bin);
    assert_int_equal(run_on_path("gputri-test-plugin", path, cwd, &out, err, sizeof(err)), K_OK);
    assert_string_equal(out, "from-bin");
    free(out);
    /* a directory of that name is skipped, not run */
    snprintf(path, sizeof(path), "%s:%s", dir, bin);
    assert_int_equal(run_on_path("gputri-test-plugin", path, cwd, &out, err, sizeof(err)), K_OK);
    assert_string_equal(out, "from-bin");
    free(out);
    /* not on $PATH at all, while the working directory has it: not found */
    assert_int_equal(run_on_path("gputri-test-plugin", dir, cwd, &out, err, sizeof(err)),
                     K_ENOTFOUND);
}

/* ---- the client: a 401 runs the plugin again and sends the request once more ---- */

struct t401 {
    int calls;
};

static int rt_401_then_ok(void *ctx, const char *method, const char *path, const char *body,
                          size_t body_len, long *status, int *retry_after, const char **resp,
                          size_t *resp_len)
{
    struct t401 *t = ctx;
    (void)method;
    (void)path;
    (void)body;
    (void)body_len;
    *retry_after = 0;
    t->calls++;
    *status = t->calls == 1 ? 401 : 200;
    *resp = t->calls == 1 ? "{\"message\":\"Unauthorized\"}" : "{\"kind\":\"Pod\"}";
    *resp_len = strlen(*resp);
    return K_OK;
}

static void test_client_401_rerun(void **state)
{
    (void)state;
    struct clock_fake fc;
    clock_fake_init(&fc, 1000);
    struct clock clk = clock_fake_clock(&fc);
    struct fake_runner fr = {.reply = "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                                      "\",\"status\":{\"token\":\"t%d\"}}"};
    struct kube_exec_config ec = {
        .command = "x", .api_version = V1, .user = "u", .interactive = KUBE_EXEC_NEVER};
    struct kube_config cfg = {.server = "https://k"};
    cfg.exec_cache = kube_exec_cache_new(&ec, NULL, &clk, fake_run, &fr);
    cfg.exec = &ec;
    struct t401 t = {0};
    struct kube_transport tr = {.ctx = &t, .round_trip = rt_401_then_ok};
    struct kube_client *c = kube_client_new_transport(&cfg, &tr, "test");
    json_object *obj = NULL;
    struct kube_error e;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/a/pods/b", &obj, &e), K_OK);
    json_object_put(obj);
    assert_int_equal(t.calls, 2);
    assert_int_equal(fr.runs, 2);

    /* A second 401 in a row is returned, after one re-run. */
    t.calls = 0;
    struct kube_transport tr2 = {.ctx = &t, .round_trip = rt_401_then_ok};
    kube_client_free(c);
    c = kube_client_new_transport(&cfg, &tr2, "test");
    fr.rc = K_ETIMEDOUT;
    kube_exec_cache_invalidate(cfg.exec_cache, 2);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/a/pods/b", &obj, &e), K_EIO);
    assert_int_equal(e.credentials, 1);
    assert_int_equal(t.calls, 0);
    kube_client_free(c);
    kube_exec_cache_free(cfg.exec_cache);
}

/* A daemon's plugins are never interactive (runs last: the setting is process-wide). */
static void test_daemon_never_interactive(void **state)
{
    (void)state;
    struct fake_runner fr = {.reply = "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                                      "\",\"status\":{\"token\":\"t%d\"}}"};
    struct kube_exec_config ec = {
        .command = "x", .api_version = V1, .user = "u", .interactive = KUBE_EXEC_ALWAYS};
    struct kube_exec_cache *c = kube_exec_cache_new(&ec, NULL, NULL, fake_run, &fr);
    struct kube_exec_cred cred;
    uint64_t gen;
    char err[256];
    kube_exec_set_daemon();
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "interactiveMode is Always but this program runs as a daemon"));
    ec.interactive = KUBE_EXEC_IF_AVAILABLE;
    fr.interactive = true;
    assert_int_equal(kube_exec_cache_get(c, &cred, &gen, err, sizeof(err)), K_OK);
    assert_false(fr.interactive);
    kube_exec_cred_cleanup(&cred);
    kube_exec_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_token),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_tree_budget),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_exec_info),
        cmocka_unit_test(test_cache_expiry),
        cmocka_unit_test(test_cache_no_expiry_and_always),
        cmocka_unit_test(test_cache_threads),
        cmocka_unit_test_setup_teardown(test_run_real, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_run_path_lookup, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_run_signals, setup_dir, teardown_dir),
        cmocka_unit_test(test_client_401_rerun),
        cmocka_unit_test(test_daemon_never_interactive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
