/* informer.c - list and watch one resource, relisting on 410 Gone. */
#include "informer.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/json.h"
#include "util/clock.h"
#include "util/deadline.h"
#include "util/log.h"
#include "util/result.h"

#define RV_MAX 128

/*
 * A watch that ends sooner than this having delivered no event (not even a bookmark) counts as a
 * failure and backs off, as client-go's reflector treats a "very short watch"
 * (kubernetes/client-go: tools/cache/reflector.go, handleWatch): a server that closes every watch
 * at once must not be asked again in a tight loop.
 */
#define SHORT_WATCH_MS 1000

struct informer {
    const struct kube_config *cfg;
    char name[64];
    char path[512];
    int page_size;
    int watch_timeout;
    size_t list_max_items, list_max_pages; /* 0: the defaults */
    struct informer_handlers h;
    const struct clock *clock;              /* NULL: the system clock */
    const struct kube_transport *transport; /* NULL: HTTP */
    pthread_t thread;
    int started;
    atomic_int stop; /* set by informer_stop(), read by the thread and its client */
    /* the loop's state, used by informer_step() only */
    char rv[RV_MAX]; /* resourceVersion to watch from; "" = LIST first */
    /* client-go's lastSyncResourceVersion: the last resourceVersion a LIST or watch event gave,
     * kept across a 410 to relist from; "" before the first LIST */
    char last_sync[RV_MAX];
    bool rv_unavailable; /* a LIST at last_sync failed with 410 or too large: list the latest */
    bool paginated;      /* the first LIST at "0" came in pages: keep paging relists */
    int64_t backoff;     /* ms of the last failure's backoff, 0 after a success */
    int64_t retry_at;    /* when the step after a failure may run, on the clock */
    unsigned seed;       /* jitter */
    bool just_listed;    /* the last step was a LIST that succeeded */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool synced;
};

struct informer *informer_new(const struct kube_config *cfg, const struct informer_options *opts,
                              const struct informer_handlers *handlers)
{
    struct informer *inf = calloc(1, sizeof(*inf));
    if (!inf)
        return NULL;
    inf->cfg = cfg;
    snprintf(inf->name, sizeof(inf->name), "%s", opts->name ? opts->name : opts->path);
    snprintf(inf->path, sizeof(inf->path), "%s", opts->path);
    inf->page_size = opts->page_size > 0 ? opts->page_size : 500;
    inf->watch_timeout = opts->watch_timeout_seconds > 0 ? opts->watch_timeout_seconds : 300;
    inf->list_max_items = opts->list_max_items;
    inf->list_max_pages = opts->list_max_pages;
    inf->h = *handlers;
    inf->clock = opts->clock;
    inf->transport = opts->transport;
    inf->seed = (unsigned)clock_mono_ns(NULL) ^ (unsigned)(uintptr_t)inf;
    pthread_mutex_init(&inf->mu, NULL);
    pthread_cond_init(&inf->cv, NULL);
    return inf;
}

struct list_ctx {
    const struct informer_handlers *h;
    size_t items; /* for the log; kube_list bounds them */
};

static int list_item(void *ctx, json_object *item)
{
    struct list_ctx *lc = ctx;
    lc->items++;
    lc->h->upsert(lc->h->ctx, item);
    return 0;
}

/* An expired continue token: the LIST starts over in one response; mark everything again. */
static void list_restart(void *ctx)
{
    struct list_ctx *lc = ctx;
    lc->items = 0;
    if (lc->h->sync_begin)
        lc->h->sync_begin(lc->h->ctx);
}

int informer_list(struct kube_client *client, const char *path,
                  const struct informer_list_options *opts,
                  const struct informer_handlers *handlers, char *resource_version, size_t rv_len,
                  struct kube_error *err)
{
    char rv_buf[RV_MAX];
    if (!resource_version) {
        resource_version = rv_buf;
        rv_len = sizeof(rv_buf);
    }
    size_t max_pages = opts->max_pages ? opts->max_pages : INFORMER_LIST_MAX_PAGES, pages = 0;
    struct list_ctx lc = {handlers, 0};
    struct kube_list_options lo = {.page_size = opts->page_size,
                                   .resource_version = opts->resource_version,
                                   .max_pages = max_pages,
                                   .max_items = opts->max_items,
                                   .pages = &pages,
                                   .restart = list_restart};
    if (handlers->sync_begin)
        handlers->sync_begin(handlers->ctx);
    int rc = kube_list(client, path, &lo, list_item, &lc, resource_version, rv_len, err);
    if (opts->pages)
        *opts->pages = pages;
    /* Only sweep after a complete list: a partial one would drop live objects. */
    if (rc == K_OK) {
        log_info_kv(
            2, "LIST done", LOG_STR("path", path),
            LOG_STR("resourceVersion", opts->resource_version ? opts->resource_version : ""),
            LOG_INT("items", lc.items), LOG_INT("responses", pages));
        if (handlers->sync_end)
            handlers->sync_end(handlers->ctx);
    }
    return rc;
}

int informer_list_skipped(const char *path, size_t n, struct kube_error *err)
{
    if (err) {
        memset(err, 0, sizeof(*err));
        err->code = K_EPARSE;
        snprintf(err->message, sizeof(err->message),
                 "LIST %.*s: %zu item%s could not be read (malformed, or past a bound)",
                 (int)strcspn(path, "?"), path, n, n == 1 ? "" : "s");
    }
    return K_EPARSE;
}

int informer_list_once(struct kube_client *client, const char *path, int page_size,
                       const struct informer_handlers *handlers, char *resource_version,
                       size_t rv_len, struct kube_error *err)
{
    struct informer_list_options o = {.page_size = page_size};
    return informer_list(client, path, &o, handlers, resource_version, rv_len, err);
}

/* Give the memory a LIST's transient trees used back to the system (glibc keeps freed pages of
 * every thread's arena otherwise; the informers' arenas held ~100 MB after a cold start). Not
 * under AddressSanitizer: its allocator holds the memory, and glibc's malloc_trim, called first
 * from several threads at once, sets up glibc's unused arenas racily (a thread's exit then
 * aborts on "a->attached_threads > 0"). */
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define UNDER_ASAN 1
#endif
#endif
static void return_memory(void)
{
#if defined(__GLIBC__) && !defined(UNDER_ASAN)
    malloc_trim(0);
#endif
}

/*
 * A LIST that failed because the resourceVersion asked for is no longer, or not yet, available:
 * 410 Expired, or 504 "Too large resource version" (kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/storage/errors.go, NewTooLargeResourceVersionError).
 */
static bool rv_unavailable(int rc, const struct kube_error *err)
{
    return rc == K_EGONE ||
           (rc == K_ESERVER && strstr(err->message, "Too large resource version") != NULL);
}

/*
 * The informer's LIST, at the resourceVersion client-go's reflector would use
 * (relistResourceVersion, kubernetes/kubernetes: staging/src/k8s.io/client-go/tools/cache/
 * reflector.go): see informer.h.
 */
static int relist(struct informer *inf, struct kube_client *client, struct kube_error *err)
{
    struct informer_list_options o = {.max_items = inf->list_max_items,
                                      .max_pages = inf->list_max_pages};
    size_t pages = 0;
    o.pages = &pages;
    if (inf->rv_unavailable) {
        o.resource_version = "";
        o.page_size = inf->page_size;
    } else if (!inf->last_sync[0]) {
        o.resource_version = "0";
        o.page_size = inf->page_size;
    } else {
        o.resource_version = inf->last_sync;
        o.page_size = inf->paginated ? inf->page_size : 0;
    }
    int rc = informer_list(client, inf->path, &o, &inf->h, inf->rv, RV_MAX, err);
    if (*o.resource_version && rv_unavailable(rc, err)) {
        log_info_kv(1, "resourceVersion not available; listing the latest",
                    LOG_STR("informer", inf->name), LOG_STR("resourceVersion", o.resource_version),
                    LOG_STR("detail", err->message));
        inf->rv_unavailable = true;
        o.resource_version = "";
        o.page_size = inf->page_size;
        memset(err, 0, sizeof(*err));
        rc = informer_list(client, inf->path, &o, &inf->h, inf->rv, RV_MAX, err);
    }
    if (rc == K_OK) {
        inf->rv_unavailable = false;
        /* a first list at "0" that came in pages: the watch cache is off; keep paging */
        if (strcmp(o.resource_version, "0") == 0 && pages > 1)
            inf->paginated = true;
        snprintf(inf->last_sync, sizeof(inf->last_sync), "%s", inf->rv);
    }
    return_memory();
    return rc;
}

struct watch_ctx {
    struct informer *inf;
    char *rv; /* the last resourceVersion seen, for resuming */
    size_t rv_len;
    unsigned long events; /* events delivered by this watch */
};

static void remember_rv(struct watch_ctx *wc, json_object *obj)
{
    const char *rv = kube_json_meta_str(obj, "resourceVersion");
    if (rv)
        snprintf(wc->rv, wc->rv_len, "%s", rv);
}

static int on_event(void *ctx, enum kube_event_type type, json_object *obj)
{
    struct watch_ctx *wc = ctx;
    struct informer *inf = wc->inf;
    if (type != KUBE_EVENT_ERROR) {
        remember_rv(wc, obj);
        wc->events++;
    }
    switch (type) {
    case KUBE_EVENT_ADDED:
    case KUBE_EVENT_MODIFIED:
        inf->h.upsert(inf->h.ctx, obj);
        break;
    case KUBE_EVENT_DELETED:
        inf->h.remove(inf->h.ctx, obj);
        break;
    case KUBE_EVENT_BOOKMARK:
    case KUBE_EVENT_ERROR:
        break;
    }
    return atomic_load(&inf->stop);
}

/* Sleeps up to ms, waking early on stop. */
/* Sleeps until `until` on the informer's clock, waking early on stop. */
static void nap(struct informer *inf, int64_t until)
{
    pthread_mutex_lock(&inf->mu);
    /* An injected clock may be moved by hand: look at it again every 100 ms. */
    while (!atomic_load(&inf->stop) &&
           !deadline_wait(&inf->cv, &inf->mu, CLOCK_REALTIME, inf->clock, until, 100))
        ;
    pthread_mutex_unlock(&inf->mu);
}

/* The next backoff after a failure at failed_at (on the informer's clock): 0.8 s doubling to
 * 30 s, jittered to [backoff/2, backoff], at least retry_after seconds. Sets retry_at. */
static int64_t back_off(struct informer *inf, int64_t failed_at, int retry_after)
{
    inf->backoff = inf->backoff ? inf->backoff * 2 : 800;
    if (inf->backoff > 30000)
        inf->backoff = 30000;
    int64_t wait = inf->backoff / 2 + rand_r(&inf->seed) % (inf->backoff / 2 + 1);
    if (retry_after > 0 && (int64_t)retry_after * 1000 > wait)
        wait = (int64_t)retry_after * 1000;
    inf->retry_at = failed_at + wait;
    return wait;
}

int64_t informer_step(struct informer *inf, struct kube_client *client)
{
    char *rv = inf->rv;
    struct kube_error err = {0};
    int rc;
    if (!rv[0]) {
        rc = relist(inf, client, &err);
        if (rc == K_OK) {
            log_info_kv(2, "listed", LOG_STR("informer", inf->name),
                        LOG_STR("resourceVersion", rv));
            inf->just_listed = true;
            pthread_mutex_lock(&inf->mu);
            inf->synced = true;
            pthread_cond_broadcast(&inf->cv);
            pthread_mutex_unlock(&inf->mu);
            /* No backoff reset here: only a watch that worked shows the loop is healthy (a
             * LIST that succeeds before every failing watch must not undo the backoff). */
        } else {
            rv[0] = '\0';
        }
    } else {
        int timeout = inf->watch_timeout - inf->watch_timeout / 10 +
                      (int)(rand_r(&inf->seed) % (unsigned)(inf->watch_timeout / 5 + 1));
        char from[RV_MAX];
        snprintf(from, sizeof(from), "%s", rv);
        struct watch_ctx wc = {inf, rv, RV_MAX, 0};
        bool after_list = inf->just_listed;
        inf->just_listed = false;
        int64_t started = clock_mono_ms(inf->clock);
        rc = kube_watch(client, inf->path, from, timeout, on_event, &wc, &err);
        int64_t ended = clock_mono_ms(inf->clock);
        if (rv[0])
            snprintf(inf->last_sync, sizeof(inf->last_sync), "%s", rv);
        if (inf->h.watch_restart)
            inf->h.watch_restart(inf->h.ctx, rc);
        bool worked = wc.events > 0 || ended - started >= SHORT_WATCH_MS;
        if (worked)
            inf->backoff = 0; /* the connection worked: the next failure is a new outage */
        if (rc == K_OK) {
            if (worked || atomic_load(&inf->stop))
                return 0;
            int64_t wait = back_off(inf, ended, 0);
            log_info_kv(2, "watch ended with no events", LOG_STR("informer", inf->name),
                        LOG_INT("afterMs", ended - started), LOG_INT("retryInMs", wait));
            return wait;
        }
        if (rc == K_EGONE) {
            rv[0] = '\0';
            /* Relist at once after a watch that worked, and after an outage (the API server is
             * back and its watch cache starts past our version: the usual 410 after a restart,
             * which must not wait out the outage's backoff). Only a 410 answered at once to the
             * watch that follows a LIST (a server that expires every version) backs off. */
            int64_t wait = 0;
            if (!worked && after_list && !atomic_load(&inf->stop))
                wait = back_off(inf, ended, 0);
            else if (!after_list)
                inf->backoff = 0; /* reached the server: the next failure is a new outage */
            log_info_kv(1, "resourceVersion expired; relisting", LOG_STR("informer", inf->name),
                        LOG_STR("resourceVersion", from), LOG_INT("status", err.http_status),
                        LOG_STR("detail", err.message[0] ? err.message : "watch error"),
                        LOG_INT("retryInMs", wait));
            return wait;
        }
    }
    if (rc == K_OK || atomic_load(&inf->stop))
        return 0;
    /* The backoff counts from the failure, before the handler runs (a test's clock may move). */
    int64_t failed_at = clock_mono_ms(inf->clock);
    if (inf->h.api_error)
        inf->h.api_error(inf->h.ctx, err.http_status);
    int64_t wait = back_off(inf, failed_at, err.retry_after);
    log_warn_kv(rv[0] ? "watch failed" : "list failed", LOG_STR("informer", inf->name),
                LOG_STR("err", k_strerror(rc)),
                LOG_STR("detail", err.message[0] ? err.message : NULL), LOG_INT("retryInMs", wait));
    return wait;
}

static void *run(void *arg)
{
    struct informer *inf = arg;
    char agent[128];
    snprintf(agent, sizeof(agent), "gputri/informer-%s", inf->name);
    struct kube_client *client = inf->transport
                                     ? kube_client_new_transport(inf->cfg, inf->transport, agent)
                                     : kube_client_new(inf->cfg, agent);
    if (!client) {
        log_error_kv("informer: out of memory", LOG_STR("informer", inf->name));
        return NULL;
    }
    kube_client_set_cancel(client, &inf->stop);
    while (!atomic_load(&inf->stop)) {
        if (informer_step(inf, client) > 0)
            nap(inf, inf->retry_at);
    }
    kube_client_free(client);
    return NULL;
}

int informer_start(struct informer *inf)
{
    if (pthread_create(&inf->thread, NULL, run, inf) != 0)
        return K_ENOMEM;
    inf->started = 1;
    return K_OK;
}

bool informer_has_synced(struct informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

bool informer_wait_synced(struct informer *inf, const atomic_int *cancel)
{
    pthread_mutex_lock(&inf->mu);
    while (!inf->synced && !(cancel && atomic_load(cancel))) {
        struct timespec ts = deadline_after(CLOCK_REALTIME, 100);
        pthread_cond_timedwait(&inf->cv, &inf->mu, &ts);
    }
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

void informer_stop(struct informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    atomic_store(&inf->stop, 1);
    pthread_cond_broadcast(&inf->cv);
    pthread_mutex_unlock(&inf->mu);
    if (inf->started) {
        pthread_join(inf->thread, NULL);
        inf->started = 0;
    }
}

void informer_free(struct informer *inf)
{
    if (!inf)
        return;
    pthread_cond_destroy(&inf->cv);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}
