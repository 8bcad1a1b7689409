/* tls_source.c - PEM cert/key pairs for GnuTLS, reloaded when the files change. */
#include "http/tls_source.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/result.h"

struct generation {
    gnutls_pcert_st pcerts[TLS_SOURCE_MAX_CHAIN];
    unsigned n_pcerts;
    gnutls_privkey_t key;
    struct file_id cert_id, key_id;
    int64_t retired_ms;      /* monotonic; 0 while current */
    struct generation *next; /* retired list */
};

struct tls_source {
    char *cert_file, *key_file;
    _Atomic(struct generation *) current;
    _Atomic(const struct clock *) clock; /* NULL: the system clock */
    atomic_llong last_check_ms;
    atomic_ulong generation;
    pthread_mutex_t mu; /* reloads, the retired list, failed ids */
    struct generation *retired;
    struct file_id failed_cert, failed_key; /* last pair that failed, logged once */
    bool have_failed;
    bool mu_init;
};

static _Atomic(struct tls_source *) installed;

static long long now_ms(const struct tls_source *s)
{
    return clock_mono_ms(atomic_load(&s->clock));
}

/*
 * Reads a whole file, NUL-terminated (GnuTLS wants NUL-terminated PEM). Never blocks (this runs
 * in the TLS handshake): a FIFO or device at the path is refused without waiting on it.
 */
static int read_file(const char *path, gnutls_datum_t *out, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, TLS_SOURCE_MAX_FILE);
    int rc = file_read(path, &b, FILE_REGULAR_ONLY);
    if (rc == K_ETOOBIG)
        snprintf(err, errlen, "%s: larger than %u bytes", path, TLS_SOURCE_MAX_FILE);
    else if (rc == K_EIO && errno == EINVAL)
        snprintf(err, errlen, "%s: not a regular file", path);
    else if (rc != K_OK && rc != K_ENOMEM)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (rc != K_OK) {
        buf_cleanup(&b);
        return rc;
    }
    out->size = (unsigned)b.len;
    out->data = (unsigned char *)buf_take(&b);
    return K_OK;
}

static void generation_free(struct generation *g)
{
    if (!g)
        return;
    for (unsigned i = 0; i < g->n_pcerts; i++)
        gnutls_pcert_deinit(&g->pcerts[i]);
    if (g->key)
        gnutls_privkey_deinit(g->key);
    free(g);
}

/* Whether the private key's public half equals the leaf certificate's public key. */
static bool key_matches(gnutls_privkey_t key, gnutls_pubkey_t leaf)
{
    gnutls_pubkey_t pk = NULL;
    gnutls_datum_t a = {0}, b = {0};
    bool ok = false;
    if (gnutls_pubkey_init(&pk) < 0)
        return false;
    if (gnutls_pubkey_import_privkey(pk, key, 0, 0) >= 0 &&
        gnutls_pubkey_export2(pk, GNUTLS_X509_FMT_DER, &a) >= 0 &&
        gnutls_pubkey_export2(leaf, GNUTLS_X509_FMT_DER, &b) >= 0)
        ok = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    gnutls_free(a.data);
    gnutls_free(b.data);
    gnutls_pubkey_deinit(pk);
    return ok;
}

/* A generation from PEM text (the names are for messages). */
static int make_generation(const gnutls_datum_t *cert, const gnutls_datum_t *key,
                           const char *cert_name, const char *key_name, struct generation *g,
                           char *err, size_t errlen)
{
    unsigned n = TLS_SOURCE_MAX_CHAIN;
    int grc = gnutls_pcert_list_import_x509_raw(g->pcerts, &n, cert, GNUTLS_X509_FMT_PEM, 0);
    if (grc < 0 || n == 0) {
        snprintf(err, errlen, "%s: no usable PEM certificate (%s)", cert_name,
                 grc < 0 ? gnutls_strerror(grc) : "empty");
        return K_EINVAL;
    }
    g->n_pcerts = n;
    if (gnutls_privkey_init(&g->key) < 0) {
        g->key = NULL;
        return K_ENOMEM;
    }
    grc = gnutls_privkey_import_x509_raw(g->key, key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (grc < 0) {
        snprintf(err, errlen, "%s: no usable PEM private key (%s)", key_name, gnutls_strerror(grc));
        return K_EINVAL;
    }
    if (!key_matches(g->key, g->pcerts[0].pubkey)) {
        snprintf(err, errlen, "%s does not belong to the certificate in %s", key_name, cert_name);
        return K_EINVAL;
    }
    return K_OK;
}

static int load_pair(const char *cert_file, const char *key_file, struct generation **out,
                     char *err, size_t errlen)
{
    gnutls_datum_t cert = {0}, key = {0};
    struct generation *g = calloc(1, sizeof(*g));
    int rc = K_ENOMEM;
    if (!g)
        goto out;
    /* identities first: a file replaced during the read shows up as a change next time */
    if ((rc = file_id_stat(cert_file, &g->cert_id)) != K_OK) {
        snprintf(err, errlen, "%s: %s", cert_file, strerror(errno));
        goto out;
    }
    if ((rc = file_id_stat(key_file, &g->key_id)) != K_OK) {
        snprintf(err, errlen, "%s: %s", key_file, strerror(errno));
        goto out;
    }
    if ((rc = read_file(cert_file, &cert, err, errlen)) != K_OK ||
        (rc = read_file(key_file, &key, err, errlen)) != K_OK)
        goto out;
    rc = make_generation(&cert, &key, cert_file, key_file, g, err, errlen);
out:
    if (key.data) {
        memset(key.data, 0, key.size);
        free(key.data);
    }
    free(cert.data);
    if (rc != K_OK) {
        generation_free(g);
        g = NULL;
    }
    *out = g;
    return rc;
}

int tls_source_new(const char *cert_file, const char *key_file, struct tls_source **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", "");
    struct tls_source *s = calloc(1, sizeof(*s));
    if (!s)
        return K_ENOMEM;
    s->cert_file = strdup(cert_file);
    s->key_file = strdup(key_file);
    if (!s->cert_file || !s->key_file) {
        tls_source_free(s);
        return K_ENOMEM;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->mu_init = true;
    struct generation *g;
    int rc = load_pair(cert_file, key_file, &g, err, errlen);
    if (rc != K_OK) {
        tls_source_free(s);
        return rc;
    }
    atomic_store(&s->current, g);
    atomic_store(&s->generation, 1);
    atomic_store(&s->last_check_ms, now_ms(s));
    *out = s;
    return K_OK;
}

/* A self-signed certificate and its key as PEM (gnutls_free both). */
static int self_signed_pem(const char *cn, const char *const *dns, size_t n_dns, time_t now,
                           gnutls_datum_t *cert, gnutls_datum_t *key)
{
    gnutls_x509_privkey_t k = NULL;
    gnutls_x509_crt_t c = NULL;
    unsigned char serial[16];
    char dn[128];
    int ok = gnutls_x509_privkey_init(&k) >= 0 &&
             gnutls_x509_privkey_generate(
                 k, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) >= 0 &&
             gnutls_x509_crt_init(&c) >= 0 && gnutls_rnd(GNUTLS_RND_NONCE, serial, 16) >= 0;
    serial[0] &= 0x7f; /* positive */
    snprintf(dn, sizeof(dn), "CN=%s", cn);
    ok = ok && gnutls_x509_crt_set_version(c, 3) >= 0 &&
         gnutls_x509_crt_set_serial(c, serial, sizeof(serial)) >= 0 &&
         gnutls_x509_crt_set_activation_time(c, now - 300) >= 0 &&
         gnutls_x509_crt_set_expiration_time(c, now + TLS_SOURCE_SELF_SIGNED_DAYS * 86400LL) >= 0 &&
         gnutls_x509_crt_set_dn(c, dn, NULL) >= 0 && gnutls_x509_crt_set_key(c, k) >= 0 &&
         gnutls_x509_crt_set_basic_constraints(c, 0, -1) >= 0 &&
         gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_DIGITAL_SIGNATURE) >= 0 &&
         gnutls_x509_crt_set_key_purpose_oid(c, GNUTLS_KP_TLS_WWW_SERVER, 0) >= 0;
    for (size_t i = 0; ok && i < n_dns; i++)
        ok = gnutls_x509_crt_set_subject_alt_name(
                 c, GNUTLS_SAN_DNSNAME, dns[i], (unsigned)strlen(dns[i]), GNUTLS_FSAN_APPEND) >= 0;
    ok = ok && gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0) >= 0 &&
         gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, cert) >= 0 &&
         gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, key) >= 0;
    if (c)
        gnutls_x509_crt_deinit(c);
    if (k)
        gnutls_x509_privkey_deinit(k);
    return ok ? K_OK : K_EIO;
}

int tls_source_new_self_signed(const char *cn, const char *const *dns, size_t n_dns,
                               struct tls_source **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", "");
    gnutls_datum_t cert = {0}, key = {0};
    struct tls_source *s = calloc(1, sizeof(*s));
    struct generation *g = calloc(1, sizeof(*g));
    int rc = s && g ? self_signed_pem(cn, dns, n_dns, time(NULL), &cert, &key) : K_ENOMEM;
    if (rc == K_EIO)
        snprintf(err, errlen, "cannot make a self-signed certificate");
    if (rc == K_OK)
        rc = make_generation(&cert, &key, "self-signed", "self-signed", g, err, errlen);
    if (key.data) {
        memset(key.data, 0, key.size);
        gnutls_free(key.data);
    }
    gnutls_free(cert.data);
    if (rc != K_OK) {
        generation_free(g);
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->mu_init = true;
    atomic_store(&s->current, g);
    atomic_store(&s->generation, 1);
    *out = s;
    return K_OK;
}

void tls_source_set_clock(struct tls_source *s, const struct clock *clock)
{
    atomic_store(&s->clock, clock);
    atomic_store(&s->last_check_ms, now_ms(s) - 1000);
}

static void free_old_retired(struct tls_source *s, int64_t now_ms)
{
    struct generation **pp = &s->retired;
    while (*pp) {
        struct generation *g = *pp;
        if (now_ms - g->retired_ms >= TLS_SOURCE_RETIRE_SECONDS * 1000LL) {
            *pp = g->next;
            generation_free(g);
        } else {
            pp = &g->next;
        }
    }
}

int tls_source_check(struct tls_source *s, bool force)
{
    if (!s || !s->cert_file)
        return 0; /* self-signed: nothing to re-read */
    long long now = now_ms(s);
    long long last = atomic_load(&s->last_check_ms);
    if (!force) {
        /* one thread per second wins the right to look at the files */
        if (now - last < 1000 || !atomic_compare_exchange_strong(&s->last_check_ms, &last, now))
            return 0;
    } else {
        atomic_store(&s->last_check_ms, now);
    }
    if (force)
        pthread_mutex_lock(&s->mu);
    else if (pthread_mutex_trylock(&s->mu) != 0)
        return 0;
    int published = 0;
    free_old_retired(s, now);
    struct generation *cur = atomic_load(&s->current);
    struct file_id cid, kid;
    if (file_id_stat(s->cert_file, &cid) != K_OK || file_id_stat(s->key_file, &kid) != K_OK)
        goto out; /* mid-rename or removed: keep serving the old pair */
    if (file_id_equal(&cid, &cur->cert_id) && file_id_equal(&kid, &cur->key_id))
        goto out;
    if (s->have_failed && file_id_equal(&cid, &s->failed_cert) &&
        file_id_equal(&kid, &s->failed_key))
        goto out;
    char err[512];
    struct generation *g;
    if (load_pair(s->cert_file, s->key_file, &g, err, sizeof(err)) != K_OK) {
        log_warn_kv("keeping the current certificate: reload failed", LOG_STR("err", err));
        s->failed_cert = cid;
        s->failed_key = kid;
        s->have_failed = true;
        goto out;
    }
    s->have_failed = false;
    atomic_store(&s->current, g);
    cur->retired_ms = now;
    cur->next = s->retired;
    s->retired = cur;
    unsigned long gen = atomic_fetch_add(&s->generation, 1) + 1;
    log_info_kv(0, "serving certificate reloaded", LOG_STR("file", s->cert_file),
                LOG_INT("generation", gen));
    published = 1;
out:
    pthread_mutex_unlock(&s->mu);
    return published;
}

int tls_source_set_pem(struct tls_source *s, const char *cert_pem, const char *key_pem, char *err,
                       size_t errlen)
{
    snprintf(err, errlen, "%s", "");
    if (s->cert_file) {
        snprintf(err, errlen, "the pair is read from %s", s->cert_file);
        return K_EINVAL;
    }
    struct generation *g = calloc(1, sizeof(*g));
    if (!g)
        return K_ENOMEM;
    gnutls_datum_t cert = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
    gnutls_datum_t key = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
    int rc = make_generation(&cert, &key, "certificate", "key", g, err, errlen);
    if (rc != K_OK) {
        generation_free(g);
        return rc;
    }
    long long now = now_ms(s);
    pthread_mutex_lock(&s->mu);
    free_old_retired(s, now);
    struct generation *cur = atomic_load(&s->current);
    atomic_store(&s->current, g);
    cur->retired_ms = now;
    cur->next = s->retired;
    s->retired = cur;
    atomic_fetch_add(&s->generation, 1);
    pthread_mutex_unlock(&s->mu);
    return K_OK;
}

unsigned long tls_source_generation(struct tls_source *s)
{
    return s ? atomic_load(&s->generation) : 0;
}

void tls_source_install(struct tls_source *s)
{
    atomic_store(&installed, s);
}

int tls_source_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                        const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                        gnutls_pcert_st **pcert, unsigned int *pcert_length,
                        gnutls_privkey_t *privkey)
{
    (void)session;
    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    struct tls_source *s = atomic_load(&installed);
    if (!s)
        return -1;
    tls_source_check(s, false);
    struct generation *g = atomic_load(&s->current);
    *pcert = g->pcerts;
    *pcert_length = g->n_pcerts;
    *privkey = g->key;
    return 0;
}

void tls_source_free(struct tls_source *s)
{
    if (!s)
        return;
    struct tls_source *expected = s;
    atomic_compare_exchange_strong(&installed, &expected, NULL);
    generation_free(atomic_load(&s->current));
    while (s->retired) {
        struct generation *g = s->retired;
        s->retired = g->next;
        generation_free(g);
    }
    if (s->mu_init)
        pthread_mutex_destroy(&s->mu);
    free(s->cert_file);
    free(s->key_file);
    free(s);
}
