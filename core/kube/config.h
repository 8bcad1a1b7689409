/*
 * config.h - where to reach the API server and how to authenticate.
 *
 * Sources, first found wins (client-go's order, kubernetes/client-go: tools/clientcmd/loader.go
 * and rest/config.go InClusterConfig):
 *   1. the --kubeconfig path given by the caller;
 *   2. $KUBECONFIG (a ':'-separated list; for each map entry the first file defining it wins,
 *      current-context from the first file that sets it);
 *   3. in-cluster: $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT with the service-account
 *      token and CA under /var/run/secrets/kubernetes.io/serviceaccount/ (the directory can be
 *      overridden with $GPUTRI_SERVICEACCOUNT_DIR, for tests);
 *   4. ~/.kube/config.
 * A kubeconfig is read with libyaml: current-context, contexts[].context.{cluster, user,
 * namespace}, clusters[].cluster.{server, certificate-authority, certificate-authority-data,
 * insecure-skip-tls-verify, tls-server-name, proxy-url}, users[].user.{client-certificate,
 * client-certificate-data, client-key, client-key-data, token, tokenFile, exec, as, as-groups,
 * as-uid}. Relative file paths are resolved against the kubeconfig's directory, and so is an
 * exec command that contains a '/' (kubernetes/client-go: tools/clientcmd/loader.go
 * ResolveLocalPaths); a bare command is looked up on $PATH when it runs (kube/exec.h).
 * *-data fields are base64-decoded (OpenSSL EVP_DecodeBlock) into memory and take precedence
 * over the matching file field, which is then left NULL. A literal token wins over exec (as
 * client-go's exec round tripper leaves a request that already carries Authorization alone).
 * Refused with K_EINVAL and one line naming the field: `auth-provider` (the in-tree gcp, azure
 * and oidc providers were removed from client-go in 1.26: use an exec plugin such as
 * gke-gcloud-auth-plugin or kubelogin) and, on a user with no other credential,
 * `username`/`password` (kube-apiserver removed basic authentication in 1.19).
 *
 * Overrides (struct kube_config_overrides, kubectl's global flags) are applied as client-go's
 * DirectClientConfig does (kubernetes/client-go: tools/clientcmd/client_config.go getContext,
 * getCluster, getAuthInfo, ClientConfig; overrides.go for the flag names).
 */
#ifndef GPUTRI_KUBE_CONFIG_H
#define GPUTRI_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/exec.h"

#define KUBE_AS_GROUPS_MAX 32 /* --as-group values, and a user's as-groups */

struct kube_config {
    /* "https://host:port", no trailing slash. A kubeconfig server without a scheme (one only as
     * a prefix, RFC 3986: ALPHA *(ALPHA / DIGIT / "+" / "-" / ".") "://") gets "https://", as
     * in client-go (kubernetes/client-go: rest/url_utils.go DefaultServerURL); a scheme other
     * than http or https is refused with K_EINVAL. */
    char *server;
    char *ca_file; /* PEM file, or NULL */
    char *ca_pem;  /* PEM bytes (decoded certificate-authority-data), or NULL */
    size_t ca_pem_len;
    char *cert_file; /* client certificate PEM file, or NULL */
    char *cert_pem;
    size_t cert_pem_len;
    char *key_file; /* client key PEM file, or NULL */
    char *key_pem;
    size_t key_pem_len;
    char *token;      /* bearer token, or NULL */
    char *token_file; /* re-read before every request when set (rotated projected tokens) */
    bool insecure;    /* insecure-skip-tls-verify */
    char *source;     /* where it came from: a path or "in-cluster"; for messages */
    /* The namespace kubectl would use without -n: the current context's namespace, or
     * in-cluster $POD_NAMESPACE, else the service account's "namespace" file; NULL when none
     * is set (kubectl then uses "default"). kubernetes/client-go: tools/clientcmd
     * client_config.go Namespace(). */
    char *ns;
    /* tls-server-name: the name the server's certificate is checked against and sent as SNI,
     * instead of the server URL's host; NULL when unset. */
    char *tls_server_name;
    /* proxy-url: http://, https:// or socks5:// (socks5 resolves names at the proxy, as Go's
     * dialer does); NULL: the environment's proxy variables apply, as in client-go. An https://
     * proxy's certificate is checked against the cluster's CA (or not at all with
     * insecure-skip-tls-verify), as Go's http.Transport does; no client certificate is sent to
     * the proxy. */
    char *proxy_url;
    /* Impersonation (--as, --as-group, --as-uid; user.as, as-groups, as-uid): sent as
     * Impersonate-User, Impersonate-Group (one header each) and Impersonate-Uid on every request.
     * Groups or a uid without a user are refused at load, as client-go's ClientConfig does. */
    char *impersonate_user;
    char *impersonate_uid;
    char *impersonate_groups[KUBE_AS_GROUPS_MAX];
    size_t n_impersonate_groups;
    /* --request-timeout: when set, the total time of every non-watch request in ms (0: none);
     * unset: 60 s. */
    bool request_timeout_set;
    int64_t request_timeout_ms;
    /* The exec stanza (kube/exec.h) and its credential cache, or NULL. The cache is the one
     * mutable, thread-safe part of a shared config: every client of this config uses it. */
    struct kube_exec_config *exec;
    struct kube_exec_cache *exec_cache;
    struct kube_exec_cluster exec_cluster; /* borrows this struct's strings */
    char *exec_ca_pem;                     /* ca_file's content, for provideClusterInfo */
};

/*
 * kubectl's global flags (kubernetes/client-go: tools/clientcmd/overrides.go ConfigOverrides).
 * All strings borrowed; NULL or "" = not given. Applied as client_config.go does:
 *   context: the context used instead of current-context (it must exist);
 *   cluster, user: the cluster / user used instead of the context's (they must exist);
 *   ns: the namespace instead of the context's;
 *   server: replaces the cluster's server, and clears its tls-server-name unless tls_server_name
 *     is given too;
 *   certificate_authority (a path, relative to the working directory) or insecure: replace the
 *     cluster's CA file and data and its insecure-skip-tls-verify together;
 *   tls_server_name: replaces the cluster's;
 *   token: replaces the user's token and tokenFile and wins over exec;
 *   client_certificate, client_key: replace the user's certificate / key (file and data);
 *   as, as_groups, as_uid: impersonation, replacing the user's as, as-groups, as-uid;
 *   request_timeout: kubectl's duration ("0" none, "30s", "1m", "1h2m3s", "500ms", a plain
 *     integer is seconds).
 */
struct kube_config_overrides {
    const char *context;
    const char *cluster;
    const char *user;
    const char *ns;
    const char *server;
    const char *certificate_authority;
    const char *tls_server_name;
    bool insecure;
    const char *token;
    const char *client_certificate;
    const char *client_key;
    const char *as;
    const char *as_groups[KUBE_AS_GROUPS_MAX];
    size_t n_as_groups;
    const char *as_uid;
    const char *request_timeout;
};

/*
 * kube_parse_timeout() - kubectl's --request-timeout value into ms (kubernetes/client-go:
 * tools/clientcmd/client_config.go ParseTimeout: a Go duration, e.g. "1m30s", "1.5s",
 * "200ms", or a plain non-negative integer meaning seconds; "0", or a negative duration such
 * as "-1s", is no timeout; a positive one below a millisecond, e.g. "1us", is 1 ms). K_OK, or
 * K_EINVAL for anything else (a negative plain integer, an unknown unit, above one year). Pure;
 * thread-safe.
 */
int kube_parse_timeout(const char *s, int64_t *out_ms);

/*
 * kube_config_load() - find and read the configuration as described above.
 * explicit_path: the --kubeconfig flag or NULL. On failure returns K_ENOTFOUND (no source at
 * all, or a named file missing), K_EINVAL (unparsable YAML, unknown context, cluster or user,
 * bad base64, no server, a server scheme other than http/https) or K_ENOMEM, and writes a one-line
 * reason naming the file into err. On success `cfg` owns its strings; release with
 * kube_config_cleanup(). Not thread-safe with respect to the environment; call once at start-up.
 */
int kube_config_load(const char *explicit_path, struct kube_config *cfg, char *err, size_t errlen);

/*
 * kube_config_load_overrides() - kube_config_load() with kubectl's global flags `ov` (NULL: none)
 * applied as described above. With ov->server and no kubeconfig source, or no current-context,
 * the flags alone make the configuration (as `kubectl --server=... --token=...`); in a pod too,
 * where --server leaves the service account out (client-go: tools/clientcmd/
 * merged_client_builder.go DeferredLoadingClientConfig). Of the other overrides the in-cluster
 * configuration takes token (replacing the service account's), certificate_authority, ns,
 * request_timeout and impersonation (inClusterClientConfig's overrides). A
 * config with an exec user gets its credential cache here (the plugin first runs at the first
 * request). Errors as kube_config_load(), plus K_EINVAL for a context, cluster or user named by
 * a flag that does not exist (`context "X" does not exist`), a bad request_timeout, or an
 * invalid exec stanza (no command, apiVersion other than v1/v1beta1, no interactiveMode with
 * v1, an unknown interactiveMode, an env entry without a name), or --as-group / --as-uid (or the
 * user's as-groups / as-uid) without a user to impersonate ("requesting uid, groups or
 * user-extra for U without impersonating a user", kubectl's words). Same threading rule.
 */
int kube_config_load_overrides(const char *explicit_path, const struct kube_config_overrides *ov,
                               struct kube_config *cfg, char *err, size_t errlen);

/*
 * kube_config_names() - call fn with the name of every entry of `list` ("contexts", "clusters"
 * or "users") in the kubeconfig kube_config_load() would read (explicit_path, else each file of
 * $KUBECONFIG in order, else ~/.kube/config; not in-cluster), at most 4096 calls; a name found
 * in several files comes once per file (callers dedupe). For completion. Returns K_OK,
 * K_ENOTFOUND (no kubeconfig), K_EINVAL (unreadable or invalid YAML) or K_ENOMEM. Same threading
 * rule as kube_config_load().
 */
int kube_config_names(const char *explicit_path, const char *list,
                      void (*fn)(void *ctx, const char *name), void *ctx);

/*
 * kube_header_value_ok() - true when `v` may go into an HTTP header value: no control character
 * (C0 or DEL; CR/LF would inject headers into every request). A token that fails this is refused
 * (client-go's transport sends the token as given; Go's net/http rejects the request then,
 * golang/go: src/net/http/transport.go, httpguts.ValidHeaderFieldValue). Pure; thread-safe.
 */
bool kube_header_value_ok(const char *v);

/* kube_config_cleanup() - free everything the struct owns. NULL-safe, idempotent. */
void kube_config_cleanup(struct kube_config *cfg);

#endif
