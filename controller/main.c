/* main.c - gputri-controller: flags, signals, and the controller's lifetime. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller.h"
#include "kube/config.h"
#include "model/gpu.h"
#include "util/log.h"
#include "util/result.h"

static volatile sig_atomic_t signalled;
static volatile int stop;

static void on_signal(int sig)
{
    (void)sig;
    signalled = 1;
    stop = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: gputri-controller [flags]\n"
            "\n"
            "Watches pods and nodes and annotates every pending GPU pod with why it cannot be\n"
            "placed (gputri/cause, gputri/detail), recording an Event when the cause changes.\n"
            "\n"
            "Flags:\n"
            "  --kubeconfig PATH        kubeconfig file (default: $KUBECONFIG, in-cluster,\n"
            "                           ~/.kube/config)\n"
            "  --gpu-resources LIST     comma-separated GPU resource names; a trailing * is a\n"
            "                           prefix (default: %s)\n"
            "  --workers N              concurrent reconciles (default 2)\n"
            "  --resync-period SECONDS  re-check every pending GPU pod this often (default 300)\n"
            "  --logging-format FORMAT  text (klog) or json (default text)\n"
            "  -v, --v N                log verbosity (default 0)\n"
            "  -h, --help               show this help\n"
            "      --version            print the version\n",
            GPU_SET_DEFAULT);
}

static int parse_int(const char *flag, const char *s, int min, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > 1000000) {
        fprintf(stderr, "gputri-controller: invalid value %s for %s\n", s, flag);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    enum { OPT_KUBECONFIG = 256, OPT_GPU, OPT_WORKERS, OPT_RESYNC, OPT_FORMAT, OPT_VERSION };
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"gpu-resources", required_argument, NULL, OPT_GPU},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"resync-period", required_argument, NULL, OPT_RESYNC},
        {"logging-format", required_argument, NULL, OPT_FORMAT},
        {"v", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *kubeconfig = NULL, *gpu_list = GPU_SET_DEFAULT;
    struct controller_options opts = {.workers = 2, .resync_seconds = 300};
    int verbosity = 0, opt;
    while ((opt = getopt_long_only(argc, argv, "hv:", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_KUBECONFIG:
            kubeconfig = optarg;
            break;
        case OPT_GPU:
            gpu_list = optarg;
            break;
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
        case 'v':
            if (parse_int("--v", optarg, 0, &verbosity))
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("gputri-controller 0.1.0\n");
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gputri-controller: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    log_set_verbosity(verbosity);

    struct gpu_set gpus;
    if (gpu_set_parse(&gpus, gpu_list) != K_OK) {
        fprintf(stderr, "gputri-controller: invalid --gpu-resources %s\n", gpu_list);
        return 2;
    }
    struct kube_config cfg = {0};
    char err[512];
    if (kube_config_load(kubeconfig, &cfg, err, sizeof(err)) != K_OK) {
        log_error("%s", err);
        gpu_set_cleanup(&gpus);
        return 1;
    }
    log_info(0, "gputri-controller 0.1.0 talking to %s (config from %s)", cfg.server, cfg.source);

    char host[256] = "gputri-controller";
    gethostname(host, sizeof(host));
    opts.instance = host;

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
    if (signalled)
        log_info(0, "stopped by signal");
    kube_config_cleanup(&cfg);
    gpu_set_cleanup(&gpus);
    return rc;
}
