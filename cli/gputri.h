/*
 * gputri.h - the gputri command line: `gputri triage|explain NAMESPACE POD` or `-n NAMESPACE POD`
 * (triage.h; flags parsed as kubectl parses them: one dash is a letter, long flags in full),
 * `help`, `version`, the common flags (util/flags.h), --gpu-device-classes,
 * --no-scheduler-grace-period and kubectl's global flags (kubeflags.h). The namespace and the
 * pod name are checked as the API server validates object names (kubernetes/apimachinery:
 * pkg/util/validation/validation.go IsDNS1123Label, IsDNS1123Subdomain) before anything is
 * read. cli/main.c only hands this the process's streams, as cert-manager's cmd/<program>/main.go
 * hands its command to the app package.
 */
#ifndef GPUTRI_CLI_GPUTRI_H
#define GPUTRI_CLI_GPUTRI_H

#include <stdio.h>

#include "kube/client.h"

/* Where a run writes and what it would otherwise make itself. */
struct gputri_io {
    FILE *out; /* the answer (the cause word, or the explain report) and `help`/`version` */
    FILE *err; /* errors, one line each, "gputri: " first; -h/--help and --version use stdout */
    /* borrowed; NULL: a client from the kubeconfig and kubectl's flags */
    struct kube_client *client;
};

/*
 * gputri_main() - run the command line argv[0..argc). Returns the exit status: 0 answered, 1 the
 * pod does not exist or the API could not be read, 2 usage error. Uses getopt (global state):
 * not thread-safe; it may be called again in the same process.
 */
int gputri_main(int argc, char **argv, const struct gputri_io *io);

#endif
