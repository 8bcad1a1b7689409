/* args.c - pflag-style parsing of the kubectl plugin's command line, without global state. */
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"
#include "util/flags.h"
#include "kubeflags.h"
#include "printer.h"

enum flag_id {
    F_KUBECONFIG,
    F_NAMESPACE,
    F_ALL_NAMESPACES,
    F_OUTPUT,
    F_GPU_RESOURCES,
    F_GPU_DEVICE_CLASSES,
    F_NO_SCHEDULER_GRACE,
    F_VERBOSITY,
    F_HELP,
    F_VERSION,
    F_SELECTOR,
    F_RESOURCE,
    F_FIELD_SELECTOR,
    F_SORT_BY,
    F_WATCH,
    F_NO_HEADERS,
    F_SHOW_LABELS,
    F_KUBE, /* one of kubeflags[] */
};

struct flag {
    const char *name; /* long name, without "--" */
    char shorthand;   /* 0 when none */
    bool takes_value;
    enum flag_id id;
    enum kubeflag_id kid; /* for F_KUBE */
};

static const struct flag flags[] = {
    {"kubeconfig", 0, true, F_KUBECONFIG, KF_CONTEXT},
    {"namespace", 'n', true, F_NAMESPACE, KF_CONTEXT},
    {"all-namespaces", 'A', false, F_ALL_NAMESPACES, KF_CONTEXT},
    {"output", 'o', true, F_OUTPUT, KF_CONTEXT},
    {"gpu-resources", 0, true, F_GPU_RESOURCES, KF_CONTEXT},
    {"gpu-device-classes", 0, true, F_GPU_DEVICE_CLASSES, KF_CONTEXT},
    {"no-scheduler-grace-period", 0, true, F_NO_SCHEDULER_GRACE, KF_CONTEXT},
    {"v", 'v', true, F_VERBOSITY, KF_CONTEXT},
    {"help", 'h', false, F_HELP, KF_CONTEXT},
    {"version", 0, false, F_VERSION, KF_CONTEXT},
    {"selector", 'l', true, F_SELECTOR, KF_CONTEXT},
    {"resource", 0, true, F_RESOURCE, KF_CONTEXT},
    {"field-selector", 0, true, F_FIELD_SELECTOR, KF_CONTEXT},
    {"sort-by", 0, true, F_SORT_BY, KF_CONTEXT},
    {"watch", 'w', false, F_WATCH, KF_CONTEXT},
    {"no-headers", 0, false, F_NO_HEADERS, KF_CONTEXT},
    {"show-labels", 0, false, F_SHOW_LABELS, KF_CONTEXT},
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))
#define MAX_POSITIONAL 8

const char *plugin_cmd_name(enum plugin_cmd c)
{
    switch (c) {
    case PLUGIN_CMD_PODS:
        return "pods";
    case PLUGIN_CMD_EXPLAIN:
        return "explain";
    case PLUGIN_CMD_NODES:
        return "nodes";
    case PLUGIN_CMD_VERSION:
        return "version";
    case PLUGIN_CMD_HELP:
    default:
        return "help";
    }
}

__attribute__((format(printf, 3, 4))) static int usage_error(char *err, size_t errlen,
                                                             const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return PLUGIN_EXIT_USAGE;
}

/* A kubectl global flag as a row of this table, in *tmp. */
static const struct flag *kube_flag(const struct kubeflag *k, struct flag *tmp)
{
    if (!k)
        return NULL;
    *tmp = (struct flag){k->name, k->shorthand, k->takes_value, F_KUBE, k->id};
    return tmp;
}

static const struct flag *find_long(const char *name, size_t len, struct flag *tmp)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return kube_flag(kubeflag_find(name, len), tmp);
}

static const struct flag *find_short(char c, struct flag *tmp)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (flags[i].shorthand && flags[i].shorthand == c)
            return &flags[i];
    return kube_flag(kubeflag_find_short(c), tmp);
}

bool plugin_flag_takes_value(const char *arg)
{
    struct flag tmp;
    const struct flag *f = NULL;
    if (arg[0] == '-' && arg[1] == '-' && !strchr(arg, '='))
        f = find_long(arg + 2, strlen(arg + 2), &tmp);
    else if (arg[0] == '-' && arg[1] && arg[1] != '-' && arg[2] == '\0')
        f = find_short(arg[1], &tmp);
    return f && f->takes_value;
}

struct state {
    struct plugin_args *a;
    bool help, version;
    char *err;
    size_t errlen;
};

/* Stores one flag's value. `shown` is the flag as the user wrote it, for messages. */
static int set_flag(struct state *st, const struct flag *f, const char *value, const char *shown)
{
    struct plugin_args *a = st->a;
    switch (f->id) {
    case F_KUBECONFIG:
        if (!*value)
            return usage_error(st->err, st->errlen, "%s needs a file name", shown);
        a->kubeconfig = value;
        break;
    case F_NAMESPACE:
        if (!*value)
            return usage_error(st->err, st->errlen, "%s needs a namespace name", shown);
        a->ns = value;
        break;
    case F_OUTPUT: {
        struct printer p;
        char why[400];
        int rc = printer_parse(value, &p, why, sizeof(why));
        printer_cleanup(&p);
        if (rc)
            return usage_error(st->err, st->errlen, "%s: %s", shown, why);
        a->output = value;
        break;
    }
    case F_SELECTOR:
    case F_FIELD_SELECTOR:
        if (!*value)
            return usage_error(st->err, st->errlen, "%s needs a selector", shown);
        if (f->id == F_SELECTOR)
            a->label_selector = value;
        else
            a->field_selector = value;
        break;
    case F_SORT_BY: {
        struct printer p = {0};
        char why[400];
        int rc = printer_set_sort_by(&p, value, why, sizeof(why));
        printer_cleanup(&p);
        if (rc)
            return usage_error(st->err, st->errlen, "%s", why);
        a->sort_by = value;
        break;
    }
    case F_GPU_RESOURCES:
        if (!*value)
            return usage_error(st->err, st->errlen, "%s needs a resource list", shown);
        a->gpu_resources = value;
        break;
    case F_GPU_DEVICE_CLASSES:
        a->gpu_device_classes = value; /* "" turns DRA off */
        break;
    case F_NO_SCHEDULER_GRACE: {
        const char *why = NULL;
        if (flags_no_scheduler_grace(value, &a->no_scheduler_grace, &why) != K_OK)
            return usage_error(st->err, st->errlen, "invalid argument \"%s\" for %s: %s", value,
                               shown, why);
        break;
    }
    case F_VERBOSITY:
        if (flags_verbosity(value, &a->verbosity) != K_OK)
            return usage_error(st->err, st->errlen,
                               "invalid argument \"%s\" for %s: want a level from 0 to %d", value,
                               shown, FLAGS_V_MAX);
        break;
    case F_RESOURCE:
        if (!*value)
            return usage_error(st->err, st->errlen, "%s needs a resource name", shown);
        a->resource = value;
        break;
    case F_KUBE:
        if (kubeflag_set(&a->ov, f->kid, value, shown, st->err, st->errlen) != 0)
            return PLUGIN_EXIT_USAGE;
        break;
    case F_ALL_NAMESPACES:
    case F_WATCH:
    case F_NO_HEADERS:
    case F_SHOW_LABELS:
    case F_HELP:
    case F_VERSION: {
        bool on;
        if (!value || strcmp(value, "true") == 0)
            on = true;
        else if (strcmp(value, "false") == 0)
            on = false;
        else
            return usage_error(st->err, st->errlen,
                               "invalid argument \"%s\" for %s: want true or false", value, shown);
        if (f->id == F_ALL_NAMESPACES)
            a->all_namespaces = on;
        else if (f->id == F_WATCH)
            a->watch = on;
        else if (f->id == F_NO_HEADERS)
            a->no_headers = on;
        else if (f->id == F_SHOW_LABELS)
            a->show_labels = on;
        else if (f->id == F_HELP)
            st->help = on;
        else
            st->version = on;
        break;
    }
    }
    return 0;
}

/* "--name", "--name=value" or "--name value"; *i advances past a separate value. */
static int parse_long(struct state *st, int argc, char *const *argv, int *i)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    struct flag tmp;
    const struct flag *f = find_long(arg, len, &tmp);
    char shown[64];
    snprintf(shown, sizeof(shown), "--%.*s", (int)(len < 40 ? len : 40), arg);
    if (!f)
        return usage_error(st->err, st->errlen, "unknown flag: %s", shown);
    if (!f->takes_value)
        return set_flag(st, f, eq ? eq + 1 : NULL, shown);
    if (eq)
        return set_flag(st, f, eq + 1, shown);
    if (*i + 1 >= argc)
        return usage_error(st->err, st->errlen, "flag needs an argument: %s", shown);
    return set_flag(st, f, argv[++*i], shown);
}

/* "-A", "-Ah", "-n ns", "-nns", "-n=ns"; *i advances past a separate value. */
static int parse_short(struct state *st, int argc, char *const *argv, int *i)
{
    const char *arg = argv[*i];
    for (const char *p = arg + 1; *p; p++) {
        struct flag tmp;
        const struct flag *f = find_short(*p, &tmp);
        char shown[4] = {'-', *p, 0, 0};
        if (!f)
            return usage_error(st->err, st->errlen, "unknown shorthand flag: '%c' in %s", *p, arg);
        if (!f->takes_value) {
            if (p[1] == '=') /* "-A=false" */
                return set_flag(st, f, p + 2, shown);
            int rc = set_flag(st, f, NULL, shown);
            if (rc)
                return rc;
            continue;
        }
        const char *value = p + 1;
        if (*value == '=')
            value++;
        if (!*value && p[1] != '=') {
            if (*i + 1 >= argc)
                return usage_error(st->err, st->errlen, "flag needs an argument: '%c' in %s", *p,
                                   arg);
            value = argv[++*i];
        }
        return set_flag(st, f, value, shown);
    }
    return 0;
}

static const char *strip_pod_prefix(const char *name)
{
    static const char *const prefixes[] = {"pods/", "pod/", "po/"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0)
            return name + n;
    }
    return name;
}

int plugin_parse_args(int argc, char *const *argv, struct plugin_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    if (errlen)
        err[0] = '\0';
    struct state st = {.a = a, .err = err, .errlen = errlen};
    const char *pos[MAX_POSITIONAL];
    int npos = 0;
    bool flags_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int rc = 0;
        if (!flags_done && strcmp(arg, "--") == 0) {
            flags_done = true;
            continue;
        }
        if (!flags_done && arg[0] == '-' && arg[1] == '-')
            rc = parse_long(&st, argc, argv, &i);
        else if (!flags_done && arg[0] == '-' && arg[1] != '\0')
            rc = parse_short(&st, argc, argv, &i);
        else if (npos == MAX_POSITIONAL)
            rc = usage_error(err, errlen, "too many arguments");
        else
            a->pos[a->npos++] = pos[npos++] = arg;
        if (rc)
            return rc;
    }
    if (st.help) {
        a->cmd = PLUGIN_CMD_HELP;
        return 0;
    }
    if (st.version) {
        a->cmd = PLUGIN_CMD_VERSION;
        return 0;
    }
    if (npos == 0)
        return usage_error(err, errlen, "a command is required: pods, explain or nodes");
    const char *cmd = pos[0];
    if (strcmp(cmd, "help") == 0) {
        a->cmd = PLUGIN_CMD_HELP;
        return 0;
    }
    if (strcmp(cmd, "version") == 0) {
        a->cmd = PLUGIN_CMD_VERSION;
        return 0;
    }
    bool nodes = strcmp(cmd, "nodes") == 0 || strcmp(cmd, "node") == 0 || strcmp(cmd, "no") == 0;
    if (a->resource && !nodes)
        return usage_error(err, errlen, "--resource works with nodes only");
    if (strcmp(cmd, "pods") == 0 || strcmp(cmd, "pod") == 0 || strcmp(cmd, "po") == 0) {
        a->cmd = PLUGIN_CMD_PODS;
        if (npos > 1)
            return usage_error(err, errlen, "pods takes no arguments, got \"%s\"", pos[1]);
        return 0;
    }
    if (strcmp(cmd, "explain") == 0) {
        a->cmd = PLUGIN_CMD_EXPLAIN;
        if (npos < 2)
            return usage_error(err, errlen, "explain needs a pod name: explain POD [-n NAMESPACE]");
        if (npos > 2)
            return usage_error(err, errlen, "explain takes one pod, got \"%s\" too", pos[2]);
        a->pod = strip_pod_prefix(pos[1]);
        if (!*a->pod || strchr(a->pod, '/'))
            return usage_error(err, errlen,
                               "explain takes a pod name, got \"%s\" (a KIND/NAME row of pods is a "
                               "workload without pods: kubectl describe KIND NAME shows its "
                               "Events)",
                               pos[1]);
        if (a->all_namespaces)
            return usage_error(err, errlen, "explain works on one pod: use -n NAMESPACE, not -A");
        if (a->output && strcmp(a->output, "json") != 0 && strcmp(a->output, "yaml") != 0 &&
            strncmp(a->output, "jsonpath=", 9) != 0 && strncmp(a->output, "jsonpath-as-json=", 17))
            return usage_error(err, errlen,
                               "explain prints text, or -o json, yaml, jsonpath=TEMPLATE or "
                               "jsonpath-as-json=TEMPLATE");
        if (a->label_selector || a->field_selector || a->watch || a->sort_by || a->no_headers ||
            a->show_labels)
            return usage_error(err, errlen,
                               "explain works on one pod: -l, --field-selector, -w, --sort-by, "
                               "--no-headers and --show-labels are for pods");
        return 0;
    }
    if (nodes) {
        a->cmd = PLUGIN_CMD_NODES;
        if (npos > 1)
            return usage_error(err, errlen, "nodes takes no arguments, got \"%s\"", pos[1]);
        if (a->field_selector || a->watch)
            return usage_error(err, errlen, "--field-selector and -w are for pods");
        return 0; /* -n and -A are ignored, as kubectl get nodes ignores them */
    }
    return usage_error(err, errlen, "unknown command \"%s\": use pods, explain or nodes", cmd);
}
