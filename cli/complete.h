/*
 * complete.h - shell completion for the kubectl plugin, as kubectl asks a plugin for it:
 * kubectl (1.26+) runs `kubectl_complete-gputri ARGS... TOCOMPLETE` - the words after
 * `kubectl gputri`, then the word being completed (possibly "") - and expects cobra's __complete
 * output: one completion per line (an optional TAB and description after it), then a line
 * ":N" with cobra's ShellCompDirective (kubernetes/kubernetes:
 * staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go; spf13/cobra: completions.go).
 * N is 4 (ShellCompDirectiveNoFileComp) except for a flag whose value is a file (--kubeconfig,
 * --certificate-authority, --client-certificate, --client-key): 0 (Default: the shell completes
 * file names).
 *
 * What completes: the commands (pods, explain, help, version); flags (a word starting with
 * '-'); -o values; the names in the kubeconfig for --context, --cluster and --user; namespaces
 * for -n/--namespace and pod names for `explain`, asked of the API server through `src`. Both
 * "--flag value" and "--flag=value" are handled.
 */
#ifndef GPUTRI_CLI_COMPLETE_H
#define GPUTRI_CLI_COMPLETE_H

#include "args.h"
#include "util/buf.h"

/* cobra's ShellCompDirective values used here. */
#define COMPLETE_DIRECTIVE_DEFAULT 0
#define COMPLETE_DIRECTIVE_NO_FILE_COMP 4

/* Candidates written at most; the names a source gives beyond them are dropped. */
#define COMPLETE_MAX_CANDIDATES 2048

/* What a completion needs from outside: names from the kubeconfig and the API server. */
struct complete_source {
    void *ctx;
    /*
     * list() - call add(add_ctx, name) for each name of `what`: "contexts", "clusters", "users"
     * (kubeconfig), "namespaces" or "pods" (API server; pods of namespace `ns`). `a` holds the
     * flags on the line so far (kubeconfig, context, server, ...). Errors are ignored: no names.
     */
    void (*list)(void *ctx, const struct plugin_args *a, const char *what, const char *ns,
                 void (*add)(void *add_ctx, const char *name), void *add_ctx);
};

/*
 * plugin_complete() - the completion output for argv[1..argc-1] (the last one being the word to
 * complete; argc 1 means an empty word) into out: the candidates that start with that word,
 * each once, in order, at most COMPLETE_MAX_CANDIDATES of them (a server that sends more names
 * than asked for costs no more), then ":N\n". Returns K_OK, or K_ENOMEM / K_ETOOBIG from out. Only
 * `src->list` does I/O.
 */
int plugin_complete(int argc, char *const *argv, const struct complete_source *src,
                    struct buf *out);

/* The timeout and page size of complete_kube_list()'s requests. */
#define COMPLETE_TIMEOUT "5s" /* unless --request-timeout says otherwise */
#define COMPLETE_PAGE 500     /* one page: a completion shows no more */

/*
 * complete_kube_list() - the complete_source.list of kubectl_complete-gputri: kubeconfig names
 * from the kubeconfig (kube_config_names()); namespaces and pods from the API server with one
 * LIST of at most COMPLETE_PAGE items (pods of `ns`, else of the context's namespace, else
 * "default"). `ctx` is the client to use (struct kube_client *, borrowed), or NULL to make one
 * from the kubeconfig and the flags in `a`, each request limited to COMPLETE_TIMEOUT unless
 * --request-timeout says otherwise. Any failure gives no names. Not thread-safe per client.
 */
void complete_kube_list(void *ctx, const struct plugin_args *a, const char *what, const char *ns,
                        void (*add)(void *add_ctx, const char *name), void *add_ctx);

#endif
