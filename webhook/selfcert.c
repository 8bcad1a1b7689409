/* selfcert.c - the webhook's own CA and serving certificate in a Secret (see selfcert.h). */
#include "selfcert.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "pki/certgen.h"
#include "pki/publish.h"
#include "util/errbuf.h"
#include "util/log.h"
#include "util/result.h"

struct selfcert {
    char *ns, *name, *vwc, *service;
    char host[320]; /* service.namespace.svc: the name the API server checks */
    int64_t ca_s, cert_s, check_ms, retry_ms, settle_ms;
    const struct clock *clock;
    struct kube_client *client;
    struct tls_source *tls;

    pthread_t thread;
    bool started;
    atomic_int cancel; /* set by selfcert_free: ends a request in flight */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;

    atomic_bool ready;
    atomic_ullong created, ca, serving, conflicts, bundles, errors;
    atomic_llong serving_not_after, ca_not_after;

    /* the pass's own (one pass at a time) */
    char *served;  /* tls.crt of the pair served; NULL: the self-signed start-up pair */
    char *seen_ca; /* the bundle's first CA as last found in the caBundle */
    int64_t seen_ca_ms;
};

/* The Secret as read: its data decoded, and the object (for the PUT). */
struct state {
    json_object *obj; /* NULL: no Secret */
    char *ca_crt, *ca_key, *tls_crt, *tls_key;
};

static void state_cleanup(struct state *st)
{
    json_object_put(st->obj);
    free(st->ca_crt);
    free(st->tls_crt);
    if (st->ca_key) {
        memset(st->ca_key, 0, strlen(st->ca_key));
        free(st->ca_key);
    }
    if (st->tls_key) {
        memset(st->tls_key, 0, strlen(st->tls_key));
        free(st->tls_key);
    }
    memset(st, 0, sizeof(*st));
}

static int64_t wall_s(const struct selfcert *s)
{
    return clock_wall_s(s->clock);
}

/* 2/3 into [not_before, not_after] */
static int64_t rotate_at(int64_t not_before, int64_t not_after)
{
    return not_before + (not_after - not_before) * 2 / 3;
}

/* a quarter of the lifetime, at most certgen's 5 minutes */
static int backdate(int64_t lifetime_s)
{
    int64_t b = lifetime_s / 4;
    return b > CERTGEN_BACKDATE_SECONDS ? CERTGEN_BACKDATE_SECONDS : (int)b;
}

static int secret_path(const struct selfcert *s, bool collection, char *out, size_t outlen)
{
    char ns[256], name[256];
    if (kube_path_escape(s->ns, ns, sizeof(ns)) || kube_path_escape(s->name, name, sizeof(name)))
        return K_EINVAL;
    if (collection)
        snprintf(out, outlen, "/api/v1/namespaces/%s/secrets", ns);
    else
        snprintf(out, outlen, "/api/v1/namespaces/%s/secrets/%s", ns, name);
    return K_OK;
}

static int read_secret(struct selfcert *s, struct state *st, struct kube_error *err)
{
    char path[640];
    memset(st, 0, sizeof(*st));
    if (secret_path(s, false, path, sizeof(path)))
        return K_EINVAL;
    int rc = kube_get(s->client, path, &st->obj, err);
    if (rc == K_ENOTFOUND) {
        st->obj = NULL;
        return K_OK;
    }
    if (rc)
        return rc;
    json_object *data = kube_json_get(st->obj, "data", json_type_object);
    st->ca_crt = publish_secret_pem(data, "ca.crt");
    st->ca_key = publish_secret_pem(data, "ca.key");
    st->tls_crt = publish_secret_pem(data, "tls.crt");
    st->tls_key = publish_secret_pem(data, "tls.key");
    return K_OK;
}

/*
 * Write `next` (all four PEMs set): POST a new Secret when cur->obj is NULL, else PUT cur->obj
 * with its data replaced (its resourceVersion makes the write conditional). *written is the
 * API server's answer (the object with its new resourceVersion).
 */
static int write_secret(struct selfcert *s, struct state *cur, const struct state *next,
                        json_object **written, struct kube_error *err)
{
    const char *const keys[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    const char *const pems[] = {next->ca_crt, next->ca_key, next->tls_crt, next->tls_key};
    json_object *data = NULL;
    int rc = publish_data(keys, pems, 4, &data);
    if (rc)
        return rc;
    char path[640];
    if (secret_path(s, cur->obj == NULL, path, sizeof(path))) {
        json_object_put(data);
        return K_EINVAL;
    }
    if (cur->obj) {
        json_object_object_add(cur->obj, "data", data);
        return kube_put(s->client, path, cur->obj, written, err);
    }
    json_object *obj = publish_new_tls_secret(s->ns, s->name, data, "gputri-webhook");
    rc = kube_post(s->client, path, obj, written, err);
    json_object_put(obj);
    return rc;
}

/* A new CA and a serving certificate it signs (ca_pem/ca_key NULL), or a serving certificate
 * signed by the given CA. */
static int generate(const struct selfcert *s, const char *ca_pem, const char *ca_key,
                    struct certgen_bundle *b, char *err, size_t errlen)
{
    struct certgen_options o;
    certgen_options_init(&o);
    o.now = (time_t)wall_s(s);
    o.service = s->service;
    o.namespace_name = s->ns;
    o.ca_seconds = s->ca_s;
    o.cert_seconds = s->cert_s;
    o.backdate_seconds = backdate(ca_pem ? s->cert_s : s->ca_s < s->cert_s ? s->ca_s : s->cert_s);
    o.ca_cert_pem = ca_pem;
    o.ca_key_pem = ca_key;
    return certgen_generate(&o, b, err, errlen);
}

enum plan {
    PLAN_NONE,
    PLAN_CREATE,  /* no usable Secret: new CA and serving certificate */
    PLAN_CA,      /* a new CA first in the bundle */
    PLAN_SERVING, /* a new serving certificate from the first CA */
    PLAN_PRUNE,   /* expired CAs out of the bundle */
    PLAN_WAIT,    /* the first CA is not yet settled in the caBundle: look again soon */
};

static const char *const plan_names[] = {"none",    "create", "CA rotation", "serving certificate",
                                         "pruning", "wait"};

/* Whether the first CA has been in the caBundle for settle_ms. */
static bool ca_settled(const struct selfcert *s, const char *first_ca)
{
    return s->seen_ca && strcmp(s->seen_ca, first_ca) == 0 &&
           clock_mono_ms(s->clock) - s->seen_ca_ms >= s->settle_ms;
}

/* What the Secret needs; *first_ca is its bundle's first CA (when it has one; free() it). */
static enum plan decide(const struct selfcert *s, const struct state *st, char **first_ca)
{
    int64_t now = wall_s(s);
    time_t ca_nb = 0, ca_na = 0, nb = 0, na = 0, t = (time_t)now;
    char why[256];
    *first_ca = NULL;
    if (!st->obj || !st->ca_crt || !st->ca_key || !st->tls_crt || !st->tls_key ||
        certgen_first_pem(st->ca_crt, first_ca) != K_OK ||
        certgen_key_matches(*first_ca, st->ca_key) != K_OK ||
        certgen_key_matches(st->tls_crt, st->tls_key) != K_OK ||
        certgen_cert_times(*first_ca, &ca_nb, &ca_na) != K_OK || ca_na <= t || ca_nb > t ||
        certgen_cert_times(st->tls_crt, &nb, &na) != K_OK)
        return PLAN_CREATE;
    if (now >= rotate_at(ca_nb, ca_na))
        return PLAN_CA;
    if (certgen_verify(*first_ca, st->tls_crt, s->host, t, why, sizeof(why)) != K_OK) {
        /* signed by an older CA of the bundle (or broken): a new one once the API server
         * trusts the first CA, unless the current one is unusable anyway */
        bool usable = certgen_verify(st->ca_crt, st->tls_crt, s->host, t, why, sizeof(why)) == K_OK;
        return usable && !ca_settled(s, *first_ca) ? PLAN_WAIT : PLAN_SERVING;
    }
    if (now >= rotate_at(nb, na))
        return PLAN_SERVING;
    char *pruned = NULL;
    bool prune =
        certgen_bundle_join(*first_ca, st->ca_crt, t, SELFCERT_MAX_BUNDLE, &pruned) == K_OK &&
        strcmp(pruned, st->ca_crt) != 0;
    free(pruned);
    return prune ? PLAN_PRUNE : PLAN_NONE;
}

/* The Secret's next content for `plan` into *next (all four set). */
static int make_next(const struct selfcert *s, enum plan plan, const struct state *st,
                     const char *first_ca, const char *ca_bundle, struct state *next, char *err,
                     size_t errlen)
{
    struct certgen_bundle b;
    time_t now = (time_t)wall_s(s);
    int rc = K_OK;
    memset(next, 0, sizeof(*next));
    switch (plan) {
    case PLAN_CREATE:
    case PLAN_CA:
        rc = generate(s, NULL, NULL, &b, err, errlen);
        if (rc)
            return rc;
        /* the old CAs stay trusted until they expire (a CA rotation; or a Secret someone
         * broke or deleted, whose serving certificates replicas may still serve: then those of
         * the caBundle) */
        rc = certgen_bundle_join(b.ca_cert_pem, st->ca_crt ? st->ca_crt : ca_bundle, now,
                                 SELFCERT_MAX_BUNDLE, &next->ca_crt);
        next->ca_key = strdup(b.ca_key_pem);
        if (plan == PLAN_CREATE) {
            next->tls_crt = strdup(b.tls_cert_pem);
            next->tls_key = strdup(b.tls_key_pem);
        } else { /* the serving pair changes once the new CA is in the caBundle */
            next->tls_crt = strdup(st->tls_crt);
            next->tls_key = strdup(st->tls_key);
        }
        certgen_bundle_cleanup(&b);
        break;
    case PLAN_SERVING:
        rc = generate(s, first_ca, st->ca_key, &b, err, errlen);
        if (rc)
            return rc;
        rc = certgen_bundle_join(first_ca, st->ca_crt, now, SELFCERT_MAX_BUNDLE, &next->ca_crt);
        next->ca_key = strdup(st->ca_key);
        next->tls_crt = strdup(b.tls_cert_pem);
        next->tls_key = strdup(b.tls_key_pem);
        certgen_bundle_cleanup(&b);
        break;
    case PLAN_PRUNE:
        rc = certgen_bundle_join(first_ca, st->ca_crt, now, SELFCERT_MAX_BUNDLE, &next->ca_crt);
        next->ca_key = strdup(st->ca_key);
        next->tls_crt = strdup(st->tls_crt);
        next->tls_key = strdup(st->tls_key);
        break;
    default:
        return K_EINVAL;
    }
    if (rc == K_OK && (!next->ca_crt || !next->ca_key || !next->tls_crt || !next->tls_key))
        rc = K_ENOMEM;
    if (rc)
        state_cleanup(next);
    return rc;
}

static void count_write(struct selfcert *s, enum plan plan)
{
    if (plan == PLAN_CREATE) {
        atomic_fetch_add(&s->created, 1);
        atomic_fetch_add(&s->serving, 1);
    } else if (plan == PLAN_CA) {
        atomic_fetch_add(&s->ca, 1);
    } else if (plan == PLAN_SERVING) {
        atomic_fetch_add(&s->serving, 1);
    }
}

/*
 * The caBundle of the webhook configuration: the first webhook's, decoded, into *out (NULL when
 * it has none, or the webhooks disagree). K_ENOTFOUND when the configuration does not exist.
 */
static int read_ca_bundle(struct selfcert *s, char **out, struct kube_error *err)
{
    char name[256], path[512];
    json_object *obj = NULL;
    *out = NULL;
    if (kube_path_escape(s->vwc, name, sizeof(name)))
        return K_EINVAL;
    snprintf(path, sizeof(path),
             "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/%s", name);
    int rc = kube_get(s->client, path, &obj, err);
    if (rc)
        return rc;
    json_object *hooks = kube_json_get(obj, "webhooks", json_type_array);
    const char *first = NULL;
    bool same = hooks && json_object_array_length(hooks) > 0;
    for (size_t i = 0; same && i < json_object_array_length(hooks); i++) {
        json_object *cc =
            kube_json_get(json_object_array_get_idx(hooks, i), "clientConfig", json_type_object);
        const char *b = kube_json_str(cc, "caBundle");
        if (i == 0)
            first = b;
        same = b && first && strcmp(b, first) == 0;
    }
    size_t len;
    if (same && certgen_unbase64(first, out, &len) != K_OK)
        *out = NULL;
    json_object_put(obj);
    return K_OK;
}

/* Note when the caBundle first showed the Secret's first CA (the clock of ca_settled). */
static void note_seen_ca(struct selfcert *s, const char *bundle, const char *ca_crt)
{
    char *cur = NULL;
    if (!bundle || !ca_crt || certgen_first_pem(ca_crt, &cur) != K_OK)
        return;
    if (strstr(bundle, cur) && !(s->seen_ca && strcmp(s->seen_ca, cur) == 0)) {
        free(s->seen_ca);
        s->seen_ca = cur;
        s->seen_ca_ms = clock_mono_ms(s->clock);
        return;
    }
    free(cur);
}

/* Hand the pair to the TLS source when it is not the one served. */
static void serve(struct selfcert *s, const struct state *st)
{
    char err[256];
    time_t nb = 0, na = 0;
    if (s->served && strcmp(s->served, st->tls_crt) == 0)
        return;
    if (tls_source_set_pem(s->tls, st->tls_crt, st->tls_key, err, sizeof(err)) != K_OK) {
        log_warn_kv("certificates: cannot serve the Secret's pair", LOG_STR("namespace", s->ns),
                    LOG_STR("secret", s->name), LOG_STR("err", err));
        return;
    }
    free(s->served);
    s->served = strdup(st->tls_crt);
    if (certgen_cert_times(st->tls_crt, &nb, &na) == K_OK)
        atomic_store(&s->serving_not_after, (long long)na);
    char until[CLOCK_RFC3339_MAX];
    clock_format_rfc3339((int64_t)na * 1000, false, until, sizeof(until));
    log_info_kv(0, "certificates: serving the Secret's certificate", LOG_STR("namespace", s->ns),
                LOG_STR("secret", s->name), LOG_STR("notAfter", until));
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* When the next pass is due, in ms: the next rotation point, at most check_ms. */
static int64_t next_pass_ms(const struct selfcert *s, const struct state *st, const char *first_ca,
                            bool waiting)
{
    int64_t next = s->check_ms, now = wall_s(s);
    time_t nb = 0, na = 0;
    if (waiting)
        return s->settle_ms;
    if (first_ca && certgen_cert_times(first_ca, &nb, &na) == K_OK)
        next = min64(next, (rotate_at(nb, na) - now) * 1000 + 1000);
    if (st->tls_crt && certgen_cert_times(st->tls_crt, &nb, &na) == K_OK)
        next = min64(next, (rotate_at(nb, na) - now) * 1000 + 1000);
    return next < 1000 ? 1000 : next;
}

int selfcert_reconcile(struct selfcert *s, int64_t *next_ms)
{
    struct kube_error kerr = {0};
    struct state st = {0}, next = {0};
    char err[512] = "", *first_ca = NULL, *bundle = NULL;
    enum plan plan = PLAN_NONE;
    int rc = K_OK;
    const char *step = "";

    *next_ms = s->retry_ms;
    /* the caBundle as the API server has it, before deciding whether a new CA has settled */
    step = "reading the webhook configuration";
    rc = read_ca_bundle(s, &bundle, &kerr);
    bool have_vwc = rc == K_OK;
    if (rc != K_OK && rc != K_ENOTFOUND)
        goto fail;
    int writes = 0;
    bool need_read = true;
    for (int attempt = 0; attempt < SELFCERT_ATTEMPTS && writes <= SELFCERT_ATTEMPTS; attempt++) {
        free(first_ca);
        first_ca = NULL;
        kerr.message[0] = '\0'; /* the last answer's (404, 409) is no error */
        if (need_read) {
            state_cleanup(&st);
            step = "reading the Secret";
            rc = read_secret(s, &st, &kerr);
            if (rc)
                goto fail;
            note_seen_ca(s, bundle, st.ca_crt);
        }
        plan = decide(s, &st, &first_ca);
        if (plan == PLAN_NONE || plan == PLAN_WAIT)
            break;
        step = "generating certificates";
        rc = make_next(s, plan, &st, first_ca, bundle, &next, err, sizeof(err));
        if (rc)
            goto fail;
        step = st.obj ? "updating the Secret" : "creating the Secret";
        bool create = st.obj == NULL;
        json_object *written = NULL;
        rc = write_secret(s, &st, &next, &written, &kerr);
        if (rc == K_ECONFLICT) { /* another replica wrote first: read what it wrote */
            atomic_fetch_add(&s->conflicts, 1);
            log_info_kv(1, "certificates: the Secret changed meanwhile; reading it again",
                        LOG_STR("namespace", s->ns), LOG_STR("secret", s->name),
                        LOG_STR("plan", plan_names[plan]));
            state_cleanup(&next);
            need_read = true;
            continue;
        }
        if (rc)
            goto fail;
        count_write(s, plan);
        log_info_kv(0, create ? "certificates: Secret created" : "certificates: Secret updated",
                    LOG_STR("namespace", s->ns), LOG_STR("secret", s->name),
                    LOG_STR("plan", plan_names[plan]));
        /* what was written is the state now (the answer carries the new resourceVersion);
         * decide again on it: a pass makes at most a few writes */
        state_cleanup(&st);
        st = next;
        st.obj = written;
        memset(&next, 0, sizeof(next));
        need_read = false;
        writes++;
        attempt = -1;
    }
    if (plan != PLAN_NONE && plan != PLAN_WAIT) {
        rc = K_ECONFLICT;
        step = "writing the Secret (others kept winning)";
        goto fail;
    }
    /* the caBundle follows the Secret's ca.crt */
    if (!have_vwc) {
        atomic_store(&s->ready, false);
        log_warn_kv("certificates: ValidatingWebhookConfiguration not found; retrying",
                    LOG_STR("name", s->vwc));
    } else if (!bundle || strcmp(bundle, st.ca_crt) != 0) {
        int n = 0;
        step = "updating the caBundle";
        kerr.message[0] = '\0';
        rc = publish_ca_bundle(s->client, s->vwc, st.ca_crt, &n, &kerr);
        if (rc)
            goto fail;
        atomic_fetch_add(&s->bundles, 1);
        log_info_kv(0, "certificates: caBundle updated",
                    LOG_STR("validatingWebhookConfiguration", s->vwc), LOG_INT("webhooks", n));
        free(bundle);
        bundle = strdup(st.ca_crt);
        note_seen_ca(s, bundle, st.ca_crt);
    }
    serve(s, &st);
    time_t nb = 0, na = 0;
    if (first_ca && certgen_cert_times(first_ca, &nb, &na) == K_OK)
        atomic_store(&s->ca_not_after, (long long)na);
    bool ok =
        have_vwc && bundle && s->served &&
        certgen_verify(bundle, s->served, s->host, (time_t)wall_s(s), err, sizeof(err)) == K_OK;
    if (ok != atomic_load(&s->ready))
        log_info_kv(0, ok ? "certificates: the caBundle trusts the certificate served: ready"
                          : "certificates: the caBundle does not trust the certificate served");
    atomic_store(&s->ready, ok);
    *next_ms = have_vwc ? next_pass_ms(s, &st, first_ca, plan == PLAN_WAIT) : s->retry_ms;
    rc = K_OK;
    goto out;
fail:
    atomic_fetch_add(&s->errors, 1);
    log_warn_kv("certificates: a step failed", LOG_STR("step", step),
                LOG_STR("err", kerr.message[0] ? kerr.message
                               : err[0]        ? err
                                               : k_strerror(rc)));
    *next_ms = s->retry_ms;
out:
    state_cleanup(&st);
    state_cleanup(&next);
    free(first_ca);
    free(bundle);
    return rc;
}

static void *loop(void *arg)
{
    struct selfcert *s = arg;
    for (;;) {
        int64_t next_ms;
        selfcert_reconcile(s, &next_ms);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += next_ms / 1000;
        until.tv_nsec += (next_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&s->mu);
        while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0)
            ;
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            return NULL;
    }
}

/* A DNS-1123 label (the names this takes are checked by the API server too; this catches a
 * mistyped flag at start). */
static bool is_label(const char *n)
{
    size_t len = n ? strlen(n) : 0;
    if (len == 0 || len > 253)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' ||
              n[i] == '.'))
            return false;
    return true;
}

int selfcert_new(const struct selfcert_options *o, struct kube_client *client,
                 struct tls_source *tls, struct selfcert **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!is_label(o->secret_namespace) || !is_label(o->secret_name) ||
        !is_label(o->webhook_configuration) || !is_label(o->service)) {
        errbuf_printf(err, errlen,
                      "certificates: a Secret namespace and name, a webhook configuration and a "
                      "Service name (lowercase DNS names) are all needed");
        kube_client_free(client);
        return K_EINVAL;
    }
    int64_t ca_s = o->ca_validity_s ? o->ca_validity_s : SELFCERT_DEFAULT_CA_VALIDITY_S;
    int64_t cert_s = o->cert_validity_s ? o->cert_validity_s : SELFCERT_DEFAULT_CERT_VALIDITY_S;
    if (ca_s < SELFCERT_MIN_VALIDITY_S || cert_s < SELFCERT_MIN_VALIDITY_S ||
        ca_s > CERTGEN_MAX_DAYS * 86400LL || cert_s > CERTGEN_MAX_DAYS * 86400LL) {
        errbuf_printf(err, errlen, "certificates: lifetimes must be %d s..%d days",
                      SELFCERT_MIN_VALIDITY_S, CERTGEN_MAX_DAYS);
        kube_client_free(client);
        return K_EINVAL;
    }
    struct selfcert *s = calloc(1, sizeof(*s));
    if (!s) {
        kube_client_free(client);
        return K_ENOMEM;
    }
    s->client = client;
    kube_client_set_cancel(client, &s->cancel);
    s->tls = tls;
    s->ns = strdup(o->secret_namespace);
    s->name = strdup(o->secret_name);
    s->vwc = strdup(o->webhook_configuration);
    s->service = strdup(o->service);
    s->ca_s = ca_s;
    s->cert_s = cert_s;
    s->check_ms = o->check_ms > 0 ? o->check_ms : SELFCERT_CHECK_MS;
    s->retry_ms = o->retry_ms > 0 ? o->retry_ms : SELFCERT_RETRY_MS;
    s->settle_ms = o->settle_ms > 0 ? o->settle_ms : SELFCERT_SETTLE_MS;
    s->clock = o->clock;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(s->host, sizeof(s->host), "%s.%s.svc", o->service, o->secret_namespace);
    if (!s->ns || !s->name || !s->vwc || !s->service) {
        selfcert_free(s);
        return K_ENOMEM;
    }
    *out = s;
    return K_OK;
}

int selfcert_start(struct selfcert *s)
{
    if (pthread_create(&s->thread, NULL, loop, s) != 0)
        return K_ENOMEM;
    s->started = true;
    return K_OK;
}

bool selfcert_ready(const struct selfcert *s)
{
    return s && atomic_load(&s->ready);
}

void selfcert_stats(const struct selfcert *s, struct selfcert_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    out->created = atomic_load(&s->created);
    out->ca = atomic_load(&s->ca);
    out->serving = atomic_load(&s->serving);
    out->conflicts = atomic_load(&s->conflicts);
    out->bundles = atomic_load(&s->bundles);
    out->errors = atomic_load(&s->errors);
    out->serving_not_after = atomic_load(&s->serving_not_after);
    out->ca_not_after = atomic_load(&s->ca_not_after);
}

void selfcert_metrics(const struct selfcert *s, FILE *f)
{
    struct selfcert_stats st;
    if (!s)
        return;
    selfcert_stats(s, &st);
    fprintf(f,
            "# HELP gputri_webhook_certificate_not_after_seconds When the serving certificate "
            "served and the CA that signs new ones expire (--cert-secret), seconds since the "
            "epoch.\n"
            "# TYPE gputri_webhook_certificate_not_after_seconds gauge\n"
            "gputri_webhook_certificate_not_after_seconds{certificate=\"serving\"} %lld\n"
            "gputri_webhook_certificate_not_after_seconds{certificate=\"ca\"} %lld\n"
            "# HELP gputri_webhook_certificate_writes_total Writes of this replica to the "
            "certificates' Secret and the caBundle, by what was written (conflict: lost to "
            "another writer, read again).\n"
            "# TYPE gputri_webhook_certificate_writes_total counter\n"
            "gputri_webhook_certificate_writes_total{what=\"created\"} %llu\n"
            "gputri_webhook_certificate_writes_total{what=\"ca\"} %llu\n"
            "gputri_webhook_certificate_writes_total{what=\"serving\"} %llu\n"
            "gputri_webhook_certificate_writes_total{what=\"conflict\"} %llu\n"
            "gputri_webhook_certificate_writes_total{what=\"ca_bundle\"} %llu\n",
            (long long)st.serving_not_after, (long long)st.ca_not_after, st.created, st.ca,
            st.serving, st.conflicts, st.bundles);
}

void selfcert_free(struct selfcert *s)
{
    if (!s)
        return;
    if (s->started) {
        atomic_store(&s->cancel, 1);
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    kube_client_free(s->client);
    free(s->ns);
    free(s->name);
    free(s->vwc);
    free(s->service);
    free(s->served);
    free(s->seen_ca);
    free(s);
}
