/*
 * fuzz_pki.c - libFuzzer target for what gputri-webhook reads from its certificate Secret
 * (webhook/selfcert.c): the Secret as the API server returns it (core/kube/read_budget.h, as
 * kube_get reads it), its data values decoded (core/pki/publish.c publish_secret_pem), and the
 * PEM texts read by core/pki/certgen.c the way selfcert's decide() reads them (the bundle's first
 * CA, key matches, validity times, the serving certificate verified against the first CA and the
 * whole bundle, the bundle pruned) and handed to the TLS source (core/http/tls_source.c, GnuTLS).
 *
 * Input: a first byte; when it is even the rest is the Secret's JSON text, when odd the rest is
 * ca.crt, ca.key, tls.crt and tls.key themselves, split at NUL bytes (a missing one is absent), so
 * the PEM and DER parsers get mutations that base64 would hide. Besides the sanitizers: every
 * call answers one of its documented codes, the same twice; a decoded value is non-empty text
 * without NUL; the first CA re-encoded has the bundle's first times and fingerprint; a
 * pruned bundle starts with the first CA and holds at most SELFCERT_MAX_BUNDLE certificates; a
 * serving pair GnuTLS publishes is one OpenSSL matches too, unless OpenSSL cannot read the
 * certificate or the key (GnuTLS is the more lenient DER reader: seed-corpus.sh adds a certificate
 * with a constructed UTF8String in its subject that only GnuTLS reads).
 */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/tls_source.h"
#include "json/tree.h"
#include "kube/json.h"
#include "kube/read_budget.h"
#include "pki/certgen.h"
#include "pki/publish.h"
#include "util/clock.h"
#include "util/result.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1800000000 /* 2027-01-15: the fixtures' certificates are valid then */
#define HOST "gputri-webhook.gputri.svc"
#define MAX_BUNDLE 4 /* webhook/selfcert.h SELFCERT_MAX_BUNDLE */

static struct clock_fake fake;
static struct clock fake_clock;
static struct tls_source *source;

static void need(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_pki: %s\n", what);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    clock_fake_init(&fake, (int64_t)NOW * 1000);
    fake_clock = clock_fake_clock(&fake);
    char err[256];
    const char *dns[] = {HOST};
    need(tls_source_new_self_signed(HOST, dns, 1, &source, err, sizeof(err)) == K_OK,
         "no self-signed source");
    tls_source_set_clock(source, &fake_clock);
    return 0;
}

/* The four values from a Secret's JSON text, as selfcert's read_secret() takes them. */
static void from_secret(const char *text, size_t len, char *pem[4])
{
    static const char *const keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    struct json_tree t;
    char err[256];
    int rc = kube_read_parse(&t, KUBE_READ_OBJECT, text, len, err, sizeof(err));
    need(rc == K_OK || rc == K_EPARSE || rc == K_ETOOBIG || rc == K_ENOMEM, "kube_read_parse code");
    if (rc == K_OK) {
        json_object *d = kube_json_get(t.root, "data", json_type_object);
        for (int i = 0; i < 4; i++) {
            pem[i] = publish_secret_pem(d, keys[i]);
            need(!pem[i] || (pem[i][0] && strlen(pem[i]) < len), "a decoded value is not text");
        }
    }
    json_tree_free(&t);
}

/* Up to four NUL-separated texts. */
static void from_raw(const uint8_t *p, size_t len, char *pem[4])
{
    for (int i = 0; i < 4 && len > 0; i++) {
        const uint8_t *nul = memchr(p, 0, len);
        size_t n = nul ? (size_t)(nul - p) : len;
        if (n > 0) {
            pem[i] = malloc(n + 1);
            if (pem[i]) {
                memcpy(pem[i], p, n);
                pem[i][n] = '\0';
            }
        }
        p += n;
        len -= n;
        if (len > 0) { /* the NUL */
            p++;
            len--;
        }
    }
}

/* no passphrase: OpenSSL's default asks the terminal for an encrypted key's */
static int no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return 0;
}

/* Whether OpenSSL reads a private key from the first PEM block of `pem` that holds one. */
static bool openssl_reads_key(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, no_password, NULL) : NULL;
    bool ok = k != NULL;
    EVP_PKEY_free(k);
    BIO_free(b);
    ERR_clear_error();
    return ok;
}

static int matches(const char *cert, const char *key)
{
    int rc = certgen_key_matches(cert, key);
    need(rc == K_OK || rc == K_EINVAL, "certgen_key_matches code");
    need(certgen_key_matches(cert, key) == rc, "certgen_key_matches not the same twice");
    return rc;
}

/* The fingerprint of the first certificate of `pem` into fp (96 bytes); false when none. */
static bool first_fingerprint(const char *pem, char fp[96], size_t *n_certs)
{
    struct certgen_cert_info *infos = NULL;
    size_t n = 0;
    char err[256];
    int rc = certgen_inspect(pem, &infos, &n, err, sizeof(err));
    need(rc == K_OK || rc == K_EINVAL || rc == K_ENOMEM, "certgen_inspect code");
    if (rc != K_OK)
        return false;
    need(n >= 1 && infos, "certgen_inspect K_OK without a certificate");
    for (size_t i = 0; i < n; i++)
        need(infos[i].subject && infos[i].issuer && infos[i].sans && infos[i].key &&
                 memchr(infos[i].fingerprint, 0, sizeof(infos[i].fingerprint)),
             "certgen_inspect: a field missing");
    memcpy(fp, infos[0].fingerprint, 96);
    if (n_certs)
        *n_certs = n;
    certgen_inspect_free(infos, n);
    return true;
}

static void verify(const char *ca, const char *cert)
{
    char err[256];
    int rc = certgen_verify(ca, cert, HOST, NOW, err, sizeof(err));
    need(rc == K_OK || rc == K_EINVAL || rc == K_EIO || rc == K_ENOMEM, "certgen_verify code");
    need(certgen_verify(ca, cert, HOST, NOW, err, sizeof(err)) == rc,
         "certgen_verify not the same twice");
}

/* What selfcert's decide() and serve() read, on the four values. */
static void read_like_the_webhook(char *pem[4])
{
    char *ca_crt = pem[0], *ca_key = pem[1], *tls_crt = pem[2], *tls_key = pem[3];
    char *first_ca = NULL;
    if (ca_crt) {
        int rc = certgen_first_pem(ca_crt, &first_ca);
        need(rc == K_OK || rc == K_EINVAL || rc == K_ENOMEM, "certgen_first_pem code");
        need((rc == K_OK) == (first_ca != NULL), "certgen_first_pem: output and code disagree");
    }
    if (first_ca) {
        time_t nb = 0, na = 0, bnb = 0, bna = 0;
        need(certgen_cert_times(first_ca, &nb, &na) == K_OK, "the first CA has no times");
        need(certgen_cert_times(ca_crt, &bnb, &bna) == K_OK && nb == bnb && na == bna,
             "the first CA's times are not the bundle's first");
        char fp[96], bfp[96];
        need(first_fingerprint(first_ca, fp, NULL), "the first CA does not inspect");
        /* a bundle with a broken certificate after the first does not inspect */
        need(!first_fingerprint(ca_crt, bfp, NULL) || strcmp(fp, bfp) == 0,
             "the first CA is not the bundle's first certificate");
        if (ca_key)
            matches(first_ca, ca_key);
        if (tls_crt) {
            verify(first_ca, tls_crt);
            verify(ca_crt, tls_crt);
        }
        char *pruned = NULL;
        int rc = certgen_bundle_join(first_ca, ca_crt, NOW, MAX_BUNDLE, &pruned);
        need(rc == K_OK || rc == K_EIO || rc == K_ENOMEM, "certgen_bundle_join code");
        if (rc == K_OK) {
            size_t n = 0;
            char pfp[96];
            need(first_fingerprint(pruned, pfp, &n) && strcmp(pfp, fp) == 0 && n <= MAX_BUNDLE,
                 "the pruned bundle does not start with the first CA or is too long");
        }
        free(pruned);
    } else if (ca_crt) {
        char fp[96];
        first_fingerprint(ca_crt, fp, NULL);
    }
    int crt_rc = K_EINVAL;
    if (tls_crt) {
        time_t nb, na;
        crt_rc = certgen_cert_times(tls_crt, &nb, &na);
        need(crt_rc == K_OK || crt_rc == K_EINVAL, "certgen_cert_times code");
    }
    if (tls_crt && tls_key) {
        int m = matches(tls_crt, tls_key);
        char err[256];
        clock_fake_advance_ms(&fake, (TLS_SOURCE_RETIRE_SECONDS + 1) * 1000LL);
        int rc = tls_source_set_pem(source, tls_crt, tls_key, err, sizeof(err));
        need(rc == K_OK || rc == K_EINVAL || rc == K_ENOMEM, "tls_source_set_pem code");
        need(rc == K_OK || err[0], "tls_source_set_pem refused without saying why");
        /* GnuTLS reads some DER OpenSSL refuses (then selfcert replaces the pair: no harm), but
         * a pair both libraries read is one both match */
        need(rc != K_OK || m == K_OK || crt_rc != K_OK || !openssl_reads_key(tls_key),
             "GnuTLS serves a pair OpenSSL reads but does not match");
    }
    free(first_ca);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256 * 1024)
        return 0;
    char *pem[4] = {NULL, NULL, NULL, NULL};
    if (data[0] & 1)
        from_raw(data + 1, size - 1, pem);
    else
        from_secret((const char *)data + 1, size - 1, pem);
    read_like_the_webhook(pem);
    for (int i = 0; i < 4; i++)
        free(pem[i]);
    return 0;
}
