/*
 * tls_source.h - the serving certificate and key, read from PEM files and re-read when they
 * change, for libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK (GnuTLS
 * gnutls_certificate_retrieve_function2; libmicrohttpd 0.9.75 src/microhttpd/daemon.c wires it
 * with gnutls_certificate_set_retrieve_function2).
 *
 * A loaded pair is an immutable "generation" (gnutls_pcert_st[] + gnutls_privkey_t) published
 * through an atomic pointer; GnuTLS only reads what the callback returns and never frees it
 * (gnutls_certificate_set_retrieve_function2(3)). The callback checks the files' identity
 * (device, inode, size, mtime in ns) at most once per second; when either file changed it loads
 * both, checks that the key belongs to the leaf certificate, and publishes the new generation.
 * A pair that fails to load or does not match is logged once and the old pair keeps serving
 * (a writer replacing cert and key one after the other is picked up once both are in place).
 * Replaced generations stay allocated for TLS_SOURCE_RETIRE_SECONDS (far above any handshake,
 * which the connection timeout bounds) and are freed afterwards or at tls_source_free().
 *
 * Thread-safety: tls_source_retrieve() and tls_source_check() may run concurrently from any
 * number of MHD threads; tls_source_new/free/install must not race with them.
 */
#ifndef GPUTRI_HTTP_TLS_SOURCE_H
#define GPUTRI_HTTP_TLS_SOURCE_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/clock.h"

#define TLS_SOURCE_MAX_FILE (1u << 20) /* PEM files above 1 MiB are refused */
#define TLS_SOURCE_MAX_CHAIN 16        /* certificates in the chain file */
#define TLS_SOURCE_RETIRE_SECONDS 300
#define TLS_SOURCE_SELF_SIGNED_DAYS 365

struct tls_source;

/*
 * tls_source_new() - load cert_file and key_file (paths copied). Returns K_OK and *out, or
 * K_ENOTFOUND / K_EINVAL (unreadable file, bad PEM, key not matching the certificate) /
 * K_ETOOBIG / K_ENOMEM with a one-line reason in err.
 */
int tls_source_new(const char *cert_file, const char *key_file, struct tls_source **out, char *err,
                   size_t errlen);

/*
 * tls_source_new_self_signed() - a source with a certificate made in memory, never re-read: a
 * new ECDSA P-256 key and a self-signed certificate (CN `cn`, SANs dns[0..n_dns), serverAuth,
 * valid from 5 minutes ago for TLS_SOURCE_SELF_SIGNED_DAYS), as controller-runtime's metrics
 * server makes one when given no certificate (kubernetes-sigs/controller-runtime:
 * pkg/metrics/server/server.go, CertDir empty: certutil.GenerateSelfSignedCertKeyWithFixtures).
 * Clients cannot verify it against a CA they know; Prometheus scrapes it with
 * insecure_skip_verify. Returns K_OK and *out, K_EIO (GnuTLS refused) or K_ENOMEM with err.
 */
int tls_source_new_self_signed(const char *cn, const char *const *dns, size_t n_dns,
                               struct tls_source **out, char *err, size_t errlen);

/*
 * tls_source_set_pem() - publish a new pair given as PEM text (cert_pem: leaf first; key_pem:
 * its private key; both borrowed, NUL-terminated), for a source whose pair is not read from
 * files (tls_source_new_self_signed): the webhook's in-cluster certificates (webhook/selfcert.h)
 * replace the self-signed start-up pair this way, and every rotation after it. The key must
 * belong to the leaf. The replaced pair retires as on a file reload. Returns K_OK (published),
 * K_EINVAL (bad PEM, key not matching; the old pair stays; reason in err), K_ENOMEM, or
 * K_EINVAL for a file-backed source. Thread-safe (with the callback and itself).
 */
int tls_source_set_pem(struct tls_source *s, const char *cert_pem, const char *key_pem, char *err,
                       size_t errlen);

/*
 * tls_source_set_clock() - read time from `clock` (borrowed: it must outlive the source; NULL:
 * the system clock) for the once-a-second check and the retirement of replaced pairs, e.g. a
 * fake one in tests. The next check may come at once. Thread-safe.
 */
void tls_source_set_clock(struct tls_source *s, const struct clock *clock);

/*
 * tls_source_check() - reload when the files changed. Without `force` it does nothing when the
 * last check was less than a second ago. Returns 1 when a new pair was published, 0 when
 * nothing changed or the new pair failed to load (the old one stays). Thread-safe.
 */
int tls_source_check(struct tls_source *s, bool force);

/* tls_source_generation() - how many pairs were published so far (1 after new). Thread-safe. */
unsigned long tls_source_generation(struct tls_source *s);

/*
 * tls_source_install() - make `s` the source tls_source_retrieve() serves from (the GnuTLS
 * callback has no user pointer, so there is one per process). NULL uninstalls. Call before
 * starting the daemon and after stopping it.
 */
void tls_source_install(struct tls_source *s);

/*
 * tls_source_retrieve() - the gnutls_certificate_retrieve_function2 to pass as
 * MHD_OPTION_HTTPS_CERT_CALLBACK: checks for a reload (at most once a second) and returns the
 * current chain and key of the installed source (borrowed; GnuTLS does not free them).
 * Returns 0, or -1 when no source is installed (the handshake fails).
 */
int tls_source_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                        const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                        gnutls_pcert_st **pcert, unsigned int *pcert_length,
                        gnutls_privkey_t *privkey);

/* tls_source_free() - free every generation. Only after the daemon has stopped. NULL-safe. */
void tls_source_free(struct tls_source *s);

#endif
