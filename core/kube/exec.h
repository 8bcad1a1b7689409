/*
 * exec.h - exec credential plugins: the kubeconfig `users[].user.exec` stanza that EKS
 * (`aws eks get-token`), GKE (`gke-gcloud-auth-plugin`) and AKS (`kubelogin`) use.
 *
 * Semantics follow kubernetes/client-go: plugin/pkg/client/auth/exec/exec.go (and
 * pkg/apis/clientauthentication/{v1,v1beta1}/types.go for the ExecCredential object):
 *   - the command is run without a shell, with the args, the caller's environment plus the
 *     stanza's env (a stanza entry replaces a variable of the same name) and
 *     KUBERNETES_EXEC_INFO, an ExecCredential JSON whose spec.interactive says whether the
 *     plugin may prompt and, with provideClusterInfo, whose spec.cluster holds the cluster
 *     (server, tls-server-name, insecure-skip-tls-verify, certificate-authority-data, proxy-url);
 *   - a command without '/' is looked up on $PATH (directories skipped; a match through an
 *     empty or relative entry refused, as Go's exec.LookPath does since Go 1.19); one with '/'
 *     was resolved against the kubeconfig's directory by the loader (tools/clientcmd/loader.go
 * ResolveLocalPaths);
 *   - interactiveMode Never: never interactive; IfAvailable: interactive when standard input is
 *     a terminal; Always: standard input must be a terminal, else an error. Only an interactive
 *     plugin gets our standard input; otherwise it reads /dev/null. Its stderr is ours (messages
 *     reach the user as with kubectl); its stdout is the response, at most KUBE_EXEC_MAX_OUTPUT
 *     bytes;
 *   - the response must be an ExecCredential of the configured apiVersion with status.token, or
 *     status.clientCertificateData and status.clientKeyData (PEM), and optionally
 *     status.expirationTimestamp (RFC 3339). The credential is cached until that time (forever
 *     without one) and the plugin runs again after it, or after the server answered 401 to it.
 * Beyond client-go: the plugin is killed (SIGKILL) after KUBE_EXEC_TIMEOUT_S seconds.
 * Not handled: the cluster's `extensions` entry client.authentication.k8s.io/exec
 * (spec.cluster.config).
 */
#ifndef GPUTRI_KUBE_EXEC_H
#define GPUTRI_KUBE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

#define KUBE_EXEC_API_V1 "client.authentication.k8s.io/v1"
#define KUBE_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define KUBE_EXEC_MAX_OUTPUT (1u << 20) /* bytes of a plugin's stdout */
#define KUBE_EXEC_TIMEOUT_S 60          /* a plugin still running after this is killed */
#define KUBE_EXEC_MAX_ARGS 64           /* args and env entries each */

enum kube_exec_interactive {
    KUBE_EXEC_IF_AVAILABLE = 0,
    KUBE_EXEC_NEVER,
    KUBE_EXEC_ALWAYS,
};

/* The exec stanza as loaded (core/kube/config.c). Owned by struct kube_config. */
struct kube_exec_config {
    char *command; /* a bare name (PATH lookup) or a path */
    char **args;   /* nargs entries */
    size_t nargs;
    char **env; /* "NAME=value", nenv entries */
    size_t nenv;
    char *api_version;  /* KUBE_EXEC_API_V1 or KUBE_EXEC_API_V1BETA1 */
    char *install_hint; /* or NULL */
    char *user;         /* the kubeconfig user's name, for messages */
    bool provide_cluster_info;
    enum kube_exec_interactive interactive;
};

/* The cluster as the plugin sees it with provideClusterInfo (borrowed strings; NULL = unset). */
struct kube_exec_cluster {
    const char *server;
    const char *tls_server_name;
    const char *proxy_url;
    const char *ca_pem; /* CA bytes (the file's content when the kubeconfig names a file) */
    size_t ca_pem_len;
    bool insecure;
};

/* A credential from a plugin. Strings NUL-terminated and owned. */
struct kube_exec_cred {
    char *token;    /* status.token, or NULL */
    char *cert_pem; /* status.clientCertificateData, or NULL */
    size_t cert_pem_len;
    char *key_pem; /* status.clientKeyData, or NULL */
    size_t key_pem_len;
    int64_t expiry_wall_ms; /* status.expirationTimestamp in ms since the epoch; 0: none */
};

/*
 * kube_exec_parse_response() - parse a plugin's stdout (`len` bytes, need not be
 * NUL-terminated) as an ExecCredential of `api_version` into *out (zeroed first; release with
 * kube_exec_cred_cleanup()). Errors, K_EINVAL with a one-line reason in err (errlen bytes):
 * not JSON, kind not ExecCredential, another apiVersion ("exec plugin is configured to use API
 * version X, plugin returned version Y"), no status, neither a token nor a certificate/key pair,
 * only one of certificate and key, an expirationTimestamp that is not RFC 3339, a token with a
 * control character; K_ENOMEM. Pure; thread-safe.
 */
int kube_exec_parse_response(const char *data, size_t len, const char *api_version,
                             struct kube_exec_cred *out, char *err, size_t errlen);

/* kube_exec_cred_cleanup() - free and wipe what *c owns. NULL-safe, idempotent. */
void kube_exec_cred_cleanup(struct kube_exec_cred *c);

/*
 * kube_exec_info_json() - the KUBERNETES_EXEC_INFO value for `ec`: {"kind":"ExecCredential",
 * "apiVersion":..,"spec":{"interactive":..[,"cluster":{..}]}}, the cluster only with
 * provideClusterInfo (certificate-authority-data base64-encoded). Returns a malloc'd string or
 * NULL (out of memory). Pure; thread-safe.
 */
char *kube_exec_info_json(const struct kube_exec_config *ec, const struct kube_exec_cluster *cl,
                          bool interactive);

/*
 * A runner runs the plugin and returns its stdout: K_OK with *out (malloc'd, *out_len bytes,
 * NUL-terminated), or an error with a one-line reason in err. kube_exec_run() is the real one;
 * tests put their own in a cache.
 */
typedef int (*kube_exec_runner_fn)(void *ctx, const struct kube_exec_config *ec,
                                   const char *exec_info, bool interactive, char **out,
                                   size_t *out_len, char *err, size_t errlen);

/*
 * kube_exec_run() - run ec->command with posix_spawn (a bare name is looked up on $PATH first,
 * as Go's exec.LookPath does), no shell:
 * stdin from /dev/null unless `interactive`, SIGPIPE at its default and no signal blocked,
 * stdout read through a pipe (at most KUBE_EXEC_MAX_OUTPUT bytes), stderr inherited, killed after
 * KUBE_EXEC_TIMEOUT_S. Errors, with a one-line reason: K_ENOTFOUND "exec: executable X not found"
 * plus the install hint; K_EIO for a bare name found through an empty or relative $PATH entry
 * (refused, as Go's exec.LookPath refuses it with ErrDot: os/exec/lp_unix.go) and for a plugin that
 * exits non-zero
 * ("exec: executable X failed with exit code N") or dies from a signal; K_ETIMEDOUT; K_ETOOBIG for
 * too much output; K_ENOMEM. ctx is unused. Thread-safe (it reads `environ`: nobody may change the
 * environment meanwhile).
 */
int kube_exec_run(void *ctx, const struct kube_exec_config *ec, const char *exec_info,
                  bool interactive, char **out, size_t *out_len, char *err, size_t errlen);

/*
 * The credential cache of one exec stanza: at most one plugin run at a time, whatever the number
 * of threads asking; a credential is reused until its expirationTimestamp has passed on `clock`'s
 * wall time, or until kube_exec_cache_invalidate() with its generation.
 */
struct kube_exec_cache;

/*
 * kube_exec_cache_new() - a cache for `ec` and `cluster` (both borrowed: they must outlive it;
 * cluster's strings too), reading wall time from `clk` (NULL: the system clock; borrowed),
 * running plugins with `run` (NULL: kube_exec_run) and `run_ctx`. NULL when out of memory.
 */
struct kube_exec_cache *kube_exec_cache_new(const struct kube_exec_config *ec,
                                            const struct kube_exec_cluster *cluster,
                                            const struct clock *clk, kube_exec_runner_fn run,
                                            void *run_ctx);

/* kube_exec_cache_free() - NULL-safe. No thread may be using the cache. */
void kube_exec_cache_free(struct kube_exec_cache *c);

/*
 * kube_exec_set_daemon() - this process is a daemon: no exec plugin is ever interactive, whether
 * or not standard input is a terminal (IfAvailable runs non-interactive, Always is refused).
 * gputri-controller and gputri-webhook call it at start. Process-wide; thread-safe.
 */
void kube_exec_set_daemon(void);

/*
 * kube_exec_cache_get() - a copy of the current credential in *out (release with
 * kube_exec_cred_cleanup()), running the plugin when there is none or it has expired, and its
 * generation in *generation (for kube_exec_cache_invalidate()). Interactive as described at the
 * top, standard input tested with isatty(0), never after kube_exec_set_daemon(). Errors: the
 * runner's, or the parser's, with the reason in err prefixed by the user's name: `exec plugin of
 * user "U": ...`. Thread-safe.
 */
int kube_exec_cache_get(struct kube_exec_cache *c, struct kube_exec_cred *out, uint64_t *generation,
                        char *err, size_t errlen);

/*
 * kube_exec_cache_invalidate() - the server refused (401) the credential of `generation`: drop
 * it, so the next get runs the plugin again. A credential of a later generation (another thread
 * already refreshed it) is kept. Thread-safe.
 */
void kube_exec_cache_invalidate(struct kube_exec_cache *c, uint64_t generation);

/* kube_exec_cache_runs() - how many times the plugin has run (for tests and logs). Thread-safe. */
unsigned kube_exec_cache_runs(struct kube_exec_cache *c);

#endif
