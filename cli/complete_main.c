/*
 * complete_main.c - kubectl_complete-gputri: prints completions for `kubectl gputri ...` as
 * kubectl asks a plugin for them (cli/complete.h). Names come from the kubeconfig and, for
 * namespaces and pods, from the API server with the flags on the line (--context, -s, --token,
 * ...), each request limited to 5 s unless --request-timeout says otherwise. Any failure gives
 * no names, never an error: a completion must not print to the terminal.
 */
#include <stdio.h>

#include "complete.h"
#include "util/result.h"

int main(int argc, char **argv)
{
    struct complete_source src = {.list = complete_kube_list};
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
