/* tls_source.c - PEM cert/key pairs for GnuTLS, reloaded when the files change. */
#include "tls_source.h"

#include <errno.h>
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

static int load_pair(const char *cert_file, const char *key_file, struct generation **out,
                     char *err, size_t errlen)
{
    gnutls_datum_t cert = {0}, key = {0};
    struct generation *g = calloc(1, sizeof(*g));
    int rc = K_ENOMEM, grc;
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
    rc = K_EINVAL;
    unsigned n = TLS_SOURCE_MAX_CHAIN;
    grc = gnutls_pcert_list_import_x509_raw(g->pcerts, &n, &cert, GNUTLS_X509_FMT_PEM, 0);
    if (grc < 0 || n == 0) {
        snprintf(err, errlen, "%s: no usable PEM certificate (%s)", cert_file,
                 grc < 0 ? gnutls_strerror(grc) : "empty");
        goto out;
    }
    g->n_pcerts = n;
    if ((grc = gnutls_privkey_init(&g->key)) < 0) {
        g->key = NULL;
        rc = K_ENOMEM;
        goto out;
    }
    grc = gnutls_privkey_import_x509_raw(g->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (grc < 0) {
        snprintf(err, errlen, "%s: no usable PEM private key (%s)", key_file, gnutls_strerror(grc));
        goto out;
    }
    if (!key_matches(g->key, g->pcerts[0].pubkey)) {
        snprintf(err, errlen, "%s does not belong to the certificate in %s", key_file, cert_file);
        goto out;
    }
    rc = K_OK;
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
    if (!s)
        return 0;
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
        log_warn("keeping the current certificate: reload failed: %s", err);
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
    log_info(0, "serving certificate reloaded from %s (generation %lu)", s->cert_file, gen);
    published = 1;
out:
    pthread_mutex_unlock(&s->mu);
    return published;
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
    if (s->cert_file && s->key_file)
        pthread_mutex_destroy(&s->mu);
    free(s->cert_file);
    free(s->key_file);
    free(s);
}
