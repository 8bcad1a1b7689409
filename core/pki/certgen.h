/*
 * certgen.h - the serving certificate of the gputri admission webhook and the CA that signs it,
 * made with the OpenSSL 3 C API. Used by gputri-certs (certs/commands.c) and gputri-webhook's
 * in-cluster certificates (webhook/selfcert.c).
 *
 * Family rules: every function returns a K_* value (util/result.h) and, on failure, writes a
 * one-line English reason into the caller's err buffer (errlen bytes, always NUL-terminated;
 * err may be NULL). Nothing here prints, exits or keeps global state, so all functions are
 * thread-safe (OpenSSL 3 initialises itself). Strings handed to the caller are heap-allocated
 * NUL-terminated PEM or text and are released with the matching *_cleanup() function.
 */
#ifndef GPUTRI_PKI_CERTGEN_H
#define GPUTRI_PKI_CERTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define CERTGEN_BACKDATE_SECONDS 300    /* notBefore = now - 5 min: tolerate clock skew */
#define CERTGEN_MAX_DAYS 36500          /* 100 years; larger lifetimes are refused */
#define CERTGEN_MAX_PEM_FILE (1u << 20) /* certgen_read_file() refuses larger files */
#define CERTGEN_MAX_SANS 64             /* DNS + IP names in one serving certificate */
#define CERTGEN_DEFAULT_CA_DAYS 3650
#define CERTGEN_DEFAULT_CERT_DAYS 365

enum certgen_key_type {
    CERTGEN_KEY_ECDSA_P256 = 0, /* the default: small, fast, accepted by Go and GnuTLS */
    CERTGEN_KEY_RSA_2048,
    CERTGEN_KEY_RSA_3072,
    CERTGEN_KEY_ED25519,
};

/*
 * certgen_key_type_parse() - "ecdsa-p256", "rsa-2048", "rsa-3072" or "ed25519" into *out.
 * Returns K_OK or K_EINVAL.
 */
int certgen_key_type_parse(const char *s, enum certgen_key_type *out);

/* certgen_key_type_name() - the flag spelling of t; a static string, never NULL. */
const char *certgen_key_type_name(enum certgen_key_type t);

/*
 * What to generate. All pointers are borrowed for the duration of certgen_generate().
 *
 * service and namespace (both or neither) add the SANs svc, svc.ns, svc.ns.svc and
 * svc.ns.svc.cluster.local; dns[] and ips[] add more (duplicates are dropped). At least one
 * SAN is required. With ca_cert_pem and ca_key_pem set (both or neither), that CA signs the new
 * serving certificate and is passed through unchanged (renewal); otherwise a new CA is made.
 * now is the clock (time(NULL) in production; fixed in tests).
 */
struct certgen_options {
    enum certgen_key_type key_type; /* of the new keys; a reused CA keeps its own */
    const char *service;            /* Service name (DNS-1035 label) or NULL */
    const char *namespace_name;     /* its namespace (DNS-1123 label) or NULL */
    const char *const *dns;         /* extra DNS SANs; n_dns entries */
    size_t n_dns;
    const char *const *ips; /* extra IP SANs, IPv4 or IPv6 text; n_ips entries */
    size_t n_ips;
    int ca_days;             /* lifetime of a new CA, 1..CERTGEN_MAX_DAYS */
    int cert_days;           /* lifetime of the serving certificate, 1..CERTGEN_MAX_DAYS */
    const char *ca_cert_pem; /* existing CA certificate (PEM) or NULL; more certificates may
                              * follow the CA (e.g. an old CA during rotation): the first one
                              * signs, and the whole text is passed through as ca_cert_pem */
    const char *ca_key_pem;  /* its private key (PEM, unencrypted) or NULL */
    /* also a client certificate with this CN (e.g. "kube-apiserver") signed by the same CA, for
     * the API server to present to the webhook (gputri-webhook --client-ca-file ca.crt); NULL:
     * none. At most 64 characters. */
    const char *client_cn;
    time_t now;
    /* lifetimes in seconds, for short-lived certificates (gputri-webhook --cert-validity); when
     * above 0 they replace ca_days / cert_days. 60..CERTGEN_MAX_DAYS days. */
    int64_t ca_seconds, cert_seconds;
    /* notBefore = now - backdate_seconds (0..CERTGEN_BACKDATE_SECONDS; init: the maximum) */
    int backdate_seconds;
};

/*
 * certgen_options_init() - defaults: ECDSA P-256, 3650/365 days, no names, now = time(NULL),
 * backdate CERTGEN_BACKDATE_SECONDS.
 */
void certgen_options_init(struct certgen_options *o);

/*
 * The four PEM documents of a generated set, each owned by the struct.
 * Keys are unencrypted PKCS#8 ("BEGIN PRIVATE KEY"); certificates are single X.509 certs
 * (tls_cert_pem holds only the leaf; clients trust ca_cert_pem through the caBundle).
 */
struct certgen_bundle {
    char *ca_cert_pem;
    char *ca_key_pem;
    char *tls_cert_pem;
    char *tls_key_pem;
    char *client_cert_pem; /* with certgen_options.client_cn, else NULL */
    char *client_key_pem;
    bool ca_reused;         /* the CA came from certgen_options.ca_cert_pem */
    bool not_after_clamped; /* the serving cert was shortened to end with the CA */
    time_t tls_not_after;
    time_t ca_not_after;
};

/*
 * certgen_options_check() - validate lifetimes, key type, service, namespace, DNS names and IPs
 * without generating anything (certgen_generate() checks the same first). Does not look at the
 * CA. Returns K_OK, or K_EINVAL with the reason in err (K_ENOMEM on allocation failure).
 */
int certgen_options_check(const struct certgen_options *o, char *err, size_t errlen);

/*
 * certgen_generate() - make a serving key and certificate and, unless one is given, a CA.
 *
 * CA: self-signed, CN "gputri-ca@<unix time>-<8 random hex digits>", basicConstraints critical
 * CA:TRUE, keyUsage critical keyCertSign+cRLSign, SKI. Serving certificate: CN svc.ns.svc (or the
 * first name that fits in 64 characters), basicConstraints critical CA:FALSE, keyUsage critical
 * digitalSignature (+keyEncipherment for RSA keys), extendedKeyUsage serverAuth, SANs, SKI and AKI
 * (the CA's key id). Serials are 128-bit random numbers with the top bit clear (positive).
 * notBefore = now - CERTGEN_BACKDATE_SECONDS; notAfter = now + days, but never after the CA's
 * notAfter (then not_after_clamped is set). Signature: SHA-256 (ECDSA, RSA) or pure Ed25519.
 * With client_cn, a client certificate the same way but with CN client_cn, extendedKeyUsage
 * clientAuth and no SANs, and its own key (kube-apiserver takes a client certificate from its
 * admission configuration's kubeconfig, kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/config/kubeconfig.go).
 *
 * A reused CA must parse, match its key, be a CA with keyCertSign and be valid at `now`.
 * Returns K_OK (out filled; release with certgen_bundle_cleanup()), K_EINVAL (bad option, name,
 * IP or CA; reason in err), K_ENOMEM, or K_EIO (an OpenSSL failure; its error text in err).
 * On failure *out is left empty.
 */
int certgen_generate(const struct certgen_options *o, struct certgen_bundle *out, char *err,
                     size_t errlen);

/* certgen_bundle_cleanup() - free the PEM strings (keys are wiped first). NULL-safe, idempotent. */
void certgen_bundle_cleanup(struct certgen_bundle *b);

/*
 * certgen_verify() - check that cert_pem chains to ca_pem at time `now` for TLS server use and,
 * when host is not NULL, that it is valid for that DNS name or IP address (X509_verify_cert with
 * purpose sslserver). Returns K_OK, or K_EINVAL with OpenSSL's verify error in err.
 */
int certgen_verify(const char *ca_pem, const char *cert_pem, const char *host, time_t now,
                   char *err, size_t errlen);

/*
 * What certgen_inspect() reports about one certificate. All strings are owned by the struct.
 */
struct certgen_cert_info {
    char *subject; /* RFC 2253, e.g. "CN=gputri-webhook.gputri.svc" */
    char *issuer;
    char *sans;           /* "DNS:a, DNS:b, IP:127.0.0.1", "" when there are none */
    char *key;            /* "ECDSA P-256", "RSA 2048", "Ed25519", ... */
    char fingerprint[96]; /* SHA-256 of the DER, upper-case hex pairs joined by ':' */
    char serial[64];      /* hex */
    time_t not_before;
    time_t not_after;
    bool is_ca;
};

/*
 * certgen_inspect() - describe every certificate in a PEM document (a cert file or a bundle).
 * On K_OK *out is an array of *n entries (n >= 1); release with certgen_inspect_free(*out, *n).
 * Returns K_EINVAL when the text holds no certificate or a broken one, or K_ENOMEM.
 */
int certgen_inspect(const char *pem, struct certgen_cert_info **out, size_t *n, char *err,
                    size_t errlen);
void certgen_inspect_free(struct certgen_cert_info *infos, size_t n);

/*
 * certgen_base64() - standard base64 (with padding, no line breaks) of len bytes, as for a
 * Secret's data or a webhook caBundle. On K_OK *out is a new string the caller frees with free().
 * Returns K_OK, K_ETOOBIG (len above INT_MAX / 2) or K_ENOMEM.
 */
int certgen_base64(const void *data, size_t len, char **out);

/*
 * certgen_unbase64() - decode standard base64 (a Secret's data value, a caBundle) into a new
 * NUL-terminated string (*out, *len bytes before the NUL; free() it). Returns K_OK, K_EINVAL
 * (not base64) or K_ENOMEM.
 */
int certgen_unbase64(const char *b64, char **out, size_t *len);

/*
 * certgen_cert_times() - notBefore and notAfter of the first certificate in `pem`.
 * Returns K_OK or K_EINVAL (no certificate).
 */
int certgen_cert_times(const char *pem, time_t *not_before, time_t *not_after);

/*
 * certgen_key_matches() - K_OK when key_pem (unencrypted PEM private key) belongs to the first
 * certificate of cert_pem, K_EINVAL otherwise (either does not parse, or another key).
 */
int certgen_key_matches(const char *cert_pem, const char *key_pem);

/*
 * certgen_can_sign() - K_OK when the first certificate of ca_pem may sign certificates (CA:TRUE,
 * and keyCertSign when it has a key usage: what certgen_generate requires of a CA it is given),
 * K_EINVAL otherwise (not a CA, or no certificate). Pure; thread-safe.
 */
int certgen_can_sign(const char *ca_pem);

/*
 * certgen_first_pem() - the first certificate of a PEM bundle, re-encoded as PEM, into a new
 * string (*out; free() it). Returns K_OK, K_EINVAL (no certificate) or K_ENOMEM.
 */
int certgen_first_pem(const char *pem, char **out);

/*
 * certgen_bundle_join() - a CA bundle: every certificate of `first` (in order), then those of
 * `rest` (may be NULL) that are still valid at `now` and not already in the result, at most
 * `max` certificates in all; into a new PEM string (*out; free() it). For a CA rotation (first
 * = the new CA, rest = the old bundle) and for dropping expired CAs (first = the current CA,
 * rest = the bundle). Returns K_OK, K_EINVAL (first holds no certificate) or K_ENOMEM.
 */
int certgen_bundle_join(const char *first, const char *rest, time_t now, size_t max, char **out);

/*
 * certgen_read_file() - read a whole PEM file (at most CERTGEN_MAX_PEM_FILE bytes).
 * On K_OK *out is a new NUL-terminated string the caller frees with free(). Returns K_ENOTFOUND,
 * K_ETOOBIG, K_EIO or K_ENOMEM with the path in err.
 */
int certgen_read_file(const char *path, char **out, char *err, size_t errlen);

/*
 * certgen_write_file_atomic() - replace dir/name with `data` so that a reader sees either the
 * old or the new content, never a mix: write a temporary file in dir (mode `mode`), fsync it,
 * rename() it over dir/name, fsync dir. A reader holding the old file open keeps reading the
 * old content. The temporary file is removed on failure.
 * Returns K_OK, K_ENOTFOUND (dir missing), K_EINVAL (path too long) or K_EIO, with the path and
 * strerror in err.
 */
int certgen_write_file_atomic(const char *dir, const char *name, const char *data, size_t len,
                              mode_t mode, char *err, size_t errlen);

#endif
