/*
 * flags.h - the flags every gputri program takes, spelled as kubectl and the Kubernetes
 * components spell them: --kubeconfig PATH, --gpu-resources LIST, -v/--v N (klog's verbosity,
 * kubernetes/component-base: logs/api/v1/options.go), -h/--help and --version.
 *
 * A program keeps its own getopt_long table: FLAGS_COMMON_LONGOPTS are the table's rows for
 * these flags and FLAGS_COMMON_SHORTOPTS their short letters; flags_common_apply() stores what
 * getopt_long returned for one of them. The kubectl plugin, which parses argv itself
 * (cli/args.c), uses flags_verbosity() for --v's value.
 */
#ifndef GPUTRI_FLAGS_H
#define GPUTRI_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

/* getopt_long ids of the long-only common flags; a program numbers its own from FLAG_FIRST_OWN. */
enum flag_common_id {
    FLAG_KUBECONFIG = 0x100,
    FLAG_GPU_RESOURCES,
    FLAG_VERSION,
    FLAG_FIRST_OWN,
};

/* The short options of the common flags, for getopt_long's optstring: -h and -v N. */
#define FLAGS_COMMON_SHORTOPTS "hv:"

/* The common flags' rows of a `struct option` table (needs <getopt.h>); the table still ends
 * with {NULL, 0, NULL, 0}. */
#define FLAGS_COMMON_LONGOPTS                                                                      \
    {"kubeconfig", required_argument, NULL, FLAG_KUBECONFIG},                                      \
        {"gpu-resources", required_argument, NULL, FLAG_GPU_RESOURCES},                            \
        {"v", required_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},                     \
    {                                                                                              \
        "version", no_argument, NULL, FLAG_VERSION                                                 \
    }

/* The highest --v accepted: klog's levels as this project logs them (util/log.h) go up to 4. */
#define FLAGS_V_MAX 10

/* The common flags' values. Zero-initialise; strings are borrowed from argv. */
struct flags_common {
    const char *kubeconfig;    /* --kubeconfig, or NULL */
    const char *gpu_resources; /* --gpu-resources, or NULL (the program's default set) */
    int verbosity;             /* --v, 0 when not given */
    bool help;                 /* -h/--help */
    bool version;              /* --version */
};

/*
 * flags_verbosity() - --v's value: a whole decimal number from 0 to FLAGS_V_MAX (strconv_long's
 * rules: no blanks, no trailing text), into *out. Returns K_OK, or K_EINVAL (*out unchanged).
 * Thread-safe.
 */
int flags_verbosity(const char *s, int *out);

/*
 * flags_no_scheduler_grace() - --no-scheduler-grace-period's value for the command-line tools:
 * a duration in Go's spelling (strconv_duration_ms) from 1s to 24h, into *seconds (whole
 * seconds, truncated). Returns K_OK, or K_EINVAL / K_ETOOBIG with *why (static text for the
 * message: "a duration of at least 1s, e.g. 30s" / "at most 24h"); *seconds unchanged then.
 * Thread-safe.
 */
int flags_no_scheduler_grace(const char *s, int64_t *seconds, const char **why);

/*
 * The daemons' client-side rate limit of API requests (kube/client.h, kube_set_rate_limit), as
 * the Kubernetes components spell it (--kube-api-qps, --kube-api-burst: kube-controller-manager,
 * kube-scheduler). The defaults are kube-scheduler's (kubernetes/kubernetes:
 * pkg/scheduler/apis/config/v1/defaults.go, clientConnection QPS 50, Burst 100), well above what
 * gputri's daemons send in steady state, so only a storm of writes waits.
 */
#define FLAGS_KUBE_API_QPS_DEFAULT 50.0
#define FLAGS_KUBE_API_BURST_DEFAULT 100
#define FLAGS_KUBE_API_MAX 1000000

/*
 * flags_kube_api_qps() - --kube-api-qps's value: a decimal number (fractions allowed, e.g. 0.5)
 * above 0 and at most FLAGS_KUBE_API_MAX, or a negative one meaning no limit, into *out.
 * Returns K_OK, or K_EINVAL with *why (static text: "a number of requests a second above 0, or
 * negative for no limit"); *out unchanged then. Thread-safe.
 * flags_kube_api_burst() - --kube-api-burst's value: a whole number from 1 to
 * FLAGS_KUBE_API_MAX, as flags_kube_api_qps() otherwise.
 */
int flags_kube_api_qps(const char *s, double *out, const char **why);
int flags_kube_api_burst(const char *s, int *out, const char **why);

/* What flags_common_apply() did with an option. */
enum flags_result {
    FLAGS_INVALID = -1, /* a common flag with a bad value; the reason is in err */
    FLAGS_OTHER = 0,    /* not a common flag: the program's own, or getopt's '?' / ':' */
    FLAGS_STORED = 1,   /* a common flag, stored in *c */
};

/*
 * flags_common_apply() - if `opt` (what getopt_long returned) is a common flag, store `arg`
 * (its optarg, borrowed) into *c and return FLAGS_STORED; return FLAGS_OTHER for any other opt.
 * For a bad --v value return FLAGS_INVALID with a one-line reason (no program name, no newline)
 * in err (errlen bytes, always NUL-terminated when errlen > 0). Does not print. Thread-safe
 * (getopt itself is not).
 */
enum flags_result flags_common_apply(struct flags_common *c, int opt, const char *arg, char *err,
                                     size_t errlen);

/*
 * flags_common_take() - the rest of a program's getopt_long_only loop (optstring starting with
 * ':'), for every `opt` that is not one of its own flags: a common flag is stored into *c
 * (K_OK); a flag without its value (':'), an unknown flag and a bad common value are K_EINVAL
 * with a one-line reason in err ("flag --x needs a value", "unknown flag --x", as
 * flags_common_apply()). `argv` and `optind` are getopt's, right after it returned `opt`. Does
 * not print. Thread-safe (getopt itself is not).
 */
int flags_common_take(struct flags_common *c, int opt, const char *arg, char *const *argv,
                      int optind, char *err, size_t errlen);

/*
 * flags_answer() - answer -h/--help and --version as every program does: with c->help call
 * usage(stdout); else with c->version print "<program> <GPUTRI_VERSION>" and a newline to
 * stdout. Returns true when it answered (the program then exits with status 0), false when
 * neither flag is set (nothing printed). Not thread-safe (writes stdout).
 */
bool flags_answer(const struct flags_common *c, const char *program, void (*usage)(FILE *out));

/* Which help lines flags_usage() prints. */
enum flags_usage_part {
    FLAGS_USAGE_CONFIG = 1,   /* --kubeconfig, --gpu-resources */
    FLAGS_USAGE_BASIC = 2,    /* -v/--v, -h/--help, --version */
    FLAGS_USAGE_KUBE_API = 4, /* --kube-api-qps, --kube-api-burst (the daemons) */
};

/*
 * flags_usage() - the --help lines of the common flags in `parts` (FLAGS_USAGE_* bits, CONFIG
 * first, then KUBE_API), so every program describes them alike. A long-only flag of CONFIG starts
 * after `indent` spaces (2, or 6 where short flags are aligned beside it); -v and -h start at 2 and
 * --version at 6. Descriptions start at column `col` (at least one space after the flag; every
 * line fits 80 columns for col <= 31). gpu_default: the default GPU set's text (model/gpu.h,
 * GPU_SET_DEFAULT), shown for --gpu-resources. Not thread-safe (writes `out`).
 */
void flags_usage(FILE *out, unsigned parts, int indent, int col, const char *gpu_default);

#endif
