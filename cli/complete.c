/* complete.c - kubectl plugin completion (see complete.h). */
#include "complete.h"

#include <stdbool.h>
#include <string.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/json.h"
#include "kubeflags.h"
#include "util/escape.h"
#include "util/result.h"
#include "util/version.h"

struct cands {
    struct buf *out;
    const char *prefix; /* what the word must start with */
    const char *lead;   /* written before each candidate ("--context=") */
    const char *seen[COMPLETE_MAX_CANDIDATES];
    size_t n;       /* add_desc's candidates, in seen[] */
    size_t n_names; /* add_name's candidates */
    int rc;
};

static void add_desc(struct cands *c, const char *name, const char *desc)
{
    if (c->rc || strncmp(name, c->prefix, strlen(c->prefix)) != 0 ||
        c->n == COMPLETE_MAX_CANDIDATES)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->seen[i], name) == 0)
            return;
    /* A name with a line break would split into two candidates; one with another control or
     * bytes that are not UTF-8 would reach the terminal, and escaped it would name nothing. */
    if (!text_is_plain(name, strlen(name)))
        return;
    c->seen[c->n++] = name; /* only compared while the source's string lives: see add_name */
    c->rc = buf_printf(c->out, "%s%s%s%s\n", c->lead, name, desc ? "\t" : "", desc ? desc : "");
}

/* For names from a source: strings that do not outlive the call, so only compare by output. */
static void add_name(void *ctx, const char *name)
{
    struct cands *c = ctx;
    if (c->rc || c->n_names == COMPLETE_MAX_CANDIDATES ||
        strncmp(name, c->prefix, strlen(c->prefix)) != 0 || !text_is_plain(name, strlen(name)))
        return;
    /* Dedupe against what was written: whole lines of out. */
    size_t ll = strlen(c->lead), nl = strlen(name);
    const char *p = c->out->data;
    const char *end = p ? p + c->out->len : NULL;
    while (p && p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break;
        if ((size_t)(eol - p) == ll + nl && memcmp(p + ll, name, nl) == 0)
            return;
        p = eol + 1;
    }
    c->rc = buf_printf(c->out, "%s%s\n", c->lead, name);
    c->n_names++;
}

/* Which flag values complete how. */
enum value_kind { V_NONE, V_FILE, V_NAMESPACE, V_CONTEXT, V_CLUSTER, V_USER, V_OUTPUT, V_SORT_BY };

static enum value_kind value_kind(const char *flag, size_t len)
{
    static const struct {
        const char *name;
        enum value_kind kind;
    } map[] = {{"-n", V_NAMESPACE},
               {"--namespace", V_NAMESPACE},
               {"--context", V_CONTEXT},
               {"--cluster", V_CLUSTER},
               {"--user", V_USER},
               {"-o", V_OUTPUT},
               {"--output", V_OUTPUT},
               {"--sort-by", V_SORT_BY},
               {"--kubeconfig", V_FILE},
               {"--certificate-authority", V_FILE},
               {"--client-certificate", V_FILE},
               {"--client-key", V_FILE}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strlen(map[i].name) == len && strncmp(map[i].name, flag, len) == 0)
            return map[i].kind;
    return V_NONE;
}

/* Complete the value of a flag of kind k; returns the directive. */
static int complete_value(enum value_kind k, const struct plugin_args *a,
                          const struct complete_source *src, struct cands *c)
{
    static const char *const lists[] = {
        [V_CONTEXT] = "contexts", [V_CLUSTER] = "clusters", [V_USER] = "users"};
    switch (k) {
    case V_FILE:
        return COMPLETE_DIRECTIVE_DEFAULT;
    case V_OUTPUT:
        add_desc(c, "wide", "adds PHASE, NODE, SOURCE and DETAIL");
        add_desc(c, "json", NULL);
        add_desc(c, "yaml", NULL);
        add_desc(c, "name", NULL);
        add_desc(c, "custom-columns=", "HEADER:PATH,...");
        add_desc(c, "jsonpath=", "a kubectl JSONPath template");
        add_desc(c, "jsonpath-as-json=", "a kubectl JSONPath template");
        break;
    case V_SORT_BY:
        add_desc(c, ".metadata.name", NULL);
        add_desc(c, ".metadata.namespace", NULL);
        add_desc(c, ".metadata.creationTimestamp", NULL);
        add_desc(c, ".status.cause", NULL);
        add_desc(c, ".status.blockedSince", NULL);
        add_desc(c, ".status.nodeName", NULL);
        break;
    case V_NAMESPACE:
        src->list(src->ctx, a, "namespaces", NULL, add_name, c);
        break;
    case V_CONTEXT:
    case V_CLUSTER:
    case V_USER:
        src->list(src->ctx, a, lists[k], NULL, add_name, c);
        break;
    case V_NONE:
        break;
    }
    return COMPLETE_DIRECTIVE_NO_FILE_COMP;
}

static void complete_flags(struct cands *c)
{
    static const char *const own[] = {
        "--all-namespaces", "--field-selector", "--gpu-device-classes",
        "--gpu-resources",  "--help",           "--kubeconfig",
        "--namespace",      "--no-headers",     "--no-scheduler-grace-period",
        "--output",         "--resource",       "--selector",
        "--show-labels",    "--sort-by",        "--v",
        "--version",        "--watch"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        add_desc(c, own[i], NULL);
    char names[32][40];
    for (size_t i = 0; i < kubeflags_count && i < 32; i++) {
        snprintf(names[i], sizeof(names[i]), "--%s", kubeflags[i].name);
        add_desc(c, names[i], NULL);
    }
}

int plugin_complete(int argc, char *const *argv, const struct complete_source *src, struct buf *out)
{
    const char *word = argc > 1 ? argv[argc - 1] : "";
    struct plugin_args a;
    char err[256];
    /* The flags and positionals before the word (errors are fine: the line is unfinished). */
    plugin_parse_args(argc > 1 ? argc - 1 : 1, argv, &a, err, sizeof(err));
    a.ov.ns = a.ns;
    struct cands c = {.out = out, .prefix = word, .lead = ""};
    int directive = COMPLETE_DIRECTIVE_NO_FILE_COMP;
    const char *prev = argc > 2 ? argv[argc - 2] : NULL;
    bool prev_wants_value = prev && plugin_flag_takes_value(prev);

    /* "-n" is a flag needing a value, unless it is itself the value of the flag before it. */
    if (prev_wants_value && !(argc > 3 && plugin_flag_takes_value(argv[argc - 3]))) {
        directive = complete_value(value_kind(prev, strlen(prev)), &a, src, &c);
    } else if (word[0] == '-' && word[1] == '-' && strchr(word, '=')) {
        /* "--context=pr": complete the value after the '='. */
        size_t fl = (size_t)(strchr(word, '=') - word);
        char lead[64];
        snprintf(lead, sizeof(lead), "%.*s=", (int)(fl < 60 ? fl : 60), word);
        c.lead = lead;
        c.prefix = word + fl + 1;
        directive = complete_value(value_kind(word, fl), &a, src, &c);
    } else if (word[0] == '-') {
        complete_flags(&c);
    } else if (a.npos == 0) {
        add_desc(&c, "pods", "GPU pods that have not started, and why");
        add_desc(&c, "explain", "one pod's cause and every node's step on the ladder");
        add_desc(&c, "nodes", "per node: GPU capacity, use, holders, and why free ones wait");
        add_desc(&c, "help", "show the help");
        add_desc(&c, "version", "print the version");
    } else if (a.npos == 1 && strcmp(a.pos[0], "explain") == 0) {
        src->list(src->ctx, &a, "pods", a.ns, add_name, &c);
    }
    if (c.rc)
        return c.rc;
    return buf_printf(out, ":%d\n", directive);
}

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

void complete_kube_list(void *ctx, const struct plugin_args *a, const char *what, const char *ns,
                        void (*add)(void *add_ctx, const char *name), void *add_ctx)
{
    if (strcmp(what, "namespaces") != 0 && strcmp(what, "pods") != 0) {
        kube_config_names(a->kubeconfig, what, add, add_ctx);
        return;
    }
    struct kube_config cfg = {0};
    struct kube_client *c = ctx;
    if (!c) {
        struct kube_config_overrides ov = a->ov;
        if (!ov.request_timeout)
            ov.request_timeout = COMPLETE_TIMEOUT;
        char err[512];
        if (kube_config_load_overrides(a->kubeconfig, &ov, &cfg, err, sizeof(err)) != K_OK)
            return;
        c = kube_client_new(&cfg, "kubectl_complete-gputri/" GPUTRI_VERSION);
    }
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
    if (c != ctx)
        kube_client_free(c);
    kube_config_cleanup(&cfg);
}
