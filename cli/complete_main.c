/*
 * complete_main.c - kubectl_complete-gputri: prints completions for `kubectl gputri ...` as
 * kubectl asks a plugin for them (cli/complete.h). Names come from the kubeconfig and, for
 * namespaces and pods, from the API server with the flags on the line (--context, -s, --token,
 * ...), each request limited to 5 s unless --request-timeout says otherwise. Any failure gives
 * no names, never an error: a completion must not print to the terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complete.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/json.h"
#include "util/result.h"
#include "util/version.h"

#define COMPLETE_TIMEOUT "5s"
#define COMPLETE_PAGE 500

struct list_ctx {
    void (*add)(void *add_ctx, const char *name);
    void *add_ctx;
};

static int on_item(void *ctx, json_object *item)
{
    struct list_ctx *l = ctx;
    const char *name = kube_json_meta_str(item, "name");
    if (name)
        l->add(l->add_ctx, name);
    return 0;
}

static void list(void *ctx, const struct plugin_args *a, const char *what, const char *ns,
                 void (*add)(void *add_ctx, const char *name), void *add_ctx)
{
    (void)ctx;
    if (strcmp(what, "namespaces") != 0 && strcmp(what, "pods") != 0) {
        kube_config_names(a->kubeconfig, what, add, add_ctx);
        return;
    }
    struct kube_config_overrides ov = a->ov;
    if (!ov.request_timeout)
        ov.request_timeout = COMPLETE_TIMEOUT;
    struct kube_config cfg;
    char err[512];
    if (kube_config_load_overrides(a->kubeconfig, &ov, &cfg, err, sizeof(err)) != K_OK)
        return;
    struct kube_client *c = kube_client_new(&cfg, "kubectl_complete-gputri/" GPUTRI_VERSION);
    char path[600];
    if (strcmp(what, "namespaces") == 0)
        snprintf(path, sizeof(path), "/api/v1/namespaces");
    else {
        char esc[400];
        const char *n = ns ? ns : cfg.ns ? cfg.ns : "default";
        if (kube_path_escape(n, esc, sizeof(esc)) != K_OK)
            goto out;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", esc);
    }
    struct list_ctx l = {add, add_ctx};
    /* one page is enough for a completion: a second is refused (K_ETOOBIG, ignored) */
    struct kube_list_options lo = {.page_size = COMPLETE_PAGE, .max_pages = 1};
    if (c)
        kube_list(c, path, &lo, on_item, &l, NULL, 0, NULL);
out:
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

int main(int argc, char **argv)
{
    struct complete_source src = {.list = list};
    struct buf out;
    buf_init(&out, 4u << 20);
    int rc = plugin_complete(argc, argv, &src, &out);
    if (rc != K_OK) {
        buf_reset(&out);
        buf_printf(&out, ":%d\n", COMPLETE_DIRECTIVE_NO_FILE_COMP);
    }
    fwrite(out.data, 1, out.len, stdout);
    buf_cleanup(&out);
    return fflush(stdout) == 0 ? 0 : 1;
}
