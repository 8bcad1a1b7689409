/* client_ca.c - CA certificates for client certificates, reloaded when the file changes. */
#include "client_ca.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/result.h"

struct client_ca {
    char *file;
    char *pem0; /* the PEM read at start */
    pthread_rwlock_t lock;
    gnutls_x509_trust_list_t trust; /* under lock */
    struct file_id id;              /* of the loaded file; under mu */
    struct file_id failed;          /* last identity that failed to load, logged once */
    bool have_failed;
    pthread_mutex_t mu; /* reloads */
    _Atomic(const struct clock *) clock;
    atomic_llong last_check_ms;
    atomic_ulong generation;
};

/* Reads and parses `file`; returns K_OK with a new trust list, its identity and (when pem is
 * not NULL) the text. */
static int load(const char *file, gnutls_x509_trust_list_t *out, struct file_id *id, char **pem,
                char *err, size_t errlen)
{
    *out = NULL;
    int rc = file_id_stat(file, id);
    if (rc != K_OK) {
        snprintf(err, errlen, "%s: %s", file, strerror(errno));
        return rc;
    }
    struct buf b;
    buf_init(&b, CLIENT_CA_MAX_FILE);
    rc = file_read(file, &b, FILE_REGULAR_ONLY);
    if (rc == K_ETOOBIG)
        snprintf(err, errlen, "%s: larger than %u bytes", file, CLIENT_CA_MAX_FILE);
    else if (rc != K_OK)
        snprintf(err, errlen, "%s: %s", file, rc == K_ENOMEM ? "out of memory" : strerror(errno));
    if (rc != K_OK) {
        buf_cleanup(&b);
        return rc;
    }
    gnutls_x509_trust_list_t tl;
    if (gnutls_x509_trust_list_init(&tl, 0) < 0) {
        buf_cleanup(&b);
        return K_ENOMEM;
    }
    gnutls_datum_t d = {.data = (unsigned char *)b.data, .size = (unsigned)b.len};
    int n =
        b.len ? gnutls_x509_trust_list_add_trust_mem(tl, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0) : 0;
    if (n <= 0) {
        snprintf(err, errlen, "%s: no PEM CA certificate (%s)", file,
                 n < 0 ? gnutls_strerror(n) : "empty");
        gnutls_x509_trust_list_deinit(tl, 1);
        buf_cleanup(&b);
        return K_EINVAL;
    }
    if (pem)
        *pem = buf_take(&b);
    buf_cleanup(&b);
    *out = tl;
    return K_OK;
}

int client_ca_new(const char *file, struct client_ca **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", "");
    struct client_ca *c = calloc(1, sizeof(*c));
    if (!c || !(c->file = strdup(file))) {
        free(c);
        return K_ENOMEM;
    }
    int rc = load(file, &c->trust, &c->id, &c->pem0, err, errlen);
    if (rc != K_OK) {
        free(c->file);
        free(c);
        return rc;
    }
    pthread_rwlock_init(&c->lock, NULL);
    pthread_mutex_init(&c->mu, NULL);
    atomic_store(&c->generation, 1);
    atomic_store(&c->last_check_ms, clock_mono_ms(NULL));
    *out = c;
    return K_OK;
}

void client_ca_set_clock(struct client_ca *c, const struct clock *clock)
{
    atomic_store(&c->clock, clock);
    atomic_store(&c->last_check_ms, clock_mono_ms(clock) - 1000);
}

const char *client_ca_pem(const struct client_ca *c)
{
    return c->pem0;
}

unsigned long client_ca_generation(struct client_ca *c)
{
    return atomic_load(&c->generation);
}

int client_ca_check(struct client_ca *c, bool force)
{
    long long now = clock_mono_ms(atomic_load(&c->clock));
    long long last = atomic_load(&c->last_check_ms);
    if (!force) {
        /* one thread per second wins the right to look at the file */
        if (now - last < 1000 || !atomic_compare_exchange_strong(&c->last_check_ms, &last, now))
            return 0;
        if (pthread_mutex_trylock(&c->mu) != 0)
            return 0;
    } else {
        atomic_store(&c->last_check_ms, now);
        pthread_mutex_lock(&c->mu);
    }
    int taken = 0;
    struct file_id id;
    if (file_id_stat(c->file, &id) != K_OK || file_id_equal(&id, &c->id) ||
        (c->have_failed && file_id_equal(&id, &c->failed)))
        goto out; /* removed or mid-rename (keep the old CAs), or nothing new */
    char err[512];
    gnutls_x509_trust_list_t tl;
    if (load(c->file, &tl, &id, NULL, err, sizeof(err)) != K_OK) {
        log_warn_kv("keeping the current client CA: reload failed", LOG_STR("err", err));
        c->failed = id;
        c->have_failed = true;
        goto out;
    }
    c->have_failed = false;
    c->id = id;
    pthread_rwlock_wrlock(&c->lock);
    gnutls_x509_trust_list_t old = c->trust;
    c->trust = tl;
    pthread_rwlock_unlock(&c->lock);
    gnutls_x509_trust_list_deinit(old, 1);
    unsigned long gen = atomic_fetch_add(&c->generation, 1) + 1;
    log_info_kv(0, "client CA reloaded", LOG_STR("file", c->file), LOG_INT("generation", gen));
    taken = 1;
out:
    pthread_mutex_unlock(&c->mu);
    return taken;
}

bool client_ca_verify(void *ctx, const struct http_peer_cert *chain, unsigned n)
{
    struct client_ca *c = ctx;
    if (!c || n == 0 || n > HTTP_MAX_PEER_CHAIN)
        return false;
    client_ca_check(c, false);
    gnutls_x509_crt_t crts[HTTP_MAX_PEER_CHAIN];
    unsigned k = 0;
    bool ok = false;
    for (; k < n; k++) {
        gnutls_datum_t d = {.data = (unsigned char *)chain[k].der, .size = (unsigned)chain[k].len};
        if (gnutls_x509_crt_init(&crts[k]) < 0)
            goto out;
        if (gnutls_x509_crt_import(crts[k], &d, GNUTLS_X509_FMT_DER) < 0) {
            k++;
            goto out;
        }
    }
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    unsigned status = 0;
    pthread_rwlock_rdlock(&c->lock);
    int rc = gnutls_x509_trust_list_verify_crt2(c->trust, crts, n, &purpose, 1, 0, &status, NULL);
    pthread_rwlock_unlock(&c->lock);
    ok = rc == 0 && status == 0;
out:
    for (unsigned i = 0; i < k; i++)
        gnutls_x509_crt_deinit(crts[i]);
    return ok;
}

void client_ca_free(struct client_ca *c)
{
    if (!c)
        return;
    gnutls_x509_trust_list_deinit(c->trust, 1);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->mu);
    free(c->pem0);
    free(c->file);
    free(c);
}
