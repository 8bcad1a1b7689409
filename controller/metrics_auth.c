/* metrics_auth.c - TokenReview + SubjectAccessReview in front of /metrics (see metrics_auth.h). */
#include "metrics_auth.h"

#include <ctype.h>
#include <gnutls/crypto.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/json.h"
#include "util/log.h"
#include "util/result.h"

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SUBJECTACCESSREVIEWS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

struct entry {
    unsigned char key[32];
    unsigned status; /* 0, 401 or 403 */
    int64_t expires_ms;
    char user[128]; /* for the message */
};

/* A token bucket: `tokens` now, the last one counted back at last_ms. */
struct bucket {
    unsigned tokens;
    int64_t last_ms;
};

struct client_bucket {
    char name[64]; /* "" when unused */
    struct bucket b;
    int64_t used_ms;
};

struct metrics_auth {
    struct kube_client *client;
    const struct clock *clock;
    pthread_mutex_t mu;
    struct entry cache[METRICS_AUTH_CACHE];           /* 401 and 403 */
    struct entry allowed[METRICS_AUTH_CACHE_ALLOWED]; /* 0 */
    size_t n, n_allowed;
    struct bucket all;
    struct client_bucket clients[METRICS_AUTH_CLIENTS];
    unsigned long reviews;
};

struct metrics_auth *metrics_auth_new(struct kube_client *client, const struct clock *clock)
{
    struct metrics_auth *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->client = client;
    a->clock = clock;
    a->all = (struct bucket){METRICS_AUTH_BURST, clock_mono_ms(clock)};
    pthread_mutex_init(&a->mu, NULL);
    return a;
}

void metrics_auth_free(struct metrics_auth *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a);
}

unsigned long metrics_auth_reviews(struct metrics_auth *a)
{
    pthread_mutex_lock(&a->mu);
    unsigned long n = a->reviews;
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* The token of "Bearer <token>", or NULL, as k8s.io/apiserver reads it
 * (pkg/authentication/request/bearertoken/bearertoken.go, AuthenticateRequest: the value trimmed
 * of spaces, split on " " into at most 3 parts, scheme compared case-insensitively, the second
 * part the token, an empty one invalid). Points into h. */
static const char *bearer_token(const char *h, size_t *len)
{
    if (!h)
        return NULL;
    while (*h == ' ' || *h == '\t')
        h++;
    if (strncasecmp(h, "bearer ", 7) != 0)
        return NULL;
    const char *t = h + 7;
    size_t n = strcspn(t, " ");
    while (n > 0 && (t[n - 1] == '\t' || t[n - 1] == '\r' || t[n - 1] == '\n'))
        n--; /* trailing space trimmed (only when the token ends the value) */
    if (n == 0 || n > METRICS_AUTH_MAX_TOKEN)
        return NULL;
    *len = n;
    return t;
}

static void cache_key(const char *token, size_t len, const char *verb, const char *path,
                      unsigned char key[32])
{
    gnutls_hash_hd_t h;
    if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
        memset(key, 0, 32); /* never matches a real entry's key by chance; see lookup */
        return;
    }
    gnutls_hash(h, token, len);
    gnutls_hash(h, "", 1);
    gnutls_hash(h, verb, strlen(verb) + 1);
    gnutls_hash(h, path, strlen(path) + 1);
    gnutls_hash_deinit(h, key);
}

/* The entry of key in cache[0..n), expired or not, or NULL. */
static const struct entry *find(const struct entry *cache, size_t n, const unsigned char key[32])
{
    static const unsigned char zero[32];
    if (memcmp(key, zero, 32) == 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (memcmp(cache[i].key, key, 32) == 0)
            return &cache[i];
    return NULL;
}

/* A cached decision for key, or -1. mu held. */
static int lookup(struct metrics_auth *a, const unsigned char key[32], int64_t now, char *user,
                  size_t userlen)
{
    const struct entry *e = find(a->allowed, a->n_allowed, key);
    if (!e || e->expires_ms <= now)
        e = find(a->cache, a->n, key);
    if (!e || e->expires_ms <= now)
        return -1;
    snprintf(user, userlen, "%s", e->user);
    return (int)e->status;
}

/* mu held. */
static void store(struct metrics_auth *a, const unsigned char key[32], unsigned status,
                  int64_t expires_ms, const char *user)
{
    struct entry *cache = status == 0 ? a->allowed : a->cache;
    size_t *n = status == 0 ? &a->n_allowed : &a->n;
    size_t cap = status == 0 ? METRICS_AUTH_CACHE_ALLOWED : METRICS_AUTH_CACHE;
    struct entry *e = (struct entry *)find(cache, *n, key); /* a stale entry of the same key */
    if (!e && *n < cap) {
        e = &cache[(*n)++];
    } else if (!e) {
        for (size_t i = 0; i < *n; i++)
            if (!e || cache[i].expires_ms < e->expires_ms)
                e = &cache[i]; /* an expired one is the earliest */
    }
    memcpy(e->key, key, 32);
    e->status = status;
    e->expires_ms = expires_ms;
    snprintf(e->user, sizeof(e->user), "%s", user ? user : "");
}

/* Counts back the tokens due by now. */
static void refill(struct bucket *b, unsigned burst, int64_t refill_ms, int64_t now)
{
    if (b->tokens >= burst || now < b->last_ms) {
        b->last_ms = b->tokens >= burst ? now : b->last_ms;
        return;
    }
    int64_t due = (now - b->last_ms) / refill_ms;
    if (due >= (int64_t)(burst - b->tokens)) {
        b->tokens = burst;
        b->last_ms = now;
    } else {
        b->tokens += (unsigned)due;
        b->last_ms += due * refill_ms;
    }
}

/* The bucket of client, made (full) when new: in an unused slot, else in place of a bucket that
 * refilled to full (as good as new), else of the least recently used. */
static struct bucket *client_bucket(struct metrics_auth *a, const char *client, int64_t now)
{
    struct client_bucket *unused = NULL, *full = NULL, *lru = NULL;
    for (size_t i = 0; i < METRICS_AUTH_CLIENTS; i++) {
        struct client_bucket *c = &a->clients[i];
        if (!c->name[0]) {
            unused = unused ? unused : c;
            continue;
        }
        refill(&c->b, METRICS_AUTH_CLIENT_BURST, METRICS_AUTH_CLIENT_REFILL_MS, now);
        if (strncmp(c->name, client, sizeof(c->name) - 1) == 0) {
            c->used_ms = now;
            return &c->b;
        }
        if (!full && c->b.tokens >= METRICS_AUTH_CLIENT_BURST)
            full = c;
        if (!lru || c->used_ms < lru->used_ms)
            lru = c;
    }
    struct client_bucket *pick = unused ? unused : full ? full : lru;
    snprintf(pick->name, sizeof(pick->name), "%s", client);
    pick->b = (struct bucket){METRICS_AUTH_CLIENT_BURST, now};
    pick->used_ms = now;
    return &pick->b;
}

/* Takes one review from the client's bucket and the bucket of all; false (nothing taken) when
 * either is empty. mu held. */
static bool take_review(struct metrics_auth *a, const char *client, int64_t now)
{
    refill(&a->all, METRICS_AUTH_BURST, METRICS_AUTH_REFILL_MS, now);
    struct bucket *c = client && client[0] ? client_bucket(a, client, now) : NULL;
    if (a->all.tokens == 0 || (c && c->tokens == 0))
        return false;
    a->all.tokens--;
    if (c)
        c->tokens--;
    return true;
}

/* TokenReview: K_OK with *authenticated and, when so, the user (a new json object: username,
 * uid, groups, extra). */
static int token_review(struct metrics_auth *a, const char *token, size_t len, bool *authenticated,
                        json_object **user)
{
    *authenticated = false;
    *user = NULL;
    json_object *body = json_object_new_object();
    json_object *spec = json_object_new_object();
    json_object_object_add(body, "apiVersion", json_object_new_string("authentication.k8s.io/v1"));
    json_object_object_add(body, "kind", json_object_new_string("TokenReview"));
    json_object_object_add(spec, "token", json_object_new_string_len(token, (int)len));
    json_object_object_add(body, "spec", spec);
    json_object *out = NULL;
    struct kube_error err = {0};
    int rc = kube_post(a->client, TOKENREVIEWS, body, &out, &err);
    json_object_put(body);
    if (rc != K_OK) {
        log_warn_kv("metrics: TokenReview failed", LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message[0] ? err.message : NULL));
        return rc;
    }
    json_object *status = kube_json_get(out, "status", json_type_object);
    json_object *auth = status ? kube_json_field(status, "authenticated") : NULL;
    *authenticated =
        auth && json_object_is_type(auth, json_type_boolean) && json_object_get_boolean(auth);
    json_object *u = status ? kube_json_get(status, "user", json_type_object) : NULL;
    if (*authenticated && u)
        *user = json_object_get(u);
    json_object_put(out);
    return K_OK;
}

/* SubjectAccessReview of user for verb on the non-resource path: K_OK with *allowed. */
static int access_review(struct metrics_auth *a, json_object *user, const char *verb,
                         const char *path, bool *allowed)
{
    *allowed = false;
    json_object *body = json_object_new_object();
    json_object *spec = json_object_new_object();
    json_object *nra = json_object_new_object();
    json_object_object_add(body, "apiVersion", json_object_new_string("authorization.k8s.io/v1"));
    json_object_object_add(body, "kind", json_object_new_string("SubjectAccessReview"));
    const char *name = kube_json_str(user, "username");
    const char *uid = kube_json_str(user, "uid");
    json_object_object_add(spec, "user", json_object_new_string(name ? name : ""));
    if (uid && *uid)
        json_object_object_add(spec, "uid", json_object_new_string(uid));
    json_object *groups = kube_json_get(user, "groups", json_type_array);
    if (groups)
        json_object_object_add(spec, "groups", json_object_get(groups));
    json_object *extra = kube_json_get(user, "extra", json_type_object);
    if (extra)
        json_object_object_add(spec, "extra", json_object_get(extra));
    json_object_object_add(nra, "path", json_object_new_string(path));
    json_object_object_add(nra, "verb", json_object_new_string(verb));
    json_object_object_add(spec, "nonResourceAttributes", nra);
    json_object_object_add(body, "spec", spec);
    json_object *out = NULL;
    struct kube_error err = {0};
    int rc = kube_post(a->client, SUBJECTACCESSREVIEWS, body, &out, &err);
    json_object_put(body);
    if (rc != K_OK) {
        log_warn_kv("metrics: SubjectAccessReview failed", LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message[0] ? err.message : NULL));
        return rc;
    }
    json_object *status = kube_json_get(out, "status", json_type_object);
    json_object *al = status ? kube_json_field(status, "allowed") : NULL;
    *allowed = al && json_object_is_type(al, json_type_boolean) && json_object_get_boolean(al);
    json_object_put(out);
    return K_OK;
}

unsigned metrics_auth_check(struct metrics_auth *a, const char *method, const char *path,
                            const char *authorization, char *msg, size_t msglen)
{
    return metrics_auth_check_client(a, NULL, method, path, authorization, msg, msglen);
}

unsigned metrics_auth_check_client(struct metrics_auth *a, const char *client, const char *method,
                                   const char *path, const char *authorization, char *msg,
                                   size_t msglen)
{
    size_t len = 0;
    const char *token = bearer_token(authorization, &len);
    if (!token) {
        snprintf(msg, msglen, "Unauthorized");
        return 401;
    }
    char verb[16];
    size_t i = 0;
    for (; method[i] && i + 1 < sizeof(verb); i++)
        verb[i] = (char)tolower((unsigned char)method[i]);
    verb[i] = 0;
    unsigned char key[32];
    cache_key(token, len, verb, path, key);
    char user[128] = "";
    int64_t now = clock_mono_ms(a->clock);
    pthread_mutex_lock(&a->mu);
    int cached = lookup(a, key, now, user, sizeof(user));
    /* a reader allowed before is reviewed whatever the buckets hold */
    bool may_review =
        cached >= 0 || find(a->allowed, a->n_allowed, key) || take_review(a, client, now);
    if (cached < 0 && may_review)
        a->reviews++;
    pthread_mutex_unlock(&a->mu);
    if (!may_review) {
        snprintf(msg, msglen, "Too many token reviews, try again later");
        log_info_kv(2, "metrics: request refused", LOG_STR("verb", method), LOG_STR("path", path),
                    LOG_INT("status", 429), LOG_STR("reason", msg));
        return 429;
    }
    unsigned status;
    if (cached >= 0) {
        status = (unsigned)cached;
    } else {
        bool authenticated = false, allowed = false;
        json_object *u = NULL;
        if (token_review(a, token, len, &authenticated, &u) != K_OK) {
            snprintf(msg, msglen, "Authentication failed");
            return 401;
        }
        int64_t ttl = METRICS_AUTH_UNAUTHENTICATED_TTL_MS;
        status = 401;
        if (authenticated) {
            const char *name = kube_json_str(u, "username");
            snprintf(user, sizeof(user), "%s", name ? name : "");
            pthread_mutex_lock(&a->mu);
            a->reviews++;
            pthread_mutex_unlock(&a->mu);
            int rc = access_review(a, u, verb, path, &allowed);
            json_object_put(u);
            if (rc != K_OK) {
                snprintf(msg, msglen, "Authorization for user %s failed", user);
                return 500;
            }
            status = allowed ? 0 : 403;
            ttl = allowed ? METRICS_AUTH_ALLOW_TTL_MS : METRICS_AUTH_DENY_TTL_MS;
        }
        pthread_mutex_lock(&a->mu);
        store(a, key, status, now + ttl, user);
        pthread_mutex_unlock(&a->mu);
    }
    if (status == 401)
        snprintf(msg, msglen, "Unauthorized");
    else if (status == 403)
        snprintf(msg, msglen, "Authorization denied for user %s", user);
    else
        snprintf(msg, msglen, "%s", "");
    if (status)
        log_info_kv(2, "metrics: request refused", LOG_STR("verb", method), LOG_STR("path", path),
                    LOG_INT("status", status), LOG_STR("reason", msg));
    return status;
}
