/*
 * kubens.h - the namespace kubectl uses when no -n is given.
 *
 * core/kube/config.h finds the server and credentials but not the context's namespace, so the
 * plugin reads it here, from the same sources in the same order (kubernetes/client-go:
 * tools/clientcmd/loader.go and client_config.go Namespace()):
 *   1. the --kubeconfig file;
 *   2. $KUBECONFIG, ':'-separated: current-context from the first file that sets it, the context
 *      from the first file that defines it;
 *   3. in-cluster ($KUBERNETES_SERVICE_HOST and _PORT set): $POD_NAMESPACE, else the service
 *      account's namespace file ($GPUTRI_SERVICEACCOUNT_DIR or
 *      /var/run/secrets/kubernetes.io/serviceaccount, file "namespace");
 *   4. ~/.kube/config.
 * contexts[name=current-context].context.namespace when set and not empty, else "default".
 */
#ifndef GPUTRI_CLI_KUBENS_H
#define GPUTRI_CLI_KUBENS_H

#include <stddef.h>

/*
 * kubeconfig_namespace() - write the default namespace into out (outlen bytes, NUL-terminated).
 * explicit_path: the --kubeconfig flag or NULL. Files that are missing or do not parse count as
 * not setting anything (kube_config_load() reports those). Returns K_OK, or K_ETOOBIG when the
 * name does not fit (out then holds "default"). Reads the environment: call before threads.
 */
int kubeconfig_namespace(const char *explicit_path, char *out, size_t outlen);

#endif
