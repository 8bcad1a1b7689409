/* fake_routes.c - a fake Kubernetes API answering by path (fake_routes.h). */
#include "fake_routes.h"

#include <stdlib.h>
#include <string.h>

#include "util/result.h"

static bool matches(const char *prefix, const char *path, size_t path_len)
{
    size_t n = strlen(prefix);
    if (n && prefix[n - 1] == '*')
        return path_len >= n - 1 && strncmp(prefix, path, n - 1) == 0;
    return path_len == n && strncmp(prefix, path, n) == 0;
}

static int round_trip(void *ctx, const char *method, const char *path, const char *body,
                      size_t body_len, long *status, int *retry_after, const char **resp,
                      size_t *resp_len)
{
    (void)method;
    (void)body;
    (void)body_len;
    struct fake_routes *f = ctx;
    pthread_mutex_lock(&f->mu);
    if (f->n_seen < FAKE_ROUTES_SEEN)
        f->seen[f->n_seen++] = strdup(path);
    const char *q = strchr(path, '?');
    size_t path_len = q ? (size_t)(q - path) : strlen(path);
    *retry_after = 0;
    *status = 404;
    const char *out = "{\"kind\":\"Status\",\"code\":404}";
    for (size_t i = 0; i < f->n_routes; i++)
        if (matches(f->routes[i].prefix, path, path_len)) {
            *status = f->routes[i].status;
            out = f->routes[i].body;
            if (q && strstr(q, "watch=")) /* an empty stream */
                out = "";
            break;
        }
    /* kept until cleanup: a client in another thread may still read its answer */
    char **kept = realloc(f->bodies, (f->n_bodies + 1) * sizeof(*kept));
    if (kept) {
        f->bodies = kept;
        f->bodies[f->n_bodies++] = strdup(out);
    }
    *resp = kept && f->bodies[f->n_bodies - 1] ? f->bodies[f->n_bodies - 1] : "";
    *resp_len = strlen(*resp);
    pthread_mutex_unlock(&f->mu);
    return K_OK;
}

void fake_routes_init(struct fake_routes *f)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->mu, NULL);
    f->transport.ctx = f;
    f->transport.round_trip = round_trip;
}

void fake_routes_cleanup(struct fake_routes *f)
{
    for (size_t i = 0; i < f->n_routes; i++) {
        free(f->routes[i].prefix);
        free(f->routes[i].body);
    }
    fake_routes_forget(f);
    for (size_t i = 0; i < f->n_bodies; i++)
        free(f->bodies[i]);
    free(f->bodies);
    pthread_mutex_destroy(&f->mu);
}

void fake_routes_set(struct fake_routes *f, const char *prefix, long status, const char *body)
{
    pthread_mutex_lock(&f->mu);
    size_t i = 0;
    while (i < f->n_routes && strcmp(f->routes[i].prefix, prefix) != 0)
        i++;
    if (i < f->n_routes) {
        free(f->routes[i].body);
        if (!body) {
            free(f->routes[i].prefix);
            f->routes[i] = f->routes[--f->n_routes];
        } else {
            f->routes[i].body = strdup(body);
            f->routes[i].status = status;
        }
    } else if (body && f->n_routes < FAKE_ROUTES_MAX) {
        f->routes[f->n_routes].prefix = strdup(prefix);
        f->routes[f->n_routes].body = strdup(body);
        f->routes[f->n_routes].status = status;
        f->n_routes++;
    }
    pthread_mutex_unlock(&f->mu);
}

size_t fake_routes_count(struct fake_routes *f, const char *needle)
{
    size_t n = 0;
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n_seen; i++)
        if (strstr(f->seen[i], needle))
            n++;
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_routes_forget(struct fake_routes *f)
{
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n_seen; i++)
        free(f->seen[i]);
    f->n_seen = 0;
    pthread_mutex_unlock(&f->mu);
}
