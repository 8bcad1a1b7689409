/* plugin.c - the kubectl-gputri command line (plugin.h). */
#include "plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "args.h"
#include "kubeflags.h"
#include "kube/client.h"
#include "kube/config.h"
#include "model/gpu.h"
#include "pods.h"
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
            "  kubectl gputri pods [-n NAMESPACE | -A] [-o wide|json]\n"
            "  kubectl gputri explain POD [-n NAMESPACE]\n"
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
            "\n");
    triage_print_causes(out);
    fprintf(out,
            "\n"
            "Flags:\n"
            "  -n, --namespace NS      namespace (default: the kubeconfig context's, else\n"
            "                          \"default\")\n"
            "  -A, --all-namespaces    every namespace (pods)\n"
            "  -o, --output FORMAT     wide (adds PHASE and NODE) or json (pods)\n"
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
    struct pod_rows rows;
    struct kube_error err = {0};
    int rc = pods_fetch(client, gpus, dra, a->no_scheduler_grace, a->all_namespaces ? NULL : ns,
                        &rows, &err);
    if (rc) {
        print_api_error(io, cfg, ns, NULL, rc, &err);
        return 1;
    }
    struct buf out;
    buf_init(&out, (size_t)1 << 30);
    if (a->output == PLUGIN_OUTPUT_JSON)
        rc = pods_render_json(&rows, &out);
    else
        rc = pods_render_table(&rows, a->output == PLUGIN_OUTPUT_WIDE, &out);
    int status = 0;
    if (rc) {
        fprintf(io->err, "error: %s\n", k_strerror(rc));
        status = 1;
    } else if (write_all(io, &out)) {
        status = 1;
    } else if (rows.skipped) { /* the rows printed are not the whole answer */
        print_api_error(io, cfg, ns, NULL, err.code, &err);
        status = 1;
    } else if (rows.n == 0 && a->output != PLUGIN_OUTPUT_JSON) {
        if (a->all_namespaces)
            fprintf(io->err, "No GPU pods waiting.\n");
        else
            fprintf(io->err, "No GPU pods waiting in %s namespace.\n", ns);
    }
    if (status == 0 && rows.live_forbidden && rows.n)
        print_live_forbidden(io, &rows);
    buf_cleanup(&out);
    pod_rows_cleanup(&rows);
    return status;
}

static int run_explain(const struct plugin_io *io, const struct plugin_args *a,
                       struct kube_client *client, const struct kube_config *cfg,
                       const struct gpu_set *gpus, const struct gpu_set *dra, const char *ns)
{
    struct triage t;
    struct kube_error err = {0};
    int rc = triage_run(client, gpus, dra, a->no_scheduler_grace, ns, a->pod, &t, &err);
    if (rc == K_EFORBIDDEN && t.pod_read) { /* the pod, not the nodes: the controller's answer */
        enum answer_outcome o = answer_fallback(client, gpus, ns, a->pod, true, "kubectl-gputri",
                                                &err, io->out, io->err);
        if (o != ANSWER_UNREAD)
            return o == ANSWER_PRINTED && fflush(io->out) == 0 ? 0 : 1;
    }
    if (rc) {
        print_api_error(io, cfg, ns, a->pod, rc, &err);
        return 1;
    }
    rc = triage_print_explain(&t, io->out);
    triage_cleanup(&t);
    if (rc) {
        fprintf(io->err, "error: %s\n", k_strerror(rc));
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
