/*
 * exec.c - exec credential plugins: run, parse, cache (see exec.h).
 */
#include "kube/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "kube/config.h"
#include "kube/json.h"
#include "kube/read_budget.h"
#include "util/clock.h"
#include "util/errbuf.h"
#include "util/result.h"

extern char **environ;

#define ENV_MAX 4096 /* variables taken from our environment */

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void kube_exec_cred_cleanup(struct kube_exec_cred *c)
{
    if (!c)
        return;
    if (c->token) {
        OPENSSL_cleanse(c->token, strlen(c->token));
        free(c->token);
    }
    free(c->cert_pem);
    if (c->key_pem) {
        OPENSSL_cleanse(c->key_pem, c->key_pem_len);
        free(c->key_pem);
    }
    memset(c, 0, sizeof(*c));
}

int kube_exec_parse_response(const char *data, size_t len, const char *api_version,
                             struct kube_exec_cred *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EINVAL;
    json_object *root = NULL;
    if (len > KUBE_EXEC_MAX_OUTPUT) {
        errbuf_printf(err, errlen, "response larger than %u bytes", KUBE_EXEC_MAX_OUTPUT);
        return K_EINVAL;
    }
    /* the plugin is the user's, but its output is still parsed within a tree budget */
    struct json_tree t;
    char why[160];
    int prc = kube_read_parse_value(&t, data, len, why, sizeof(why));
    if (prc == K_ENOMEM) {
        json_tree_free(&t);
        return K_ENOMEM;
    }
    root = prc == K_OK ? json_object_get(t.root) : NULL;
    json_tree_free(&t);
    if (!root || !json_object_is_type(root, json_type_object)) {
        errbuf_printf(err, errlen, "decoding stdout: not an ExecCredential JSON object%s%s",
                      prc != K_OK ? ": " : "", prc != K_OK ? why : "");
        goto out;
    }
    const char *kind = kube_json_str(root, "kind");
    const char *ver = kube_json_str(root, "apiVersion");
    if (!kind || strcmp(kind, "ExecCredential") != 0) {
        errbuf_printf(err, errlen, "decoding stdout: kind is \"%.40s\", want ExecCredential",
                      kind ? kind : "");
        goto out;
    }
    if (!ver || strcmp(ver, api_version) != 0) {
        errbuf_printf(err, errlen,
                      "exec plugin is configured to use API version %s, plugin returned "
                      "version %.80s",
                      api_version, ver ? ver : "(none)");
        goto out;
    }
    json_object *status = NULL;
    if (!json_object_object_get_ex(root, "status", &status) ||
        !json_object_is_type(status, json_type_object)) {
        errbuf_printf(err, errlen, "exec plugin didn't return a status field");
        goto out;
    }
    const char *token = kube_json_str(status, "token");
    const char *cert = kube_json_str(status, "clientCertificateData");
    const char *key = kube_json_str(status, "clientKeyData");
    if (token && !*token)
        token = NULL;
    if (cert && !*cert)
        cert = NULL;
    if (key && !*key)
        key = NULL;
    if (!token && !cert && !key) {
        errbuf_printf(err, errlen, "exec plugin didn't return a token or cert/key pair");
        goto out;
    }
    if (!cert != !key) {
        errbuf_printf(err, errlen, "exec plugin returned only certFile or keyFile");
        goto out;
    }
    if (token && !kube_header_value_ok(token)) {
        errbuf_printf(err, errlen, "exec plugin returned a token with a control character");
        goto out;
    }
    const char *exp = kube_json_str(status, "expirationTimestamp");
    if (exp && *exp && !clock_parse_rfc3339_ms(exp, &out->expiry_wall_ms)) {
        errbuf_printf(err, errlen, "expirationTimestamp \"%.60s\" is not RFC 3339", exp);
        goto out;
    }
    if (exp && *exp && out->expiry_wall_ms <= 0)
        out->expiry_wall_ms = 1; /* the epoch itself: expired, not "no expiry" (0) */
    rc = K_ENOMEM;
    if (token && !(out->token = strdup(token)))
        goto out;
    if (cert) {
        out->cert_pem_len = strlen(cert);
        if (!(out->cert_pem = dup_n(cert, out->cert_pem_len)))
            goto out;
        out->key_pem_len = strlen(key);
        if (!(out->key_pem = dup_n(key, out->key_pem_len)))
            goto out;
    }
    rc = K_OK;
out:
    json_object_put(root);
    if (rc)
        kube_exec_cred_cleanup(out);
    return rc;
}

char *kube_exec_info_json(const struct kube_exec_config *ec, const struct kube_exec_cluster *cl,
                          bool interactive)
{
    char *result = NULL;
    json_object *root = json_object_new_object();
    if (!root)
        return NULL;
    json_object *spec = json_object_new_object();
    if (!spec)
        goto out;
    json_object_object_add(root, "spec", spec); /* root owns spec from here */
    json_object_object_add(root, "kind", json_object_new_string("ExecCredential"));
    json_object_object_add(root, "apiVersion", json_object_new_string(ec->api_version));
    json_object_object_add(spec, "interactive", json_object_new_boolean(interactive));
    if (ec->provide_cluster_info && cl) {
        json_object *c = json_object_new_object();
        if (!c)
            goto out;
        json_object_object_add(spec, "cluster", c);
        if (cl->server)
            json_object_object_add(c, "server", json_object_new_string(cl->server));
        if (cl->tls_server_name)
            json_object_object_add(c, "tls-server-name",
                                   json_object_new_string(cl->tls_server_name));
        if (cl->insecure)
            json_object_object_add(c, "insecure-skip-tls-verify", json_object_new_boolean(1));
        if (cl->ca_pem && cl->ca_pem_len && cl->ca_pem_len < (1u << 24)) {
            size_t n = 4 * ((cl->ca_pem_len + 2) / 3) + 1;
            unsigned char *b64 = malloc(n);
            if (!b64)
                goto out;
            EVP_EncodeBlock(b64, (const unsigned char *)cl->ca_pem, (int)cl->ca_pem_len);
            json_object_object_add(c, "certificate-authority-data",
                                   json_object_new_string((const char *)b64));
            free(b64);
        }
        if (cl->proxy_url)
            json_object_object_add(c, "proxy-url", json_object_new_string(cl->proxy_url));
    }
    const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    if (s)
        result = strdup(s);
out:
    json_object_put(root);
    return result;
}

/* The environment for the plugin: ours minus the names `ec` sets, then ec->env, then info. */
static char **plugin_env(const struct kube_exec_config *ec, const char *info)
{
    size_t n = 0;
    while (environ && environ[n] && n < ENV_MAX)
        n++;
    char **env = calloc(n + ec->nenv + 2, sizeof(char *));
    if (!env)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        const char *eq = strchr(e, '=');
        size_t nl = eq ? (size_t)(eq - e) : strlen(e);
        bool replaced =
            nl == strlen("KUBERNETES_EXEC_INFO") && strncmp(e, "KUBERNETES_EXEC_INFO", nl) == 0;
        for (size_t j = 0; j < ec->nenv && !replaced; j++)
            if (strncmp(ec->env[j], e, nl) == 0 && ec->env[j][nl] == '=')
                replaced = true;
        if (!replaced)
            env[o++] = (char *)e;
    }
    for (size_t j = 0; j < ec->nenv; j++)
        env[o++] = ec->env[j];
    env[o] = (char *)info; /* "KUBERNETES_EXEC_INFO=..." */
    return env;
}

/* A PATH match that is relative to the working directory (look_path's refusal). */
#define LOOK_RELATIVE (-1)

/* `path` can be run: not a directory, and executable (Go's findExecutable). */
static bool executable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return false;
    }
    return access(path, X_OK) == 0;
}

/*
 * The executable `cmd` names: a path as it is, a bare name searched on $PATH (an empty entry
 * means the working directory). A match found through an empty or relative $PATH entry is
 * refused with LOOK_RELATIVE, as Go's exec.LookPath refuses it with ErrDot since Go 1.19 (a
 * kubeconfig's `command: aws` must not run ./aws of whatever directory the user is in).
 * Returns 0 with *out malloc'd, LOOK_RELATIVE, or an errno (ENOENT, EACCES, ENOMEM).
 */
static int look_path(const char *cmd, char **out)
{
    if (strchr(cmd, '/')) {
        if (access(cmd, X_OK) != 0)
            return errno;
        *out = strdup(cmd);
        return *out ? 0 : ENOMEM;
    }
    const char *p = getenv("PATH");
    if (!p)
        p = "/usr/local/bin:/usr/bin:/bin";
    int last = ENOENT;
    for (int i = 0; i < 4096; i++) {
        size_t n = strcspn(p, ":");
        char *cand = NULL;
        if (asprintf(&cand, "%.*s/%s", n ? (int)n : 1, n ? p : ".", cmd) < 0)
            return ENOMEM;
        if (executable(cand)) {
            if (cand[0] != '/') {
                free(cand);
                return LOOK_RELATIVE;
            }
            *out = cand;
            return 0;
        }
        if (errno == EACCES)
            last = EACCES;
        free(cand);
        if (!p[n])
            break;
        p += n + 1;
    }
    return last;
}

int kube_exec_run(void *ctx, const struct kube_exec_config *ec, const char *exec_info,
                  bool interactive, char **out, size_t *out_len, char *err, size_t errlen)
{
    (void)ctx;
    int rc = K_ENOMEM;
    int fds[2] = {-1, -1};
    char *info = NULL, **env = NULL, **argv = NULL, *path = NULL;
    char *data = NULL;
    size_t len = 0, cap = 0;
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ready = false, attr_ready = false;

    *out = NULL;
    *out_len = 0;
    if (asprintf(&info, "KUBERNETES_EXEC_INFO=%s", exec_info) < 0) {
        info = NULL;
        goto out;
    }
    env = plugin_env(ec, info);
    argv = calloc(ec->nargs + 2, sizeof(char *));
    if (!env || !argv)
        goto out;
    argv[0] = ec->command;
    for (size_t i = 0; i < ec->nargs; i++)
        argv[i + 1] = ec->args[i];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        errbuf_printf(err, errlen, "exec: pipe: %s", strerror(errno));
        rc = K_EIO;
        goto out;
    }
    if (posix_spawn_file_actions_init(&fa) != 0)
        goto out;
    fa_ready = true;
    if (!interactive && posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0)
        goto out;
    if (posix_spawn_file_actions_adddup2(&fa, fds[1], 1) != 0)
        goto out;
    /* The daemons ignore SIGPIPE and a thread may block signals: the plugin starts with
     * SIGPIPE at its default and no signal blocked, as a plugin of kubectl does (exec resets
     * caught signals by itself; an ignored one and the mask would be inherited). */
    if (posix_spawnattr_init(&attr) != 0)
        goto out;
    attr_ready = true;
    sigset_t sigdef, sigmask;
    sigemptyset(&sigdef);
    sigaddset(&sigdef, SIGPIPE);
    sigemptyset(&sigmask);
    if (posix_spawnattr_setsigdefault(&attr, &sigdef) != 0 ||
        posix_spawnattr_setsigmask(&attr, &sigmask) != 0 ||
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) != 0)
        goto out;
    /* The lookup first, as Go's exec.Command does (exec.LookPath), so a missing plugin is
     * reported as such however posix_spawn reports a failed exec. */
    int e = look_path(ec->command, &path);
    if (e == 0)
        e = posix_spawn(&pid, path, &fa, &attr, argv, env);
    close(fds[1]);
    fds[1] = -1;
    if (e != 0) {
        pid = -1;
        if (e == LOOK_RELATIVE) {
            errbuf_printf(err, errlen,
                          "exec: executable %s found relative to the current directory (an "
                          "empty or relative $PATH entry); refused",
                          ec->command);
            rc = K_EIO;
        } else if (e == ENOENT || e == EACCES || e == ENOTDIR) {
            errbuf_printf(err, errlen, "exec: executable %s not found%s%s", ec->command,
                          ec->install_hint ? "; " : "", ec->install_hint ? ec->install_hint : "");
            rc = K_ENOTFOUND;
        } else {
            errbuf_printf(err, errlen, "exec: %s: %s", ec->command, strerror(e));
            rc = K_EIO;
        }
        goto out;
    }
    int64_t deadline = clock_mono_ms(NULL) + (int64_t)KUBE_EXEC_TIMEOUT_S * 1000;
    rc = K_OK;
    for (;;) {
        int64_t left = deadline - clock_mono_ms(NULL);
        if (left <= 0) {
            errbuf_printf(err, errlen, "exec: executable %s did not finish within %d s; killed",
                          ec->command, KUBE_EXEC_TIMEOUT_S);
            rc = K_ETIMEDOUT;
            break;
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            errbuf_printf(err, errlen, "exec: poll: %s", strerror(errno));
            rc = K_EIO;
            break;
        }
        if (pr == 0)
            continue;
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 8192;
            if (ncap > KUBE_EXEC_MAX_OUTPUT + 4096)
                ncap = KUBE_EXEC_MAX_OUTPUT + 4096;
            char *nd = realloc(data, ncap + 1);
            if (!nd) {
                rc = K_ENOMEM;
                break;
            }
            data = nd;
            cap = ncap;
        }
        ssize_t r = read(fds[0], data + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            errbuf_printf(err, errlen, "exec: reading stdout: %s", strerror(errno));
            rc = K_EIO;
            break;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len > KUBE_EXEC_MAX_OUTPUT) {
            errbuf_printf(err, errlen, "exec: executable %s wrote more than %u bytes; killed",
                          ec->command, KUBE_EXEC_MAX_OUTPUT);
            rc = K_ETOOBIG;
            break;
        }
    }
    if (rc != K_OK)
        kill(pid, SIGKILL);
    int status = 0;
    /* A plugin may close stdout and go on running: the deadline holds for its exit too. */
    for (;;) {
        pid_t w = waitpid(pid, &status, rc == K_OK ? WNOHANG : 0);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (w == 0 && clock_mono_ms(NULL) >= deadline) {
            errbuf_printf(err, errlen,
                          "exec: executable %s did not exit within %d s of closing its output; "
                          "killed",
                          ec->command, KUBE_EXEC_TIMEOUT_S);
            rc = K_ETIMEDOUT;
            kill(pid, SIGKILL);
        } else if (w == 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    pid = -1;
    if (rc == K_OK) {
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            errbuf_printf(err, errlen, "exec: executable %s failed with exit code %d", ec->command,
                          WEXITSTATUS(status));
            rc = K_EIO;
        } else if (WIFSIGNALED(status)) {
            errbuf_printf(err, errlen, "exec: executable %s was killed by signal %d", ec->command,
                          WTERMSIG(status));
            rc = K_EIO;
        }
    }
    if (rc == K_OK) {
        if (!data && !(data = malloc(1))) {
            rc = K_ENOMEM;
            goto out;
        }
        data[len] = '\0';
        *out = data;
        *out_len = len;
        data = NULL;
    }
out:
    if (rc == K_ENOMEM && err && errlen && !err[0])
        errbuf_printf(err, errlen, "exec: out of memory");
    if (fa_ready)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_ready)
        posix_spawnattr_destroy(&attr);
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (data) {
        OPENSSL_cleanse(data, len);
        free(data);
    }
    free(info);
    free(env);
    free(argv);
    free(path);
    return rc;
}

static atomic_bool daemon_process;

void kube_exec_set_daemon(void)
{
    atomic_store(&daemon_process, true);
}

struct kube_exec_cache {
    pthread_mutex_t mu;
    const struct kube_exec_config *ec;
    const struct kube_exec_cluster *cluster;
    const struct clock *clk;
    kube_exec_runner_fn run;
    void *run_ctx;
    struct kube_exec_cred cred; /* valid when have */
    bool have;
    uint64_t generation;
    unsigned runs;
};

struct kube_exec_cache *kube_exec_cache_new(const struct kube_exec_config *ec,
                                            const struct kube_exec_cluster *cluster,
                                            const struct clock *clk, kube_exec_runner_fn run,
                                            void *run_ctx)
{
    struct kube_exec_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->ec = ec;
    c->cluster = cluster;
    c->clk = clk;
    c->run = run ? run : kube_exec_run;
    c->run_ctx = run_ctx;
    return c;
}

void kube_exec_cache_free(struct kube_exec_cache *c)
{
    if (!c)
        return;
    kube_exec_cred_cleanup(&c->cred);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int cred_copy(const struct kube_exec_cred *in, struct kube_exec_cred *out)
{
    memset(out, 0, sizeof(*out));
    out->expiry_wall_ms = in->expiry_wall_ms;
    if (in->token && !(out->token = strdup(in->token)))
        goto nomem;
    if (in->cert_pem) {
        out->cert_pem_len = in->cert_pem_len;
        out->key_pem_len = in->key_pem_len;
        if (!(out->cert_pem = dup_n(in->cert_pem, in->cert_pem_len)) ||
            !(out->key_pem = dup_n(in->key_pem, in->key_pem_len)))
            goto nomem;
    }
    return K_OK;
nomem:
    kube_exec_cred_cleanup(out);
    return K_ENOMEM;
}

int kube_exec_cache_get(struct kube_exec_cache *c, struct kube_exec_cred *out, uint64_t *generation,
                        char *err, size_t errlen)
{
    int rc = K_OK;
    char *stdout_data = NULL;
    size_t stdout_len = 0;
    char why[400] = "";

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&c->mu);
    if (c->have && c->cred.expiry_wall_ms && clock_wall_ms(c->clk) >= c->cred.expiry_wall_ms) {
        kube_exec_cred_cleanup(&c->cred);
        c->have = false;
    }
    if (!c->have) {
        const struct kube_exec_config *ec = c->ec;
        bool daemon = atomic_load(&daemon_process);
        bool tty = !daemon && isatty(0) == 1;
        bool interactive = ec->interactive != KUBE_EXEC_NEVER && tty;
        if (ec->interactive == KUBE_EXEC_ALWAYS && !tty) {
            errbuf_printf(why, sizeof(why), "interactiveMode is Always but %s",
                          daemon ? "this program runs as a daemon"
                                 : "standard input is not a terminal");
            rc = K_EINVAL;
            goto out;
        }
        char *info = kube_exec_info_json(ec, c->cluster, interactive);
        if (!info) {
            rc = K_ENOMEM;
            errbuf_printf(why, sizeof(why), "out of memory");
            goto out;
        }
        c->runs++;
        rc = c->run(c->run_ctx, ec, info, interactive, &stdout_data, &stdout_len, why, sizeof(why));
        free(info);
        if (rc)
            goto out;
        rc = kube_exec_parse_response(stdout_data, stdout_len, ec->api_version, &c->cred, why,
                                      sizeof(why));
        if (rc)
            goto out;
        c->have = true;
        c->generation++;
    }
    rc = cred_copy(&c->cred, out);
    if (rc)
        errbuf_printf(why, sizeof(why), "out of memory");
    *generation = c->generation;
out:
    pthread_mutex_unlock(&c->mu);
    if (stdout_data) {
        OPENSSL_cleanse(stdout_data, stdout_len);
        free(stdout_data);
    }
    if (rc)
        errbuf_printf(err, errlen, "exec plugin of user \"%s\": %s", c->ec->user ? c->ec->user : "",
                      why);
    return rc;
}

void kube_exec_cache_invalidate(struct kube_exec_cache *c, uint64_t generation)
{
    pthread_mutex_lock(&c->mu);
    if (c->have && c->generation == generation) {
        kube_exec_cred_cleanup(&c->cred);
        c->have = false;
    }
    pthread_mutex_unlock(&c->mu);
}

unsigned kube_exec_cache_runs(struct kube_exec_cache *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned n = c->runs;
    pthread_mutex_unlock(&c->mu);
    return n;
}
