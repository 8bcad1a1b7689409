/* ctl_options.c - gputri-controller's command line (see ctl_options.h). */
#include "ctl_options.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "classify/classify.h"
#include "model/gpu.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/flags.h"
#include "util/result.h"
#include "util/strconv.h"

void ctl_options_usage(FILE *out)
{
    fprintf(out,
            "Usage: gputri-controller [flags]\n"
            "\n"
            "Watches pods and nodes and annotates every pending GPU pod with why it cannot be\n"
            "placed, and every bound GPU pod until its GPU containers have started with why\n"
            "they do not (gputri/cause, gputri/detail), recording an Event when the cause\n"
            "changes.\n"
            "\n"
            "Flags:\n");
    flags_usage(out, FLAGS_USAGE_CONFIG | FLAGS_USAGE_KUBE_API, 2, 27, GPU_SET_DEFAULT);
    fprintf(out,
            "  --workers N              concurrent reconciles (default 2)\n"
            "  --resync-period SECONDS  re-check every pending GPU pod this often (default 300)\n"
            "  --recheck MODE           after a change of nodes, GPU usage or DRA devices,\n"
            "                           re-check the pending pods it can affect (targeted) or\n"
            "                           every pending GPU pod (all) (default targeted)\n"
            "  --recheck-interval D     re-check a pod because of other objects' changes at\n"
            "                           most once per D; its own changes are not delayed\n"
            "                           (default 1s; 0 = every change)\n"
            "  --autoscaler-events[=BOOL]\n"
            "                           read Cluster Autoscaler's and Karpenter's Events on\n"
            "                           pods (scaling-up, scale-up-blocked; default true)\n"
            "  --max-node-provision-time D\n"
            "                           how long an autoscaler's word on a pod holds, as\n"
            "                           Cluster Autoscaler's flag of that name (default 15m)\n"
            "  --autoscaler-grace-period D\n"
            "                           where an autoscaler wrote a verdict in the last hour,\n"
            "                           a new pod's blocking word waits this long for one\n"
            "                           (default 30s; 0 = not at all)\n"
            "  --logging-format FORMAT  text (klog) or json (default text)\n"
            "  --metrics-bind-address ADDR\n"
            "                           serve Prometheus metrics at /metrics on [host]:port,\n"
            "                           e.g. :8080 or 127.0.0.1:8080; 0 = off (default 0)\n"
            "  --metrics-secure[=BOOL]  serve /metrics over HTTPS and only to a bearer token\n"
            "                           whose user may get the non-resource URL /metrics\n"
            "                           (TokenReview, SubjectAccessReview; default false)\n"
            "  --metrics-tls-cert-file PATH, --metrics-tls-private-key-file PATH\n"
            "                           its certificate and key (PEM, re-read when they\n"
            "                           change); without them a self-signed one is made\n"
            "  --health-probe-bind-address ADDR\n"
            "                           serve /healthz and /readyz on [host]:port; 0 = off\n"
            "                           (default 0; the manifests use :8081)\n"
            "  --leader-elect[=BOOL]    only the holder of a Lease writes (default false)\n"
            "  --leader-elect-lease-duration D   (default 15s)\n"
            "  --leader-elect-renew-deadline D   (default 10s)\n"
            "  --leader-elect-retry-period D     (default 2s)\n"
            "  --leader-elect-resource-namespace NS\n"
            "                           (default: the pod's namespace in a cluster, else default)\n"
            "  --leader-elect-resource-name NAME (default gputri-controller)\n"
            "  --gpu-device-classes LIST\n"
            "                           DRA: DeviceClass or driver name patterns whose claims are\n"
            "                           GPU claims, comma-separated, '*' at the end (default\n"
            "                           " DRA_GPU_SET_DEFAULT ");\n"
            "                           empty = DRA off\n"
            "  --no-scheduler-grace-period D\n"
            "                           a pod of another scheduler with no PodScheduled\n"
            "                           condition after this long is no-scheduler (default 30s)\n");
    flags_usage(out, FLAGS_USAGE_BASIC, 2, 27, NULL);
}

/* "true"/"false" and the other spellings Go's strconv.ParseBool takes. */
static int parse_bool(const char *flag, const char *s, int *out, char *err, size_t errlen)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return K_OK;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return K_OK;
        }
    }
    snprintf(err, errlen, "invalid value %s for %s (want true or false)", s, flag);
    return K_EINVAL;
}

/* A Go-style duration ("15s", "500ms", "1m30s"; a bare number is seconds) of at most a day. */
static int parse_duration(const char *flag, const char *s, int64_t *out_ms, char *err,
                          size_t errlen)
{
    int rc = strconv_duration_ms(s, CTL_MAX_DURATION_MS, out_ms);
    if (rc == K_ETOOBIG)
        snprintf(err, errlen, "duration %s for %s is too long (at most 24h)", s, flag);
    else if (rc != K_OK)
        snprintf(err, errlen, "invalid duration %s for %s (e.g. 15s, 500ms)", s, flag);
    return rc == K_OK ? K_OK : K_EINVAL;
}

/* A duration that may also be zero ("0", "0s", "0ms": off), else as parse_duration. */
static int parse_duration_or_zero(const char *flag, const char *s, int64_t *out_ms, char *err,
                                  size_t errlen)
{
    size_t zeros = strspn(s, "0");
    const char *unit = s + zeros;
    if (zeros > 0 && (!*unit || !strcmp(unit, "ms") || !strcmp(unit, "s") || !strcmp(unit, "m") ||
                      !strcmp(unit, "h"))) {
        *out_ms = 0;
        return K_OK;
    }
    return parse_duration(flag, s, out_ms, err, errlen);
}

static int parse_int(const char *flag, const char *s, int min, int *out, char *err, size_t errlen)
{
    long v;
    if (strconv_long(s, min, 1000000, &v) != K_OK) {
        snprintf(err, errlen, "invalid value %s for %s", s, flag);
        return K_EINVAL;
    }
    *out = (int)v;
    return K_OK;
}

/* The namespace this pod runs in, from the service-account mount; "default" outside a cluster. */
static void default_namespace(char *out, size_t len)
{
    char path[512];
    const char *dir = getenv("GPUTRI_SERVICEACCOUNT_DIR"); /* as kube_config_load() */
    snprintf(out, len, "default");
    snprintf(path, sizeof(path), "%.400s/namespace",
             dir && *dir ? dir : "/var/run/secrets/kubernetes.io/serviceaccount");
    struct buf b;
    buf_init(&b, 253); /* a namespace name is at most 63 bytes; a DNS subdomain 253 */
    if (file_read(path, &b, 0) == K_OK) {
        size_t n = b.len;
        while (n > 0 && strchr(" \t\r\n", b.data[n - 1]))
            n--;
        if (n > 0)
            snprintf(out, len, "%.*s", (int)n, b.data);
    }
    buf_cleanup(&b);
}

void ctl_options_identity(const char *host, char *out, size_t len)
{
    unsigned char r[16] = {0};
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
        for (size_t i = 0; i < sizeof(r); i++)
            r[i] = (unsigned char)rand_r(&seed);
    }
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
    snprintf(out, len,
             "%.200s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", host,
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
             r[14], r[15]);
}

enum {
    OPT_WORKERS = FLAG_FIRST_OWN,
    OPT_RESYNC,
    OPT_FORMAT,
    OPT_METRICS,
    OPT_HEALTH,
    OPT_LE,
    OPT_LE_DURATION,
    OPT_LE_DEADLINE,
    OPT_LE_RETRY,
    OPT_LE_NS,
    OPT_LE_NAME,
    OPT_DRA_CLASSES,
    OPT_NO_SCHEDULER_GRACE,
    OPT_METRICS_SECURE,
    OPT_METRICS_CERT,
    OPT_METRICS_KEY,
    OPT_RECHECK,
    OPT_RECHECK_INTERVAL,
    OPT_AUTOSCALER_EVENTS,
    OPT_PROVISION_WINDOW,
    OPT_AUTOSCALER_GRACE,
    OPT_KUBE_API_QPS,
    OPT_KUBE_API_BURST,
};

static const struct option longopts[] = {
    FLAGS_COMMON_LONGOPTS,
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"resync-period", required_argument, NULL, OPT_RESYNC},
    {"logging-format", required_argument, NULL, OPT_FORMAT},
    {"metrics-bind-address", required_argument, NULL, OPT_METRICS},
    {"health-probe-bind-address", required_argument, NULL, OPT_HEALTH},
    {"leader-elect", optional_argument, NULL, OPT_LE},
    {"leader-elect-lease-duration", required_argument, NULL, OPT_LE_DURATION},
    {"leader-elect-renew-deadline", required_argument, NULL, OPT_LE_DEADLINE},
    {"leader-elect-retry-period", required_argument, NULL, OPT_LE_RETRY},
    {"leader-elect-resource-namespace", required_argument, NULL, OPT_LE_NS},
    {"leader-elect-resource-name", required_argument, NULL, OPT_LE_NAME},
    {"gpu-device-classes", required_argument, NULL, OPT_DRA_CLASSES},
    {"no-scheduler-grace-period", required_argument, NULL, OPT_NO_SCHEDULER_GRACE},
    {"metrics-secure", optional_argument, NULL, OPT_METRICS_SECURE},
    {"metrics-tls-cert-file", required_argument, NULL, OPT_METRICS_CERT},
    {"metrics-tls-private-key-file", required_argument, NULL, OPT_METRICS_KEY},
    {"recheck", required_argument, NULL, OPT_RECHECK},
    {"recheck-interval", required_argument, NULL, OPT_RECHECK_INTERVAL},
    {"autoscaler-events", optional_argument, NULL, OPT_AUTOSCALER_EVENTS},
    {"max-node-provision-time", required_argument, NULL, OPT_PROVISION_WINDOW},
    {"autoscaler-grace-period", required_argument, NULL, OPT_AUTOSCALER_GRACE},
    {"kube-api-qps", required_argument, NULL, OPT_KUBE_API_QPS},
    {"kube-api-burst", required_argument, NULL, OPT_KUBE_API_BURST},
    {NULL, 0, NULL, 0},
};

/* One of the controller's own flags into `o`. */
static int apply(struct ctl_options *o, int opt, const char *arg, char *err, size_t errlen)
{
    struct controller_options *r = &o->run;
    switch (opt) {
    case OPT_WORKERS:
        return parse_int("--workers", arg, 1, &r->workers, err, errlen);
    case OPT_RESYNC:
        return parse_int("--resync-period", arg, 1, &r->resync_seconds, err, errlen);
    case OPT_RECHECK:
        if (strcmp(arg, "targeted") == 0 || strcmp(arg, "all") == 0) {
            r->recheck_all = strcmp(arg, "all") == 0;
            return K_OK;
        }
        snprintf(err, errlen, "--recheck must be targeted or all");
        return K_EINVAL;
    case OPT_RECHECK_INTERVAL:
        return parse_duration_or_zero("--recheck-interval", arg, &r->recheck_interval_ms, err,
                                      errlen);
    case OPT_AUTOSCALER_EVENTS: {
        int on = 1;
        int rc = arg ? parse_bool("--autoscaler-events", arg, &on, err, errlen) : K_OK;
        r->autoscaler_events = on;
        return rc;
    }
    case OPT_PROVISION_WINDOW: {
        int64_t ms = 0;
        int rc = parse_duration("--max-node-provision-time", arg, &ms, err, errlen);
        r->provision_window = (ms + 999) / 1000;
        return rc;
    }
    case OPT_AUTOSCALER_GRACE: {
        int64_t ms = 0;
        int rc = parse_duration_or_zero("--autoscaler-grace-period", arg, &ms, err, errlen);
        r->autoscaler_grace = (ms + 999) / 1000;
        return rc;
    }
    case OPT_FORMAT:
        if (strcmp(arg, "text") == 0 || strcmp(arg, "json") == 0) {
            o->log_format = strcmp(arg, "json") == 0 ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
            return K_OK;
        }
        snprintf(err, errlen, "--logging-format must be text or json");
        return K_EINVAL;
    case OPT_METRICS:
        r->metrics_addr = arg;
        return K_OK;
    case OPT_HEALTH:
        r->health_addr = arg;
        return K_OK;
    case OPT_METRICS_SECURE:
        r->metrics_secure = 1;
        return arg ? parse_bool("--metrics-secure", arg, &r->metrics_secure, err, errlen) : K_OK;
    case OPT_METRICS_CERT:
        r->metrics_cert_file = arg;
        return K_OK;
    case OPT_METRICS_KEY:
        r->metrics_key_file = arg;
        return K_OK;
    case OPT_LE:
        r->leader_elect = 1;
        return arg ? parse_bool("--leader-elect", arg, &r->leader_elect, err, errlen) : K_OK;
    case OPT_LE_DURATION:
        return parse_duration("--leader-elect-lease-duration", arg, &r->lease_duration_ms, err,
                              errlen);
    case OPT_LE_DEADLINE:
        return parse_duration("--leader-elect-renew-deadline", arg, &r->renew_deadline_ms, err,
                              errlen);
    case OPT_LE_RETRY:
        return parse_duration("--leader-elect-retry-period", arg, &r->retry_period_ms, err, errlen);
    case OPT_LE_NS:
        r->lease_namespace = arg;
        return K_OK;
    case OPT_LE_NAME:
        r->lease_name = arg;
        return K_OK;
    case OPT_DRA_CLASSES:
        o->dra_gpu_classes = arg;
        return K_OK;
    case OPT_KUBE_API_QPS:
    case OPT_KUBE_API_BURST: {
        const char *why = NULL;
        int rc = opt == OPT_KUBE_API_QPS ? flags_kube_api_qps(arg, &o->kube_api_qps, &why)
                                         : flags_kube_api_burst(arg, &o->kube_api_burst, &why);
        if (rc == K_OK)
            return K_OK;
        snprintf(err, errlen, "invalid value %s for %s: %s", arg,
                 opt == OPT_KUBE_API_QPS ? "--kube-api-qps" : "--kube-api-burst", why);
        return K_EINVAL;
    }
    case OPT_NO_SCHEDULER_GRACE: {
        const char *why = NULL;
        if (flags_no_scheduler_grace(arg, &r->no_scheduler_grace, &why) == K_OK)
            return K_OK;
        snprintf(err, errlen, "invalid value %s for --no-scheduler-grace-period: %s", arg, why);
        return K_EINVAL;
    }
    default:
        return K_ENOTFOUND;
    }
}

int ctl_options_parse(int argc, char **argv, struct ctl_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->run = (struct controller_options){
        .workers = 2,
        .resync_seconds = 300,
        .recheck_interval_ms = 1000,
        .autoscaler_events = true,
        .provision_window = CLASSIFY_PROVISION_WINDOW,
        .autoscaler_grace = 30,
        .lease_name = "gputri-controller",
        .lease_duration_ms = 15000,
        .renew_deadline_ms = 10000,
        .retry_period_ms = 2000,
        .metrics_addr = "0",
        .health_addr = "0",
    };
    o->gpu_resources = GPU_SET_DEFAULT;
    o->dra_gpu_classes = DRA_GPU_SET_DEFAULT;
    o->log_format = LOG_FORMAT_TEXT;
    o->kube_api_qps = FLAGS_KUBE_API_QPS_DEFAULT;
    o->kube_api_burst = FLAGS_KUBE_API_BURST_DEFAULT;
    default_namespace(o->lease_ns, sizeof(o->lease_ns));
    o->run.lease_namespace = o->lease_ns;
    snprintf(err, errlen, "%s", "");

    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long_only(argc, argv, ":" FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        int rc = apply(o, opt, optarg, err, errlen);
        if (rc == K_ENOTFOUND)
            rc = flags_common_take(&o->common, opt, optarg, argv, optind, err, errlen);
        if (rc != K_OK)
            return K_EINVAL;
    }
    if (o->common.gpu_resources)
        o->gpu_resources = o->common.gpu_resources;
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument %s", argv[optind]);
        return K_EINVAL;
    }
    if (o->common.help || o->common.version)
        return K_OK;
    const struct controller_options *r = &o->run;
    if (!r->metrics_cert_file != !r->metrics_key_file) {
        snprintf(err, errlen,
                 "--metrics-tls-cert-file and --metrics-tls-private-key-file go together");
        return K_EINVAL;
    }
    if (r->leader_elect && (r->renew_deadline_ms >= r->lease_duration_ms ||
                            r->retry_period_ms >= r->renew_deadline_ms)) {
        snprintf(err, errlen, "need retry period < renew deadline < lease duration");
        return K_EINVAL;
    }
    return K_OK;
}
