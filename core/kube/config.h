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
 * A kubeconfig is read with libyaml: current-context, clusters[].cluster.{server,
 * certificate-authority, certificate-authority-data, insecure-skip-tls-verify},
 * users[].user.{client-certificate, client-certificate-data, client-key, client-key-data,
 * token, tokenFile}. Relative file paths are resolved against the kubeconfig's directory.
 * *-data fields are base64-decoded (OpenSSL EVP_DecodeBlock) into memory and take precedence
 * over the matching file field, which is then left NULL. Users with only exec, auth-provider or
 * username credentials are refused with K_EINVAL (not supported).
 */
#ifndef GPUTRI_KUBE_CONFIG_H
#define GPUTRI_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

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
};

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
 * kube_header_value_ok() - true when `v` may go into an HTTP header value: no control character
 * (C0 or DEL; CR/LF would inject headers into every request). A token that fails this is refused
 * (client-go's transport sends the token as given; Go's net/http rejects the request then,
 * golang/go: src/net/http/transport.go, httpguts.ValidHeaderFieldValue). Pure; thread-safe.
 */
bool kube_header_value_ok(const char *v);

/* kube_config_cleanup() - free everything the struct owns. NULL-safe, idempotent. */
void kube_config_cleanup(struct kube_config *cfg);

#endif
