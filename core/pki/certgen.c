/*
 * certgen.c - CA and serving certificate generation, verification and inspection for the gputri
 * webhook, on the OpenSSL 3 API (no openssl command). Used by certs/commands.c and
 * webhook/selfcert.c.
 */
#include "pki/certgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "util/errbuf.h"
#include "util/escape.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/clock.h"
#include "util/result.h"

#define CN_MAX 64 /* ub-common-name (RFC 5280) */
#define DNS_NAME_MAX 253
#define DNS_LABEL_MAX 63

/* Report an OpenSSL failure: `what` plus the newest entry of this thread's error queue. */
static int ossl_fail(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    char reason[256] = "unknown OpenSSL error";
    if (e)
        ERR_error_string_n(e, reason, sizeof(reason));
    errbuf_printf(err, errlen, "%s: %s", what, reason);
    ERR_clear_error();
    return K_EIO;
}

static const char *const key_type_names[] = {
    [CERTGEN_KEY_ECDSA_P256] = "ecdsa-p256",
    [CERTGEN_KEY_RSA_2048] = "rsa-2048",
    [CERTGEN_KEY_RSA_3072] = "rsa-3072",
    [CERTGEN_KEY_ED25519] = "ed25519",
};

int certgen_key_type_parse(const char *s, enum certgen_key_type *out)
{
    for (size_t i = 0; s && i < sizeof(key_type_names) / sizeof(key_type_names[0]); i++) {
        if (strcmp(s, key_type_names[i]) == 0) {
            *out = (enum certgen_key_type)i;
            return K_OK;
        }
    }
    return K_EINVAL;
}

const char *certgen_key_type_name(enum certgen_key_type t)
{
    if ((size_t)t < sizeof(key_type_names) / sizeof(key_type_names[0]))
        return key_type_names[t];
    return "unknown";
}

void certgen_options_init(struct certgen_options *o)
{
    memset(o, 0, sizeof(*o));
    o->key_type = CERTGEN_KEY_ECDSA_P256;
    o->ca_days = CERTGEN_DEFAULT_CA_DAYS;
    o->cert_days = CERTGEN_DEFAULT_CERT_DAYS;
    o->now = time(NULL);
    o->backdate_seconds = CERTGEN_BACKDATE_SECONDS;
}

static void free_secret(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

void certgen_bundle_cleanup(struct certgen_bundle *b)
{
    if (!b)
        return;
    free(b->ca_cert_pem);
    free_secret(b->ca_key_pem);
    free(b->tls_cert_pem);
    free_secret(b->tls_key_pem);
    free(b->client_cert_pem);
    free_secret(b->client_key_pem);
    memset(b, 0, sizeof(*b));
}

/* ---- names ---- */

/* A DNS-1123 label: 1-63 of [a-z0-9-], starting and ending alphanumeric. */
static bool is_dns_label(const char *s, size_t n)
{
    if (n == 0 || n > DNS_LABEL_MAX || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

/* A lowercase DNS name of such labels, optionally starting with a "*." wildcard label. */
static bool is_dns_name(const char *s)
{
    size_t total = strlen(s);
    if (total == 0 || total > DNS_NAME_MAX)
        return false;
    if (strncmp(s, "*.", 2) == 0)
        s += 2;
    for (;;) {
        const char *dot = strchr(s, '.');
        size_t n = dot ? (size_t)(dot - s) : strlen(s);
        if (!is_dns_label(s, n))
            return false;
        if (!dot)
            return true;
        s = dot + 1;
    }
}

/* Append a SAN unless an equal one is already there. Takes ownership of gn in every case. */
static int push_san(GENERAL_NAMES *gens, GENERAL_NAME *gn)
{
    for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
        if (GENERAL_NAME_cmp(sk_GENERAL_NAME_value(gens, i), gn) == 0) {
            GENERAL_NAME_free(gn);
            return K_OK;
        }
    }
    if (sk_GENERAL_NAME_num(gens) >= CERTGEN_MAX_SANS) {
        GENERAL_NAME_free(gn);
        return K_ETOOBIG;
    }
    if (!sk_GENERAL_NAME_push(gens, gn)) {
        GENERAL_NAME_free(gn);
        return K_ENOMEM;
    }
    return K_OK;
}

static int add_dns_san(GENERAL_NAMES *gens, const char *name, char *err, size_t errlen)
{
    if (!is_dns_name(name)) {
        errbuf_printf(err, errlen, "invalid DNS name \"%s\": want lowercase labels of [a-z0-9-]",
                      name);
        return K_EINVAL;
    }
    GENERAL_NAME *gn = GENERAL_NAME_new();
    ASN1_IA5STRING *s = ASN1_IA5STRING_new();
    if (!gn || !s || !ASN1_STRING_set(s, name, (int)strlen(name))) {
        GENERAL_NAME_free(gn);
        ASN1_IA5STRING_free(s);
        return K_ENOMEM;
    }
    GENERAL_NAME_set0_value(gn, GEN_DNS, s);
    int rc = push_san(gens, gn);
    if (rc == K_ETOOBIG)
        errbuf_printf(err, errlen, "more than %d subject alternative names", CERTGEN_MAX_SANS);
    return rc;
}

static int add_ip_san(GENERAL_NAMES *gens, const char *ip, char *err, size_t errlen)
{
    ASN1_OCTET_STRING *os = a2i_IPADDRESS(ip);
    if (!os) {
        ERR_clear_error();
        errbuf_printf(err, errlen, "invalid IP address \"%s\"", ip);
        return K_EINVAL;
    }
    GENERAL_NAME *gn = GENERAL_NAME_new();
    if (!gn) {
        ASN1_OCTET_STRING_free(os);
        return K_ENOMEM;
    }
    GENERAL_NAME_set0_value(gn, GEN_IPADD, os);
    int rc = push_san(gens, gn);
    if (rc == K_ETOOBIG)
        errbuf_printf(err, errlen, "more than %d subject alternative names", CERTGEN_MAX_SANS);
    return rc;
}

/*
 * Collect the SANs in a stable order (service names first, then --dns, then --ip) and pick the
 * subject CN: svc.ns.svc when it fits, else the first name that fits in 64 characters.
 */
static int build_sans(const struct certgen_options *o, GENERAL_NAMES **out, char *cn, size_t cnlen,
                      char *err, size_t errlen)
{
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    int rc = K_OK;
    if (!gens)
        return K_ENOMEM;
    cn[0] = '\0';
    if (o->service || o->namespace_name) {
        const char *svc = o->service, *ns = o->namespace_name;
        if (!svc || !ns) {
            errbuf_printf(err, errlen, "service and namespace must be given together");
            rc = K_EINVAL;
            goto out;
        }
        /* A Service name is a DNS-1035 label: it must start with a letter. */
        if (!is_dns_label(svc, strlen(svc)) || !(svc[0] >= 'a' && svc[0] <= 'z')) {
            errbuf_printf(err, errlen, "invalid service name \"%s\": want a DNS-1035 label", svc);
            rc = K_EINVAL;
            goto out;
        }
        if (!is_dns_label(ns, strlen(ns))) {
            errbuf_printf(err, errlen, "invalid namespace \"%s\": want a DNS-1123 label", ns);
            rc = K_EINVAL;
            goto out;
        }
        /* svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local */
        static const char *const suffixes[] = {NULL, "", ".svc", ".svc.cluster.local"};
        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
            char name[DNS_NAME_MAX + 1];
            int n = suffixes[i] ? snprintf(name, sizeof(name), "%s.%s%s", svc, ns, suffixes[i])
                                : snprintf(name, sizeof(name), "%s", svc);
            if (n < 0 || (size_t)n >= sizeof(name)) {
                errbuf_printf(err, errlen, "service DNS name for %s/%s is too long", ns, svc);
                rc = K_EINVAL;
                goto out;
            }
            rc = add_dns_san(gens, name, err, errlen);
            if (rc)
                goto out;
            if (i == 2 && (size_t)n <= CN_MAX && (size_t)n < cnlen)
                memcpy(cn, name, (size_t)n + 1);
        }
    }
    for (size_t i = 0; i < o->n_dns; i++) {
        rc = add_dns_san(gens, o->dns[i], err, errlen);
        if (rc)
            goto out;
    }
    for (size_t i = 0; i < o->n_ips; i++) {
        rc = add_ip_san(gens, o->ips[i], err, errlen);
        if (rc)
            goto out;
    }
    if (sk_GENERAL_NAME_num(gens) == 0) {
        errbuf_printf(err, errlen, "no names: give a service and namespace, a DNS name or an IP");
        rc = K_EINVAL;
        goto out;
    }
    if (!cn[0]) {
        for (size_t i = 0; i < o->n_dns && !cn[0]; i++)
            if (strlen(o->dns[i]) <= CN_MAX)
                snprintf(cn, cnlen, "%s", o->dns[i]);
        for (size_t i = 0; i < o->n_ips && !cn[0]; i++)
            snprintf(cn, cnlen, "%s", o->ips[i]);
        if (!cn[0])
            snprintf(cn, cnlen, "gputri-webhook");
    }
    *out = gens;
    gens = NULL;
out:
    GENERAL_NAMES_free(gens);
    return rc;
}

/* ---- keys and certificates ---- */

static EVP_PKEY *make_key(enum certgen_key_type t)
{
    switch (t) {
    case CERTGEN_KEY_ECDSA_P256:
        return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    case CERTGEN_KEY_RSA_2048:
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    case CERTGEN_KEY_RSA_3072:
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)3072);
    case CERTGEN_KEY_ED25519:
        return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    }
    return NULL;
}

/* EdDSA signs the message itself and takes no digest; everything else gets SHA-256. */
static const EVP_MD *sign_digest(EVP_PKEY *signer)
{
    if (EVP_PKEY_is_a(signer, "ED25519") || EVP_PKEY_is_a(signer, "ED448"))
        return NULL;
    return EVP_sha256();
}

/*
 * A positive serial of 16 random bytes with the top bit cleared (RFC 5280 wants positive and at
 * most 20 octets; CA/Browser rules want at least 64 random bits). Zero is re-drawn.
 */
static int set_random_serial(X509 *x)
{
    unsigned char b[16];
    BIGNUM *bn = NULL;
    ASN1_INTEGER *ai = NULL;
    int ok = 0;
    do {
        if (RAND_bytes(b, sizeof(b)) != 1)
            return 0;
        b[0] &= 0x7f;
        BN_free(bn);
        bn = BN_bin2bn(b, sizeof(b), NULL);
        if (!bn)
            return 0;
    } while (BN_is_zero(bn));
    ai = BN_to_ASN1_INTEGER(bn, NULL);
    ok = ai && X509_set_serialNumber(x, ai);
    ASN1_INTEGER_free(ai);
    BN_free(bn);
    return ok;
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_nconf_nid(NULL, ctx, nid, value);
    int ok = ext && X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

static int set_cn(X509_NAME *name, const char *cn)
{
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                      0);
}

/* A lifetime in seconds: the seconds field when set, else the days. */
static int64_t lifetime_seconds(int64_t seconds, int days)
{
    return seconds > 0 ? seconds : (int64_t)days * 86400;
}

/*
 * A new X509 with version 3, a random serial, subject CN, validity (notBefore backdate seconds
 * before now, notAfter `seconds` after now) and public key set.
 */
static X509 *new_cert(const char *cn, EVP_PKEY *key, time_t now, int64_t seconds, int backdate)
{
    X509 *x = X509_new();
    if (!x || !X509_set_version(x, X509_VERSION_3) || !set_random_serial(x) ||
        !set_cn(X509_get_subject_name(x), cn) ||
        !ASN1_TIME_adj(X509_getm_notBefore(x), now, 0, -(long)backdate) ||
        !ASN1_TIME_adj(X509_getm_notAfter(x), now, (int)(seconds / 86400),
                       (long)(seconds % 86400)) ||
        !X509_set_pubkey(x, key)) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static X509 *make_ca(EVP_PKEY *key, time_t now, int64_t seconds, int backdate)
{
    /* The random tag keeps two CAs made in the same second apart (e.g. old and new during a
     * CA rotation, where both sit in one caBundle). */
    char cn[CN_MAX + 1];
    unsigned char tag[4];
    if (RAND_bytes(tag, sizeof(tag)) != 1)
        return NULL;
    snprintf(cn, sizeof(cn), "gputri-ca@%lld-%02x%02x%02x%02x", (long long)now, tag[0], tag[1],
             tag[2], tag[3]);
    X509 *x = new_cert(cn, key, now, seconds, backdate);
    X509V3_CTX ctx;
    if (!x || !X509_set_issuer_name(x, X509_get_subject_name(x)))
        goto fail;
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    if (!add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE") ||
        !add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign") ||
        !add_ext(x, &ctx, NID_subject_key_identifier, "hash") ||
        !X509_sign(x, key, sign_digest(key)))
        goto fail;
    return x;
fail:
    X509_free(x);
    return NULL;
}

/* A leaf for serving (sans set, extendedKeyUsage serverAuth) or for a client (sans NULL,
 * clientAuth). */
static X509 *make_leaf(const char *cn, EVP_PKEY *key, GENERAL_NAMES *sans, X509 *ca,
                       EVP_PKEY *ca_key, time_t now, int64_t seconds, int backdate, bool *clamped)
{
    X509 *x = new_cert(cn, key, now, seconds, backdate);
    X509V3_CTX ctx;
    if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca)))
        goto fail;
    /* A certificate outliving its issuer fails verification then anyway; say so up front. */
    *clamped = false;
    if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(ca)) > 0) {
        if (!X509_set1_notAfter(x, X509_get0_notAfter(ca)))
            goto fail;
        *clamped = true;
    }
    /* RSA key exchange (TLS 1.2 RSA kx) encrypts with the key; ECDSA/Ed25519 only sign. */
    const char *ku = EVP_PKEY_is_a(key, "RSA") ? "critical,digitalSignature,keyEncipherment"
                                               : "critical,digitalSignature";
    /* AKI from the CA's SKI; a reused CA without SKI is named by issuer and serial instead. */
    const char *aki = X509_get0_subject_key_id(ca) ? "keyid:always" : "keyid,issuer:always";
    X509V3_set_ctx(&ctx, ca, x, NULL, NULL, 0);
    if (!add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(x, &ctx, NID_key_usage, ku) ||
        !add_ext(x, &ctx, NID_ext_key_usage, sans ? "serverAuth" : "clientAuth") ||
        !add_ext(x, &ctx, NID_subject_key_identifier, "hash") ||
        !add_ext(x, &ctx, NID_authority_key_identifier, aki) ||
        (sans && !X509_add1_ext_i2d(x, NID_subject_alt_name, sans, 0, X509V3_ADD_DEFAULT)) ||
        !X509_sign(x, ca_key, sign_digest(ca_key)))
        goto fail;
    return x;
fail:
    X509_free(x);
    return NULL;
}

/* Copy a memory BIO's content into a new NUL-terminated string. */
static char *bio_strdup(BIO *b)
{
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, (size_t)n);
    s[n] = '\0';
    return s;
}

static char *cert_to_pem(X509 *x)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = b && PEM_write_bio_X509(b, x) ? bio_strdup(b) : NULL;
    BIO_free(b);
    return s;
}

/* PKCS#8, unencrypted. The memory BIO is wiped before it is freed. */
static char *key_to_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_secmem());
    char *s = b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) ? bio_strdup(b) : NULL;
    BIO_free(b);
    return s;
}

/* Refuse passphrase prompts: OpenSSL's default callback would read the terminal. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

static X509 *pem_to_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = b ? PEM_read_bio_X509(b, NULL, no_password, NULL) : NULL;
    BIO_free(b);
    return x;
}

static EVP_PKEY *pem_to_key(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, no_password, NULL) : NULL;
    BIO_free(b);
    return k;
}

static time_t asn1_to_time(const ASN1_TIME *t)
{
    struct tm tm;
    if (!ASN1_TIME_to_tm(t, &tm))
        return (time_t)-1;
    return timegm(&tm);
}

static void format_time(time_t t, char *out, size_t outlen)
{
    clock_format_rfc3339((int64_t)t * 1000, false, out, outlen);
}

/* Whether x may sign certificates: CA:TRUE, and keyCertSign when it has a key usage. */
static bool may_sign(X509 *x)
{
    uint32_t flags = X509_get_extension_flags(x);
    return (flags & EXFLAG_CA) &&
           (!(flags & EXFLAG_KUSAGE) || (X509_get_key_usage(x) & KU_KEY_CERT_SIGN));
}

/* Load and check a CA given for renewal: parses, matches its key, may sign, valid at now. */
static int load_ca(const struct certgen_options *o, X509 **ca_out, EVP_PKEY **key_out, char *err,
                   size_t errlen)
{
    X509 *ca = pem_to_cert(o->ca_cert_pem);
    EVP_PKEY *key = NULL;
    int rc = K_EINVAL;
    char when[32];
    if (!ca) {
        ERR_clear_error();
        errbuf_printf(err, errlen, "CA certificate: no PEM certificate found");
        goto out;
    }
    key = pem_to_key(o->ca_key_pem);
    if (!key) {
        ERR_clear_error();
        errbuf_printf(err, errlen, "CA key: no unencrypted PEM private key found");
        goto out;
    }
    if (X509_check_private_key(ca, key) != 1) {
        ERR_clear_error();
        errbuf_printf(err, errlen, "CA key does not match the CA certificate");
        goto out;
    }
    if (!may_sign(ca)) {
        errbuf_printf(err, errlen, "CA certificate is not a CA (needs CA:TRUE and keyCertSign)");
        goto out;
    }
    time_t now = o->now;
    if (X509_cmp_time(X509_get0_notAfter(ca), &now) <= 0) {
        format_time(asn1_to_time(X509_get0_notAfter(ca)), when, sizeof(when));
        errbuf_printf(err, errlen, "CA certificate expired at %s; create a new CA", when);
        goto out;
    }
    if (X509_cmp_time(X509_get0_notBefore(ca), &now) >= 0) {
        format_time(asn1_to_time(X509_get0_notBefore(ca)), when, sizeof(when));
        errbuf_printf(err, errlen, "CA certificate is not valid before %s", when);
        goto out;
    }
    *ca_out = ca;
    *key_out = key;
    ca = NULL;
    key = NULL;
    rc = K_OK;
out:
    X509_free(ca);
    EVP_PKEY_free(key);
    return rc;
}

static int check_scalars(const struct certgen_options *o, char *err, size_t errlen)
{
    if ((size_t)o->key_type >= sizeof(key_type_names) / sizeof(key_type_names[0])) {
        errbuf_printf(err, errlen, "unknown key type %d", (int)o->key_type);
        return K_EINVAL;
    }
    if (o->cert_days < 1 || o->cert_days > CERTGEN_MAX_DAYS || o->ca_days < 1 ||
        o->ca_days > CERTGEN_MAX_DAYS) {
        errbuf_printf(err, errlen, "lifetimes must be 1..%d days", CERTGEN_MAX_DAYS);
        return K_EINVAL;
    }
    if (!o->ca_cert_pem != !o->ca_key_pem) {
        errbuf_printf(err, errlen, "the CA certificate and the CA key must be given together");
        return K_EINVAL;
    }
    if ((o->ca_seconds && (o->ca_seconds < 60 || o->ca_seconds > CERTGEN_MAX_DAYS * 86400LL)) ||
        (o->cert_seconds &&
         (o->cert_seconds < 60 || o->cert_seconds > CERTGEN_MAX_DAYS * 86400LL))) {
        errbuf_printf(err, errlen, "lifetimes must be 60 s..%d days", CERTGEN_MAX_DAYS);
        return K_EINVAL;
    }
    if (o->backdate_seconds < 0 || o->backdate_seconds > CERTGEN_BACKDATE_SECONDS) {
        errbuf_printf(err, errlen, "backdate must be 0..%d s", CERTGEN_BACKDATE_SECONDS);
        return K_EINVAL;
    }
    if (o->client_cn && (!o->client_cn[0] || strlen(o->client_cn) > CN_MAX)) {
        errbuf_printf(err, errlen, "the client certificate's CN must have 1..%d characters",
                      CN_MAX);
        return K_EINVAL;
    }
    return K_OK;
}

int certgen_options_check(const struct certgen_options *o, char *err, size_t errlen)
{
    GENERAL_NAMES *sans = NULL;
    char cn[CN_MAX + 1];
    int rc = check_scalars(o, err, errlen);
    if (!rc)
        rc = build_sans(o, &sans, cn, sizeof(cn), err, errlen);
    GENERAL_NAMES_free(sans);
    ERR_clear_error();
    return rc;
}

int certgen_generate(const struct certgen_options *o, struct certgen_bundle *out, char *err,
                     size_t errlen)
{
    GENERAL_NAMES *sans = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *leaf = NULL;
    struct certgen_bundle b = {0};
    char cn[CN_MAX + 1];
    int rc;

    memset(out, 0, sizeof(*out));
    ERR_clear_error();
    rc = check_scalars(o, err, errlen);
    if (rc)
        return rc;
    rc = build_sans(o, &sans, cn, sizeof(cn), err, errlen);
    if (rc)
        goto out;

    if (o->ca_cert_pem) {
        rc = load_ca(o, &ca, &ca_key, err, errlen);
        if (rc)
            goto out;
        b.ca_reused = true;
        b.ca_cert_pem = strdup(o->ca_cert_pem);
        b.ca_key_pem = strdup(o->ca_key_pem);
    } else {
        ca_key = make_key(o->key_type);
        if (!ca_key) {
            rc = ossl_fail(err, errlen, "generating the CA key");
            goto out;
        }
        ca = make_ca(ca_key, o->now, lifetime_seconds(o->ca_seconds, o->ca_days),
                     o->backdate_seconds);
        if (!ca) {
            rc = ossl_fail(err, errlen, "creating the CA certificate");
            goto out;
        }
        b.ca_cert_pem = cert_to_pem(ca);
        b.ca_key_pem = key_to_pem(ca_key);
    }
    if (!b.ca_cert_pem || !b.ca_key_pem) {
        rc = K_ENOMEM;
        goto out;
    }

    key = make_key(o->key_type);
    if (!key) {
        rc = ossl_fail(err, errlen, "generating the serving key");
        goto out;
    }
    int64_t cert_seconds = lifetime_seconds(o->cert_seconds, o->cert_days);
    leaf = make_leaf(cn, key, sans, ca, ca_key, o->now, cert_seconds, o->backdate_seconds,
                     &b.not_after_clamped);
    if (!leaf) {
        rc = ossl_fail(err, errlen, "creating the serving certificate");
        goto out;
    }
    b.tls_cert_pem = cert_to_pem(leaf);
    b.tls_key_pem = key_to_pem(key);
    if (!b.tls_cert_pem || !b.tls_key_pem) {
        rc = K_ENOMEM;
        goto out;
    }
    if (o->client_cn) {
        bool clamped;
        EVP_PKEY *ckey = make_key(o->key_type);
        X509 *client = ckey ? make_leaf(o->client_cn, ckey, NULL, ca, ca_key, o->now, cert_seconds,
                                        o->backdate_seconds, &clamped)
                            : NULL;
        if (client) {
            b.client_cert_pem = cert_to_pem(client);
            b.client_key_pem = key_to_pem(ckey);
        }
        X509_free(client);
        EVP_PKEY_free(ckey);
        if (!client) {
            rc = ossl_fail(err, errlen, "creating the client certificate");
            goto out;
        }
        if (!b.client_cert_pem || !b.client_key_pem) {
            rc = K_ENOMEM;
            goto out;
        }
    }
    b.tls_not_after = asn1_to_time(X509_get0_notAfter(leaf));
    b.ca_not_after = asn1_to_time(X509_get0_notAfter(ca));
    *out = b;
    memset(&b, 0, sizeof(b)); /* handed over */
out:
    certgen_bundle_cleanup(&b);
    X509_free(leaf);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    GENERAL_NAMES_free(sans);
    ERR_clear_error();
    return rc;
}

/* ---- verification and inspection ---- */

int certgen_verify(const char *ca_pem, const char *cert_pem, const char *host, time_t now,
                   char *err, size_t errlen)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509 *leaf = pem_to_cert(cert_pem);
    BIO *bio = BIO_new_mem_buf(ca_pem, -1);
    X509 *ca;
    int n_ca = 0, rc = K_EINVAL;

    if (!store || !ctx || !bio) {
        rc = K_ENOMEM;
        goto out;
    }
    if (!leaf) {
        errbuf_printf(err, errlen, "no PEM certificate to verify");
        goto out;
    }
    /* Every certificate of the bundle is a trust anchor, as in a webhook caBundle. */
    while ((ca = PEM_read_bio_X509(bio, NULL, no_password, NULL)) != NULL) {
        int ok = X509_STORE_add_cert(store, ca);
        X509_free(ca);
        if (!ok) {
            rc = ossl_fail(err, errlen, "loading the CA bundle");
            goto out;
        }
        n_ca++;
    }
    ERR_clear_error();
    if (n_ca == 0) {
        errbuf_printf(err, errlen, "no PEM certificate in the CA bundle");
        goto out;
    }
    if (!X509_STORE_CTX_init(ctx, store, leaf, NULL)) {
        rc = ossl_fail(err, errlen, "verify context");
        goto out;
    }
    X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_time(param, now);
    X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
    if (host) {
        ASN1_OCTET_STRING *ip = a2i_IPADDRESS(host);
        int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host)
                    : X509_VERIFY_PARAM_set1_host(param, host, 0);
        ASN1_OCTET_STRING_free(ip);
        ERR_clear_error();
        if (!ok) {
            errbuf_printf(err, errlen, "invalid host name \"%s\"", host);
            goto out;
        }
    }
    if (X509_verify_cert(ctx) != 1) {
        errbuf_printf(err, errlen, "certificate does not verify: %s",
                      X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
        goto out;
    }
    rc = K_OK;
out:
    ERR_clear_error();
    BIO_free(bio);
    X509_free(leaf);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return rc;
}

static char *name_to_string(const X509_NAME *name)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = b && X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253) >= 0 ? bio_strdup(b) : NULL;
    BIO_free(b);
    return s;
}

static int format_sans(X509 *x, char **out)
{
    GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    struct buf b;
    int rc = K_OK;
    buf_init(&b, CERTGEN_MAX_PEM_FILE);
    rc = buf_append(&b, "", 0);
    for (int i = 0; !rc && i < sk_GENERAL_NAME_num(gens); i++) {
        const GENERAL_NAME *gn = sk_GENERAL_NAME_value(gens, i);
        const char *sep = i ? ", " : "";
        if (gn->type == GEN_DNS || gn->type == GEN_EMAIL || gn->type == GEN_URI) {
            const ASN1_IA5STRING *s = gn->d.ia5;
            const char *label = gn->type == GEN_DNS ? "DNS" : gn->type == GEN_URI ? "URI" : "email";
            /* an IA5String may carry any byte: printed escaped (util/escape.h) */
            rc = buf_printf(&b, "%s%s:", sep, label);
            if (rc == K_OK)
                rc = text_escape_buf(&b, (const char *)ASN1_STRING_get0_data(s),
                                     (size_t)ASN1_STRING_length(s), TEXT_ESCAPE_TERMINAL);
        } else if (gn->type == GEN_IPADD) {
            char ip[INET6_ADDRSTRLEN] = "?";
            int len = ASN1_STRING_length(gn->d.ip);
            const unsigned char *p = ASN1_STRING_get0_data(gn->d.ip);
            if (len == 4 || len == 16)
                inet_ntop(len == 4 ? AF_INET : AF_INET6, p, ip, sizeof(ip));
            rc = buf_printf(&b, "%sIP:%s", sep, ip);
        } else {
            rc = buf_printf(&b, "%sother", sep);
        }
    }
    GENERAL_NAMES_free(gens);
    ERR_clear_error();
    if (rc) {
        buf_cleanup(&b);
        return rc;
    }
    *out = buf_take(&b);
    return K_OK;
}

static void describe_key(X509 *x, char *out, size_t outlen)
{
    EVP_PKEY *k = X509_get0_pubkey(x);
    if (!k) {
        snprintf(out, outlen, "unknown");
    } else if (EVP_PKEY_is_a(k, "EC")) {
        char group[64] = "";
        const char *nist = NULL;
        if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
                                           NULL))
            nist = EC_curve_nid2nist(OBJ_sn2nid(group));
        snprintf(out, outlen, "ECDSA %s", nist ? nist : group);
    } else if (EVP_PKEY_is_a(k, "RSA")) {
        snprintf(out, outlen, "RSA %d", EVP_PKEY_get_bits(k));
    } else if (EVP_PKEY_is_a(k, "ED25519")) {
        snprintf(out, outlen, "Ed25519");
    } else {
        snprintf(out, outlen, "%s", OBJ_nid2sn(EVP_PKEY_get_base_id(k)));
    }
    ERR_clear_error();
}

static void info_cleanup(struct certgen_cert_info *i)
{
    free(i->subject);
    free(i->issuer);
    free(i->sans);
    free(i->key);
    memset(i, 0, sizeof(*i));
}

static int describe_cert(X509 *x, struct certgen_cert_info *i)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char key[64];
    memset(i, 0, sizeof(*i));
    i->subject = name_to_string(X509_get_subject_name(x));
    i->issuer = name_to_string(X509_get_issuer_name(x));
    describe_key(x, key, sizeof(key));
    i->key = strdup(key);
    if (!i->subject || !i->issuer || !i->key || format_sans(x, &i->sans) != K_OK)
        goto nomem;
    if (!X509_digest(x, EVP_sha256(), md, &mdlen))
        goto nomem;
    size_t pos = 0;
    for (unsigned int k = 0; k < mdlen && pos + 3 < sizeof(i->fingerprint); k++)
        pos += (size_t)snprintf(i->fingerprint + pos, sizeof(i->fingerprint) - pos, "%s%02X",
                                k ? ":" : "", md[k]);
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
    char *hex = bn ? BN_bn2hex(bn) : NULL;
    snprintf(i->serial, sizeof(i->serial), "%s", hex ? hex : "?");
    OPENSSL_free(hex);
    BN_free(bn);
    i->not_before = asn1_to_time(X509_get0_notBefore(x));
    i->not_after = asn1_to_time(X509_get0_notAfter(x));
    i->is_ca = (X509_get_extension_flags(x) & EXFLAG_CA) != 0;
    ERR_clear_error();
    return K_OK;
nomem:
    info_cleanup(i);
    ERR_clear_error();
    return K_ENOMEM;
}

int certgen_inspect(const char *pem, struct certgen_cert_info **out, size_t *n, char *err,
                    size_t errlen)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    struct certgen_cert_info *infos = NULL;
    size_t count = 0;
    int rc = K_OK;
    X509 *x;

    *out = NULL;
    *n = 0;
    if (!bio)
        return K_ENOMEM;
    ERR_clear_error();
    while ((x = PEM_read_bio_X509(bio, NULL, no_password, NULL)) != NULL) {
        struct certgen_cert_info *grown = realloc(infos, (count + 1) * sizeof(*infos));
        if (!grown) {
            X509_free(x);
            rc = K_ENOMEM;
            goto out;
        }
        infos = grown;
        rc = describe_cert(x, &infos[count]);
        X509_free(x);
        if (rc)
            goto out;
        count++;
    }
    /* PEM_read ends with "no start line" at the end of the text; anything else is damage. */
    unsigned long e = ERR_peek_last_error();
    if (e && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
        ossl_fail(err, errlen, "reading PEM certificate");
        rc = K_EINVAL;
        goto out;
    }
    if (count == 0) {
        errbuf_printf(err, errlen, "no PEM certificate found");
        rc = K_EINVAL;
        goto out;
    }
    *out = infos;
    *n = count;
    infos = NULL;
    count = 0;
out:
    ERR_clear_error();
    certgen_inspect_free(infos, count);
    BIO_free(bio);
    return rc;
}

void certgen_inspect_free(struct certgen_cert_info *infos, size_t n)
{
    for (size_t i = 0; infos && i < n; i++)
        info_cleanup(&infos[i]);
    free(infos);
}

/* ---- encoding and files ---- */

int certgen_base64(const void *data, size_t len, char **out)
{
    if (len > INT_MAX / 2)
        return K_ETOOBIG;
    char *s = malloc(4 * ((len + 2) / 3) + 1);
    if (!s)
        return K_ENOMEM;
    EVP_EncodeBlock((unsigned char *)s, data, (int)len);
    *out = s;
    return K_OK;
}

int certgen_unbase64(const char *b64, char **out, size_t *len)
{
    size_t n = 0;
    char *clean = malloc(strlen(b64) + 1);
    if (!clean)
        return K_ENOMEM;
    for (const char *p = b64; *p; p++) /* base64 in JSON has no line breaks; be lenient */
        if (*p != '\n' && *p != '\r' && *p != ' ')
            clean[n++] = *p;
    clean[n] = '\0';
    if (n % 4 != 0 || n > INT_MAX) {
        free(clean);
        return K_EINVAL;
    }
    char *s = malloc(n / 4 * 3 + 1);
    if (!s) {
        free(clean);
        return K_ENOMEM;
    }
    int got = n ? EVP_DecodeBlock((unsigned char *)s, (const unsigned char *)clean, (int)n) : 0;
    if (got < 0) {
        free(clean);
        free(s);
        return K_EINVAL;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes */
    size_t pad = n >= 2 && clean[n - 1] == '=' ? (clean[n - 2] == '=' ? 2 : 1) : 0;
    free(clean);
    *len = (size_t)got - pad;
    s[*len] = '\0';
    *out = s;
    return K_OK;
}

int certgen_cert_times(const char *pem, time_t *not_before, time_t *not_after)
{
    X509 *x = pem_to_cert(pem);
    ERR_clear_error();
    if (!x)
        return K_EINVAL;
    *not_before = asn1_to_time(X509_get0_notBefore(x));
    *not_after = asn1_to_time(X509_get0_notAfter(x));
    X509_free(x);
    return K_OK;
}

int certgen_key_matches(const char *cert_pem, const char *key_pem)
{
    X509 *x = pem_to_cert(cert_pem);
    EVP_PKEY *k = x ? pem_to_key(key_pem) : NULL;
    int ok = x && k && X509_check_private_key(x, k) == 1;
    X509_free(x);
    EVP_PKEY_free(k);
    ERR_clear_error();
    return ok ? K_OK : K_EINVAL;
}

int certgen_can_sign(const char *ca_pem)
{
    X509 *x = pem_to_cert(ca_pem);
    bool ok = x && may_sign(x);
    X509_free(x);
    ERR_clear_error();
    return ok ? K_OK : K_EINVAL;
}

int certgen_first_pem(const char *pem, char **out)
{
    X509 *x = pem_to_cert(pem);
    ERR_clear_error();
    if (!x)
        return K_EINVAL;
    *out = cert_to_pem(x);
    X509_free(x);
    return *out ? K_OK : K_ENOMEM;
}

/* Append the certificates of pem to b (those valid at *now only, when now is set), skipping
 * ones already in seen, up to max in seen. */
static int join_from(const char *pem, const time_t *now, size_t max, STACK_OF(X509) * seen, BIO *b,
                     size_t *n_first)
{
    BIO *in = BIO_new_mem_buf(pem, -1);
    X509 *x;
    int rc = K_OK;
    if (!in)
        return K_ENOMEM;
    while (rc == K_OK && (size_t)sk_X509_num(seen) < max &&
           (x = PEM_read_bio_X509(in, NULL, no_password, NULL)) != NULL) {
        bool dup = false;
        for (int i = 0; i < sk_X509_num(seen) && !dup; i++)
            dup = X509_cmp(sk_X509_value(seen, i), x) == 0;
        time_t t = now ? *now : 0;
        if (dup || (now && X509_cmp_time(X509_get0_notAfter(x), &t) <= 0)) {
            X509_free(x);
            continue;
        }
        if (!PEM_write_bio_X509(b, x) || !sk_X509_push(seen, x)) {
            X509_free(x);
            rc = K_ENOMEM;
            break;
        }
        if (n_first)
            (*n_first)++;
    }
    ERR_clear_error();
    BIO_free(in);
    return rc;
}

int certgen_bundle_join(const char *first, const char *rest, time_t now, size_t max, char **out)
{
    STACK_OF(X509) *seen = sk_X509_new_null();
    BIO *b = BIO_new(BIO_s_mem());
    size_t n_first = 0;
    int rc = seen && b ? K_OK : K_ENOMEM;
    if (rc == K_OK)
        rc = join_from(first, NULL, max, seen, b, &n_first);
    if (rc == K_OK && n_first == 0)
        rc = K_EINVAL;
    if (rc == K_OK && rest)
        rc = join_from(rest, &now, max, seen, b, NULL);
    if (rc == K_OK) {
        *out = bio_strdup(b);
        if (!*out)
            rc = K_ENOMEM;
    }
    sk_X509_pop_free(seen, X509_free);
    BIO_free(b);
    return rc;
}

int certgen_read_file(const char *path, char **out, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, CERTGEN_MAX_PEM_FILE);
    int rc = file_read(path, &b, 0);
    if (rc == K_ETOOBIG)
        errbuf_printf(err, errlen, "%s: larger than %u bytes", path, CERTGEN_MAX_PEM_FILE);
    else if (rc == K_ENOMEM)
        errbuf_printf(err, errlen, "%s: %s", path, k_strerror(rc));
    else if (rc != K_OK)
        errbuf_printf(err, errlen, "%s: %s", path, strerror(errno));
    if (rc != K_OK) {
        buf_cleanup(&b);
        return rc;
    }
    *out = buf_take(&b);
    return K_OK;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int certgen_write_file_atomic(const char *dir, const char *name, const char *data, size_t len,
                              mode_t mode, char *err, size_t errlen)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    int fd = -1, dfd = -1, rc = K_EIO;
    bool have_tmp = false;
    const char *step = "";

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp-XXXXXX", dir, name) >= (int)sizeof(tmp)) {
        errbuf_printf(err, errlen, "%s/%s: path too long", dir, name);
        return K_EINVAL;
    }
    /* The temporary file lives in the same directory, so rename() stays atomic. */
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = errno == ENOENT || errno == ENOTDIR ? K_ENOTFOUND : K_EIO;
        errbuf_printf(err, errlen, "%s: %s", dir, strerror(errno));
        return rc;
    }
    have_tmp = true;
    if (fchmod(fd, mode) != 0) {
        step = "chmod";
        goto fail;
    }
    if (write_all(fd, data, len) != 0) {
        step = "write";
        goto fail;
    }
    if (fsync(fd) != 0) {
        step = "fsync";
        goto fail;
    }
    int cfd = fd;
    fd = -1;
    if (close(cfd) != 0) {
        step = "close";
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        step = "rename";
        goto fail;
    }
    have_tmp = false;
    /* Make the rename itself durable; a failure here does not undo the replacement. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return K_OK;
fail:
    errbuf_printf(err, errlen, "%s: %s: %s", path, step, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (have_tmp)
        unlink(tmp);
    return rc;
}
