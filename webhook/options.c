/* options.c - gputri-webhook's flags. */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpu.h"
#include "util/flags.h"
#include "util/result.h"
#include "util/strconv.h"

void wh_options_usage(FILE *out)
{
    fprintf(out,
            "Usage: gputri-webhook --tls-cert-file=PATH --tls-private-key-file=PATH [flags]\n"
            "       gputri-webhook --cert-secret=NS/NAME --webhook-configuration=NAME [flags]\n"
            "\n"
            "A validating admission webhook that never denies: it answers every AdmissionReview\n"
            "with allowed=true and warnings naming why a GPU pod or workload will not start\n"
            "(untolerated taints, missing RuntimeClass, GPU quota, no GPU node, qGPU setup;\n"
            "DRA: a missing claim, claim template or DeviceClass, no driver or no matching\n"
            "device, a request larger than any node offers, adminAccess in an unlabeled\n"
            "namespace).\n"
            "Serves POST /validate, GET /healthz, GET /readyz and GET /metrics over HTTPS (TLS "
            "1.2/1.3).\n"
            "The certificate and key are re-read when the files change.\n"
            "\n"
            "Flags:\n"
            "  --tls-cert-file PATH         serving certificate (PEM, leaf first)\n"
            "  --tls-private-key-file PATH  its private key (PEM)\n"
            "  --cert-secret NS/NAME        instead of the two files: keep a CA and serving\n"
            "                               certificate in this Secret, made and rotated (at 2/3\n"
            "                               of their lifetimes) by the webhook itself, and the CA\n"
            "                               in the caBundle of --webhook-configuration; ready\n"
            "                               once that caBundle trusts the certificate served\n"
            "  --webhook-configuration NAME the ValidatingWebhookConfiguration (with\n"
            "                               --cert-secret)\n"
            "  --cert-service NAME          the Service in the Secret's namespace the API server\n"
            "                               calls: the certificate's names (default\n"
            "                               gputri-webhook)\n"
            "  --cert-validity D            serving certificate lifetime (default 8760h)\n"
            "  --ca-validity D              CA lifetime (default 87600h)\n"
            "  --client-ca-file PATH        CA certificates (PEM) of the client certificate the\n"
            "                               API server presents; a request without one that\n"
            "                               verifies is answered, its Events as\n"
            "                               --event-verification says (re-read when the file\n"
            "                               changes)\n"
            "  --bind-address ADDR          numeric address to listen on (default: every\n"
            "                               interface, IPv6 and IPv4 ([::], IPV6_V6ONLY off);\n"
            "                               0.0.0.0 when the kernel has no IPv6)\n"
            "  --port N                     port (default %d)\n",
            WH_DEFAULT_PORT);
    flags_usage(out, FLAGS_USAGE_CONFIG | FLAGS_USAGE_KUBE_API, 2, 31, GPU_SET_DEFAULT);
    fprintf(
        out,
        "  --gpu-device-classes LIST    DeviceClass or driver names of GPU DRA requests\n"
        "                               (default %s)\n"
        "  --assume-extended-resource-toleration\n"
        "                               the API server runs the ExtendedResourceToleration\n"
        "                               admission plugin (adds <resource>:Exists:NoSchedule)\n"
        "  --autoscaler MODE            node autoscaler that adds nodes on demand: auto\n"
        "                               (discover: API group karpenter.sh served, or ConfigMap\n"
        "                               kube-system/cluster-autoscaler-status exists), none,\n"
        "                               karpenter or cluster-autoscaler (default auto); with\n"
        "                               one, \"no current node fits\" says it must add a node\n"
        "  --autoscaler-discovery-interval D\n"
        "                               check again every D with --autoscaler=auto (default\n"
        "                               %dm)\n"
        "  --max-request-bytes N        request body cap (default %u)\n"
        "  --threads N                  HTTPS threads, and workers for reviews; reviews that\n"
        "                               name ResourceClaims get half as many (default %d)\n"
        "  --max-connections N          concurrent connections (default %d)\n"
        "  --connection-timeout SECONDS close idle or stalled connections (default %d)\n"
        "  --events-namespace-burst N   Events a namespace may get at once (default %d; 0: no\n"
        "                               per-namespace limit)\n"
        "  --events-namespace-refill-interval D\n"
        "                               one more per namespace every D (default %ds)\n"
        "  --events-burst N             Events over all namespaces at once (default %d; 0: no\n"
        "                               global limit)\n"
        "  --events-refill-interval D   one more over all every D (default %ds)\n"
        "  --event-verification MODE    which reviews may cause Events: auto (a caller whose\n"
        "                               client certificate verifies against --client-ca-file\n"
        "                               at once; any other's CREATE only once the object is\n"
        "                               read back with the review's uid), client-cert (only\n"
        "                               the former), lookup (always read back) or off (default\n"
        "                               auto)\n"
        "  --logging-format FORMAT      text (klog) or json (default text)\n",
        DRA_GPU_SET_DEFAULT, WH_AUTOSCALER_DISCOVERY_MS / 60000, WH_DEFAULT_MAX_BODY,
        WH_DEFAULT_THREADS, WH_DEFAULT_MAX_CONNECTIONS, WH_DEFAULT_CONNECTION_TIMEOUT,
        EVENT_LIMIT_NS_BURST, EVENT_LIMIT_NS_REFILL_MS / 1000, EVENT_LIMIT_BURST,
        EVENT_LIMIT_REFILL_MS / 1000);
    flags_usage(out, FLAGS_USAGE_BASIC, 2, 31, NULL);
}

static int parse_long(const char *flag, const char *s, long min, long max, long *out, char *err,
                      size_t errlen)
{
    long v;
    if (strconv_long(s, min, max, &v) != K_OK) {
        snprintf(err, errlen, "invalid value \"%s\" for --%s (%ld..%ld)", s, flag, min, max);
        return K_EINVAL;
    }
    *out = v;
    return K_OK;
}

/* A certificate lifetime: a Go-style duration, 1 minute .. 100 years, into whole seconds. */
static int parse_validity(const char *flag, const char *s, int64_t *out, char *err, size_t errlen)
{
    int64_t v;
    if (strconv_duration_ms(s, 36500LL * 86400 * 1000, &v) != K_OK || v < 60000) {
        snprintf(err, errlen, "invalid duration \"%s\" for --%s (1m..876000h, e.g. 8760h)", s,
                 flag);
        return K_EINVAL;
    }
    *out = v / 1000;
    return K_OK;
}

/* A Go-style duration ("10s", "500ms", "1m"; a bare number is seconds), 1 ms .. 24 h. */
static int parse_interval(const char *flag, const char *s, int64_t *out, char *err, size_t errlen)
{
    int64_t v;
    if (strconv_duration_ms(s, 24LL * 3600 * 1000, &v) != K_OK || v < 1) {
        snprintf(err, errlen, "invalid duration \"%s\" for --%s (1ms..24h, e.g. 10s)", s, flag);
        return K_EINVAL;
    }
    *out = v;
    return K_OK;
}

int wh_options_parse(int argc, char **argv, struct wh_options *o, char *err, size_t errlen)
{
    enum {
        OPT_CERT = FLAG_FIRST_OWN,
        OPT_KEY,
        OPT_BIND,
        OPT_PORT,
        OPT_ERT,
        OPT_MAXBODY,
        OPT_THREADS,
        OPT_MAXCONN,
        OPT_TIMEOUT,
        OPT_FORMAT,
        OPT_DRA,
        OPT_CLIENT_CA,
        OPT_EV_NS_BURST,
        OPT_EV_NS_REFILL,
        OPT_EV_BURST,
        OPT_EV_REFILL,
        OPT_AUTOSCALER,
        OPT_AUTOSCALER_INTERVAL,
        OPT_EVENT_VERIFICATION,
        OPT_CERT_SECRET,
        OPT_WEBHOOK_CONFIGURATION,
        OPT_CERT_SERVICE,
        OPT_CERT_VALIDITY,
        OPT_CA_VALIDITY,
        OPT_KUBE_API_QPS,
        OPT_KUBE_API_BURST,
    };
    static const struct option longopts[] = {
        {"tls-cert-file", required_argument, NULL, OPT_CERT},
        {"tls-private-key-file", required_argument, NULL, OPT_KEY},
        {"bind-address", required_argument, NULL, OPT_BIND},
        {"port", required_argument, NULL, OPT_PORT},
        {"assume-extended-resource-toleration", no_argument, NULL, OPT_ERT},
        {"max-request-bytes", required_argument, NULL, OPT_MAXBODY},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"max-connections", required_argument, NULL, OPT_MAXCONN},
        {"connection-timeout", required_argument, NULL, OPT_TIMEOUT},
        {"logging-format", required_argument, NULL, OPT_FORMAT},
        {"gpu-device-classes", required_argument, NULL, OPT_DRA},
        {"client-ca-file", required_argument, NULL, OPT_CLIENT_CA},
        {"events-namespace-burst", required_argument, NULL, OPT_EV_NS_BURST},
        {"events-namespace-refill-interval", required_argument, NULL, OPT_EV_NS_REFILL},
        {"events-burst", required_argument, NULL, OPT_EV_BURST},
        {"events-refill-interval", required_argument, NULL, OPT_EV_REFILL},
        {"autoscaler", required_argument, NULL, OPT_AUTOSCALER},
        {"autoscaler-discovery-interval", required_argument, NULL, OPT_AUTOSCALER_INTERVAL},
        {"event-verification", required_argument, NULL, OPT_EVENT_VERIFICATION},
        {"cert-secret", required_argument, NULL, OPT_CERT_SECRET},
        {"webhook-configuration", required_argument, NULL, OPT_WEBHOOK_CONFIGURATION},
        {"cert-service", required_argument, NULL, OPT_CERT_SERVICE},
        {"cert-validity", required_argument, NULL, OPT_CERT_VALIDITY},
        {"ca-validity", required_argument, NULL, OPT_CA_VALIDITY},
        {"kube-api-qps", required_argument, NULL, OPT_KUBE_API_QPS},
        {"kube-api-burst", required_argument, NULL, OPT_KUBE_API_BURST},
        FLAGS_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    o->bind_address = ""; /* every interface, dual-stack (http/server.h) */
    o->port = WH_DEFAULT_PORT;
    o->gpu_resources = GPU_SET_DEFAULT;
    o->dra_gpu_classes = DRA_GPU_SET_DEFAULT;
    o->max_body = WH_DEFAULT_MAX_BODY;
    o->threads = WH_DEFAULT_THREADS;
    o->max_connections = WH_DEFAULT_MAX_CONNECTIONS;
    o->connection_timeout = WH_DEFAULT_CONNECTION_TIMEOUT;
    o->log_format = LOG_FORMAT_TEXT;
    o->autoscaler = WH_AUTOSCALER_MODE_AUTO;
    o->event_verification = WH_EVENT_VERIFY_AUTO;
    o->autoscaler_discovery_ms = WH_AUTOSCALER_DISCOVERY_MS;
    o->cert_service = "gputri-webhook";
    o->cert_validity_s = 365LL * 86400;
    o->ca_validity_s = 3650LL * 86400;
    o->kube_api_qps = FLAGS_KUBE_API_QPS_DEFAULT;
    o->kube_api_burst = FLAGS_KUBE_API_BURST_DEFAULT;
    o->events = (struct event_limit_options){
        .ns_burst = EVENT_LIMIT_NS_BURST,
        .ns_refill_ms = EVENT_LIMIT_NS_REFILL_MS,
        .burst = EVENT_LIMIT_BURST,
        .refill_ms = EVENT_LIMIT_REFILL_MS,
    };
    snprintf(err, errlen, "%s", "");

    optind = 1;
    opterr = 0;
    struct flags_common flags = {0};
    int opt;
    long v;
    while ((opt = getopt_long_only(argc, argv, ":" FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_CERT:
            o->tls_cert_file = optarg;
            break;
        case OPT_KEY:
            o->tls_key_file = optarg;
            break;
        case OPT_BIND:
            o->bind_address = optarg;
            break;
        case OPT_PORT:
            if (parse_long("port", optarg, 1, 65535, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->port = (int)v;
            break;
        case OPT_ERT:
            o->assume_ert = true;
            break;
        case OPT_DRA:
            o->dra_gpu_classes = optarg;
            break;
        case OPT_MAXBODY:
            if (parse_long("max-request-bytes", optarg, 1024, 64L << 20, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->max_body = (size_t)v;
            break;
        case OPT_THREADS:
            if (parse_long("threads", optarg, 1, 64, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->threads = (int)v;
            break;
        case OPT_MAXCONN:
            if (parse_long("max-connections", optarg, 1, 10000, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->max_connections = (int)v;
            break;
        case OPT_TIMEOUT:
            if (parse_long("connection-timeout", optarg, 1, 3600, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->connection_timeout = (int)v;
            break;
        case OPT_CLIENT_CA:
            o->client_ca_file = optarg;
            break;
        case OPT_EV_NS_BURST:
            if (parse_long("events-namespace-burst", optarg, 0, 100000, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->events.ns_burst = (unsigned)v;
            break;
        case OPT_EV_BURST:
            if (parse_long("events-burst", optarg, 0, 100000, &v, err, errlen) != K_OK)
                return K_EINVAL;
            o->events.burst = (unsigned)v;
            break;
        case OPT_EV_NS_REFILL:
            if (parse_interval("events-namespace-refill-interval", optarg, &o->events.ns_refill_ms,
                               err, errlen) != K_OK)
                return K_EINVAL;
            break;
        case OPT_EV_REFILL:
            if (parse_interval("events-refill-interval", optarg, &o->events.refill_ms, err,
                               errlen) != K_OK)
                return K_EINVAL;
            break;
        case OPT_AUTOSCALER:
            if (wh_autoscaler_mode_parse(optarg, &o->autoscaler) != K_OK) {
                snprintf(err, errlen,
                         "invalid value \"%s\" for --autoscaler "
                         "(auto|none|karpenter|cluster-autoscaler)",
                         optarg);
                return K_EINVAL;
            }
            break;
        case OPT_AUTOSCALER_INTERVAL:
            if (parse_interval("autoscaler-discovery-interval", optarg, &o->autoscaler_discovery_ms,
                               err, errlen) != K_OK)
                return K_EINVAL;
            break;
        case OPT_CERT_SECRET: {
            const char *slash = strchr(optarg, '/');
            size_t nslen = slash ? (size_t)(slash - optarg) : 0;
            if (!slash || nslen == 0 || nslen >= sizeof(o->cert_secret_ns) || !slash[1] ||
                strlen(slash + 1) >= sizeof(o->cert_secret_name) || strchr(slash + 1, '/')) {
                snprintf(err, errlen, "invalid value \"%s\" for --cert-secret (NAMESPACE/NAME)",
                         optarg);
                return K_EINVAL;
            }
            memcpy(o->cert_secret_ns, optarg, nslen);
            o->cert_secret_ns[nslen] = '\0';
            snprintf(o->cert_secret_name, sizeof(o->cert_secret_name), "%s", slash + 1);
            break;
        }
        case OPT_WEBHOOK_CONFIGURATION:
            o->webhook_configuration = optarg;
            break;
        case OPT_CERT_SERVICE:
            o->cert_service = optarg;
            break;
        case OPT_CERT_VALIDITY:
            if (parse_validity("cert-validity", optarg, &o->cert_validity_s, err, errlen) != K_OK)
                return K_EINVAL;
            break;
        case OPT_CA_VALIDITY:
            if (parse_validity("ca-validity", optarg, &o->ca_validity_s, err, errlen) != K_OK)
                return K_EINVAL;
            break;
        case OPT_KUBE_API_QPS:
        case OPT_KUBE_API_BURST: {
            const char *why = NULL;
            int rc = opt == OPT_KUBE_API_QPS
                         ? flags_kube_api_qps(optarg, &o->kube_api_qps, &why)
                         : flags_kube_api_burst(optarg, &o->kube_api_burst, &why);
            if (rc != K_OK) {
                snprintf(err, errlen, "invalid value \"%s\" for %s (%s)", optarg,
                         opt == OPT_KUBE_API_QPS ? "--kube-api-qps" : "--kube-api-burst", why);
                return K_EINVAL;
            }
            break;
        }
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0) {
                o->log_format = LOG_FORMAT_TEXT;
            } else if (strcmp(optarg, "json") == 0) {
                o->log_format = LOG_FORMAT_JSON;
            } else {
                snprintf(err, errlen, "invalid value \"%s\" for --logging-format (text|json)",
                         optarg);
                return K_EINVAL;
            }
            break;
        case OPT_EVENT_VERIFICATION:
            if (!wh_event_verification_parse(optarg, &o->event_verification)) {
                snprintf(err, errlen,
                         "invalid value \"%s\" for --event-verification "
                         "(auto|client-cert|lookup|off)",
                         optarg);
                return K_EINVAL;
            }
            break;
        case ':':
            snprintf(err, errlen, "flag %s needs a value", argv[optind - 1]);
            return K_EINVAL;
        default: {
            enum flags_result fr = flags_common_apply(&flags, opt, optarg, err, errlen);
            if (fr == FLAGS_OTHER)
                snprintf(err, errlen, "unknown flag %s", argv[optind - 1]);
            if (fr != FLAGS_STORED)
                return K_EINVAL;
        }
        }
    }
    o->kubeconfig = flags.kubeconfig;
    if (flags.gpu_resources)
        o->gpu_resources = flags.gpu_resources;
    o->verbosity = flags.verbosity;
    o->help = flags.help;
    o->version = flags.version;
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument \"%s\"", argv[optind]);
        return K_EINVAL;
    }
    if (o->help || o->version)
        return K_OK;
    if (o->cert_secret_ns[0]) {
        if (o->tls_cert_file || o->tls_key_file) {
            snprintf(err, errlen,
                     "--cert-secret replaces --tls-cert-file and --tls-private-key-file: give "
                     "one or the other");
            return K_EINVAL;
        }
        if (!o->webhook_configuration || !*o->webhook_configuration) {
            snprintf(err, errlen, "--cert-secret needs --webhook-configuration");
            return K_EINVAL;
        }
        return K_OK;
    }
    if (!o->tls_cert_file || !o->tls_key_file) {
        snprintf(err, errlen,
                 "--tls-cert-file and --tls-private-key-file (or --cert-secret) are "
                 "required");
        return K_EINVAL;
    }
    if (o->event_verification == WH_EVENT_VERIFY_CLIENT_CERT && !o->client_ca_file) {
        snprintf(err, errlen, "--event-verification=client-cert needs --client-ca-file");
        return K_EINVAL;
    }
    return K_OK;
}
