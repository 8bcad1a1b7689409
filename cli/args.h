/*
 * args.h - the command line of the kubectl plugin (`kubectl gputri ...`, argv of kubectl-gputri).
 *
 * kubectl hands a plugin every argument after the plugin's name, so the plugin parses kubectl's
 * usual flags itself, the pflag way: flags may come before, between or after the positional
 * arguments; --flag=value and --flag value; -n value, -nvalue and -n=value; "--" ends the flags.
 *
 *   kubectl gputri pods [-n NS | -A] [-o FORMAT] [-l SELECTOR] [--field-selector SELECTOR]
 *                       [-w] [--sort-by PATH] [--no-headers] [--show-labels]
 *   kubectl gputri explain POD [-n NS] [-o json|yaml]  (POD may be written pod/NAME or pods/NAME)
 *   kubectl gputri nodes [-l SELECTOR] [--resource NAME] [-o FORMAT]
 * FORMAT is one of cli/printer.h's (printer_parse checks it here: a bad one is a usage error).
 *   kubectl gputri help | --help | -h
 *   kubectl gputri version | --version
 * Global flags: --kubeconfig PATH, --gpu-resources LIST, --gpu-device-classes LIST, -v/--v N,
 * and kubectl's (cli/kubeflags.h): --context, --cluster, --user, -s/--server, --token,
 * --certificate-authority, --client-certificate, --client-key, --insecure-skip-tls-verify,
 * --tls-server-name, --request-timeout, --as, --as-group, --as-uid, which kubectl passes to a
 * plugin unparsed (everything after the plugin's name), as with -n.
 */
#ifndef GPUTRI_CLI_ARGS_H
#define GPUTRI_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/config.h"

enum plugin_cmd {
    PLUGIN_CMD_HELP, /* also: no command and -h/--help anywhere */
    PLUGIN_CMD_VERSION,
    PLUGIN_CMD_PODS,
    PLUGIN_CMD_EXPLAIN,
    PLUGIN_CMD_NODES,
};

struct plugin_args {
    enum plugin_cmd cmd;
    const char *kubeconfig;     /* --kubeconfig, or NULL */
    const char *ns;             /* -n/--namespace, or NULL (the context's namespace) */
    bool all_namespaces;        /* -A/--all-namespaces (pods only) */
    const char *pod;            /* explain's POD, the pod/ or pods/ prefix removed */
    const char *output;         /* -o/--output as given (printer_parse), NULL: the table */
    const char *label_selector; /* -l/--selector (nodes: of nodes), or NULL */
    const char *resource;       /* nodes: --resource, a resource or DeviceClass name, or NULL */
    const char *field_selector; /* --field-selector, or NULL */
    const char *sort_by;        /* --sort-by, or NULL */
    bool watch;                 /* -w/--watch */
    bool no_headers;            /* --no-headers */
    bool show_labels;           /* --show-labels */
    const char *gpu_resources;  /* --gpu-resources, or NULL for the default set */
    /* --gpu-device-classes (DRA), or NULL for DRA_GPU_SET_DEFAULT; "" turns DRA off */
    const char *gpu_device_classes;
    int64_t no_scheduler_grace; /* --no-scheduler-grace-period, seconds; 0: the default */
    int verbosity;              /* -v/--v */
    /* kubectl's global flags (strings borrowed from argv); ov.ns is left NULL: see ns. */
    struct kube_config_overrides ov;
    /* The positional arguments as parsed, the command first (also on a usage error, so
     * completion can see how far the line has got). */
    const char *pos[8];
    int npos;
};

/* Exit status for usage errors, as kubectl's own plugins use it. */
#define PLUGIN_EXIT_USAGE 2

/*
 * plugin_parse_args() - parse argv[1..argc-1] into `a` (zeroed first; strings borrowed from
 * argv). Returns 0 on success, or PLUGIN_EXIT_USAGE with a one-line reason (no "error: "
 * prefix, no newline) in err (errlen bytes, always NUL-terminated). -h/--help and --version win
 * over any other error-free arguments. Does not print and keeps no global state (unlike getopt).
 */
int plugin_parse_args(int argc, char *const *argv, struct plugin_args *a, char *err, size_t errlen);

/*
 * plugin_flag_takes_value() - true when `arg` is a flag written as "--name" or "-x" (no '=')
 * whose value is the next argument. For completion. Thread-safe.
 */
bool plugin_flag_takes_value(const char *arg);

/* plugin_cmd_name() - "pods", "explain", "nodes", "help" or "version". */
const char *plugin_cmd_name(enum plugin_cmd c);

#endif
