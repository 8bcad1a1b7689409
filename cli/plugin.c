/* plugin.c - the kubectl-gputri command line (plugin.h). */
#include "plugin.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "args.h"
#include "kubeflags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "model/gpu.h"
#include "nodes.h"
#include "pods.h"
#include "printer.h"
#include "triage.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/flags.h"
#include "util/result.h"
#include "util/version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Show why GPU pods do not start.\n"
            "\n"
            "Usage:\n"
            "  kubectl gputri pods [-n NAMESPACE | -A] [-o FORMAT] [-l SELECTOR]\n"
            "                      [--field-selector SELECTOR] [-w] [--sort-by PATH]\n"
            "                      [--no-headers] [--show-labels]\n"
            "  kubectl gputri explain POD [-n NAMESPACE] [-o json|yaml|jsonpath=...]\n"
            "  kubectl gputri nodes [-l SELECTOR] [--resource NAME] [-o FORMAT]\n"
            "\n"
            "Commands:\n"
            "  pods     the GPU pods that have not started: pending, placed but not\n"
            "           Running, rejected by their kubelet, or Running while a GPU\n"
            "           container has never started; with their cause and detail: from "
            "gputri-controller's gputri/cause and\n"
            "           gputri/detail annotations (SOURCE annotation) or, where the controller\n"
            "           has not written them, classified now from the nodes and the pods\n"
            "           on the nodes that matter (SOURCE live); and the ReplicaSets,\n"
            "           StatefulSets and Jobs whose GPU pods a ResourceQuota refuses, which\n"
            "           have no pod (Kind/name, quota-exceeded, SOURCE events)\n"
            "  explain  the cause of one pod, each candidate node's step on the ladder with\n"
            "           its GPU numbers and, for exhausted, the pods holding the GPUs\n"
            "  nodes    per node and GPU resource: capacity, allocatable, in use, free,\n"
            "           the pods holding them and why free GPUs cannot be used (cordoned,\n"
            "           taints, node conditions, unhealthy, GPU stack state); per node and\n"
            "           GPU DeviceClass (DRA): devices, allocated, free, tainted, holders;\n"
            "           sorted free-first (also: gputri nodes)\n"
            "\n");
    triage_print_causes(out);
    fprintf(out,
            "\n"
            "Flags:\n"
            "  -n, --namespace NS      namespace (default: the kubeconfig context's, else\n"
            "                          \"default\")\n"
            "  -A, --all-namespaces    every namespace (pods; adds NAMESPACE)\n"
            "  -o, --output FORMAT     wide (pods: adds PHASE, NODE, SOURCE, DETAIL; nodes:\n"
            "                          adds UNHEALTHY, TAINTED and HOLDERS), json, yaml,\n"
            "                          name, custom-columns=HEADER:PATH[,...],\n"
            "                          jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE (pods,\n"
            "                          nodes);\n"
            "                          json, yaml, jsonpath=, jsonpath-as-json=\n"
            "                          (explain). The list is\n"
            "                          gputri.io/v1alpha1 GPUPodList (docs/cli.md)\n"
            "  -l, --selector SELECTOR label selector, sent to the API server (pods; nodes:\n"
            "                          of the nodes, e.g. nvidia.com/gpu.product=A100)\n"
            "      --resource NAME     nodes: only the rows of this resource or DeviceClass\n"
            "                          (nvidia.com/gpu, deviceclass/gpu.nvidia.com)\n"
            "      --field-selector SELECTOR\n"
            "                          field selector, sent to the API server with\n"
            "                          status.phase!=Succeeded (pods)\n"
            "  -w, --watch             after the list, a row each time a pod's cause\n"
            "                          changes, until interrupted (pods)\n"
            "      --sort-by PATH      sort by a JSONPath into each item, e.g.\n"
            "                          .status.cause (pods)\n"
            "      --no-headers        no header line (table, wide, custom-columns)\n"
            "      --show-labels       the pods' labels as the last column\n"
            "      --gpu-device-classes LIST\n"
            "                          DRA: DeviceClass or driver name patterns of GPU claims\n"
            "                          (default " DRA_GPU_SET_DEFAULT ";\n"
            "                          empty: claims are not looked at)\n"
            "      --no-scheduler-grace-period D\n"
            "                          how long a pod of another schedulerName may have no\n"
            "                          PodScheduled condition before it is no-scheduler\n"
            "                          (e.g. 30s, 5m; at least 1s, at most 24h; default 30s)\n");
    flags_usage(out, FLAGS_USAGE_CONFIG | FLAGS_USAGE_BASIC, 6, 26, GPU_SET_DEFAULT);
    fprintf(out, "\nkubectl's global flags (kubectl options):\n");
    kubeflags_usage(out, 32);
    fprintf(out,
            "\n"
            "Exit status: 0 done, 1 error (API server, kubeconfig, pod not found), 2 usage.\n");
}

static void print_api_error(const struct plugin_io *io, const struct kube_config *cfg,
                            const char *ns, const char *name, int rc, const struct kube_error *err)
{
    char esc[sizeof(err->message) * 4]; /* the API's text, escaped for the terminal */
    text_escape(esc, sizeof(esc), err->message, strlen(err->message), TEXT_ESCAPE_TERMINAL);
    const char *msg = esc[0] ? esc : k_strerror(rc);
    if (err->credentials) { /* the exec plugin, before any request */
        fprintf(io->err, "error: getting credentials: %s\n", msg);
        return;
    }
    switch (rc) {
    case K_ENOTFOUND:
        if (name)
            fprintf(io->err, "error: pod \"%s\" not found in namespace \"%s\"\n", name, ns);
        else
            fprintf(io->err, "error: not found: %s\n", msg);
        break;
    case K_EIO:
    case K_ETIMEDOUT:
        if (err->tls || err->credentials || err->deadline) /* not the network */
            fprintf(io->err, "error: %s\n", msg);
        else
            fprintf(io->err, "error: cannot reach the API server %s: %s\n",
                    cfg->server ? cfg->server : "", msg);
        break;
    case K_EFORBIDDEN:
    case K_EUNAUTHORIZED:
        fprintf(io->err, "error: %s: %s\n", k_strerror(rc), msg);
        break;
    case K_ENOMEM:
        fprintf(io->err, "error: out of memory\n");
        break;
    default:
        fprintf(io->err, "error: %s%s%s\n", k_strerror(rc), esc[0] ? ": " : "", esc);
    }
}

static int write_all(const struct plugin_io *io, const struct buf *b)
{
    if (b->len && fwrite(b->data, 1, b->len, io->out) != b->len)
        return 1;
    return fflush(io->out) == 0 ? 0 : 1;
}

static atomic_int interrupted; /* SIGINT during pods -w */

static void on_sigint(int sig)
{
    (void)sig;
    atomic_store(&interrupted, 1);
}

/* The printer -o, --sort-by, --no-headers, --show-labels and -A ask for (checked by args.c). */
static int make_printer(const struct plugin_io *io, const struct plugin_args *a, struct printer *p)
{
    char why[512];
    int rc = printer_parse(a->output, p, why, sizeof(why));
    if (rc == K_OK && a->sort_by)
        rc = printer_set_sort_by(p, a->sort_by, why, sizeof(why));
    if (rc) {
        fprintf(io->err, "error: %s\n", why);
        return 1;
    }
    p->no_headers = a->no_headers;
    p->show_labels = a->show_labels;
    p->all_namespaces = a->all_namespaces;
    return 0;
}

struct row_printer {
    const struct plugin_io *io;
    const struct printer *p;
    bool header; /* the next table row is the first: with the header */
};

/* One row of pods -w, written and flushed at once. */
static int print_row(void *ctx, const struct pod_row *r)
{
    struct row_printer *rp = ctx;
    json_object *item = pods_item(r);
    if (!item)
        return K_ENOMEM;
    struct buf out;
    buf_init(&out, (size_t)1 << 30);
    char why[512];
    int rc = printer_print_item(rp->p, item, &pods_table, rp->header, &out, why, sizeof(why));
    json_object_put(item);
    rp->header = false;
    if (rc == K_OK && write_all(rp->io, &out))
        rc = K_EIO;
    buf_cleanup(&out);
    return rc;
}

/* The rows came from the annotations alone: say why, once, on stderr. */
static void print_live_forbidden(const struct plugin_io *io, const struct pod_rows *rows)
{
    size_t none = 0;
    for (size_t i = 0; i < rows->n; i++)
        none += rows->items[i].source == POD_ROW_NONE;
    char without[64] = "";
    if (none)
        snprintf(without, sizeof(without), " (%zu without one: \"-\")", none);
    fprintf(io->err,
            "kubectl-gputri: %s is forbidden for you: causes from the annotations "
            "gputri-controller wrote%s; a live classification needs read access to nodes (the "
            "ClusterRole gputri-viewer, docs/cli.md)\n",
            rows->forbidden[0] ? rows->forbidden : "a cluster-scoped resource", without);
}

static int run_pods(const struct plugin_io *io, const struct plugin_args *a,
                    struct kube_client *client, const struct kube_config *cfg,
                    const struct gpu_set *gpus, const struct gpu_set *dra, const char *ns)
{
    struct printer pr;
    if (make_printer(io, a, &pr)) {
        printer_cleanup(&pr);
        return PLUGIN_EXIT_USAGE;
    }
    struct pod_rows rows;
    struct kube_error err = {0};
    struct pods_selectors sel = {.label_selector = a->label_selector,
                                 .field_selector = a->field_selector,
                                 .no_owner_rows = a->watch};
    const char *list_ns = a->all_namespaces ? NULL : ns;
    int rc = pods_fetch_sel(client, gpus, dra, a->no_scheduler_grace, list_ns, &sel, &rows, &err);
    if (rc) {
        print_api_error(io, cfg, ns, NULL, rc, &err);
        printer_cleanup(&pr);
        return 1;
    }
    json_object *list = NULL;
    struct buf out;
    buf_init(&out, (size_t)1 << 30);
    char why[512] = "";
    rc = pods_list(&rows, &list);
    bool one_by_one = a->watch && !printer_is_table(&pr); /* kubectl -w: objects, not a List */
    if (rc == K_OK && !one_by_one) {
        rc = printer_print_list(&pr, list, &pods_table, &out, why, sizeof(why));
    } else if (rc == K_OK) {
        json_object *items = json_object_object_get(list, "items");
        rc = printer_sort(&pr, items, why, sizeof(why));
        for (size_t i = 0; rc == K_OK && i < json_object_array_length(items); i++)
            rc = printer_print_item(&pr, json_object_array_get_idx(items, i), &pods_table, false,
                                    &out, why, sizeof(why));
    }
    json_object_put(list);
    int status = 0;
    if (rc) {
        fprintf(io->err, "error: %s\n", why[0] ? why : k_strerror(rc));
        status = 1;
    } else if (write_all(io, &out)) {
        status = 1;
    } else if (rows.skipped) { /* the rows printed are not the whole answer */
        print_api_error(io, cfg, ns, NULL, err.code, &err);
        status = 1;
    } else if (rows.n == 0 && !a->watch && (printer_is_table(&pr) || pr.format == PRINTER_NAME)) {
        if (a->all_namespaces)
            fprintf(io->err, "No GPU pods waiting.\n");
        else
            fprintf(io->err, "No GPU pods waiting in %s namespace.\n", ns);
    }
    if (status == 0 && rows.live_forbidden && rows.n)
        print_live_forbidden(io, &rows);
    buf_cleanup(&out);
    if (status == 0 && a->watch) {
        struct row_printer rp = {.io = io, .p = &pr, .header = rows.n == 0};
        struct sigaction sa = {0}, old;
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        atomic_store(&interrupted, 0);
        sigaction(SIGINT, &sa, &old);
        kube_client_set_cancel(client, &interrupted);
        struct kube_error werr = {0};
        rc = pods_watch(client, gpus, dra, a->no_scheduler_grace, list_ns, &sel, &rows, print_row,
                        &rp, &interrupted, &werr);
        kube_client_set_cancel(client, NULL);
        sigaction(SIGINT, &old, NULL);
        if (rc == K_EIO && !werr.code) /* stdout closed (a pipe whose reader left) */
            status = 1;
        else if (rc) {
            print_api_error(io, cfg, ns, NULL, rc, &werr);
            status = 1;
        }
    }
    pod_rows_cleanup(&rows);
    printer_cleanup(&pr);
    return status;
}

static int run_nodes(const struct plugin_io *io, const struct plugin_args *a,
                     struct kube_client *client, const struct kube_config *cfg,
                     const struct gpu_set *gpus, const struct gpu_set *dra)
{
    struct printer pr;
    if (make_printer(io, a, &pr)) {
        printer_cleanup(&pr);
        return PLUGIN_EXIT_USAGE;
    }
    /* the table and wide are the rows as nodes.c lays them out (free first); every other format
       is the list through the printer */
    bool own_table = pr.format == PRINTER_TABLE || pr.format == PRINTER_WIDE;
    if (own_table && (a->sort_by || a->show_labels)) {
        fprintf(io->err, "error: --sort-by and --show-labels work on nodes with -o json, yaml, "
                         "name, custom-columns or jsonpath\n");
        printer_cleanup(&pr);
        return PLUGIN_EXIT_USAGE;
    }
    struct node_rows rows;
    struct kube_error err = {0};
    int rc = nodes_fetch(client, gpus, dra, a->label_selector, a->resource, &rows, &err);
    if (rc) {
        print_api_error(io, cfg, NULL, NULL, rc, &err);
        printer_cleanup(&pr);
        return 1;
    }
    struct buf out;
    buf_init(&out, (size_t)1 << 30);
    char why[512] = "";
    if (own_table) {
        rc = nodes_render_table(&rows, pr.format == PRINTER_WIDE, &out);
        if (rc == K_OK && a->no_headers && out.len) { /* the header is the first line */
            const char *nl = memchr(out.data, '\n', out.len);
            size_t cut = nl ? (size_t)(nl - out.data) + 1 : out.len;
            memmove(out.data, out.data + cut, out.len - cut);
            out.len -= cut;
        }
    } else {
        json_object *list = nodes_rows_json(&rows);
        static const struct printer_table no_columns = {0};
        rc = list ? printer_print_list(&pr, list, &no_columns, &out, why, sizeof(why)) : K_ENOMEM;
        json_object_put(list);
    }
    if (rc)
        fprintf(io->err, "error: %s\n", why[0] ? why : k_strerror(rc));
    int status = rc ? 1 : write_all(io, &out);
    if (status == 0 && rows.note)
        fprintf(io->err, "warning: %s\n", rows.note);
    if (status == 0 && rows.n == 0 && (own_table || pr.format == PRINTER_NAME))
        fprintf(io->err, "No GPU resources or GPU devices found on the nodes%s.\n",
                a->label_selector || a->resource ? " selected" : "");
    buf_cleanup(&out);
    node_rows_cleanup(&rows);
    printer_cleanup(&pr);
    return status;
}

static int run_explain(const struct plugin_io *io, const struct plugin_args *a,
                       struct kube_client *client, const struct kube_config *cfg,
                       const struct gpu_set *gpus, const struct gpu_set *dra, const char *ns)
{
    struct printer pr = {0};
    if (a->output && make_printer(io, a, &pr)) {
        printer_cleanup(&pr);
        return PLUGIN_EXIT_USAGE;
    }
    struct triage t;
    struct kube_error err = {0};
    int rc = triage_run(client, gpus, dra, a->no_scheduler_grace, ns, a->pod, &t, &err);
    if (rc == K_EFORBIDDEN && t.pod_read) { /* the pod, not the nodes: the controller's answer */
        enum answer_outcome o =
            answer_fallback(client, gpus, ns, a->pod, true, a->output ? &pr : NULL,
                            "kubectl-gputri", &err, io->out, io->err);
        if (o != ANSWER_UNREAD) {
            printer_cleanup(&pr);
            return o == ANSWER_PRINTED && fflush(io->out) == 0 ? 0 : 1;
        }
    }
    if (rc) {
        print_api_error(io, cfg, ns, a->pod, rc, &err);
        printer_cleanup(&pr);
        return 1;
    }
    char why[512] = "";
    if (a->output) {
        json_object *o = NULL;
        rc = triage_explain_json(&t, &o);
        if (rc == K_OK)
            rc = printer_write_item(&pr, o, io->out, why, sizeof(why));
        json_object_put(o);
    } else {
        rc = triage_print_explain(&t, io->out);
    }
    triage_cleanup(&t);
    printer_cleanup(&pr);
    if (rc) {
        fprintf(io->err, "error: %s\n", why[0] ? why : k_strerror(rc));
        return 1;
    }
    return fflush(io->out) == 0 ? 0 : 1;
}

int plugin_main(int argc, char **argv, const struct plugin_io *io)
{
    struct plugin_args a;
    char errbuf[512];
    if (plugin_parse_args(argc, argv, &a, errbuf, sizeof(errbuf)) != 0) {
        fprintf(io->err, "error: %s\nSee 'kubectl gputri --help' for usage.\n", errbuf);
        return PLUGIN_EXIT_USAGE;
    }
    if (a.cmd == PLUGIN_CMD_HELP) {
        usage(io->out);
        return fflush(io->out) == 0 ? 0 : 1;
    }
    if (a.cmd == PLUGIN_CMD_VERSION) {
        fprintf(io->out, "kubectl-gputri %s\n", GPUTRI_VERSION);
        return fflush(io->out) == 0 ? 0 : 1;
    }
    log_set_verbosity(a.verbosity);

    struct gpu_set gpus = {0};
    const char *gpu_list = a.gpu_resources ? a.gpu_resources : GPU_SET_DEFAULT;
    if (gpu_set_parse(&gpus, gpu_list) != K_OK) {
        fprintf(io->err,
                "error: invalid --gpu-resources \"%s\": want names separated by ',', a '*' "
                "only at the end\nSee 'kubectl gputri --help' for usage.\n",
                gpu_list);
        return PLUGIN_EXIT_USAGE;
    }
    struct gpu_set dra = {0};
    const char *dra_list = a.gpu_device_classes ? a.gpu_device_classes : DRA_GPU_SET_DEFAULT;
    if (dra_list[0] && gpu_set_parse(&dra, dra_list) != K_OK) {
        fprintf(io->err,
                "error: invalid --gpu-device-classes \"%s\": want names separated by ',', a '*' "
                "only at the end\nSee 'kubectl gputri --help' for usage.\n",
                dra_list);
        gpu_set_cleanup(&gpus);
        return PLUGIN_EXIT_USAGE;
    }
    const struct gpu_set *dra_set = dra_list[0] ? &dra : NULL;
    int status = 1;
    struct kube_config cfg = {0};
    struct kube_client *client = NULL;
    char ns[256];
    a.ov.ns = a.ns;
    if (!io->client &&
        kube_config_load_overrides(a.kubeconfig, &a.ov, &cfg, errbuf, sizeof(errbuf)) != K_OK) {
        fprintf(io->err, "error: %s\n", errbuf);
        goto out;
    }
    if (a.ns)
        snprintf(ns, sizeof(ns), "%s", a.ns);
    else
        snprintf(ns, sizeof(ns), "%s", cfg.ns ? cfg.ns : "default");
    client = io->client ? io->client : kube_client_new(&cfg, "kubectl-gputri/" GPUTRI_VERSION);
    if (!client) {
        fprintf(io->err, "error: out of memory\n");
        goto out;
    }
    kube_client_set_list_deadline(client, true); /* --request-timeout bounds a whole LIST */
    if (a.cmd == PLUGIN_CMD_PODS)
        status = run_pods(io, &a, client, &cfg, &gpus, dra_set, ns);
    else if (a.cmd == PLUGIN_CMD_NODES)
        status = run_nodes(io, &a, client, &cfg, &gpus, dra_set);
    else
        status = run_explain(io, &a, client, &cfg, &gpus, dra_set, ns);
out:
    if (client != io->client)
        kube_client_free(client);
    kube_config_cleanup(&cfg);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra);
    return status;
}
