/*
 * client_ca.h - the CA certificates a TLS client certificate must chain to (--client-ca-file),
 * read from a PEM file and re-read when it changes, and the verification of the chain a client
 * presented: what gputri-webhook uses to tell the API server (which presents the certificate of
 * its admission configuration, kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/config/kubeconfig.go) from anyone else
 * who reaches its port.
 *
 * Verification (client_ca_verify) follows Go's crypto/x509 as kube-apiserver's own
 * --client-ca-file does (kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go, Verify with
 * ExtKeyUsageClientAuth): the leaf must chain to one of the CAs (intermediates taken from the
 * presented chain), be within its validity period, and allow the TLS client purpose
 * (GNUTLS_KP_TLS_WWW_CLIENT; a certificate without extendedKeyUsage allows every purpose).
 * gnutls_x509_trust_list_verify_crt2 does the work.
 *
 * Reloading works as tls_source.h's: the file's identity (device, inode, size, mtime) is checked
 * at most once per second from client_ca_verify; a changed file is loaded and, when it holds at
 * least one certificate, replaces the CAs; a file that fails to load is logged once and the old
 * CAs stay. The CA names a server sends in its CertificateRequest stay those of the file read at
 * start (client_ca_pem); client-go's transport answers with its certificate whatever names are
 * asked for (kubernetes/kubernetes: staging/src/k8s.io/client-go/transport/transport.go,
 * GetClientCertificate), so a rotated CA still gets the API server's certificate.
 *
 * Thread-safety: client_ca_verify and client_ca_check may run concurrently from any thread (a
 * read-write lock guards the CAs); new/free must not race with them.
 */
#ifndef GPUTRI_WEBHOOK_CLIENT_CA_H
#define GPUTRI_WEBHOOK_CLIENT_CA_H

#include <stdbool.h>
#include <stddef.h>

#include "http/server.h"
#include "util/clock.h"

#define CLIENT_CA_MAX_FILE (1u << 20) /* PEM files above 1 MiB are refused */

struct client_ca;

/*
 * client_ca_new() - load the PEM CA certificates of `file` (path copied). Returns K_OK and *out,
 * or K_ENOTFOUND / K_EINVAL (unreadable, no certificate in it) / K_ETOOBIG / K_ENOMEM with a
 * one-line reason in err (errlen bytes).
 */
int client_ca_new(const char *file, struct client_ca **out, char *err, size_t errlen);

/*
 * client_ca_set_clock() - read time from `clock` (borrowed; NULL: the system clock) for the
 * once-a-second check; the next check may come at once. For tests.
 */
void client_ca_set_clock(struct client_ca *c, const struct clock *clock);

/*
 * client_ca_pem() - the PEM text read at start (NUL-terminated, owned by c, valid until
 * client_ca_free), for http_server_options.tls_client_trust_pem.
 */
const char *client_ca_pem(const struct client_ca *c);

/*
 * client_ca_check() - reload when the file changed; without `force` at most once a second.
 * Returns 1 when new CAs were taken, 0 otherwise (unchanged, or failed and logged).
 */
int client_ca_check(struct client_ca *c, bool force);

/* client_ca_generation() - how many CA sets were loaded so far (1 after new). */
unsigned long client_ca_generation(struct client_ca *c);

/*
 * client_ca_verify() - an http_client_verify_fn (ctx = the client_ca): whether `chain` (DER,
 * leaf first, n >= 1, at most HTTP_MAX_PEER_CHAIN) verifies against the current CAs for TLS
 * client authentication, as above. Checks for a reload first. A chain that does not parse is
 * false.
 */
bool client_ca_verify(void *ctx, const struct http_peer_cert *chain, unsigned n);

/* client_ca_free() - free. NULL-safe. */
void client_ca_free(struct client_ca *c);

#endif
