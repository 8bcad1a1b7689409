/*
 * selfcert.h - gputri-webhook's own CA and serving certificate, kept in a Secret of the cluster
 * (gputri-webhook --cert-secret NS/NAME --webhook-configuration NAME), as Gatekeeper and Kyverno
 * manage theirs: no step outside the cluster, no cert-manager needed.
 *
 * A thread checks the Secret at start and then before each rotation point (and at least every
 * check interval):
 *   - missing, incomplete, a key that does not fit, or a CA that is no longer valid: a new CA and
 *     serving certificate (core/pki/certgen.h) are created (POST; a replica that gets 409
 *     AlreadyExists re-reads and uses the winner's);
 *   - the CA past 2/3 of its lifetime: a new CA is put first in the bundle ca.crt, the old one
 *     stays after it until it expires; the serving certificate is kept for now;
 *   - a serving certificate not signed by the bundle's first CA, once that CA has been in the
 *     webhook configuration's caBundle for settle_ms (so that the API server trusts it before any
 *     replica serves a certificate it signed), or one past 2/3 of its lifetime, or not valid for
 *     the Service's name: a new serving certificate signed by the first CA;
 *   - CAs of the bundle that have expired are dropped.
 * Every change is a PUT carrying the resourceVersion that was read (optimistic concurrency): a
 * replica that loses gets 409, re-reads and decides again. Then the caBundle of every webhook of
 * the ValidatingWebhookConfiguration is set to the Secret's ca.crt when it differs
 * (core/pki/publish.h: GET + merge patch with resourceVersion), and the serving pair is handed
 * to the TLS source (core/http/tls_source.h tls_source_set_pem), without a restart.
 * Secret data: tls.crt, tls.key (serving pair), ca.crt (the bundle: current CA first), ca.key
 * (the current CA's key); type kubernetes.io/tls. Certificates: ECDSA P-256, notBefore
 * backdated by a quarter of the lifetime up to 5 minutes.
 *
 * selfcert_ready() is true once the pair served is one the caBundle (as last read or written)
 * trusts for <service>.<namespace>.svc: the webhook's /readyz.
 *
 * RBAC: secrets get and update on that name and create in its namespace (create cannot be
 * limited to a name: the name is in the body); validatingwebhookconfigurations get and patch
 * on that name.
 *
 * Thread-safety: selfcert_ready(), selfcert_metrics() and selfcert_stats() from any thread; the
 * rest from the owner's thread. selfcert_reconcile() must not run while the thread does.
 */
#ifndef GPUTRI_WEBHOOK_SELFCERT_H
#define GPUTRI_WEBHOOK_SELFCERT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "http/tls_source.h"
#include "kube/client.h"
#include "util/clock.h"

#define SELFCERT_CHECK_MS (5 * 60 * 1000) /* the longest between two checks */
#define SELFCERT_RETRY_MS 5000            /* after a failure, or while waiting on the caBundle */
#define SELFCERT_SETTLE_MS 5000           /* a new CA in the caBundle before its leaf is served */
#define SELFCERT_DEFAULT_CA_VALIDITY_S (10LL * 365 * 86400)
#define SELFCERT_DEFAULT_CERT_VALIDITY_S (365LL * 86400)
#define SELFCERT_MIN_VALIDITY_S 60
#define SELFCERT_MAX_BUNDLE 4 /* CAs in ca.crt (current and still valid old ones) */
#define SELFCERT_ATTEMPTS 4   /* reads and writes of the Secret per pass when others win */

struct selfcert_options {
    const char *secret_namespace; /* the Secret's namespace, also the Service's */
    const char *secret_name;
    const char *webhook_configuration;     /* ValidatingWebhookConfiguration name */
    const char *service;                   /* Service name: the certificate's DNS names */
    int64_t ca_validity_s;                 /* 0: SELFCERT_DEFAULT_CA_VALIDITY_S */
    int64_t cert_validity_s;               /* 0: SELFCERT_DEFAULT_CERT_VALIDITY_S */
    int64_t check_ms, retry_ms, settle_ms; /* 0: the defaults above */
    const struct clock *clock;             /* borrowed; NULL: the system clocks */
};

/* What this replica did, for /metrics and tests. */
struct selfcert_stats {
    unsigned long long created;   /* Secrets created (new CA and serving certificate) */
    unsigned long long ca;        /* CA rotations written */
    unsigned long long serving;   /* serving certificates written (rotation or new CA) */
    unsigned long long conflicts; /* writes lost to another writer (409), re-read */
    unsigned long long bundles;   /* caBundle updates of the webhook configuration */
    unsigned long long errors;    /* passes that failed (retried after retry_ms) */
    int64_t serving_not_after;    /* of the pair served, seconds since the epoch; 0: none */
    int64_t ca_not_after;         /* of the bundle's first CA; 0: none */
};

struct selfcert;

/*
 * selfcert_new() - validate the options (copied) and take ownership of `client` (freed by
 * selfcert_free, also on failure); `tls` is borrowed and must outlive it (a source made with
 * tls_source_new_self_signed, serving until the first pair is known). Returns K_OK and *out,
 * K_EINVAL (a name missing or invalid, a lifetime below SELFCERT_MIN_VALIDITY_S) with the
 * reason in err, or K_ENOMEM.
 */
int selfcert_new(const struct selfcert_options *o, struct kube_client *client,
                 struct tls_source *tls, struct selfcert **out, char *err, size_t errlen);

/* selfcert_start() - start the thread (a pass at once). Returns K_OK or K_ENOMEM. Once. */
int selfcert_start(struct selfcert *s);

/*
 * selfcert_reconcile() - one pass (the thread's loop body): read and fix the Secret, the
 * caBundle, and the pair served. *next_ms is when the next pass is due, in ms from now.
 * Returns K_OK or the K_* of the request that failed (next_ms is then retry_ms).
 */
int selfcert_reconcile(struct selfcert *s, int64_t *next_ms);

/* selfcert_ready() - the pair served is trusted by the webhook configuration's caBundle. */
bool selfcert_ready(const struct selfcert *s);

void selfcert_stats(const struct selfcert *s, struct selfcert_stats *out);

/*
 * selfcert_metrics() - Prometheus text lines: gputri_webhook_certificate_not_after_seconds
 * {certificate="serving"|"ca"} (gauges) and gputri_webhook_certificate_writes_total{what=
 * "created"|"ca"|"serving"|"conflict"|"ca_bundle"} (counters). NULL-safe (writes nothing).
 */
void selfcert_metrics(const struct selfcert *s, FILE *f);

/* selfcert_free() - stop and join the thread, free everything. NULL-safe. */
void selfcert_free(struct selfcert *s);

#endif
