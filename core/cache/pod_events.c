/* pod_events.c - see pod_events.h. */
#include "cache/pod_events.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store.h"
#include "util/result.h"

struct pod_slot {
    size_t n;
    struct pod_event *ev[POD_EVENTS_PER_POD];
};

struct pod_events {
    pthread_rwlock_t lock;
    struct lh_table *pods; /* "ns/name" -> struct pod_slot* */
    size_t max_pods, n_events, bytes;
    atomic_uint_fast64_t refused;
};

/* The newest of the times that are not after `not_after` (<= 0: any). */
static int64_t time_not_after(const struct pod_event *e, int64_t not_after)
{
    const int64_t times[] = {e->first_timestamp, e->last_timestamp, e->event_time, e->series_last};
    int64_t t = 0;
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
        if (times[i] > t && (not_after <= 0 || times[i] <= not_after))
            t = times[i];
    return t;
}

int64_t pod_event_time(const struct pod_event *e)
{
    return time_not_after(e, 0);
}

void pod_event_to_kevent(const struct pod_event *e, const char *pod_ns, const char *pod_name,
                         struct kevent *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->ns, sizeof(out->ns), "%s", e->event_ns);
    snprintf(out->name, sizeof(out->name), "%s", e->event_name);
    snprintf(out->obj_kind, sizeof(out->obj_kind), "Pod");
    snprintf(out->obj_ns, sizeof(out->obj_ns), "%s", pod_ns ? pod_ns : "");
    snprintf(out->obj_name, sizeof(out->obj_name), "%s", pod_name ? pod_name : "");
    snprintf(out->obj_uid, sizeof(out->obj_uid), "%s", e->pod_uid);
    snprintf(out->reason, sizeof(out->reason), "%s", e->reason);
    snprintf(out->message, sizeof(out->message), "%s", e->message ? e->message : "");
    snprintf(out->type, sizeof(out->type), "%s", e->type);
    snprintf(out->component, sizeof(out->component), "%s", e->component);
    snprintf(out->reporting, sizeof(out->reporting), "%s", e->reporting);
    out->count = e->count;
    out->first_timestamp = e->first_timestamp;
    out->last_timestamp = e->last_timestamp;
    out->event_time = e->event_time;
    out->series_last = e->series_last;
}

static void event_free(struct pod_event *e)
{
    if (!e)
        return;
    free(e->event_ns);
    free(e->event_name);
    free(e->pod_uid);
    free(e->component);
    free(e->reporting);
    free(e->reason);
    free(e->type);
    free(e->message);
    free(e);
}

/* The heap a record holds, its strings' terminators included (malloc's overhead left out). */
static size_t event_bytes(const struct pod_event *e)
{
    const char *strs[] = {e->event_ns,  e->event_name, e->pod_uid, e->component,
                          e->reporting, e->reason,     e->type,    e->message};
    size_t n = sizeof(*e);
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        n += strs[i] ? strlen(strs[i]) + 1 : 0;
    return n;
}

static void slot_entry_free(struct lh_entry *e)
{
    free(lh_entry_k(e));
    struct pod_slot *slot = lh_entry_v(e);
    if (slot)
        for (size_t i = 0; i < slot->n; i++)
            event_free(slot->ev[i]);
    free(slot);
}

struct pod_events *pod_events_new(size_t max_pods)
{
    struct pod_events *pe = calloc(1, sizeof(*pe));
    if (!pe)
        return NULL;
    pe->pods = lh_kchar_table_new(64, slot_entry_free);
    if (!pe->pods) {
        free(pe);
        return NULL;
    }
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* the informer's writes are not held up behind a stream of classifications */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&pe->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pe->max_pods = max_pods ? max_pods : 65536;
    return pe;
}

void pod_events_free(struct pod_events *pe)
{
    if (!pe)
        return;
    lh_table_free(pe->pods);
    pthread_rwlock_destroy(&pe->lock);
    free(pe);
}

/* The record of `ev` with its message copied; NULL on ENOMEM. */
static struct pod_event *event_new(const struct kevent *ev)
{
    struct pod_event *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->event_ns = strdup(ev->ns);
    e->event_name = strdup(ev->name);
    e->pod_uid = strdup(ev->obj_uid);
    e->component = strdup(ev->component);
    e->reporting = strdup(ev->reporting);
    e->reason = strdup(ev->reason);
    e->type = strdup(ev->type);
    e->message = strdup(ev->message);
    if (!e->event_ns || !e->event_name || !e->pod_uid || !e->component || !e->reporting ||
        !e->reason || !e->type || !e->message) {
        event_free(e);
        return NULL;
    }
    e->count = ev->count;
    e->first_timestamp = ev->first_timestamp;
    e->last_timestamp = ev->last_timestamp;
    e->event_time = ev->event_time;
    e->series_last = ev->series_last;
    return e;
}

/* The same writer and reason: one slot per kind of verdict. */
static bool same_kind(const struct pod_event *a, const struct kevent *ev)
{
    return strcmp(a->component, ev->component) == 0 && strcmp(a->reporting, ev->reporting) == 0 &&
           strcmp(a->reason, ev->reason) == 0;
}

static bool same_object(const struct pod_event *a, const struct kevent *ev)
{
    return strcmp(a->event_ns, ev->ns) == 0 && strcmp(a->event_name, ev->name) == 0;
}

static void slot_remove(struct pod_events *pe, struct pod_slot *slot, size_t i)
{
    pe->bytes -= event_bytes(slot->ev[i]);
    pe->n_events--;
    event_free(slot->ev[i]);
    slot->ev[i] = slot->ev[--slot->n];
}

/* Drop a pod's slot with all its records (write lock held). */
static void slot_drop(struct pod_events *pe, struct lh_entry *entry)
{
    struct pod_slot *slot = lh_entry_v(entry);
    while (slot->n)
        slot_remove(pe, slot, slot->n - 1);
    lh_table_delete_entry(pe->pods, entry);
}

/* Drop pod `key`'s slot when it holds nothing (write lock held). */
static void slot_drop_if_empty(struct pod_events *pe, struct lh_entry *entry)
{
    struct pod_slot *slot = lh_entry_v(entry);
    if (slot->n == 0)
        lh_table_delete_entry(pe->pods, entry);
}

static int apply_locked(struct pod_events *pe, const char *key, const struct kevent *ev,
                        bool deleted, int64_t not_after, bool *changed)
{
    struct lh_entry *entry = lh_table_lookup_entry(pe->pods, key);
    struct pod_slot *slot = entry ? lh_entry_v(entry) : NULL;
    if (deleted) {
        for (size_t i = 0; slot && i < slot->n; i++)
            if (same_object(slot->ev[i], ev)) {
                slot_remove(pe, slot, i);
                slot_drop_if_empty(pe, entry);
                *changed = true;
                break;
            }
        return K_OK;
    }
    size_t at = SIZE_MAX;
    for (size_t i = 0; slot && i < slot->n; i++)
        if (same_kind(slot->ev[i], ev)) {
            at = i;
            break;
        }
    if (at != SIZE_MAX) {
        struct pod_event *old = slot->ev[at];
        struct pod_event probe = {.first_timestamp = ev->first_timestamp,
                                  .last_timestamp = ev->last_timestamp,
                                  .event_time = ev->event_time,
                                  .series_last = ev->series_last};
        /* an older Event of a kind this pod has newer: nothing to do, unless the newer one was
         * not listed again yet (it may be gone; if it is listed later, it comes back) */
        if (!same_object(old, ev) && !old->stale &&
            time_not_after(&probe, not_after) < time_not_after(old, not_after))
            return K_OK;
    }
    struct pod_event *e = event_new(ev);
    if (!e)
        return K_ENOMEM;
    if (!slot) {
        if ((size_t)lh_table_length(pe->pods) >= pe->max_pods) {
            event_free(e);
            atomic_fetch_add(&pe->refused, 1);
            return K_ETOOBIG;
        }
        char *k = strdup(key);
        slot = calloc(1, sizeof(*slot));
        if (!k || !slot || lh_table_insert(pe->pods, k, slot) != 0) {
            free(k);
            free(slot);
            event_free(e);
            return K_ENOMEM;
        }
    }
    if (at == SIZE_MAX && slot->n == POD_EVENTS_PER_POD) {
        at = 0; /* the oldest kind makes room */
        for (size_t i = 1; i < slot->n; i++)
            if (time_not_after(slot->ev[i], not_after) < time_not_after(slot->ev[at], not_after))
                at = i;
    }
    if (at == SIZE_MAX) {
        at = slot->n++;
    } else {
        pe->bytes -= event_bytes(slot->ev[at]);
        pe->n_events--;
        event_free(slot->ev[at]);
    }
    slot->ev[at] = e;
    pe->bytes += event_bytes(e);
    pe->n_events++;
    *changed = true;
    return K_OK;
}

/* Whether every string of `ev` ends within its buffer (model/event.h's promise, checked). */
static bool terminated(const struct kevent *ev)
{
#define ENDS(f) (memchr(ev->f, '\0', sizeof(ev->f)) != NULL)
    return ENDS(ns) && ENDS(name) && ENDS(obj_kind) && ENDS(obj_ns) && ENDS(obj_name) &&
           ENDS(obj_uid) && ENDS(reason) && ENDS(message) && ENDS(type) && ENDS(component) &&
           ENDS(reporting);
#undef ENDS
}

int pod_events_apply(struct pod_events *pe, const struct kevent *ev, bool deleted,
                     int64_t not_after, char *pod_key)
{
    char key[STORE_KEY_MAX];
    if (pod_key)
        pod_key[0] = '\0';
    if (!terminated(ev) || strcmp(ev->obj_kind, "Pod") != 0 || !ev->obj_ns[0] || !ev->obj_name[0] ||
        !ev->obj_uid[0])
        return K_OK;
    if (strcmp(ev->ns, ev->obj_ns) != 0)
        return K_OK; /* an Event speaks for the pods of its own namespace only */
    if (meta_namespace_key(key, sizeof(key), ev->obj_ns, ev->obj_name) != K_OK)
        return K_OK; /* no pod has such a key: the store refuses it too */
    bool changed = false;
    pthread_rwlock_wrlock(&pe->lock);
    int rc = apply_locked(pe, key, ev, deleted, not_after, &changed);
    pthread_rwlock_unlock(&pe->lock);
    if (changed && pod_key)
        snprintf(pod_key, STORE_KEY_MAX, "%s", key);
    return rc;
}

void pod_events_forget_pod(struct pod_events *pe, const char *ns, const char *name)
{
    char key[STORE_KEY_MAX];
    if (meta_namespace_key(key, sizeof(key), ns, name) == K_OK)
        pod_events_forget_pod_key(pe, key);
}

void pod_events_forget_pod_key(struct pod_events *pe, const char *key)
{
    if (!pe)
        return;
    void *v = NULL;
    pthread_rwlock_rdlock(&pe->lock);
    bool held = lh_table_lookup_ex(pe->pods, key, &v);
    pthread_rwlock_unlock(&pe->lock);
    if (!held)
        return; /* the usual case: no write lock for every pod event */
    pthread_rwlock_wrlock(&pe->lock);
    struct lh_entry *entry = lh_table_lookup_entry(pe->pods, key);
    if (entry)
        slot_drop(pe, entry);
    pthread_rwlock_unlock(&pe->lock);
}

void pod_events_retain(struct pod_events *pe, bool (*keep)(void *ctx, const char *pod_key),
                       void *ctx)
{
    pthread_rwlock_wrlock(&pe->lock);
    struct lh_entry *e, *tmp;
    lh_foreach_safe(pe->pods, e, tmp)
    {
        if (!keep(ctx, (const char *)lh_entry_k(e)))
            slot_drop(pe, e);
    }
    pthread_rwlock_unlock(&pe->lock);
}

void pod_events_sync_begin(struct pod_events *pe, const char *component)
{
    pthread_rwlock_wrlock(&pe->lock);
    struct lh_entry *e;
    lh_foreach(pe->pods, e)
    {
        struct pod_slot *slot = lh_entry_v(e);
        for (size_t i = 0; i < slot->n; i++)
            if (strcmp(slot->ev[i]->component, component) == 0)
                slot->ev[i]->stale = true;
    }
    pthread_rwlock_unlock(&pe->lock);
}

/* Pod keys that lost records in one sweep, handed to the callback after the lock is released. */
struct swept {
    char (*keys)[STORE_KEY_MAX];
    size_t n, cap;
};

void pod_events_sync_end(struct pod_events *pe, const char *component,
                         void (*changed)(void *ctx, const char *pod_key), void *ctx)
{
    struct swept sw = {0};
    pthread_rwlock_wrlock(&pe->lock);
    struct lh_entry *e, *tmp;
    lh_foreach_safe(pe->pods, e, tmp)
    {
        struct pod_slot *slot = lh_entry_v(e);
        bool lost = false;
        for (size_t i = slot->n; i-- > 0;)
            if (slot->ev[i]->stale && strcmp(slot->ev[i]->component, component) == 0) {
                slot_remove(pe, slot, i);
                lost = true;
            }
        if (lost && changed) {
            if (sw.n == sw.cap) {
                size_t cap = sw.cap ? sw.cap * 2 : 16;
                void *p = realloc(sw.keys, cap * sizeof(*sw.keys));
                if (p) {
                    sw.keys = p;
                    sw.cap = cap;
                }
            }
            if (sw.n < sw.cap)
                snprintf(sw.keys[sw.n++], STORE_KEY_MAX, "%s", (const char *)lh_entry_k(e));
        }
        slot_drop_if_empty(pe, e);
    }
    pthread_rwlock_unlock(&pe->lock);
    for (size_t i = 0; i < sw.n; i++)
        changed(ctx, sw.keys[i]);
    free(sw.keys);
}

void pod_events_read_lock(struct pod_events *pe)
{
    pthread_rwlock_rdlock(&pe->lock);
}

void pod_events_read_unlock(struct pod_events *pe)
{
    pthread_rwlock_unlock(&pe->lock);
}

size_t pod_events_get(struct pod_events *pe, const char *ns, const char *name, const char *uid,
                      const struct pod_event **out, size_t max)
{
    char key[STORE_KEY_MAX];
    if (meta_namespace_key(key, sizeof(key), ns, name) != K_OK)
        return 0;
    void *v = NULL;
    if (!lh_table_lookup_ex(pe->pods, key, &v))
        return 0;
    const struct pod_slot *slot = v;
    size_t n = 0;
    for (size_t i = 0; i < slot->n && n < max; i++)
        if (!uid || strcmp(slot->ev[i]->pod_uid, uid) == 0)
            out[n++] = slot->ev[i];
    return n;
}

void pod_events_stats(struct pod_events *pe, struct pod_events_stats *out)
{
    pthread_rwlock_rdlock(&pe->lock);
    out->pods = (size_t)lh_table_length(pe->pods);
    out->events = pe->n_events;
    out->bytes = pe->bytes;
    pthread_rwlock_unlock(&pe->lock);
    out->refused = atomic_load(&pe->refused);
}
