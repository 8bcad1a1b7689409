/*
 * plugin.h - the kubectl-gputri command line, the kubectl plugin: `kubectl gputri pods` lists the
 * GPU pods that have not started and why (pods.h); `kubectl gputri explain POD` shows the per-node
 * ladder (triage.h). Arguments as args.h parses them. cli/plugin_main.c only hands this the
 * process's streams, as cert-manager's cmd/<program>/main.go hands its command to the app package.
 */
#ifndef GPUTRI_CLI_PLUGIN_H
#define GPUTRI_CLI_PLUGIN_H

#include <stdio.h>

#include "kube/client.h"

/* Where a run writes and what it would otherwise make itself. */
struct plugin_io {
    FILE *out; /* the table, JSON or explain report, and `help`/`version` */
    FILE *err; /* errors, "error: " first as kubectl writes them; "No GPU pods waiting..." */
    /* borrowed; NULL: a client from the kubeconfig and kubectl's flags */
    struct kube_client *client;
};

/*
 * plugin_main() - run the command line argv[0..argc). Returns the exit status: 0 done, 1 error
 * (API server, kubeconfig, pod not found), 2 usage. Not thread-safe (the verbosity of
 * util/log.h is global); it may be called again in the same process.
 */
int plugin_main(int argc, char **argv, const struct plugin_io *io);

#endif
