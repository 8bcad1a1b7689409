/* event_recorder.c - Event creation with aggregation of repeats (see events.h). */
#include "event_recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/result.h"

#define NOTE_LIMIT 1024 /* validation.NoteLengthLimit */

struct entry {
    char uid[64];
    char type[16];
    char reason[128];
    char ns[254];
    char name[320]; /* the Event's name */
    int count;
    int64_t created_ms; /* when the Event was created: ttl runs from here */
    int64_t used_ms;    /* last record: for LRU eviction */
};

struct event_recorder {
    const struct event_sink *sink;
    int64_t ttl_ms;
    size_t max;
    struct clock clock;
    pthread_mutex_t mu;
    struct entry *entries;
    size_t n;
};

struct event_recorder *event_recorder_new(const struct event_sink *sink, int64_t ttl_ms,
                                          size_t max_entries, const struct clock *clock)
{
    struct event_recorder *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->sink = sink;
    r->ttl_ms = ttl_ms > 0 ? ttl_ms : 600000;
    r->max = max_entries > 0 ? max_entries : 4096;
    r->clock = clock ? *clock : *clock_system();
    r->entries = calloc(r->max, sizeof(*r->entries));
    if (!r->entries) {
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    return r;
}

void event_recorder_free(struct event_recorder *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->mu);
    free(r->entries);
    free(r);
}

size_t event_recorder_size(struct event_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    size_t n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static int same_key(const struct entry *en, const struct kube_event_spec *e)
{
    return strcmp(en->uid, e->uid) == 0 && strcmp(en->type, e->type) == 0 &&
           strcmp(en->reason, e->reason) == 0 && strcmp(en->ns, e->ns) == 0;
}

/* The live entry for e, or NULL; expired entries met on the way are dropped. Lock held. */
static struct entry *find(struct event_recorder *r, const struct kube_event_spec *e, int64_t now)
{
    for (size_t i = 0; i < r->n;) {
        struct entry *en = &r->entries[i];
        if (now - en->created_ms >= r->ttl_ms) {
            r->entries[i] = r->entries[--r->n];
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
    for (size_t i = 0; i < r->n; i++) {
        if (same_key(&r->entries[i], e)) {
            r->entries[i] = r->entries[--r->n];
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
}

static void remember(struct event_recorder *r, const struct kube_event_spec *e, const char *name,
                     int count, int64_t now)
{
    pthread_mutex_lock(&r->mu);
    struct entry *en = find(r, e, now);
    if (!en) {
        if (r->n == r->max) {
            size_t lru = 0;
            for (size_t i = 1; i < r->n; i++)
                if (r->entries[i].used_ms < r->entries[lru].used_ms)
                    lru = i;
            r->entries[lru] = r->entries[--r->n];
        }
        en = &r->entries[r->n++];
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

static void timestamp(int64_t wall_ms, char out[32])
{
    clock_format_rfc3339(wall_ms, false, out, 32);
}

int event_recorder_record(struct event_recorder *r, void *conn, const struct kube_event_spec *e,
                          int *aggregated, struct kube_error *err)
{
    char now[32], msg[NOTE_LIMIT + 1], name[320], old_name[320] = "";
    int64_t wall = clock_wall_ms(&r->clock);
    int count = 0, rc;
    timestamp(wall, now);
    snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "");
    if (aggregated)
        *aggregated = 0;

    if (e->uid && *e->uid) {
        pthread_mutex_lock(&r->mu);
        struct entry *en = find(r, e, wall);
        if (en) {
            snprintf(old_name, sizeof(old_name), "%s", en->name);
            count = en->count;
        }
        pthread_mutex_unlock(&r->mu);
    }
    if (old_name[0]) {
        json_object *patch = json_object_new_object();
        json_object_object_add(patch, "count", json_object_new_int(count + 1));
        json_object_object_add(patch, "lastTimestamp", json_object_new_string(now));
        json_object_object_add(patch, "message", json_object_new_string(msg));
        rc = r->sink->patch(conn, e->ns, old_name, patch, err);
        json_object_put(patch);
        if (rc == K_OK) {
            remember(r, e, old_name, count + 1, wall);
            if (aggregated)
                *aggregated = 1;
            return K_OK;
        }
        if (rc != K_ENOTFOUND)
            return rc;
        forget(r, e); /* the Event expired on the server: start a new one */
    }

    /* client-go names Events "<object>.<hex UnixNano>" (tools/record/event.go, makeEvent). */
    snprintf(name, sizeof(name), "%.240s.%llx", e->name,
             (unsigned long long)wall * 1000000ULL + (unsigned long long)(rand() % 1000000));
    json_object *ev = kube_event_body(e, name, now);
    if (!ev)
        return K_ENOMEM;
    rc = r->sink->create(conn, e->ns, ev, err);
    json_object_put(ev);
    if (rc == K_OK && e->uid && *e->uid)
        remember(r, e, name, 1, wall);
    return rc;
}

static int kube_create(void *conn, const char *ns, json_object *body, struct kube_error *err)
{
    char path[600], ns_esc[256];
    if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK)
        return K_ETOOBIG;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns_esc);
    return kube_post(conn, path, body, NULL, err);
}

static int kube_patch(void *conn, const char *ns, const char *name, json_object *body,
                      struct kube_error *err)
{
    char path[1200], ns_esc[256], name_esc[700];
    if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK ||
        kube_path_escape(name, name_esc, sizeof(name_esc)) != K_OK)
        return K_ETOOBIG;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events/%s", ns_esc, name_esc);
    return kube_patch_merge(conn, path, body, NULL, err);
}

const struct event_sink *event_sink_kube(void)
{
    static const struct event_sink sink = {kube_create, kube_patch};
    return &sink;
}
