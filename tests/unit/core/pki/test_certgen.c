/*
 * test_certgen.c - core/pki/certgen.c: chains verify with X509_verify_cert, SANs, key types, key
 * usages, lifetimes, serials, renewal with an existing CA, inspection and atomic file writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "pki/certgen.h"
#include "util/result.h"

/* A fixed clock, so lifetimes can be compared exactly: 2026-01-01T00:00:00Z. */
#define NOW ((time_t)1767225600)
#define DAY 86400

static X509 *parse_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *parse_key(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(k);
    return k;
}

static time_t cert_time(const ASN1_TIME *t)
{
    struct tm tm;
    assert_int_equal(ASN1_TIME_to_tm(t, &tm), 1);
    return timegm(&tm);
}

static struct certgen_options base_options(void)
{
    static const char *const dns[] = {"webhook.example.test"};
    static const char *const ips[] = {"127.0.0.1", "::1"};
    struct certgen_options o;
    certgen_options_init(&o);
    o.service = "gputri-webhook";
    o.namespace_name = "gputri";
    o.dns = dns;
    o.n_dns = 1;
    o.ips = ips;
    o.n_ips = 2;
    o.now = NOW;
    return o;
}

static void generate_ok(const struct certgen_options *o, struct certgen_bundle *b)
{
    char err[256] = "";
    int rc = certgen_generate(o, b, err, sizeof(err));
    if (rc != K_OK)
        fail_msg("certgen_generate: %s (%s)", k_strerror(rc), err);
}

/* Verify leaf against CA with OpenSSL directly (not through certgen_verify). */
static int openssl_verify(const char *ca_pem, const char *leaf_pem, const char *host, time_t at)
{
    X509 *ca = parse_cert(ca_pem), *leaf = parse_cert(leaf_pem);
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    assert_int_equal(X509_STORE_add_cert(store, ca), 1);
    assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
    X509_VERIFY_PARAM *p = X509_STORE_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_time(p, at);
    X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER);
    if (host && strchr(host, ':') == NULL && strspn(host, "0123456789.") != strlen(host))
        X509_VERIFY_PARAM_set1_host(p, host, 0);
    else if (host)
        X509_VERIFY_PARAM_set1_ip_asc(p, host);
    int ok = X509_verify_cert(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    X509_free(leaf);
    X509_free(ca);
    return ok;
}

static void test_chain_verifies_for_every_key_type(void **state)
{
    (void)state;
    static const enum certgen_key_type types[] = {CERTGEN_KEY_ECDSA_P256, CERTGEN_KEY_RSA_2048,
                                                  CERTGEN_KEY_RSA_3072, CERTGEN_KEY_ED25519};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        struct certgen_options o = base_options();
        struct certgen_bundle b;
        o.key_type = types[i];
        generate_ok(&o, &b);
        assert_int_equal(
            openssl_verify(b.ca_cert_pem, b.tls_cert_pem, "gputri-webhook.gputri.svc", NOW), 1);
        /* Valid for a name it does not carry: no. */
        assert_int_not_equal(openssl_verify(b.ca_cert_pem, b.tls_cert_pem, "other.gputri.svc", NOW),
                             1);
        /* Not yet valid before the backdated notBefore, expired after notAfter. */
        assert_int_not_equal(openssl_verify(b.ca_cert_pem, b.tls_cert_pem, NULL,
                                            NOW - CERTGEN_BACKDATE_SECONDS - 60),
                             1);
        assert_int_not_equal(openssl_verify(b.ca_cert_pem, b.tls_cert_pem, NULL, NOW + 366 * DAY),
                             1);
        /* The library's own verify agrees. */
        char err[256];
        assert_int_equal(
            certgen_verify(b.ca_cert_pem, b.tls_cert_pem, "127.0.0.1", NOW, err, sizeof(err)),
            K_OK);
        assert_int_equal(
            certgen_verify(b.ca_cert_pem, b.tls_cert_pem, "10.0.0.1", NOW, err, sizeof(err)),
            K_EINVAL);
        /* The keys match their certificates. */
        X509 *leaf = parse_cert(b.tls_cert_pem), *ca = parse_cert(b.ca_cert_pem);
        EVP_PKEY *k = parse_key(b.tls_key_pem), *cak = parse_key(b.ca_key_pem);
        assert_int_equal(X509_check_private_key(leaf, k), 1);
        assert_int_equal(X509_check_private_key(ca, cak), 1);
        assert_non_null(strstr(b.tls_key_pem, "-----BEGIN PRIVATE KEY-----"));
        EVP_PKEY_free(k);
        EVP_PKEY_free(cak);
        X509_free(leaf);
        X509_free(ca);
        certgen_bundle_cleanup(&b);
    }
}

static void test_sans(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    static const char *const dns[] = {"gputri-webhook.gputri.svc", "webhook.example.test"};
    o.dns = dns; /* the first duplicates a service name and is dropped */
    o.n_dns = 2;
    struct certgen_bundle b;
    generate_ok(&o, &b);
    X509 *x = parse_cert(b.tls_cert_pem);
    static const char *const want[] = {
        "gputri-webhook", "gputri-webhook.gputri", "gputri-webhook.gputri.svc",
        "gputri-webhook.gputri.svc.cluster.local", "webhook.example.test"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_int_equal(X509_check_host(x, want[i], 0, X509_CHECK_FLAG_NO_WILDCARDS, NULL), 1);
    assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "::1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "127.0.0.2", 0), 0);

    GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    assert_non_null(gens);
    assert_int_equal(sk_GENERAL_NAME_num(gens), 7); /* 4 service + 1 dns + 2 ip */
    GENERAL_NAMES_free(gens);

    char cn[128];
    assert_true(
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn)) > 0);
    assert_string_equal(cn, "gputri-webhook.gputri.svc");
    X509_free(x);
    certgen_bundle_cleanup(&b);
}

static void test_key_types(void **state)
{
    (void)state;
    static const struct {
        enum certgen_key_type type;
        const char *flag;
        const char *alg;
        int bits;
    } cases[] = {
        {CERTGEN_KEY_ECDSA_P256, "ecdsa-p256", "EC", 256},
        {CERTGEN_KEY_RSA_2048, "rsa-2048", "RSA", 2048},
        {CERTGEN_KEY_RSA_3072, "rsa-3072", "RSA", 3072},
        {CERTGEN_KEY_ED25519, "ed25519", "ED25519", 256},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum certgen_key_type t;
        assert_int_equal(certgen_key_type_parse(cases[i].flag, &t), K_OK);
        assert_int_equal(t, cases[i].type);
        assert_string_equal(certgen_key_type_name(t), cases[i].flag);

        struct certgen_options o = base_options();
        struct certgen_bundle b;
        o.key_type = cases[i].type;
        generate_ok(&o, &b);
        const char *pems[] = {b.ca_cert_pem, b.tls_cert_pem};
        for (size_t j = 0; j < 2; j++) {
            X509 *x = parse_cert(pems[j]);
            EVP_PKEY *k = X509_get0_pubkey(x);
            assert_true(EVP_PKEY_is_a(k, cases[i].alg));
            assert_int_equal(EVP_PKEY_get_bits(k), cases[i].bits);
            if (cases[i].type == CERTGEN_KEY_ECDSA_P256) {
                char group[32];
                assert_int_equal(
                    EVP_PKEY_get_utf8_string_param(k, "group", group, sizeof(group), NULL), 1);
                assert_string_equal(group, "prime256v1");
            }
            int nid = X509_get_signature_nid(x);
            if (cases[i].type == CERTGEN_KEY_ED25519)
                assert_int_equal(nid, NID_ED25519);
            else if (cases[i].type == CERTGEN_KEY_ECDSA_P256)
                assert_int_equal(nid, NID_ecdsa_with_SHA256);
            else
                assert_int_equal(nid, NID_sha256WithRSAEncryption);
            X509_free(x);
        }
        certgen_bundle_cleanup(&b);
    }
    enum certgen_key_type t;
    assert_int_equal(certgen_key_type_parse("dsa-1024", &t), K_EINVAL);
    assert_int_equal(certgen_key_type_parse("ECDSA-P256", &t), K_EINVAL);
}

static void test_usages_and_constraints(void **state)
{
    (void)state;
    static const enum certgen_key_type types[] = {CERTGEN_KEY_ECDSA_P256, CERTGEN_KEY_RSA_2048};
    for (size_t i = 0; i < 2; i++) {
        struct certgen_options o = base_options();
        struct certgen_bundle b;
        o.key_type = types[i];
        generate_ok(&o, &b);
        X509 *leaf = parse_cert(b.tls_cert_pem), *ca = parse_cert(b.ca_cert_pem);

        /* Serving certificate: serverAuth only, not a CA, digitalSignature (+keyEnc for RSA). */
        uint32_t lf = X509_get_extension_flags(leaf);
        assert_true(lf & EXFLAG_XKUSAGE);
        assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
        assert_true(lf & EXFLAG_BCONS);
        assert_false(lf & EXFLAG_CA);
        assert_int_equal(X509_check_ca(leaf), 0);
        uint32_t want = KU_DIGITAL_SIGNATURE;
        if (types[i] == CERTGEN_KEY_RSA_2048)
            want |= KU_KEY_ENCIPHERMENT;
        assert_int_equal(X509_get_key_usage(leaf), want);
        int crit = -1;
        BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(leaf, NID_basic_constraints, &crit, NULL);
        assert_non_null(bc);
        assert_int_equal(crit, 1);
        BASIC_CONSTRAINTS_free(bc);

        /* CA: CA:TRUE, keyCertSign + cRLSign, self-signed. */
        assert_true(X509_get_extension_flags(ca) & EXFLAG_CA);
        assert_int_equal(X509_check_ca(ca), 1);
        assert_int_equal(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
        assert_int_equal(X509_check_issued(ca, ca), X509_V_OK);
        assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);

        /* SKI on both; the leaf's AKI is the CA's SKI. */
        const ASN1_OCTET_STRING *ca_ski = X509_get0_subject_key_id(ca);
        assert_non_null(ca_ski);
        assert_non_null(X509_get0_subject_key_id(leaf));
        const ASN1_OCTET_STRING *aki = X509_get0_authority_key_id(leaf);
        assert_non_null(aki);
        assert_int_equal(ASN1_OCTET_STRING_cmp(aki, ca_ski), 0);
        assert_int_equal(X509_get_version(leaf), X509_VERSION_3);
        X509_free(leaf);
        X509_free(ca);
        certgen_bundle_cleanup(&b);
    }
}

/* --client-cn: a client certificate from the same CA, for TLS client authentication only. */
static void test_client_certificate(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle b;
    generate_ok(&o, &b);
    assert_null(b.client_cert_pem);
    assert_null(b.client_key_pem);
    certgen_bundle_cleanup(&b);

    o.client_cn = "kube-apiserver";
    generate_ok(&o, &b);
    assert_non_null(b.client_cert_pem);
    X509 *c = parse_cert(b.client_cert_pem), *ca = parse_cert(b.ca_cert_pem);
    EVP_PKEY *k = parse_key(b.client_key_pem);
    assert_int_equal(X509_check_private_key(c, k), 1);
    assert_int_equal(X509_check_issued(ca, c), X509_V_OK);
    assert_int_equal(X509_get_extended_key_usage(c), XKU_SSL_CLIENT);
    assert_int_equal(X509_check_ca(c), 0);
    assert_null(X509_get_ext_d2i(c, NID_subject_alt_name, NULL, NULL));
    char cn[128];
    X509_NAME_get_text_by_NID(X509_get_subject_name(c), NID_commonName, cn, sizeof(cn));
    assert_string_equal(cn, "kube-apiserver");
    /* chains to the CA for a client, not for a server */
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_add_cert(store, ca);
    for (int purpose = 0; purpose < 2; purpose++) {
        assert_int_equal(X509_STORE_CTX_init(ctx, store, c, NULL), 1);
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), NOW + DAY);
        X509_STORE_CTX_set_purpose(ctx,
                                   purpose ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT);
        assert_int_equal(X509_verify_cert(ctx), purpose ? 0 : 1);
        X509_STORE_CTX_cleanup(ctx);
    }
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    EVP_PKEY_free(k);
    X509_free(c);
    X509_free(ca);
    certgen_bundle_cleanup(&b);

    char err[256];
    o.client_cn = "";
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
}

static void test_lifetimes(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle b;
    o.ca_days = 3650;
    o.cert_days = 90;
    generate_ok(&o, &b);
    X509 *leaf = parse_cert(b.tls_cert_pem), *ca = parse_cert(b.ca_cert_pem);
    assert_int_equal(cert_time(X509_get0_notBefore(leaf)), NOW - CERTGEN_BACKDATE_SECONDS);
    assert_int_equal(cert_time(X509_get0_notAfter(leaf)), NOW + 90 * DAY);
    assert_int_equal(cert_time(X509_get0_notBefore(ca)), NOW - CERTGEN_BACKDATE_SECONDS);
    assert_int_equal(cert_time(X509_get0_notAfter(ca)), NOW + 3650 * DAY);
    assert_int_equal(b.tls_not_after, NOW + 90 * DAY);
    assert_int_equal(b.ca_not_after, NOW + 3650 * DAY);
    assert_false(b.not_after_clamped);
    X509_free(leaf);
    X509_free(ca);
    certgen_bundle_cleanup(&b);

    /* A serving certificate never outlives its CA. */
    o.ca_days = 30;
    o.cert_days = 365;
    generate_ok(&o, &b);
    leaf = parse_cert(b.tls_cert_pem);
    assert_true(b.not_after_clamped);
    assert_int_equal(cert_time(X509_get0_notAfter(leaf)), NOW + 30 * DAY);
    X509_free(leaf);
    certgen_bundle_cleanup(&b);

    char err[256];
    o.cert_days = 0;
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
    o.cert_days = CERTGEN_MAX_DAYS + 1;
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
    assert_null(b.ca_cert_pem);
}

static void test_serials_are_random_and_positive(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle a, b;
    generate_ok(&o, &a);
    generate_ok(&o, &b);
    X509 *certs[4] = {parse_cert(a.ca_cert_pem), parse_cert(a.tls_cert_pem),
                      parse_cert(b.ca_cert_pem), parse_cert(b.tls_cert_pem)};
    for (int i = 0; i < 4; i++) {
        const ASN1_INTEGER *s = X509_get0_serialNumber(certs[i]);
        BIGNUM *bn = ASN1_INTEGER_to_BN(s, NULL);
        assert_false(BN_is_negative(bn));
        assert_false(BN_is_zero(bn));
        assert_true(BN_num_bits(bn) <= 127);
        assert_true(BN_num_bits(bn) > 64); /* fails with probability 2^-63 */
        BN_free(bn);
        for (int j = 0; j < i; j++)
            assert_int_not_equal(ASN1_INTEGER_cmp(s, X509_get0_serialNumber(certs[j])), 0);
    }
    for (int i = 0; i < 4; i++)
        X509_free(certs[i]);
    certgen_bundle_cleanup(&a);
    certgen_bundle_cleanup(&b);
}

static void test_renewal_keeps_the_ca(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle first, renewed;
    o.key_type = CERTGEN_KEY_ECDSA_P256;
    generate_ok(&o, &first);

    /* A year later, a new serving cert (even of another key type) from the same CA. */
    o.ca_cert_pem = first.ca_cert_pem;
    o.ca_key_pem = first.ca_key_pem;
    o.key_type = CERTGEN_KEY_RSA_2048;
    o.now = NOW + 300 * DAY;
    generate_ok(&o, &renewed);
    assert_true(renewed.ca_reused);
    assert_string_equal(renewed.ca_cert_pem, first.ca_cert_pem);
    assert_string_equal(renewed.ca_key_pem, first.ca_key_pem);
    assert_string_not_equal(renewed.tls_cert_pem, first.tls_cert_pem);
    assert_string_not_equal(renewed.tls_key_pem, first.tls_key_pem);
    /* The old caBundle (first.ca_cert_pem) trusts the new serving certificate. */
    assert_int_equal(openssl_verify(first.ca_cert_pem, renewed.tls_cert_pem,
                                    "gputri-webhook.gputri.svc", NOW + 300 * DAY),
                     1);
    X509 *x = parse_cert(renewed.tls_cert_pem);
    assert_int_equal(cert_time(X509_get0_notAfter(x)), NOW + 300 * DAY + 365 * DAY);
    X509_free(x);
    certgen_bundle_cleanup(&renewed);

    char err[256];
    /* CA expired: refused with a clear reason. */
    o.now = NOW + 3651 * DAY;
    assert_int_equal(certgen_generate(&o, &renewed, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "expired"));

    /* Key of another CA: refused. */
    struct certgen_bundle other;
    o.now = NOW;
    o.ca_cert_pem = NULL;
    o.ca_key_pem = NULL;
    generate_ok(&o, &other);
    o.ca_cert_pem = first.ca_cert_pem;
    o.ca_key_pem = other.ca_key_pem;
    assert_int_equal(certgen_generate(&o, &renewed, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "does not match"));

    /* A serving certificate is not a CA. */
    o.ca_cert_pem = other.tls_cert_pem;
    o.ca_key_pem = other.tls_key_pem;
    assert_int_equal(certgen_generate(&o, &renewed, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "not a CA"));

    /* Only one of the two. */
    o.ca_key_pem = NULL;
    assert_int_equal(certgen_generate(&o, &renewed, err, sizeof(err)), K_EINVAL);

    /* Garbage. */
    o.ca_cert_pem = "not a certificate";
    o.ca_key_pem = "not a key";
    assert_int_equal(certgen_generate(&o, &renewed, err, sizeof(err)), K_EINVAL);
    certgen_bundle_cleanup(&other);
    certgen_bundle_cleanup(&first);
}

static void test_invalid_names(void **state)
{
    (void)state;
    static const char *const bad_dns[] = {"UPPER.example", "-x.example", "a..b", "", "x_y"};
    static const char *const bad_ip[] = {"1.2.3.4.5", "localhost", "300.1.1.1"};
    struct certgen_bundle b;
    char err[256];
    for (size_t i = 0; i < sizeof(bad_dns) / sizeof(bad_dns[0]); i++) {
        struct certgen_options o = base_options();
        o.dns = &bad_dns[i];
        o.n_dns = 1;
        assert_int_equal(certgen_options_check(&o, err, sizeof(err)), K_EINVAL);
        assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
        assert_non_null(strstr(err, "invalid DNS name"));
    }
    for (size_t i = 0; i < sizeof(bad_ip) / sizeof(bad_ip[0]); i++) {
        struct certgen_options o = base_options();
        o.ips = &bad_ip[i];
        o.n_ips = 1;
        assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
        assert_non_null(strstr(err, "invalid IP"));
    }
    struct certgen_options o = base_options();
    assert_int_equal(certgen_options_check(&o, err, sizeof(err)), K_OK);
    o.service = "1webhook"; /* DNS-1035: must start with a letter */
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
    o.service = "gputri-webhook";
    o.namespace_name = NULL;
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);

    /* No names at all. */
    certgen_options_init(&o);
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "no names"));

    /* Only an IP works, and a wildcard DNS name is accepted. */
    static const char *const ip[] = {"127.0.0.1"};
    static const char *const wild[] = {"*.example.test"};
    o.ips = ip;
    o.n_ips = 1;
    o.dns = wild;
    o.n_dns = 1;
    generate_ok(&o, &b);
    assert_int_equal(
        certgen_verify(b.ca_cert_pem, b.tls_cert_pem, "127.0.0.1", o.now, err, sizeof(err)), K_OK);
    assert_int_equal(
        certgen_verify(b.ca_cert_pem, b.tls_cert_pem, "a.example.test", o.now, err, sizeof(err)),
        K_OK);
    certgen_bundle_cleanup(&b);
}

static void test_inspect(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle b;
    generate_ok(&o, &b);
    struct certgen_cert_info *info = NULL;
    size_t n = 0;
    char err[256];
    assert_int_equal(certgen_inspect(b.tls_cert_pem, &info, &n, err, sizeof(err)), K_OK);
    assert_int_equal(n, 1);
    assert_string_equal(info[0].subject, "CN=gputri-webhook.gputri.svc");
    assert_string_equal(
        info[0].sans, "DNS:gputri-webhook, DNS:gputri-webhook.gputri, "
                      "DNS:gputri-webhook.gputri.svc, DNS:gputri-webhook.gputri.svc.cluster.local, "
                      "DNS:webhook.example.test, IP:127.0.0.1, IP:::1");
    assert_string_equal(info[0].key, "ECDSA P-256");
    assert_false(info[0].is_ca);
    assert_int_equal(info[0].not_after, NOW + 365 * DAY);
    assert_int_equal(info[0].not_before, NOW - CERTGEN_BACKDATE_SECONDS);

    /* The fingerprint is SHA-256 of the DER. */
    X509 *x = parse_cert(b.tls_cert_pem);
    unsigned char md[32];
    unsigned int mdlen = 0;
    assert_int_equal(X509_digest(x, EVP_sha256(), md, &mdlen), 1);
    char want[96];
    size_t pos = 0;
    for (unsigned int i = 0; i < mdlen; i++)
        pos += (size_t)snprintf(want + pos, sizeof(want) - pos, "%s%02X", i ? ":" : "", md[i]);
    assert_string_equal(info[0].fingerprint, want);
    X509_free(x);
    certgen_inspect_free(info, n);

    /* A bundle of two certificates gives two entries; the CA says so. */
    size_t len = strlen(b.ca_cert_pem) + strlen(b.tls_cert_pem) + 1;
    char *bundle = malloc(len);
    snprintf(bundle, len, "%s%s", b.ca_cert_pem, b.tls_cert_pem);
    assert_int_equal(certgen_inspect(bundle, &info, &n, err, sizeof(err)), K_OK);
    assert_int_equal(n, 2);
    assert_true(info[0].is_ca);
    assert_string_equal(info[0].sans, "");
    assert_string_equal(info[0].subject, info[1].issuer);
    certgen_inspect_free(info, n);
    free(bundle);

    assert_int_equal(certgen_inspect(b.tls_key_pem, &info, &n, err, sizeof(err)), K_EINVAL);
    assert_int_equal(certgen_inspect("", &info, &n, err, sizeof(err)), K_EINVAL);
    assert_int_equal(
        certgen_inspect("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", &info, &n,
                        err, sizeof(err)),
        K_EINVAL);
    assert_null(info);
    certgen_bundle_cleanup(&b);
}

/* No byte a terminal acts on: C0, DEL, C1 in UTF-8 (0xc2 0x80..0x9f). */
static void assert_terminal_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        assert_true(*p >= 0x20 && *p != 0x7f);
        assert_false(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
    }
}

/* A certificate (from a Secret, say) whose DNS SAN and subject carry ESC, DEL and a C1 CSI: an
 * IA5String takes any byte. inspect reports them escaped. */
static void test_inspect_escapes_controls(void **state)
{
    (void)state;
    static const char bad[] = "a\x1b[2J\x7f\xc2\x9b"
                              "31m";
    struct certgen_options o = base_options();
    struct certgen_bundle b;
    generate_ok(&o, &b);
    X509 *x = parse_cert(b.tls_cert_pem);
    EVP_PKEY *ca_key = parse_key(b.ca_key_pem);
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    GENERAL_NAME *gn = GENERAL_NAME_new();
    ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();
    assert_non_null(gens);
    assert_non_null(gn);
    assert_non_null(ia5);
    assert_int_equal(ASN1_STRING_set(ia5, bad, (int)sizeof(bad) - 1), 1);
    GENERAL_NAME_set0_value(gn, GEN_DNS, ia5);
    assert_true(sk_GENERAL_NAME_push(gens, gn) > 0);
    X509_EXTENSION_free(X509_delete_ext(x, X509_get_ext_by_NID(x, NID_subject_alt_name, -1)));
    assert_int_equal(X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT), 1);
    GENERAL_NAMES_free(gens);
    assert_int_equal(X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "O", MBSTRING_UTF8,
                                                (const unsigned char *)bad, -1, -1, 0),
                     1);
    assert_true(X509_sign(x, ca_key, EVP_sha256()) > 0);
    BIO *bio = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_X509(bio, x), 1);
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    char *pem = strndup(data, (size_t)len);
    assert_non_null(pem);

    struct certgen_cert_info *info = NULL;
    size_t n = 0;
    char err[256];
    assert_int_equal(certgen_inspect(pem, &info, &n, err, sizeof(err)), K_OK);
    assert_int_equal(n, 1);
    assert_string_equal(info[0].sans, "DNS:a\\x1b[2J\\x7f\\u009b31m");
    assert_terminal_safe(info[0].subject);
    assert_terminal_safe(info[0].sans);
    certgen_inspect_free(info, n);
    free(pem);
    BIO_free(bio);
    EVP_PKEY_free(ca_key);
    X509_free(x);
    certgen_bundle_cleanup(&b);
}

static void test_base64(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = NULL;
        assert_int_equal(certgen_base64(cases[i].in, strlen(cases[i].in), &s), K_OK);
        assert_string_equal(s, cases[i].out);
        free(s);
    }
    /* No line breaks even for long input (a caBundle is one string). */
    char big[3000];
    memset(big, 'x', sizeof(big));
    char *s = NULL;
    assert_int_equal(certgen_base64(big, sizeof(big), &s), K_OK);
    assert_int_equal(strlen(s), 4000);
    assert_null(strchr(s, '\n'));
    free(s);
}

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/test_certgen.XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void test_atomic_write(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[512], err[256], got[64];
    snprintf(path, sizeof(path), "%s/tls.key", dir);

    assert_int_equal(
        certgen_write_file_atomic(dir, "tls.key", "old content", 11, 0600, err, sizeof(err)), K_OK);
    struct stat st1;
    assert_int_equal(stat(path, &st1), 0);
    assert_int_equal(st1.st_mode & 07777, 0600);

    /* A reader that opened the old file keeps seeing the old bytes: the file was replaced by
     * rename(), not rewritten in place, so no reader can see a half-written key. */
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(certgen_write_file_atomic(dir, "tls.key", "new", 3, 0600, err, sizeof(err)),
                     K_OK);
    ssize_t n = read(fd, got, sizeof(got) - 1);
    assert_int_equal(n, 11);
    got[n] = '\0';
    assert_string_equal(got, "old content");
    close(fd);

    struct stat st2;
    assert_int_equal(stat(path, &st2), 0);
    assert_int_not_equal(st1.st_ino, st2.st_ino);
    assert_int_equal(st2.st_size, 3);
    assert_int_equal(st2.st_mode & 07777, 0600);

    /* Mode is exact regardless of umask; no temporary files are left behind. */
    mode_t old_umask = umask(077);
    assert_int_equal(certgen_write_file_atomic(dir, "ca.crt", "x", 1, 0644, err, sizeof(err)),
                     K_OK);
    umask(old_umask);
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    assert_int_equal(stat(path, &st2), 0);
    assert_int_equal(st2.st_mode & 07777, 0644);
    assert_int_equal(count_entries(dir), 2);

    /* Read back through certgen_read_file. */
    char *content = NULL;
    snprintf(path, sizeof(path), "%s/tls.key", dir);
    assert_int_equal(certgen_read_file(path, &content, err, sizeof(err)), K_OK);
    assert_string_equal(content, "new");
    free(content);

    /* A missing directory is K_ENOTFOUND and leaves nothing behind. */
    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_int_equal(certgen_write_file_atomic(path, "tls.crt", "x", 1, 0644, err, sizeof(err)),
                     K_ENOTFOUND);
    assert_int_equal(certgen_read_file(path, &content, err, sizeof(err)), K_ENOTFOUND);
    assert_int_equal(count_entries(dir), 2);

    snprintf(path, sizeof(path), "%s/tls.key", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

/* Lifetimes in seconds and a shorter backdate, for the webhook's short-lived certificates. */
static void test_seconds_lifetimes(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle b;
    o.ca_seconds = 300;
    o.cert_seconds = 120;
    o.backdate_seconds = 30;
    generate_ok(&o, &b);
    time_t nb, na;
    assert_int_equal(certgen_cert_times(b.tls_cert_pem, &nb, &na), K_OK);
    assert_int_equal(nb, NOW - 30);
    assert_int_equal(na, NOW + 120);
    assert_int_equal(certgen_cert_times(b.ca_cert_pem, &nb, &na), K_OK);
    assert_int_equal(na, NOW + 300);
    assert_int_equal(certgen_key_matches(b.tls_cert_pem, b.tls_key_pem), K_OK);
    assert_int_equal(certgen_key_matches(b.ca_cert_pem, b.ca_key_pem), K_OK);
    assert_int_equal(certgen_key_matches(b.tls_cert_pem, b.ca_key_pem), K_EINVAL);
    /* only the CA may sign: the serving certificate may not, nor text without a certificate */
    assert_int_equal(certgen_can_sign(b.ca_cert_pem), K_OK);
    assert_int_equal(certgen_can_sign(b.tls_cert_pem), K_EINVAL);
    assert_int_equal(certgen_can_sign("not PEM"), K_EINVAL);
    assert_int_equal(certgen_key_matches("nothing", b.ca_key_pem), K_EINVAL);
    certgen_bundle_cleanup(&b);

    char err[256];
    o.cert_seconds = 59;
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
    o.cert_seconds = 120;
    o.backdate_seconds = CERTGEN_BACKDATE_SECONDS + 1;
    assert_int_equal(certgen_generate(&o, &b, err, sizeof(err)), K_EINVAL);
}

static size_t count_certs(const char *pem)
{
    size_t n = 0;
    for (const char *p = pem; (p = strstr(p, "BEGIN CERTIFICATE")); p++)
        n++;
    return n;
}

/* A CA bundle: the new CA first, old ones after while valid, no duplicates, at most max. */
static void test_bundle_join(void **state)
{
    (void)state;
    struct certgen_options o = base_options();
    struct certgen_bundle old, cur;
    o.ca_seconds = 600;
    generate_ok(&o, &old);
    o.now = NOW + 300;
    generate_ok(&o, &cur);
    char *j = NULL, *first = NULL, *j2 = NULL;
    assert_int_equal(certgen_bundle_join(cur.ca_cert_pem, old.ca_cert_pem, NOW + 300, 4, &j), K_OK);
    assert_int_equal(count_certs(j), 2);
    assert_int_equal(certgen_first_pem(j, &first), K_OK);
    assert_string_equal(first, cur.ca_cert_pem);
    assert_non_null(strstr(j, old.ca_cert_pem));
    /* joined again with itself: no duplicates */
    assert_int_equal(certgen_bundle_join(first, j, NOW + 300, 4, &j2), K_OK);
    assert_string_equal(j2, j);
    free(j2);
    /* once the old CA expired it is dropped */
    assert_int_equal(certgen_bundle_join(first, j, NOW + 601, 4, &j2), K_OK);
    assert_string_equal(j2, cur.ca_cert_pem);
    free(j2);
    /* max */
    assert_int_equal(certgen_bundle_join(first, j, NOW + 300, 1, &j2), K_OK);
    assert_int_equal(count_certs(j2), 1);
    free(j2);
    assert_int_equal(certgen_bundle_join("no PEM", j, NOW, 4, &j2), K_EINVAL);
    assert_int_equal(certgen_first_pem("no PEM", &j2), K_EINVAL);
    free(first);
    free(j);
    certgen_bundle_cleanup(&old);
    certgen_bundle_cleanup(&cur);
}

static void test_unbase64(void **state)
{
    (void)state;
    static const char *const plain[] = {"", "a", "ab", "abc", "abcd", "-----BEGIN X-----\n"};
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        char *enc = NULL, *dec = NULL;
        size_t len = 99;
        assert_int_equal(certgen_base64(plain[i], strlen(plain[i]), &enc), K_OK);
        assert_int_equal(certgen_unbase64(enc, &dec, &len), K_OK);
        assert_int_equal(len, strlen(plain[i]));
        assert_string_equal(dec, plain[i]);
        free(enc);
        free(dec);
    }
    char *dec = NULL;
    size_t len;
    assert_int_equal(certgen_unbase64("abc", &dec, &len), K_EINVAL);
    assert_int_equal(certgen_unbase64("ab$=", &dec, &len), K_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_verifies_for_every_key_type),
        cmocka_unit_test(test_sans),
        cmocka_unit_test(test_key_types),
        cmocka_unit_test(test_usages_and_constraints),
        cmocka_unit_test(test_client_certificate),
        cmocka_unit_test(test_lifetimes),
        cmocka_unit_test(test_serials_are_random_and_positive),
        cmocka_unit_test(test_renewal_keeps_the_ca),
        cmocka_unit_test(test_invalid_names),
        cmocka_unit_test(test_inspect),
        cmocka_unit_test(test_inspect_escapes_controls),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_seconds_lifetimes),
        cmocka_unit_test(test_bundle_join),
        cmocka_unit_test(test_unbase64),
        cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
