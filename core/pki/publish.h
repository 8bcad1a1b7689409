/*
 * publish.h - put a generated certificate set into the cluster: the webhook's kubernetes.io/tls
 * Secret and the caBundle of its ValidatingWebhookConfiguration. Used by gputri-certs and
 * gputri-webhook (webhook/selfcert.c).
 *
 * All functions use a caller-owned struct kube_client (core/kube/client.h) and share its rules:
 * not thread-safe per client, every call returns a K_* value and fills *err with the HTTP status
 * and the API server's message. Nothing is printed.
 */
#ifndef GPUTRI_PKI_PUBLISH_H
#define GPUTRI_PKI_PUBLISH_H

#include <stdbool.h>

#include "kube/client.h"

#include "pki/certgen.h"

/*
 * publish_data() - a Secret's data object: keys[i] = base64(pems[i]) for i < n (all borrowed).
 * On K_OK *out is new (the caller puts it); K_ETOOBIG or K_ENOMEM otherwise.
 */
int publish_data(const char *const *keys, const char *const *pems, size_t n, json_object **out);

/*
 * publish_secret_pem() - the text of key `key` of a Secret's `data` object (borrowed; NULL
 * reads as absent) as written by publish_data(): base64-decoded into a new NUL-terminated string
 * the caller frees (free(); wipe it first when it is a key). NULL when the key is absent, not a
 * string, not base64, empty, holds a NUL byte (no PEM does) or memory ran out. Says nothing about
 * the PEM itself (certgen_first_pem, certgen_key_matches, ... read it). Pure, thread-safe.
 */
char *publish_secret_pem(json_object *data, const char *key);

/*
 * publish_new_tls_secret() - a new Secret object of type kubernetes.io/tls: namespace/name,
 * labels app.kubernetes.io/name=gputri, app.kubernetes.io/component=webhook and
 * app.kubernetes.io/managed-by=managed_by, and `data` (its reference is taken). The caller puts
 * the result.
 */
json_object *publish_new_tls_secret(const char *namespace_name, const char *name, json_object *data,
                                    const char *managed_by);

/*
 * publish_tls_secret() - create or update Secret namespace/name of type kubernetes.io/tls with
 * data tls.crt, tls.key and ca.crt from b (borrowed). An existing Secret of that type gets only
 * these three keys replaced (merge patch); other keys and metadata stay. *created tells which.
 * An existing Secret of another type returns K_EINVAL (the type is immutable) with a message in
 * err->message. Needs RBAC get, create and patch on secrets in the namespace.
 */
int publish_tls_secret(struct kube_client *c, const char *namespace_name, const char *name,
                       const struct certgen_bundle *b, bool *created, struct kube_error *err);

/*
 * publish_ca_bundle() - set webhooks[*].clientConfig.caBundle of ValidatingWebhookConfiguration
 * `name` to base64(ca_pem): GET the object, replace the caBundle in every webhook, and send the
 * whole webhooks list back in a merge patch carrying metadata.resourceVersion (a merge patch
 * replaces lists wholesale; the resourceVersion turns a concurrent change into 409, which is
 * retried from a fresh GET a few times). *n_webhooks is set to the number of webhooks updated.
 * A configuration without webhooks returns K_EINVAL. Needs RBAC get and patch on
 * validatingwebhookconfigurations.
 */
int publish_ca_bundle(struct kube_client *c, const char *name, const char *ca_pem, int *n_webhooks,
                      struct kube_error *err);

#endif
