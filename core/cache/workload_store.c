/* workload_store.c - Kueue Workloads by namespace/name and by owner uid (chained hash tables). */
#include "cache/workload_store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

#define BUCKETS 4096u

struct rec {
    struct kworkload w;
    unsigned seen; /* the relist generation that last upserted it */
    struct rec *next;
};

struct own {
    const char *uid; /* borrowed from rec->w.owners[i].uid */
    struct rec *rec;
    struct own *next;
};

struct workload_store {
    pthread_rwlock_t lock;
    struct rec *by_name[BUCKETS];
    struct own *by_owner[BUCKETS];
    size_t count;
    unsigned generation;
};

static uint32_t hash2(const char *a, const char *b)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = a; p && *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *p = b; p && *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % BUCKETS;
}

struct workload_store *workload_store_new(void)
{
    struct workload_store *ws = calloc(1, sizeof(*ws));
    if (ws && pthread_rwlock_init(&ws->lock, NULL) != 0) {
        free(ws);
        return NULL;
    }
    return ws;
}

static void unindex(struct workload_store *ws, struct rec *r)
{
    for (size_t i = 0; i < r->w.n_owners; i++) {
        if (!r->w.owners[i].uid)
            continue;
        struct own **pp = &ws->by_owner[hash2(r->w.owners[i].uid, NULL)];
        while (*pp) {
            if ((*pp)->rec == r) {
                struct own *o = *pp;
                *pp = o->next;
                free(o);
            } else {
                pp = &(*pp)->next;
            }
        }
    }
}

static int index_owners(struct workload_store *ws, struct rec *r)
{
    for (size_t i = 0; i < r->w.n_owners; i++) {
        if (!r->w.owners[i].uid)
            continue;
        struct own *o = malloc(sizeof(*o));
        if (!o) {
            unindex(ws, r);
            return K_ENOMEM;
        }
        uint32_t b = hash2(r->w.owners[i].uid, NULL);
        *o = (struct own){r->w.owners[i].uid, r, ws->by_owner[b]};
        ws->by_owner[b] = o;
    }
    return K_OK;
}

static struct rec **find(struct workload_store *ws, const char *ns, const char *name)
{
    struct rec **pp = &ws->by_name[hash2(ns, name)];
    while (*pp && (strcmp((*pp)->w.ns, ns) != 0 || strcmp((*pp)->w.name, name) != 0))
        pp = &(*pp)->next;
    return pp;
}

static void drop(struct workload_store *ws, struct rec **pp)
{
    struct rec *r = *pp;
    *pp = r->next;
    unindex(ws, r);
    workload_cleanup(&r->w);
    free(r);
    ws->count--;
}

int workload_store_upsert(struct workload_store *ws, struct kworkload *w, bool *changed)
{
    if (changed)
        *changed = false;
    if (!w->ns || !w->name)
        return K_EINVAL;
    struct rec *r = calloc(1, sizeof(*r));
    if (!r)
        return K_ENOMEM;
    r->w = *w;
    pthread_rwlock_wrlock(&ws->lock);
    if (index_owners(ws, r) != K_OK) {
        pthread_rwlock_unlock(&ws->lock);
        free(r);
        return K_ENOMEM;
    }
    r->seen = ws->generation;
    struct rec **pp = find(ws, w->ns, w->name);
    bool diff = true;
    if (*pp) {
        diff = !workload_equal(&(*pp)->w, &r->w);
        r->next = (*pp)->next;
        struct rec *old = *pp;
        *pp = r;
        unindex(ws, old);
        workload_cleanup(&old->w);
        free(old);
    } else {
        *pp = r;
        ws->count++;
    }
    pthread_rwlock_unlock(&ws->lock);
    memset(w, 0, sizeof(*w));
    if (changed)
        *changed = diff;
    return K_OK;
}

bool workload_store_remove(struct workload_store *ws, const char *ns, const char *name)
{
    if (!ns || !name)
        return false;
    pthread_rwlock_wrlock(&ws->lock);
    struct rec **pp = find(ws, ns, name);
    bool had = *pp != NULL;
    if (had)
        drop(ws, pp);
    pthread_rwlock_unlock(&ws->lock);
    return had;
}

void workload_store_sync_begin(struct workload_store *ws)
{
    pthread_rwlock_wrlock(&ws->lock);
    ws->generation++;
    pthread_rwlock_unlock(&ws->lock);
}

static size_t sweep(struct workload_store *ws, bool all)
{
    size_t n = 0;
    for (size_t b = 0; b < BUCKETS; b++) {
        struct rec **pp = &ws->by_name[b];
        while (*pp) {
            if (all || (*pp)->seen != ws->generation) {
                drop(ws, pp);
                n++;
            } else {
                pp = &(*pp)->next;
            }
        }
    }
    return n;
}

size_t workload_store_sync_end(struct workload_store *ws)
{
    pthread_rwlock_wrlock(&ws->lock);
    size_t n = sweep(ws, false);
    pthread_rwlock_unlock(&ws->lock);
    return n;
}

void workload_store_clear(struct workload_store *ws)
{
    pthread_rwlock_wrlock(&ws->lock);
    sweep(ws, true);
    pthread_rwlock_unlock(&ws->lock);
}

void workload_store_free(struct workload_store *ws)
{
    if (!ws)
        return;
    sweep(ws, true);
    pthread_rwlock_destroy(&ws->lock);
    free(ws);
}

void workload_store_read_lock(struct workload_store *ws)
{
    pthread_rwlock_rdlock(&ws->lock);
}

void workload_store_read_unlock(struct workload_store *ws)
{
    pthread_rwlock_unlock(&ws->lock);
}

static const struct kworkload *by_owner(struct workload_store *ws, const char *uid)
{
    if (!uid || !*uid)
        return NULL;
    for (struct own *o = ws->by_owner[hash2(uid, NULL)]; o; o = o->next)
        if (strcmp(o->uid, uid) == 0)
            return &o->rec->w;
    return NULL;
}

const struct kworkload *workload_store_for_pod(struct workload_store *ws, const char *pod_uid,
                                               const char *owner_uid)
{
    if (!ws)
        return NULL;
    const struct kworkload *w = by_owner(ws, pod_uid);
    return w ? w : by_owner(ws, owner_uid);
}

size_t workload_store_count(struct workload_store *ws)
{
    return ws->count;
}
