/*
 * options.h - gputri-webhook's command line, Kubernetes style (--flag=value or --flag value,
 * single or double dash, as getopt_long_only accepts them).
 *
 * Flags: --tls-cert-file, --tls-private-key-file, --client-ca-file, --bind-address (default "":
 * every interface, dual-stack, http/server.h), --port (default 8443), --kubeconfig,
 * --gpu-resources, --gpu-device-classes (model/gpu.h DRA_GPU_SET_DEFAULT),
 * --assume-extended-resource-toleration,
 * --autoscaler (auto|none|karpenter|cluster-autoscaler, autoscaler.h; default auto),
 * --autoscaler-discovery-interval (default WH_AUTOSCALER_DISCOVERY_MS),
 * --max-request-bytes, --threads, --max-connections, --connection-timeout,
 * --events-namespace-burst, --events-namespace-refill-interval, --events-burst,
 * --events-refill-interval (kube/event_recorder.h; burst 0 turns that bucket off),
 * --event-verification (auto|client-cert|lookup|off, events.h; default auto),
 * --kube-api-qps, --kube-api-burst (util/flags.h, kube/client.h kube_set_rate_limit), --v,
 * --logging-format (text|json), --help, --version.
 * Certificates in the cluster (selfcert.h; instead of the two files): --cert-secret NS/NAME,
 * --webhook-configuration NAME, --cert-service NAME (default gputri-webhook), --cert-validity D
 * (default 8760h), --ca-validity D (default 87600h).
 */
#ifndef GPUTRI_WEBHOOK_OPTIONS_H
#define GPUTRI_WEBHOOK_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "autoscaler.h"
#include "events.h"
#include "kube/event_recorder.h"
#include "util/log.h"

#define WH_DEFAULT_PORT 8443
#define WH_DEFAULT_MAX_BODY (3u << 20) /* the API server's MaxRequestBodyBytes */
#define WH_DEFAULT_THREADS 4
#define WH_DEFAULT_MAX_CONNECTIONS 256
#define WH_DEFAULT_CONNECTION_TIMEOUT 30 /* seconds of inactivity */

struct wh_options {
    const char *tls_cert_file;  /* PEM: leaf first, then intermediates */
    const char *tls_key_file;   /* PEM private key */
    const char *client_ca_file; /* PEM CAs of client certificates; NULL: none asked for */
    const char *bind_address;   /* numeric IPv4 or IPv6 address; "": every interface */
    int port;
    const char *kubeconfig;      /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *gpu_resources;   /* comma-separated GPU set (model/gpu.h) */
    const char *dra_gpu_classes; /* comma-separated DeviceClass / driver patterns */
    bool assume_ert;             /* the ExtendedResourceToleration plugin is enabled */
    enum wh_autoscaler_mode autoscaler;
    int64_t autoscaler_discovery_ms; /* between discovery checks (mode auto) */
    size_t max_body;                 /* request body cap in bytes */
    int threads;                     /* MHD thread pool size */
    int max_connections;
    int connection_timeout;            /* seconds */
    struct event_limit_options events; /* max_namespaces left 0 (the default) */
    /* --cert-secret NS/NAME: the webhook keeps its CA and serving certificate there
     * (selfcert.h) instead of reading --tls-cert-file/--tls-private-key-file */
    char cert_secret_ns[64], cert_secret_name[254]; /* "" when not given */
    const char *webhook_configuration;              /* whose caBundle it keeps */
    const char *cert_service;                       /* the certificate's Service name */
    int64_t cert_validity_s, ca_validity_s;
    int verbosity; /* --v */
    enum log_format log_format;
    bool help, version;

    /* --event-verification; client-cert needs client_ca_file */
    enum wh_event_verification event_verification;
    double kube_api_qps; /* --kube-api-qps; negative: no client-side rate limit */
    int kube_api_burst;  /* --kube-api-burst */
};

/*
 * wh_options_parse() - fill `o` with defaults, then apply argv. Strings in `o` point into argv or
 * at static defaults (nothing to free). Returns K_OK, or K_EINVAL with a one-line reason in err
 * (errlen bytes) for an unknown flag, a bad value, or (unless --help/--version) a missing
 * --tls-cert-file/--tls-private-key-file, or --event-verification=client-cert without
 * --client-ca-file. Uses getopt state: not thread-safe; call once.
 */
int wh_options_parse(int argc, char **argv, struct wh_options *o, char *err, size_t errlen);

/* wh_options_usage() - print the help text to `out`. */
void wh_options_usage(FILE *out);

#endif
