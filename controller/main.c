/* main.c - gputri-controller: flags, signals, and the controller's lifetime. */
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "controller.h"
#include "kube/config.h"
#include "kube/exec.h"
#include "model/gpu.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/result.h"
#include "util/strconv.h"
#include "util/version.h"

#include <time.h>

/* Set by the signal handler, which may run on any thread; atomic_int is lock-free, so safe there.
 */
static atomic_int signalled, stop;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&signalled, 1);
    atomic_store(&stop, 1);
}

/* The longest leader-election duration accepted. */
#define MAX_DURATION_MS ((int64_t)24 * 3600000)

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: gputri-controller [flags]\n"
            "\n"
            "Watches pods and nodes and annotates every pending GPU pod with why it cannot be\n"
            "placed (gputri/cause, gputri/detail), recording an Event when the cause changes.\n"
            "\n"
            "Flags:\n");
    flags_usage(out, FLAGS_USAGE_CONFIG, 2, 27, GPU_SET_DEFAULT);
    fprintf(out,
            "  --workers N              concurrent reconciles (default 2)\n"
            "  --resync-period SECONDS  re-check every pending GPU pod this often (default 300)\n"
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
static int parse_bool(const char *flag, const char *s, int *out)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    fprintf(stderr, "gputri-controller: invalid value %s for %s (want true or false)\n", s, flag);
    return -1;
}

/* A Go-style duration ("15s", "500ms", "1m30s"; a bare number is seconds) of at most a day. */
static int parse_duration(const char *flag, const char *s, int64_t *out_ms)
{
    int rc = strconv_duration_ms(s, MAX_DURATION_MS, out_ms);
    if (rc == K_ETOOBIG)
        fprintf(stderr, "gputri-controller: duration %s for %s is too long (at most 24h)\n", s,
                flag);
    else if (rc != K_OK)
        fprintf(stderr, "gputri-controller: invalid duration %s for %s (e.g. 15s, 500ms)\n", s,
                flag);
    return rc == K_OK ? 0 : -1;
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

/* client-go's identity: host name + "_" + a random UUID. */
static void make_identity(const char *host, char *out, size_t len)
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

static int parse_int(const char *flag, const char *s, int min, int *out)
{
    long v;
    if (strconv_long(s, min, 1000000, &v) != K_OK) {
        fprintf(stderr, "gputri-controller: invalid value %s for %s\n", s, flag);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
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
        {NULL, 0, NULL, 0},
    };
    struct flags_common flags = {0};
    struct controller_options opts = {
        .workers = 2,
        .resync_seconds = 300,
        .lease_name = "gputri-controller",
        .lease_duration_ms = 15000,
        .renew_deadline_ms = 10000,
        .retry_period_ms = 2000,
        .metrics_addr = "0",
        .health_addr = "0",
    };
    const char *dra_list = DRA_GPU_SET_DEFAULT;
    char lease_ns[254];
    default_namespace(lease_ns, sizeof(lease_ns));
    opts.lease_namespace = lease_ns;
    int opt;
    while ((opt = getopt_long_only(argc, argv, FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_WORKERS:
            if (parse_int("--workers", optarg, 1, &opts.workers))
                return 2;
            break;
        case OPT_RESYNC:
            if (parse_int("--resync-period", optarg, 1, &opts.resync_seconds))
                return 2;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") == 0) {
                log_set_format(LOG_FORMAT_JSON);
            } else if (strcmp(optarg, "text") != 0) {
                fprintf(stderr, "gputri-controller: --logging-format must be text or json\n");
                return 2;
            }
            break;
        case OPT_METRICS:
            opts.metrics_addr = optarg;
            break;
        case OPT_HEALTH:
            opts.health_addr = optarg;
            break;
        case OPT_METRICS_SECURE:
            opts.metrics_secure = 1;
            if (optarg && parse_bool("--metrics-secure", optarg, &opts.metrics_secure))
                return 2;
            break;
        case OPT_METRICS_CERT:
            opts.metrics_cert_file = optarg;
            break;
        case OPT_METRICS_KEY:
            opts.metrics_key_file = optarg;
            break;
        case OPT_LE:
            opts.leader_elect = 1;
            if (optarg && parse_bool("--leader-elect", optarg, &opts.leader_elect))
                return 2;
            break;
        case OPT_LE_DURATION:
            if (parse_duration("--leader-elect-lease-duration", optarg, &opts.lease_duration_ms))
                return 2;
            break;
        case OPT_LE_DEADLINE:
            if (parse_duration("--leader-elect-renew-deadline", optarg, &opts.renew_deadline_ms))
                return 2;
            break;
        case OPT_LE_RETRY:
            if (parse_duration("--leader-elect-retry-period", optarg, &opts.retry_period_ms))
                return 2;
            break;
        case OPT_LE_NS:
            opts.lease_namespace = optarg;
            break;
        case OPT_LE_NAME:
            opts.lease_name = optarg;
            break;
        case OPT_DRA_CLASSES:
            dra_list = optarg;
            break;
        case OPT_NO_SCHEDULER_GRACE: {
            int64_t ms;
            if (parse_duration("--no-scheduler-grace-period", optarg, &ms))
                return 2;
            if (ms < 1000) {
                fprintf(stderr, "gputri-controller: --no-scheduler-grace-period must be at least "
                                "1s\n");
                return 2;
            }
            opts.no_scheduler_grace = ms / 1000;
            break;
        }
        default: {
            char ferr[256];
            enum flags_result fr = flags_common_apply(&flags, opt, optarg, ferr, sizeof(ferr));
            if (fr == FLAGS_INVALID)
                fprintf(stderr, "gputri-controller: %s\n", ferr);
            if (fr == FLAGS_OTHER)
                usage(stderr);
            if (fr != FLAGS_STORED)
                return 2;
            if (flags_answer(&flags, "gputri-controller", usage))
                return 0;
        }
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gputri-controller: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!opts.metrics_cert_file != !opts.metrics_key_file) {
        fprintf(stderr, "gputri-controller: --metrics-tls-cert-file and "
                        "--metrics-tls-private-key-file go together\n");
        return 2;
    }
    log_set_verbosity(flags.verbosity);
    /* glibc's malloc is left at its defaults (no mallopt): LISTs are parsed one item at a time
     * and every LIST ends with malloc_trim (cache/informer.c), so the per-thread arenas hold live
     * records, not freed page trees. Measured on 30,000 pods and 1,000 nodes (bench/listfeed), at
     * most 2 arenas (M_ARENA_MAX) saved 0.1 MiB of 30 MiB and 1 arena 0.3 MiB, at 150,000 pods
     * nothing, while the informer threads would contend for the arena's lock. MALLOC_ARENA_MAX in
     * the environment still applies. */
    const char *kubeconfig = flags.kubeconfig;
    const char *gpu_list = flags.gpu_resources ? flags.gpu_resources : GPU_SET_DEFAULT;
    if (opts.leader_elect && (opts.renew_deadline_ms >= opts.lease_duration_ms ||
                              opts.retry_period_ms >= opts.renew_deadline_ms)) {
        fprintf(stderr, "gputri-controller: need retry period < renew deadline < lease duration\n");
        return 2;
    }

    struct gpu_set gpus;
    if (gpu_set_parse(&gpus, gpu_list) != K_OK) {
        fprintf(stderr, "gputri-controller: invalid --gpu-resources %s\n", gpu_list);
        return 2;
    }
    struct gpu_set dra_classes = {0};
    if (dra_list[0] && gpu_set_parse(&dra_classes, dra_list) != K_OK) {
        fprintf(stderr, "gputri-controller: invalid --gpu-device-classes %s\n", dra_list);
        gpu_set_cleanup(&gpus);
        return 2;
    }
    opts.dra_classes = dra_list[0] ? &dra_classes : NULL;
    struct kube_config cfg = {0};
    char err[512];
    kube_exec_set_daemon(); /* an exec plugin never prompts a daemon */
    if (kube_config_load(kubeconfig, &cfg, err, sizeof(err)) != K_OK) {
        log_error("%s", err);
        gpu_set_cleanup(&gpus);
        gpu_set_cleanup(&dra_classes);
        return 1;
    }
    log_info(0, "gputri-controller %s talking to %s (config from %s)", GPUTRI_VERSION, cfg.server,
             cfg.source);

    char host[256] = "gputri-controller";
    gethostname(host, sizeof(host));
    opts.instance = host;
    char identity[300];
    make_identity(host, identity, sizeof(identity));
    opts.identity = identity;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int rc = 1;
    struct controller *c = controller_new(&cfg, &gpus, &opts);
    if (c) {
        rc = controller_run(c, &stop);
        controller_free(c);
    } else {
        log_error("out of memory");
    }
    if (atomic_load(&signalled))
        log_info(0, "stopped by signal");
    kube_config_cleanup(&cfg);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra_classes);
    return rc;
}
