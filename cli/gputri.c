/* gputri.c - the gputri command line (gputri.h). */
#include "gputri.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "kube/client.h"
#include "kube/config.h"
#include "model/gpu.h"
#include "args.h"
#include "kubeflags.h"
#include "plugin.h"
#include "printer.h"
#include "triage.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/result.h"
#include "util/flags.h"
#include "util/strconv.h"
#include "util/version.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage:\n"
                 "  gputri triage NAMESPACE POD   print the cause in one word\n"
                 "  gputri explain NAMESPACE POD  print the cause, its detail and every candidate "
                 "node\n"
                 "  gputri triage|explain -n NAMESPACE POD\n"
                 "                                the same, the namespace as kubectl takes it\n"
                 "  gputri explain ... -o json|yaml\n"
                 "                                explain's report as an object\n"
                 "                                (GPUPodExplanation, docs/cli.md)\n"
                 "  gputri nodes [-l SELECTOR] [--resource NAME] [-o FORMAT]\n"
                 "                                per node: GPU capacity, use, holders and why\n"
                 "                                free GPUs cannot be used (kubectl gputri nodes\n"
                 "                                --help)\n"
                 "  gputri help                   print this help\n"
                 "  gputri version                print the version\n"
                 "\n");
    triage_print_causes(out);
    fprintf(out, "\nFlags:\n");
    fprintf(out, "  -n, --namespace NS    the pod's namespace (instead of NAMESPACE)\n");
    fprintf(out, "  -o, --output FORMAT   explain only: json, yaml, jsonpath=TEMPLATE or\n"
                 "                        jsonpath-as-json=TEMPLATE (as kubectl gputri explain)\n");
    flags_usage(out, FLAGS_USAGE_CONFIG | FLAGS_USAGE_BASIC, 2, 24, GPU_SET_DEFAULT);
    fprintf(out, "  --gpu-device-classes LIST\n"
                 "                        DRA: DeviceClass or driver name patterns of GPU claims\n"
                 "                        (default " DRA_GPU_SET_DEFAULT ";\n"
                 "                        empty: claims are not looked at)\n");
    fprintf(out, "  --no-scheduler-grace-period D\n"
                 "                        how long a pod of another schedulerName may have no\n"
                 "                        PodScheduled condition before it is no-scheduler\n"
                 "                        (e.g. 30s, 5m; at least 1s, at most 24h; default 30s)\n");
    fprintf(out, "\nkubectl's global flags (kubectl options):\n");
    kubeflags_usage(out, 32);
    fprintf(out, "\n"
                 "Exit status: 0 answered, 1 the pod does not exist or the API could not be read,\n"
                 "2 usage error.\n");
}

/* Whether s is a DNS label (or, with dots, subdomain) as Kubernetes validates object names:
 * kubernetes/apimachinery: pkg/util/validation/validation.go IsDNS1123Label/Subdomain. */
static int dns_name(const char *s, size_t max, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && !(dots && c == '.'))
            return 0;
        if (!alnum && (i == 0 || i == n - 1))
            return 0;
    }
    return 1;
}

static void print_api_error(const struct gputri_io *io, const struct kube_config *cfg,
                            const char *ns, const char *name, int rc, const struct kube_error *err)
{
    char msg[sizeof(err->message) * 4]; /* the API's text, escaped for the terminal */
    text_escape(msg, sizeof(msg), err->message, strlen(err->message), TEXT_ESCAPE_TERMINAL);
    if (err->credentials) { /* the exec plugin, before any request */
        fprintf(io->err, "gputri: getting credentials: %s\n", msg);
        return;
    }
    switch (rc) {
    case K_ENOTFOUND:
        fprintf(io->err, "gputri: pod %s/%s not found\n", ns, name);
        break;
    case K_EIO:
    case K_ETIMEDOUT:
        if (err->tls || err->deadline) { /* the kubeconfig's certificates, or a LIST that did
                                          * not end in time: not the network */
            fprintf(io->err, "gputri: %s\n", msg);
            break;
        }
        fprintf(io->err, "gputri: cannot reach the API server %s: %s\n",
                cfg->server ? cfg->server : "", msg[0] ? msg : k_strerror(rc));
        break;
    case K_EFORBIDDEN:
    case K_EUNAUTHORIZED:
        fprintf(io->err, "gputri: %s: %s\n", k_strerror(rc), msg[0] ? msg : "access denied");
        break;
    default:
        fprintf(io->err, "gputri: %s%s%s\n", k_strerror(rc), msg[0] ? ": " : "", msg);
    }
}

/* The argument an option came in: the one before its value when that came separately. */
static const char *opt_as_written(char **argv, int ind, const char *arg)
{
    return arg && ind >= 2 && arg == argv[ind - 1] ? argv[ind - 2] : argv[ind - 1];
}

/* Whether `written` ("--name" or "--name=value") names long option `name` in full: getopt_long
 * takes an unambiguous prefix ("--names" for --namespace), kubectl (pflag) does not. */
static bool long_in_full(const char *written, const char *name)
{
    size_t n = strlen(name);
    return strncmp(written, "--", 2) == 0 && strncmp(written + 2, name, n) == 0 &&
           (written[2 + n] == '\0' || written[2 + n] == '=');
}

/* `gputri nodes ...`: the plugin's nodes command (plugin.h), with the plugin's flags. */
static bool is_nodes_command(int argc, char **argv)
{
    struct plugin_args pa;
    char perr[256];
    plugin_parse_args(argc, argv, &pa, perr, sizeof(perr));
    return pa.npos > 0 && (strcmp(pa.pos[0], "nodes") == 0 || strcmp(pa.pos[0], "node") == 0 ||
                           strcmp(pa.pos[0], "no") == 0);
}

/* explain -o: the report (triage_explain_json) in pr's format to out. */
static int print_explain_object(const struct printer *pr, const struct triage *t, FILE *out,
                                char *why, size_t whylen)
{
    json_object *o = NULL;
    int rc = triage_explain_json(t, &o);
    if (rc == K_OK)
        rc = printer_write_item(pr, o, out, why, whylen);
    json_object_put(o);
    return rc;
}

int gputri_main(int argc, char **argv, const struct gputri_io *io)
{
    if (is_nodes_command(argc, argv)) {
        const struct plugin_io pio = {.out = io->out, .err = io->err, .client = io->client};
        return plugin_main(argc, argv, &pio);
    }
    enum { OPT_DRA_CLASSES = FLAG_FIRST_OWN, OPT_NO_SCHEDULER_GRACE };
    static const struct option longopts[] = {
        FLAGS_COMMON_LONGOPTS,
        {"gpu-device-classes", required_argument, NULL, OPT_DRA_CLASSES},
        {"no-scheduler-grace-period", required_argument, NULL, OPT_NO_SCHEDULER_GRACE},
        {"namespace", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        KUBEFLAGS_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *ns_flag = NULL; /* -n/--namespace */
    const char *output = NULL;  /* -o/--output: explain's report as an object */
    const char *dra_list = DRA_GPU_SET_DEFAULT;
    int64_t grace = 0; /* 0: CLASSIFY_NO_SCHEDULER_GRACE */
    struct kube_config_overrides ov = {0};
    struct flags_common flags = {0};
    char ferr[256];
    int opt;
    opterr = 0; /* getopt's own messages carry argv[0]; ours say "gputri" */
    optind = 0; /* a fresh scan, also when called again */
    /* getopt_long, not _only: as with kubectl, one dash is a letter (-n, -s, -v, -h), never an
     * abbreviated long option (-n as --no-scheduler-grace-period) */
    int li = -1;
    while ((opt = getopt_long(argc, argv, ":" FLAGS_COMMON_SHORTOPTS "s:n:o:", longopts, &li)) !=
           -1) {
        const char *as_written = opt_as_written(argv, optind, optarg);
        if (li >= 0 && opt != ':' && opt != '?' && !long_in_full(as_written, longopts[li].name)) {
            char shown[64];
            snprintf(shown, sizeof(shown), "%.60s", as_written);
            char *eq = strchr(shown, '=');
            if (eq)
                *eq = '\0';
            fprintf(io->err, "gputri: unknown option %s\nRun 'gputri --help' for usage.\n", shown);
            return 2;
        }
        li = -1;
        /* -n=NS, -s=URL, -v=2: pflag's shorthand with '=' */
        if (optarg && optarg[0] == '=' && optarg == as_written + 2)
            optarg++;
        if (opt == 'n') {
            if (!optarg[0]) {
                fprintf(io->err, "gputri: %s needs a value\nRun 'gputri --help' for usage.\n",
                        as_written[1] == '-' ? "--namespace" : "-n");
                return 2;
            }
            ns_flag = optarg;
            continue;
        }
        if (opt == 'o') {
            output = optarg;
            continue;
        }
        if (opt == OPT_DRA_CLASSES) {
            dra_list = optarg;
            continue;
        }
        if (opt == OPT_NO_SCHEDULER_GRACE) { /* Go's duration syntax, as gputri-controller's */
            const char *why = NULL;
            if (flags_no_scheduler_grace(optarg, &grace, &why) != K_OK) {
                fprintf(io->err,
                        "gputri: invalid --no-scheduler-grace-period \"%.80s\": %s\n"
                        "Run 'gputri --help' for usage.\n",
                        optarg, why);
                return 2;
            }
            continue;
        }
        if (opt == 's')
            opt = KF_SERVER;
        if (opt >= KF_CONTEXT && opt <= KF_AS_UID) {
            char shown[64];
            snprintf(shown, sizeof(shown), "%.60s", as_written);
            char *eq = strchr(shown, '=');
            if (eq)
                *eq = '\0';
            if (kubeflag_set(&ov, (enum kubeflag_id)opt, optarg, shown, ferr, sizeof(ferr)) != 0) {
                fprintf(io->err, "gputri: %s\nRun 'gputri --help' for usage.\n", ferr);
                return 2;
            }
            continue;
        }
        enum flags_result fr = flags_common_apply(&flags, opt, optarg, ferr, sizeof(ferr));
        if (fr == FLAGS_INVALID)
            fprintf(io->err, "gputri: %s\n", ferr);
        if (fr != FLAGS_STORED) {
            if (fr == FLAGS_OTHER && opt == ':')
                fprintf(io->err, "gputri: option %s needs a value\n", argv[optind - 1]);
            else if (fr == FLAGS_OTHER && optopt > ' ' && optopt < 0x7f)
                fprintf(io->err, "gputri: unknown option -%c\n", optopt);
            else if (fr == FLAGS_OTHER)
                fprintf(io->err, "gputri: unknown option %s\n", argv[optind - 1]);
            fprintf(io->err, "Run 'gputri --help' for usage.\n");
            return 2;
        }
        if (flags_answer(&flags, "gputri", usage))
            return 0;
    }
    log_set_verbosity(flags.verbosity);
    const char *kubeconfig = flags.kubeconfig;
    const char *gpu_list = flags.gpu_resources ? flags.gpu_resources : GPU_SET_DEFAULT;
    int nargs = argc - optind;
    const char *cmd = nargs > 0 ? argv[optind] : NULL;
    if (cmd && nargs > 1 && (strcmp(cmd, "help") == 0 || strcmp(cmd, "version") == 0)) {
        fprintf(io->err, "gputri: %s takes no arguments\nRun 'gputri --help' for usage.\n", cmd);
        return 2;
    }
    if (cmd && nargs == 1 && strcmp(cmd, "help") == 0) {
        usage(io->out);
        return fflush(io->out) == 0 ? 0 : 1;
    }
    if (cmd && nargs == 1 && strcmp(cmd, "version") == 0) {
        fprintf(io->out, "gputri %s\n", GPUTRI_VERSION);
        return fflush(io->out) == 0 ? 0 : 1;
    }
    if (!cmd) {
        usage(io->err);
        return 2;
    }
    if (strcmp(cmd, "triage") != 0 && strcmp(cmd, "explain") != 0) {
        fprintf(io->err,
                "gputri: unknown command \"%.80s\" (want triage, explain, nodes, help or version)\n"
                "Run 'gputri --help' for usage.\n",
                cmd);
        return 2;
    }
    if (output && strcmp(cmd, "explain") != 0) {
        fprintf(io->err, "gputri: -o is for explain; triage prints one word\n"
                         "Run 'gputri --help' for usage.\n");
        return 2;
    }
    int want = ns_flag ? 2 : 3; /* the command, [NAMESPACE,] POD */
    if (nargs > want) {
        fprintf(io->err,
                "gputri: %s: too many arguments (from \"%.80s\"); want %s\n"
                "Run 'gputri --help' for usage.\n",
                cmd, argv[optind + want], ns_flag ? "POD with -n NAMESPACE" : "NAMESPACE POD");
        return 2;
    }
    if (nargs != want) {
        fprintf(io->err,
                ns_flag ? "gputri: %s needs POD\nRun 'gputri --help' for usage.\n"
                        : "gputri: %s needs NAMESPACE and POD (or -n NAMESPACE POD)\n"
                          "Run 'gputri --help' for usage.\n",
                cmd);
        return 2;
    }
    const char *ns = ns_flag ? ns_flag : argv[optind + 1], *name = argv[optind + want - 1];
    if (!dns_name(ns, 63, 0)) {
        fprintf(io->err,
                "gputri: invalid namespace \"%.80s\": a DNS label of at most 63 "
                "characters (a-z, 0-9, -)\n",
                ns);
        return 2;
    }
    if (!dns_name(name, 253, 1)) {
        fprintf(io->err,
                "gputri: invalid pod name \"%.80s\": a DNS subdomain of at most 253 "
                "characters (a-z, 0-9, -, .)\n",
                name);
        return 2;
    }

    struct gpu_set gpus;
    if (gpu_set_parse(&gpus, gpu_list) != K_OK) {
        const char *why = gpu_set_invalid_reason(gpu_list);
        fprintf(io->err, "gputri: invalid --gpu-resources \"%.200s\": %s\n", gpu_list,
                why ? why : "out of memory");
        return 2;
    }
    struct gpu_set dra = {0};
    if (dra_list[0] && gpu_set_parse(&dra, dra_list) != K_OK) {
        const char *why = gpu_set_invalid_reason(dra_list);
        fprintf(io->err, "gputri: invalid --gpu-device-classes \"%.200s\": %s\n", dra_list,
                why ? why : "out of memory");
        gpu_set_cleanup(&gpus);
        return 2;
    }
    struct printer pr = {0};
    if (output) { /* kubectl's formats for one object; a table is explain's text */
        char why[512];
        int prc = printer_parse(output, &pr, why, sizeof(why));
        if (prc == K_OK && printer_is_table(&pr)) {
            snprintf(why, sizeof(why),
                     "explain prints json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE; "
                     "without -o its text");
            prc = K_EINVAL;
        }
        if (prc != K_OK) {
            fprintf(io->err, "gputri: invalid -o \"%.80s\": %s\nRun 'gputri --help' for usage.\n",
                    output, why);
            printer_cleanup(&pr);
            gpu_set_cleanup(&gpus);
            gpu_set_cleanup(&dra);
            return 2;
        }
    }
    int status = 1;
    struct kube_config cfg = {0};
    struct kube_client *client = NULL;
    char errbuf[512];
    if (io->client) {
        client = io->client;
    } else {
        if (kube_config_load_overrides(kubeconfig, &ov, &cfg, errbuf, sizeof(errbuf)) != K_OK) {
            fprintf(io->err, "gputri: %s\n", errbuf);
            goto out;
        }
        client = kube_client_new(&cfg, "gputri/" GPUTRI_VERSION);
        if (!client) {
            fprintf(io->err, "gputri: out of memory\n");
            goto out;
        }
    }
    kube_client_set_list_deadline(client, true); /* --request-timeout bounds a whole LIST */
    struct triage t;
    struct kube_error err = {0};
    int rc = triage_run(client, &gpus, dra_list[0] ? &dra : NULL, grace, ns, name, &t, &err);
    if (rc == K_EFORBIDDEN && t.pod_read) { /* the pod, not the nodes: the controller's answer */
        enum answer_outcome o =
            answer_fallback(client, &gpus, ns, name, strcmp(cmd, "explain") == 0,
                            output ? &pr : NULL, "gputri", &err, io->out, io->err);
        if (o != ANSWER_UNREAD) {
            status = o == ANSWER_PRINTED && fflush(io->out) == 0 ? 0 : 1;
            goto out;
        }
    }
    if (rc) {
        print_api_error(io, &cfg, ns, name, rc, &err);
        goto out;
    }
    char why[512] = "";
    if (strcmp(cmd, "triage") == 0)
        fprintf(io->out, "%s\n", cause_word(t.result.cause));
    else if (output)
        rc = print_explain_object(&pr, &t, io->out, why, sizeof(why));
    else
        rc = triage_print_explain(&t, io->out);
    triage_cleanup(&t);
    if (rc)
        fprintf(io->err, "gputri: %s\n", why[0] ? why : k_strerror(rc));
    status = rc == K_OK && fflush(io->out) == 0 ? 0 : 1;
out:
    if (client != io->client)
        kube_client_free(client);
    kube_config_cleanup(&cfg);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra);
    printer_cleanup(&pr);
    return status;
}
