/*
 * commands.h - gputri-certs' command line: `generate` makes the webhook's CA and serving
 * certificate (certgen.h) and writes them to files, a kubernetes.io/tls Secret and the
 * ValidatingWebhookConfiguration's caBundle (publish.h); `inspect` prints what a PEM file holds.
 * `help` and `version` answer; the common flags (util/flags.h: --v, --kubeconfig, -h, --version)
 * go before or after the command. certs/main.c only hands this the process's streams, as
 * cert-manager's cmd/<program>/main.go hands its command to the app package.
 */
#ifndef GPUTRI_CERTS_COMMANDS_H
#define GPUTRI_CERTS_COMMANDS_H

#include <stdio.h>
#include <time.h>

#include "kube/client.h"

/* Where a run writes and what it would otherwise take from the process. */
struct certs_io {
    FILE *out; /* results ("wrote ...", inspect's fields); help and --version go to stdout */
    FILE *err; /* errors and warnings, one line each, "gputri-certs: " first */
    /* borrowed; NULL: --secret/--webhook-config make a client from the kubeconfig */
    struct kube_client *client;
    time_t now; /* seconds since the epoch for validity; 0: time(NULL) */
};

/*
 * certs_main() - run the command line argv[0..argc) (argv[0] the program). Returns the exit
 * status: 0 done, 1 failed, 2 usage error. Writes files under --out-dir (keys mode 0600, each
 * replaced atomically) and, with --secret/--webhook-config, the cluster. Uses getopt (global
 * state): not thread-safe; it may be called again in the same process.
 */
int certs_main(int argc, char **argv, const struct certs_io *io);

#endif
