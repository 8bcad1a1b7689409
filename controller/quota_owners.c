/* quota_owners.c - the owners whose GPU pods a quota refuses (quota_owners.h). */
#include "quota_owners.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct quota_owner o;
    int64_t newest_pod; /* quota_owners_note_pod */
    int64_t checked;    /* quota_owners_due: when it was last handed out for a check */
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

/* Whether namespace `ns` holds its share of the table (QUOTA_OWNER_NS_SHARE). */
static bool ns_full(const struct quota_owners *t, const char *ns)
{
    size_t share = t->max >= QUOTA_OWNER_NS_SHARE ? t->max / QUOTA_OWNER_NS_SHARE : t->max, n = 0;
    for (size_t i = 0; i < t->n && n < share; i++)
        n += strcmp(t->items[i].o.ns, ns) == 0;
    return n >= share;
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
    } else if (t->n >= t->max || ns_full(t, o->ns)) {
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

void quota_owners_note_pod(struct quota_owners *t, const char *owner_uid, int64_t created)
{
    if (!owner_uid)
        return;
    pthread_mutex_lock(&t->mu);
    struct entry *e = t->n ? find(t, owner_uid) : NULL;
    if (e && created > e->newest_pod)
        e->newest_pod = created;
    pthread_mutex_unlock(&t->mu);
}

size_t quota_owners_expire_noted(struct quota_owners *t, int64_t now, struct quota_owner *gone,
                                 bool *admitted, size_t max)
{
    size_t dropped = 0;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n;) {
        struct entry *e = &t->items[i];
        if (quota_owner_current(&e->o, now, e->newest_pod)) {
            i++;
            continue;
        }
        if (gone && dropped < max) {
            gone[dropped] = e->o;
            if (admitted)
                admitted[dropped] = e->newest_pod > e->o.q.at;
        }
        dropped++;
        drop(t, e);
    }
    pthread_mutex_unlock(&t->mu);
    return dropped;
}

size_t quota_owners_due(struct quota_owners *t, int64_t now, int64_t quiet, struct quota_owner *out,
                        size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n && n < max; i++) {
        struct entry *e = &t->items[i];
        if (e->checked && now - e->checked < quiet)
            continue;
        e->checked = now;
        out[n++] = e->o;
    }
    pthread_mutex_unlock(&t->mu);
    return n;
}

bool quota_owners_forget(struct quota_owners *t, const char *uid)
{
    pthread_mutex_lock(&t->mu);
    struct entry *e = find(t, uid);
    if (e)
        drop(t, e);
    pthread_mutex_unlock(&t->mu);
    return e != NULL;
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
