/*
 * kubeflags.h - kubectl's global flags for gputri and kubectl-gputri, spelled and applied as
 * kubectl does (kubernetes/client-go: tools/clientcmd/overrides.go RecommendedConfigOverrideFlags,
 * kubernetes/kubernetes: staging/src/k8s.io/cli-runtime/pkg/genericclioptions/config_flags.go):
 * --context, --cluster, --user, -s/--server, --token, --certificate-authority,
 * --client-certificate, --client-key, --insecure-skip-tls-verify, --tls-server-name,
 * --request-timeout, --as, --as-group (repeatable), --as-uid. -n/--namespace belongs to the
 * plugin's own table (cli/args.c): gputri takes the namespace as an argument.
 * The values go into a struct kube_config_overrides (kube/config.h), which
 * kube_config_load_overrides() applies with clientcmd's rules.
 */
#ifndef GPUTRI_CLI_KUBEFLAGS_H
#define GPUTRI_CLI_KUBEFLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kube/config.h"

/* getopt_long ids (above the programs' own ids) of the flags, in kubeflags[] order. */
enum kubeflag_id {
    KF_CONTEXT = 0x300,
    KF_CLUSTER,
    KF_USER,
    KF_SERVER,
    KF_TOKEN,
    KF_CA,
    KF_CERT,
    KF_KEY,
    KF_INSECURE,
    KF_TLS_SERVER_NAME,
    KF_REQUEST_TIMEOUT,
    KF_AS,
    KF_AS_GROUP,
    KF_AS_UID,
};

struct kubeflag {
    const char *name; /* long name without "--" */
    char shorthand;   /* 0 when none */
    bool takes_value; /* false: a boolean (--flag, --flag=true|false) */
    enum kubeflag_id id;
    const char *arg;  /* the value's name in --help */
    const char *help; /* kubectl's description, shortened */
};

extern const struct kubeflag kubeflags[];
extern const size_t kubeflags_count;

/* The `struct option` rows for getopt_long (needs <getopt.h>), for gputri's table. */
#define KUBEFLAGS_LONGOPTS                                                                         \
    {"context", required_argument, NULL, KF_CONTEXT},                                              \
        {"cluster", required_argument, NULL, KF_CLUSTER},                                          \
        {"user", required_argument, NULL, KF_USER},                                                \
        {"server", required_argument, NULL, KF_SERVER},                                            \
        {"token", required_argument, NULL, KF_TOKEN},                                              \
        {"certificate-authority", required_argument, NULL, KF_CA},                                 \
        {"client-certificate", required_argument, NULL, KF_CERT},                                  \
        {"client-key", required_argument, NULL, KF_KEY},                                           \
        {"insecure-skip-tls-verify", optional_argument, NULL, KF_INSECURE},                        \
        {"tls-server-name", required_argument, NULL, KF_TLS_SERVER_NAME},                          \
        {"request-timeout", required_argument, NULL, KF_REQUEST_TIMEOUT},                          \
        {"as", required_argument, NULL, KF_AS},                                                    \
        {"as-group", required_argument, NULL, KF_AS_GROUP},                                        \
    {                                                                                              \
        "as-uid", required_argument, NULL, KF_AS_UID                                               \
    }

/* kubeflag_find() - the flag with long name name[0..len), or NULL. Thread-safe. */
const struct kubeflag *kubeflag_find(const char *name, size_t len);

/* kubeflag_find_short() - the flag with shorthand c (-s), or NULL. Thread-safe. */
const struct kubeflag *kubeflag_find_short(char c);

/*
 * kubeflag_set() - store flag `id`'s value (borrowed; NULL for a boolean given bare) into *ov.
 * `shown` is the flag as written, for messages. Returns 0, or -1 with a one-line reason in err
 * (errlen bytes): an empty value where a name, path or URL is needed, a boolean that is not
 * true/false, more than KUBE_AS_GROUPS_MAX --as-group. --request-timeout's syntax is checked
 * by kube_config_load_overrides(), as kubectl checks it when it builds the client.
 * Not thread-safe for one ov.
 */
int kubeflag_set(struct kube_config_overrides *ov, enum kubeflag_id id, const char *value,
                 const char *shown, char *err, size_t errlen);

/*
 * kubeflags_usage() - the flags' --help lines, as `kubectl options` lists them, with the
 * descriptions at column `col` (32 keeps every line within 80 columns; a longer flag puts its
 * description on the next line). Writes `out`.
 */
void kubeflags_usage(FILE *out, int col);

#endif
