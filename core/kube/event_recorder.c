/* event_recorder.c - Events with repeat suppression, token buckets and aggregation by count. */
#include "event_recorder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/result.h"

#define NOTE_LIMIT 1024 /* validation.NoteLengthLimit */
#define NS_MAX 254      /* a namespace is a DNS label (63); room for anything longer */
#define NAME_MAX_ 320   /* an Event's name: the object's (cut at 240) and a hex suffix */

/* ---------------------------------------------------------------- token buckets */

struct bucket {
    double tokens;
    int64_t last_ms; /* monotonic time tokens were last brought up to date */
};

struct ns_bucket {
    struct bucket b;
    uint64_t hash;
    int64_t used_ms; /* last Event for it */
    char ns[NS_MAX];
};

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0) * 1099511628211ULL; /* the terminator: ("ab","c") differs from ("a","bc") */
}

#define FNV_OFFSET 1469598103934665603ULL

/* Brings b up to now: one token per refill_ms, at most burst. */
static void refill(struct bucket *b, unsigned burst, int64_t refill_ms, int64_t now)
{
    if (now > b->last_ms) {
        b->tokens += (double)(now - b->last_ms) / (double)refill_ms;
        if (b->tokens > burst)
            b->tokens = burst;
        b->last_ms = now;
    }
}

/* ---------------------------------------------------------------- the recorder */

struct agg_entry {
    char uid[128];
    char type[16];
    char reason[128];
    char ns[NS_MAX];
    char name[NAME_MAX_]; /* the Event's name */
    int count;
    int64_t created_ms; /* monotonic: the ttl runs from here */
    int64_t used_ms;    /* last record: for LRU eviction */
};

struct recent {
    uint64_t hash;
    int64_t at_ms; /* monotonic; 0 = empty */
};

/* A posted Event, copied. */
struct item {
    char ns[NS_MAX], kind[64], api_version[128], name[254], uid[128], type[16], reason[128],
        message[NOTE_LIMIT + 1], component[64], instance[128];
    bool has_uid, has_instance;
};

struct event_recorder {
    struct event_recorder_options o;
    struct event_limit_options limit;
    bool has_limit;
    struct clock clock;
    pthread_mutex_t mu;
    struct event_recorder_stats stats;
    /* step 1 */
    struct recent recent[EVENT_RECORDER_RECENT];
    size_t recent_next;
    /* step 2 */
    struct bucket global;
    struct ns_bucket *buckets;
    size_t n_buckets;
    /* step 3 */
    struct agg_entry *entries;
    size_t n_entries;
    /* the queue */
    pthread_cond_t cv;
    struct item *items;
    size_t head, len;
    bool stopping, started, joined;
    int64_t deadline_ms; /* drain deadline once stopping, monotonic */
    struct kube_client *client;
    pthread_t thread;
};

struct event_recorder *event_recorder_new(const struct event_recorder_options *o)
{
    const struct event_limit_options *l = o->limit;
    if (l && ((l->ns_burst && l->ns_refill_ms <= 0) || (l->burst && l->refill_ms <= 0)))
        return NULL;
    if (o->queue_capacity > 65536)
        return NULL;
    struct event_recorder *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->o = *o;
    r->o.limit = NULL; /* borrowed no longer: the copy in r->limit */
    r->clock = o->clock ? *o->clock : *clock_system();
    if (!r->o.max_entries)
        r->o.max_entries = 4096;
    if (l) {
        r->has_limit = true;
        r->limit = *l;
        if (!r->limit.max_namespaces)
            r->limit.max_namespaces = EVENT_LIMIT_MAX_NAMESPACES;
        r->global.tokens = r->limit.burst;
        r->global.last_ms = clock_mono_ms(&r->clock);
        if (r->limit.ns_burst)
            r->buckets = calloc(r->limit.max_namespaces, sizeof(*r->buckets));
    }
    if (r->o.aggregate_ttl_ms > 0)
        r->entries = calloc(r->o.max_entries, sizeof(*r->entries));
    if (r->o.queue_capacity)
        r->items = calloc(r->o.queue_capacity, sizeof(*r->items));
    if ((r->has_limit && r->limit.ns_burst && !r->buckets) ||
        (r->o.aggregate_ttl_ms > 0 && !r->entries) || (r->o.queue_capacity && !r->items)) {
        free(r->buckets);
        free(r->entries);
        free(r->items);
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    return r;
}

/* ---------------------------------------------------------------- step 1: repeats */

static uint64_t event_hash(const struct kube_event_spec *e)
{
    const char *parts[] = {e->ns, e->kind, e->name, e->type, e->reason, e->message};
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        h = fnv1a(h, parts[i]);
    return h;
}

/* True when the same Event was let through within the window. mu held. */
static bool repeated(const struct event_recorder *r, uint64_t h, int64_t now)
{
    for (size_t i = 0; i < EVENT_RECORDER_RECENT; i++)
        if (r->recent[i].hash == h && r->recent[i].at_ms &&
            now - r->recent[i].at_ms < r->o.repeat_window_ms)
            return true;
    return false;
}

static void remember_recent(struct event_recorder *r, uint64_t h, int64_t now)
{
    r->recent[r->recent_next].hash = h;
    r->recent[r->recent_next].at_ms = now > 0 ? now : 1; /* 0 marks an empty slot */
    r->recent_next = (r->recent_next + 1) % EVENT_RECORDER_RECENT;
}

/* ---------------------------------------------------------------- step 2: buckets */

/* The bucket of ns, made (full) when missing, evicting as the header says. mu held. */
static struct ns_bucket *ns_bucket(struct event_recorder *r, const char *ns, int64_t now)
{
    const struct event_limit_options *l = &r->limit;
    uint64_t h = fnv1a(FNV_OFFSET, ns);
    struct ns_bucket *victim = NULL;
    for (size_t i = 0; i < r->n_buckets; i++) {
        struct ns_bucket *b = &r->buckets[i];
        if (b->hash == h && strcmp(b->ns, ns) == 0)
            return b;
    }
    if (r->n_buckets < l->max_namespaces) {
        victim = &r->buckets[r->n_buckets++];
    } else {
        for (size_t i = 0; i < r->n_buckets; i++) {
            struct ns_bucket *b = &r->buckets[i];
            refill(&b->b, l->ns_burst, l->ns_refill_ms, now);
            if (b->b.tokens >= l->ns_burst) {
                victim = b;
                break;
            }
            if (!victim || b->used_ms < victim->used_ms)
                victim = b;
        }
    }
    victim->hash = h;
    snprintf(victim->ns, sizeof(victim->ns), "%s", ns);
    victim->b.tokens = l->ns_burst;
    victim->b.last_ms = now;
    return victim;
}

/* Whether the buckets let one more Event about an object in ns through now; takes the tokens
 * when they do. mu held. */
static bool allow(struct event_recorder *r, const char *ns, int64_t now)
{
    const struct event_limit_options *l = &r->limit;
    struct ns_bucket *nb = NULL;
    if (l->ns_burst) {
        nb = ns_bucket(r, ns ? ns : "", now);
        nb->used_ms = now > 0 ? now : 1;
        refill(&nb->b, l->ns_burst, l->ns_refill_ms, now);
        if (nb->b.tokens < 1.0)
            return false;
    }
    if (l->burst) {
        refill(&r->global, l->burst, l->refill_ms, now);
        if (r->global.tokens < 1.0)
            return false;
        r->global.tokens -= 1.0;
    }
    if (nb)
        nb->b.tokens -= 1.0;
    return true;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* Step 1: true (counted) when e is a repeat within the window; *h gets its hash. mu held. */
static bool is_repeat(struct event_recorder *r, const struct kube_event_spec *e, int64_t now,
                      uint64_t *h)
{
    if (r->o.repeat_window_ms <= 0)
        return false;
    *h = event_hash(e);
    if (!repeated(r, *h, now))
        return false;
    r->stats.repeated++;
    return true;
}

/* Step 2: true when the buckets let e through (tokens taken); false counted and logged. And a
 * let-through Event is remembered for step 1 (a refused one is not: it goes through once a
 * token is back). mu held. */
static bool let_through(struct event_recorder *r, const struct kube_event_spec *e, int64_t now,
                        uint64_t h)
{
    if (r->has_limit && !allow(r, e->ns, now)) {
        uint64_t n = ++r->stats.throttled;
        /* a flood would flood the log too: the first, then every 100th */
        if (n == 1 || n % 100 == 0)
            log_warn_kv("event rate limit: not recording the Event",
                        LOG_STR("reason", str(e->reason)), LOG_STR("kind", str(e->kind)),
                        LOG_STR("namespace", str(e->ns)), LOG_STR("name", str(e->name)),
                        LOG_INT("soFar", n));
        return false;
    }
    if (r->o.repeat_window_ms > 0)
        remember_recent(r, h, now);
    return true;
}

/* ---------------------------------------------------------------- step 3: aggregation */

static bool same_key(const struct agg_entry *en, const struct kube_event_spec *e)
{
    return strcmp(en->uid, e->uid) == 0 && strcmp(en->type, e->type) == 0 &&
           strcmp(en->reason, e->reason) == 0 && strcmp(en->ns, e->ns) == 0;
}

/* The live entry for e, or NULL; expired entries met on the way are dropped. mu held. */
static struct agg_entry *find(struct event_recorder *r, const struct kube_event_spec *e,
                              int64_t now)
{
    for (size_t i = 0; i < r->n_entries;) {
        struct agg_entry *en = &r->entries[i];
        if (now - en->created_ms >= r->o.aggregate_ttl_ms) {
            r->entries[i] = r->entries[--r->n_entries];
            continue;
        }
        if (same_key(en, e))
            return en;
        i++;
    }
    return NULL;
}

static void forget(struct event_recorder *r, const struct kube_event_spec *e)
{
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n_entries; i++) {
        if (same_key(&r->entries[i], e)) {
            r->entries[i] = r->entries[--r->n_entries];
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
}

static void remember(struct event_recorder *r, const struct kube_event_spec *e, const char *name,
                     int count, int64_t now)
{
    pthread_mutex_lock(&r->mu);
    struct agg_entry *en = find(r, e, now);
    if (!en) {
        if (r->n_entries == r->o.max_entries) {
            size_t lru = 0;
            for (size_t i = 1; i < r->n_entries; i++)
                if (r->entries[i].used_ms < r->entries[lru].used_ms)
                    lru = i;
            r->entries[lru] = r->entries[--r->n_entries];
        }
        en = &r->entries[r->n_entries++];
        memset(en, 0, sizeof(*en));
        snprintf(en->uid, sizeof(en->uid), "%s", e->uid);
        snprintf(en->type, sizeof(en->type), "%s", e->type);
        snprintf(en->reason, sizeof(en->reason), "%s", e->reason);
        snprintf(en->ns, sizeof(en->ns), "%s", e->ns);
        en->created_ms = now;
    }
    snprintf(en->name, sizeof(en->name), "%s", name);
    en->count = count;
    en->used_ms = now;
    pthread_mutex_unlock(&r->mu);
}

/* ---------------------------------------------------------------- writing */

/* Wall nanoseconds for an Event's name, never the same twice in this process: two Events about
 * one object in the same nanosecond would otherwise collide (409). */
static uint64_t name_ns(int64_t wall_ms)
{
    static _Atomic uint64_t last;
    uint64_t want = (uint64_t)wall_ms * 1000000ULL, prev = atomic_load(&last), next;
    do
        next = want > prev ? want : prev + 1;
    while (!atomic_compare_exchange_weak(&last, &prev, next));
    return next;
}

static int post_event(struct kube_client *c, const struct kube_event_spec *e, int64_t wall,
                      char name[NAME_MAX_], struct kube_error *err)
{
    char now[CLOCK_RFC3339_MAX], path[600], ns_esc[256];
    if (kube_path_escape(e->ns, ns_esc, sizeof(ns_esc)) != K_OK)
        return K_ETOOBIG;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns_esc);
    clock_format_rfc3339(wall, false, now, sizeof(now));
    /* client-go names Events "<object>.<hex UnixNano>" (tools/record/event.go, makeEvent) */
    snprintf(name, NAME_MAX_, "%.240s.%llx", e->name, (unsigned long long)name_ns(wall));
    json_object *ev = kube_event_body(e, name, now);
    if (!ev)
        return K_ENOMEM;
    int rc = kube_post(c, path, ev, NULL, err);
    json_object_put(ev);
    return rc;
}

static int patch_event(struct kube_client *c, const struct kube_event_spec *e, const char *name,
                       int count, int64_t wall, struct kube_error *err)
{
    char now[CLOCK_RFC3339_MAX], msg[NOTE_LIMIT + 1], path[1200], ns_esc[256], name_esc[700];
    if (kube_path_escape(e->ns, ns_esc, sizeof(ns_esc)) != K_OK ||
        kube_path_escape(name, name_esc, sizeof(name_esc)) != K_OK)
        return K_ETOOBIG;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events/%s", ns_esc, name_esc);
    clock_format_rfc3339(wall, false, now, sizeof(now));
    snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "");
    json_object *patch = json_object_new_object();
    if (!patch)
        return K_ENOMEM;
    json_object_object_add(patch, "count", json_object_new_int(count));
    json_object_object_add(patch, "lastTimestamp", json_object_new_string(now));
    json_object_object_add(patch, "message", json_object_new_string(msg));
    int rc = kube_patch_merge(c, path, patch, NULL, err);
    json_object_put(patch);
    return rc;
}

/* Step 3 and the write; counts the outcome. */
static int write_event(struct event_recorder *r, struct kube_client *c,
                       const struct kube_event_spec *e, bool *updated, struct kube_error *err)
{
    char name[NAME_MAX_], old_name[NAME_MAX_] = "";
    int64_t wall = clock_wall_ms(&r->clock), mono = clock_mono_ms(&r->clock);
    int count = 0, rc;
    bool aggregate = r->o.aggregate_ttl_ms > 0 && e->uid && *e->uid;

    if (aggregate) {
        pthread_mutex_lock(&r->mu);
        struct agg_entry *en = find(r, e, mono);
        if (en) {
            snprintf(old_name, sizeof(old_name), "%s", en->name);
            count = en->count;
        }
        pthread_mutex_unlock(&r->mu);
    }
    if (old_name[0]) {
        rc = patch_event(c, e, old_name, count + 1, wall, err);
        if (rc == K_OK) {
            remember(r, e, old_name, count + 1, mono);
            pthread_mutex_lock(&r->mu);
            r->stats.updated++;
            pthread_mutex_unlock(&r->mu);
            if (updated)
                *updated = true;
            return K_OK;
        }
        if (rc != K_ENOTFOUND)
            goto failed;
        forget(r, e); /* the Event expired on the server: start a new one */
    }
    rc = post_event(c, e, wall, name, err);
    if (rc != K_OK)
        goto failed;
    if (aggregate)
        remember(r, e, name, 1, mono);
    pthread_mutex_lock(&r->mu);
    r->stats.created++;
    pthread_mutex_unlock(&r->mu);
    return K_OK;
failed:
    pthread_mutex_lock(&r->mu);
    r->stats.failed++;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int event_recorder_record(struct event_recorder *r, struct kube_client *c,
                          const struct kube_event_spec *e, bool *updated, struct kube_error *err)
{
    if (updated)
        *updated = false;
    if (!e->ns || !e->kind || !e->api_version || !e->name || !e->type || !e->reason ||
        !e->component)
        return K_EINVAL;
    if (!r) {
        char name[NAME_MAX_];
        return post_event(c, e, clock_wall_ms(NULL), name, err);
    }
    uint64_t h = 0;
    int64_t now = clock_mono_ms(&r->clock);
    pthread_mutex_lock(&r->mu);
    bool repeat = is_repeat(r, e, now, &h), through = repeat || let_through(r, e, now, h);
    pthread_mutex_unlock(&r->mu);
    if (repeat)
        return K_OK;
    if (!through) {
        if (err) {
            err->code = K_ETHROTTLED;
            snprintf(err->message, sizeof(err->message), "over the Event rate limit");
        }
        return K_ETHROTTLED;
    }
    return write_event(r, c, e, updated, err);
}

/* ---------------------------------------------------------------- the queue */

static bool past(const struct event_recorder *r, int64_t deadline_ms)
{
    return clock_mono_ms(&r->clock) >= deadline_ms;
}

static void *worker(void *arg)
{
    struct event_recorder *r = arg;
    struct item *it = malloc(sizeof(*it)); /* 2 KiB: off the thread's stack */
    pthread_mutex_lock(&r->mu);
    for (; it;) {
        while (!r->len && !r->stopping)
            pthread_cond_wait(&r->cv, &r->mu);
        if (!r->len || (r->stopping && past(r, r->deadline_ms)))
            break;
        *it = r->items[r->head];
        r->head = (r->head + 1) % r->o.queue_capacity;
        r->len--;
        pthread_mutex_unlock(&r->mu);

        struct kube_event_spec e = {
            .ns = it->ns,
            .kind = it->kind,
            .api_version = it->api_version,
            .name = it->name,
            .uid = it->has_uid ? it->uid : NULL,
            .type = it->type,
            .reason = it->reason,
            .message = it->message,
            .component = it->component,
            .instance = it->has_instance ? it->instance : NULL,
        };
        struct kube_error err = {0};
        int rc = write_event(r, r->client, &e, NULL, &err);
        if (rc != K_OK)
            log_warn_kv("Event not recorded", LOG_STR("reason", it->reason),
                        LOG_STR("kind", it->kind), LOG_STR("namespace", it->ns),
                        LOG_STR("name", it->name), LOG_STR("err", k_strerror(rc)),
                        LOG_STR("detail", err.message[0] ? err.message : NULL));
        pthread_mutex_lock(&r->mu);
    }
    if (r->len) {
        log_warn_kv("dropping queued Events at shutdown", LOG_INT("count", r->len));
        r->stats.dropped += r->len;
        r->len = 0;
    }
    pthread_mutex_unlock(&r->mu);
    free(it);
    return NULL;
}

int event_recorder_start(struct event_recorder *r, struct kube_client *c)
{
    if (!r->o.queue_capacity || !c || r->started)
        return K_EINVAL;
    r->client = c;
    if (pthread_create(&r->thread, NULL, worker, r) != 0)
        return K_ENOMEM;
    r->started = true;
    return K_OK;
}

bool event_recorder_post(struct event_recorder *r, const struct kube_event_spec *e)
{
    uint64_t h = 0;
    int64_t now = clock_mono_ms(&r->clock);
    pthread_mutex_lock(&r->mu);
    if (is_repeat(r, e, now, &h)) {
        pthread_mutex_unlock(&r->mu);
        return true;
    }
    if (r->stopping || r->len == r->o.queue_capacity) {
        r->stats.dropped++;
        bool stopping = r->stopping;
        pthread_mutex_unlock(&r->mu);
        log_warn_kv(stopping ? "event queue stopping: dropping the Event"
                             : "event queue full: dropping the Event",
                    LOG_STR("reason", str(e->reason)), LOG_STR("kind", str(e->kind)),
                    LOG_STR("namespace", str(e->ns)), LOG_STR("name", str(e->name)));
        return false;
    }
    if (!let_through(r, e, now, h)) {
        pthread_mutex_unlock(&r->mu);
        return false;
    }
    struct item *it = &r->items[(r->head + r->len) % r->o.queue_capacity];
    snprintf(it->ns, sizeof(it->ns), "%s", e->ns ? e->ns : "");
    snprintf(it->kind, sizeof(it->kind), "%s", e->kind ? e->kind : "");
    snprintf(it->api_version, sizeof(it->api_version), "%s",
             e->api_version ? e->api_version : "v1");
    snprintf(it->name, sizeof(it->name), "%s", e->name ? e->name : "");
    it->has_uid = e->uid && *e->uid;
    snprintf(it->uid, sizeof(it->uid), "%s", it->has_uid ? e->uid : "");
    snprintf(it->type, sizeof(it->type), "%s", e->type ? e->type : "Warning");
    snprintf(it->reason, sizeof(it->reason), "%s", e->reason ? e->reason : "");
    snprintf(it->message, sizeof(it->message), "%s", e->message ? e->message : "");
    snprintf(it->component, sizeof(it->component), "%s", e->component ? e->component : "gputri");
    it->has_instance = e->instance != NULL;
    snprintf(it->instance, sizeof(it->instance), "%s", e->instance ? e->instance : "");
    r->len++;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return true;
}

void event_recorder_close(struct event_recorder *r, int drain_ms)
{
    pthread_mutex_lock(&r->mu);
    if (!r->stopping) {
        r->stopping = true;
        r->deadline_ms = clock_mono_ms(&r->clock) + (drain_ms > 0 ? drain_ms : 0);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void event_recorder_stop(struct event_recorder *r, int drain_ms)
{
    event_recorder_close(r, drain_ms);
    if (r->started && !r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = true;
    }
    pthread_mutex_lock(&r->mu);
    if (r->len) { /* never started */
        r->stats.dropped += r->len;
        r->len = 0;
    }
    pthread_mutex_unlock(&r->mu);
}

/* ---------------------------------------------------------------- the rest */

void event_recorder_stats(struct event_recorder *r, struct event_recorder_stats *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->stats;
    pthread_mutex_unlock(&r->mu);
}

size_t event_recorder_size(struct event_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    size_t n = r->n_entries;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void event_recorder_free(struct event_recorder *r)
{
    if (!r)
        return;
    event_recorder_stop(r, 0);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r->buckets);
    free(r->entries);
    free(r->items);
    free(r);
}
