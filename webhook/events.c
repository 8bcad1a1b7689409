/* events.c - asynchronous Warning Events for admission warnings. */
#include "events.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_limit.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/result.h"

struct item {
    char ns[254], kind[64], api_version[128], name[254], uid[128], reason[64], message[1025];
};

/* Events recorded lately, so that re-applying an object (or its UPDATEs) does not repeat them. */
#define RECENT_MAX 1024
#define RECENT_TTL_S 600

struct recent {
    uint64_t hash;
    int64_t at_ms; /* monotonic; 0 = empty */
};

struct event_queue {
    struct recent recent[RECENT_MAX];
    size_t recent_next, repeated;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct item *items;
    size_t cap, head, len;
    bool stopping, started, joined;
    struct clock clock;
    int64_t deadline_ms; /* drain deadline once stopping, monotonic */
    size_t dropped, sent, throttled;
    struct event_limit *limit; /* borrowed; NULL: no limit */
    event_sink_fn sink;
    void *ctx;
    char component[64], instance[128];
    bool has_instance;
    pthread_t thread;
};

struct event_queue *event_queue_new(size_t capacity, event_sink_fn sink, void *ctx,
                                    const char *component, const char *instance)
{
    if (capacity < 1 || capacity > 65536 || !sink)
        return NULL;
    struct event_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->items = calloc(capacity, sizeof(*q->items));
    if (!q->items) {
        free(q);
        return NULL;
    }
    q->clock = *clock_system();
    q->cap = capacity;
    q->sink = sink;
    q->ctx = ctx;
    snprintf(q->component, sizeof(q->component), "%s", component ? component : "gputri");
    q->has_instance = instance != NULL;
    snprintf(q->instance, sizeof(q->instance), "%s", instance ? instance : "");
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    return q;
}

void event_queue_set_clock(struct event_queue *q, const struct clock *clock)
{
    q->clock = clock ? *clock : *clock_system();
}

static bool past(const struct event_queue *q, int64_t deadline_ms)
{
    return clock_mono_ms(&q->clock) >= deadline_ms;
}

static void *worker(void *arg)
{
    struct event_queue *q = arg;
    struct item it;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->len && !q->stopping)
            pthread_cond_wait(&q->cv, &q->mu);
        if (!q->len || (q->stopping && past(q, q->deadline_ms)))
            break;
        it = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        pthread_mutex_unlock(&q->mu);

        struct kube_event_spec e = {
            .ns = it.ns,
            .kind = it.kind,
            .api_version = it.api_version,
            .name = it.name,
            .uid = it.uid[0] ? it.uid : NULL,
            .type = "Warning",
            .reason = it.reason,
            .message = it.message,
            .component = q->component,
            .instance = q->has_instance ? q->instance : NULL,
        };
        int rc = q->sink(q->ctx, &e);
        if (rc != K_OK)
            log_warn("event %s about %s %s/%s not recorded: %s", it.reason, it.kind, it.ns, it.name,
                     k_strerror(rc));
        pthread_mutex_lock(&q->mu);
        if (rc == K_OK)
            q->sent++;
    }
    if (q->len) {
        log_warn("dropping %zu queued event(s) at shutdown", q->len);
        q->dropped += q->len;
        q->len = 0;
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

int event_queue_start(struct event_queue *q)
{
    if (pthread_create(&q->thread, NULL, worker, q) != 0)
        return K_ENOMEM;
    q->started = true;
    return K_OK;
}

/* FNV-1a over the strings that make two Events the same, NUL-separated. */
static uint64_t event_hash(const char *const *parts, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ 0) * 1099511628211ULL;
    }
    return h;
}

/* True when the same Event was queued within RECENT_TTL_S. mu held. */
static bool repeated(const struct event_queue *q, uint64_t h, int64_t now_ms)
{
    for (size_t i = 0; i < RECENT_MAX; i++)
        if (q->recent[i].hash == h && q->recent[i].at_ms &&
            now_ms - q->recent[i].at_ms < RECENT_TTL_S * 1000LL)
            return true;
    return false;
}

/* Remembers an Event queued now. mu held. */
static void remember(struct event_queue *q, uint64_t h, int64_t now_ms)
{
    q->recent[q->recent_next].hash = h;
    q->recent[q->recent_next].at_ms = now_ms > 0 ? now_ms : 1; /* 0 marks an empty slot */
    q->recent_next = (q->recent_next + 1) % RECENT_MAX;
}

void event_queue_set_limit(struct event_queue *q, struct event_limit *limit)
{
    pthread_mutex_lock(&q->mu);
    q->limit = limit;
    pthread_mutex_unlock(&q->mu);
}

bool event_queue_push(struct event_queue *q, const char *ns, const char *kind,
                      const char *api_version, const char *name, const char *uid,
                      const char *reason, const char *message)
{
    const char *parts[] = {ns, kind, name, reason, message};
    uint64_t h = event_hash(parts, sizeof(parts) / sizeof(parts[0]));
    pthread_mutex_lock(&q->mu);
    int64_t now = clock_mono_ms(&q->clock);
    if (repeated(q, h, now)) {
        q->repeated++;
        pthread_mutex_unlock(&q->mu);
        return true;
    }
    if (!q->stopping && q->len < q->cap && q->limit && !event_limit_allow(q->limit, ns)) {
        size_t n = ++q->throttled;
        pthread_mutex_unlock(&q->mu);
        /* a flood would flood the log too: the first, then every 100th */
        if (n == 1 || n % 100 == 0)
            log_warn("event rate limit: not recording %s event about %s %s/%s (%zu so far)",
                     reason ? reason : "", kind ? kind : "", ns ? ns : "", name ? name : "", n);
        return false;
    }
    if (q->stopping || q->len == q->cap) {
        q->dropped++;
        bool stopping = q->stopping;
        pthread_mutex_unlock(&q->mu);
        log_warn("event queue %s: dropping %s event about %s %s/%s", stopping ? "stopping" : "full",
                 reason ? reason : "", kind ? kind : "", ns ? ns : "", name ? name : "");
        return false;
    }
    struct item *it = &q->items[(q->head + q->len) % q->cap];
    snprintf(it->ns, sizeof(it->ns), "%s", ns ? ns : "");
    snprintf(it->kind, sizeof(it->kind), "%s", kind ? kind : "");
    snprintf(it->api_version, sizeof(it->api_version), "%s", api_version ? api_version : "v1");
    snprintf(it->name, sizeof(it->name), "%s", name ? name : "");
    snprintf(it->uid, sizeof(it->uid), "%s", uid ? uid : "");
    snprintf(it->reason, sizeof(it->reason), "%s", reason ? reason : "GPUWarning");
    snprintf(it->message, sizeof(it->message), "%s", message ? message : "");
    remember(q, h, now);
    q->len++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return true;
}

size_t event_queue_dropped(struct event_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->dropped;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t event_queue_throttled(struct event_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->throttled;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t event_queue_sent(struct event_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->sent;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void event_queue_close(struct event_queue *q, int drain_ms)
{
    pthread_mutex_lock(&q->mu);
    if (!q->stopping) {
        q->stopping = true;
        q->deadline_ms = clock_mono_ms(&q->clock) + (drain_ms > 0 ? drain_ms : 0);
    }
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void event_queue_stop(struct event_queue *q, int drain_ms)
{
    event_queue_close(q, drain_ms);
    if (q->started && !q->joined) {
        pthread_join(q->thread, NULL);
        q->joined = true;
    }
    if (!q->started && q->len) {
        q->dropped += q->len;
        q->len = 0;
    }
}

void event_queue_free(struct event_queue *q)
{
    if (!q)
        return;
    event_queue_stop(q, 0);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q->items);
    free(q);
}
