/* quota_owners.c - the owners whose GPU pods a quota refuses (quota_owners.h). */
#include "quota_owners.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct quota_owner o;
    bool stale;
};

struct quota_owners {
    pthread_mutex_t mu;
    struct entry *items;
    size_t n, max;
    uint64_t refused;
};

struct quota_owners *quota_owners_new(size_t max)
{
    struct quota_owners *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->max = max ? max : QUOTA_OWNERS_MAX;
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void quota_owners_free(struct quota_owners *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->items);
    free(t);
}

static struct entry *find(struct quota_owners *t, const char *uid)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->items[i].o.uid, uid) == 0)
            return &t->items[i];
    return NULL;
}

static void drop(struct quota_owners *t, struct entry *e)
{
    *e = t->items[--t->n];
}

static bool same_verdict(const struct quota_refusal *a, const struct quota_refusal *b)
{
    return strcmp(a->quota, b->quota) == 0 && strcmp(a->key, b->key) == 0 &&
           strcmp(a->used, b->used) == 0 && strcmp(a->limited, b->limited) == 0 &&
           strcmp(a->requested, b->requested) == 0;
}

enum quota_owners_change quota_owners_apply(struct quota_owners *t, const struct quota_owner *o,
                                            bool deleted)
{
    enum quota_owners_change rc = QUOTA_OWNERS_SAME;
    pthread_mutex_lock(&t->mu);
    struct entry *e = find(t, o->uid);
    if (deleted) {
        if (e && strcmp(e->o.event_name, o->event_name) == 0) {
            drop(t, e);
            rc = QUOTA_OWNERS_REMOVED;
        }
    } else if (e) {
        if (o->q.at >= e->o.q.at || strcmp(e->o.event_name, o->event_name) == 0) {
            rc = same_verdict(&e->o.q, &o->q) ? QUOTA_OWNERS_SAME : QUOTA_OWNERS_CHANGED;
            e->o = *o;
        }
        e->stale = false;
    } else if (t->n >= t->max) {
        t->refused++;
        rc = QUOTA_OWNERS_FULL;
    } else {
        if (t->n % 64 == 0) {
            struct entry *grown = realloc(t->items, (t->n + 64) * sizeof(*grown));
            if (!grown) {
                pthread_mutex_unlock(&t->mu);
                return QUOTA_OWNERS_FULL;
            }
            t->items = grown;
        }
        t->items[t->n++] = (struct entry){.o = *o};
        rc = QUOTA_OWNERS_NEW;
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

size_t quota_owners_expire(struct quota_owners *t, int64_t now,
                           int64_t (*newest_pod)(void *ctx, const struct quota_owner *o),
                           void *ctx, struct quota_owner *gone, size_t max)
{
    size_t dropped = 0;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n;) {
        int64_t newest = newest_pod ? newest_pod(ctx, &t->items[i].o) : 0;
        if (quota_owner_current(&t->items[i].o, now, newest)) {
            i++;
            continue;
        }
        if (gone && dropped < max)
            gone[dropped] = t->items[i].o;
        dropped++;
        drop(t, &t->items[i]);
    }
    pthread_mutex_unlock(&t->mu);
    return dropped;
}

void quota_owners_sync_begin(struct quota_owners *t)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++)
        t->items[i].stale = true;
    pthread_mutex_unlock(&t->mu);
}

void quota_owners_sync_end(struct quota_owners *t)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n;)
        if (t->items[i].stale)
            drop(t, &t->items[i]);
        else
            i++;
    pthread_mutex_unlock(&t->mu);
}

void quota_owners_counts(struct quota_owners *t, size_t counts[QUOTA_OWNER_KINDS],
                         uint64_t *refused)
{
    memset(counts, 0, QUOTA_OWNER_KINDS * sizeof(counts[0]));
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++)
        if ((int)t->items[i].o.kind >= 0 && t->items[i].o.kind < QUOTA_OWNER_KINDS)
            counts[t->items[i].o.kind]++;
    if (refused)
        *refused = t->refused;
    pthread_mutex_unlock(&t->mu);
}
