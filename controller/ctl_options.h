/*
 * ctl_options.h - gputri-controller's command line, Kubernetes style (--flag=value or --flag value,
 * single or double dash, as getopt_long_only accepts them), into the controller's options.
 *
 * Flags: --workers, --resync-period, --recheck (targeted|all), --recheck-interval,
 * --logging-format (text|json),
 * --metrics-bind-address,
 * --metrics-secure[=BOOL], --metrics-tls-cert-file, --metrics-tls-private-key-file,
 * --health-probe-bind-address, --leader-elect[=BOOL], --leader-elect-lease-duration,
 * --leader-elect-renew-deadline, --leader-elect-retry-period,
 * --leader-elect-resource-namespace, --leader-elect-resource-name, --gpu-device-classes,
 * --no-scheduler-grace-period, --kube-api-qps, --kube-api-burst (util/flags.h), and the common
 * --kubeconfig, --gpu-resources, --v, --help,
 * --version (util/flags.h). The leader-election flags and their defaults are client-go's
 * (kubernetes/component-base: config/options/leaderelectionconfig.go).
 */
#ifndef GPUTRI_CTL_OPTIONS_H
#define GPUTRI_CTL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "controller.h"
#include "util/flags.h"
#include "util/log.h"

/* The longest leader-election duration accepted. */
#define CTL_MAX_DURATION_MS ((int64_t)24 * 3600000)

struct ctl_options {
    /* what controller_new() takes; dra_classes, instance and identity are left NULL (the caller
     * parses dra_gpu_classes and names the host); lease_namespace may point at lease_ns below */
    struct controller_options run;
    /* --kubeconfig (NULL: $KUBECONFIG, in-cluster, ~/.kube/config), --gpu-resources, --v,
     * --help, --version */
    struct flags_common common;
    const char *gpu_resources;   /* comma-separated GPU set (model/gpu.h), GPU_SET_DEFAULT */
    const char *dra_gpu_classes; /* DeviceClass / driver patterns, DRA_GPU_SET_DEFAULT; "": off */
    enum log_format log_format;
    double kube_api_qps; /* --kube-api-qps (kube/client.h kube_set_rate_limit); < 0: no limit */
    int kube_api_burst;  /* --kube-api-burst */
    /* the default Lease namespace: the service account's (GPUTRI_SERVICEACCOUNT_DIR, as
     * kube_config_load() reads it) in a cluster, else "default" */
    char lease_ns[254];
};

/*
 * ctl_options_parse() - fill `o` with defaults, then apply argv. Strings in `o` point into argv,
 * at static defaults or into `o` itself (o->run.lease_namespace: do not copy `o` by value).
 * Returns K_OK, or K_EINVAL with a one-line reason in err (errlen bytes) for an unknown flag, a
 * bad value, a certificate without its key, or leader-election durations not in the order
 * retry period < renew deadline < lease duration. Uses getopt's state: not thread-safe.
 */
int ctl_options_parse(int argc, char **argv, struct ctl_options *o, char *err, size_t errlen);

/* ctl_options_usage() - print the help text to `out`. */
void ctl_options_usage(FILE *out);

/*
 * ctl_options_identity() - a leader-election holderIdentity as client-go makes one: `host`
 * (at most 200 bytes of it) + "_" + a random (version 4) UUID, into out (len bytes, 300 is
 * enough). Thread-safe.
 */
void ctl_options_identity(const char *host, char *out, size_t len);

#endif
