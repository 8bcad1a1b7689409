/* pod_ledger.c - what the controller remembers about a pod (see pod_ledger.h). */
#include "pod_ledger.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

/* One pod's record; a part is absent when its flag is clear (or owed is NULL). */
struct pod_record {
    bool has_written;
    struct pod_written written;
    int64_t fits_since_ms; /* 0: not fitting (the monotonic clock never reads 0) */
    struct reconcile_plan *owed;
    struct metrics_pending_mark pending;
    struct requeue_record verdict;
};

struct pod_ledger {
    pthread_mutex_t mu;
    struct clock clock;
    struct lh_table *pods; /* "ns/name" -> struct pod_record (malloc'd) */
};

static void free_record(struct lh_entry *e)
{
    struct pod_record *r = lh_entry_v(e);
    if (r)
        free(r->owed);
    free(r);
    free(lh_entry_k(e));
}

struct pod_ledger *pod_ledger_new(const struct clock *clock)
{
    struct pod_ledger *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->clock = clock ? *clock : *clock_system();
    l->pods = lh_kchar_table_new(64, free_record);
    if (!l->pods) {
        free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

void pod_ledger_free(struct pod_ledger *l)
{
    if (!l)
        return;
    lh_table_free(l->pods);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* The record of `key`, or NULL. Lock held. */
static struct pod_record *find(struct pod_ledger *l, const char *key)
{
    void *v = NULL;
    return lh_table_lookup_ex(l->pods, key, &v) ? v : NULL;
}

/* The record of `key`, made empty when there is none; NULL when out of memory. Lock held. */
static struct pod_record *get(struct pod_ledger *l, const char *key)
{
    struct pod_record *r = find(l, key);
    if (r)
        return r;
    char *k = strdup(key);
    r = calloc(1, sizeof(*r));
    if (!k || !r || lh_table_insert(l->pods, k, r) != 0) {
        free(k);
        free(r);
        return NULL;
    }
    return r;
}

/* Drop the record of `key` once it holds nothing. Lock held. */
static void tidy(struct pod_ledger *l, const char *key)
{
    struct lh_entry *e = lh_table_lookup_entry(l->pods, key);
    const struct pod_record *r = e ? lh_entry_v(e) : NULL;
    if (r && !r->has_written && !r->fits_since_ms && !r->owed && !r->pending.set &&
        !r->verdict.valid)
        lh_table_delete_entry(l->pods, e);
}

int pod_ledger_set_written(struct pod_ledger *l, const char *key, const char *uid, enum cause cause)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = get(l, key);
    if (r) {
        r->has_written = true;
        snprintf(r->written.uid, sizeof(r->written.uid), "%s", uid ? uid : "");
        r->written.cause = cause;
    }
    pthread_mutex_unlock(&l->mu);
    return r ? K_OK : K_ENOMEM;
}

bool pod_ledger_written(struct pod_ledger *l, const char *key, struct pod_written *out)
{
    pthread_mutex_lock(&l->mu);
    const struct pod_record *r = find(l, key);
    bool has = r && r->has_written;
    if (has && out)
        *out = r->written;
    pthread_mutex_unlock(&l->mu);
    return has;
}

void pod_ledger_seen(struct pod_ledger *l, const char *key, const char *seen)
{
    if (!seen)
        return;
    int cause = cause_from_word(seen);
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = find(l, key);
    if (r && r->has_written && cause >= 0 && (enum cause)cause == r->written.cause) {
        r->has_written = false;
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
}

int64_t pod_ledger_fits_wait(struct pod_ledger *l, const char *key, int64_t grace_ms)
{
    int64_t now = clock_mono_ms(&l->clock), wait = grace_ms;
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = get(l, key);
    if (r && r->fits_since_ms)
        wait = r->fits_since_ms + grace_ms - now;
    else if (r)
        r->fits_since_ms = now > 0 ? now : 1;
    pthread_mutex_unlock(&l->mu);
    return wait > 0 ? wait : 0;
}

void pod_ledger_fits_forget(struct pod_ledger *l, const char *key)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = find(l, key);
    if (r) {
        r->fits_since_ms = 0;
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_owe_event(struct pod_ledger *l, const char *key, const struct reconcile_plan *plan)
{
    struct reconcile_plan *copy = malloc(sizeof(*copy));
    if (copy)
        *copy = *plan;
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = copy ? get(l, key) : find(l, key);
    if (r) {
        free(r->owed);
        r->owed = copy;
        copy = NULL;
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
    free(copy);
}

bool pod_ledger_owed_event(struct pod_ledger *l, const char *key, const char *uid,
                           const char *cause, struct reconcile_plan *out)
{
    bool owed = false;
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = find(l, key);
    if (r && r->owed) {
        if (uid && cause && strcmp(r->owed->uid, uid) == 0 &&
            strcmp(cause_word(r->owed->cause), cause) == 0) {
            *out = *r->owed;
            owed = true;
        } else {
            free(r->owed);
            r->owed = NULL;
            tidy(l, key);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return owed;
}

void pod_ledger_event_done(struct pod_ledger *l, const char *key)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = find(l, key);
    if (r) {
        free(r->owed);
        r->owed = NULL;
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_pending(struct pod_ledger *l, const char *key, struct metrics_pending_mark *out)
{
    pthread_mutex_lock(&l->mu);
    const struct pod_record *r = find(l, key);
    if (r)
        *out = r->pending;
    else
        memset(out, 0, sizeof(*out));
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_set_pending(struct pod_ledger *l, const char *key,
                            const struct metrics_pending_mark *mark)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = mark->set ? get(l, key) : find(l, key);
    if (r) {
        r->pending = *mark;
        if (!mark->set)
            memset(&r->pending, 0, sizeof(r->pending));
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_forget_verdict(struct pod_ledger *l, const char *key)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = find(l, key);
    if (r) {
        r->verdict.valid = false;
        tidy(l, key);
    }
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_set_verdict(struct pod_ledger *l, const char *key, const char *uid, enum cause word,
                            bool autoscaler)
{
    pthread_mutex_lock(&l->mu);
    struct pod_record *r = get(l, key);
    if (r) {
        r->verdict.valid = true;
        r->verdict.word = word;
        r->verdict.autoscaler = autoscaler;
        snprintf(r->verdict.uid, sizeof(r->verdict.uid), "%s", uid ? uid : "");
    }
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_verdict(struct pod_ledger *l, const char *key, struct requeue_record *out)
{
    pthread_mutex_lock(&l->mu);
    const struct pod_record *r = find(l, key);
    if (r)
        *out = r->verdict;
    else
        memset(out, 0, sizeof(*out));
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_forget(struct pod_ledger *l, const char *key)
{
    pthread_mutex_lock(&l->mu);
    struct lh_entry *e = lh_table_lookup_entry(l->pods, key);
    if (e)
        lh_table_delete_entry(l->pods, e);
    pthread_mutex_unlock(&l->mu);
}

void pod_ledger_prune(struct pod_ledger *l, unsigned (*keep)(void *ctx, const char *key), void *ctx)
{
    pthread_mutex_lock(&l->mu);
    struct lh_entry *e, *next;
    for (e = l->pods->head; e; e = next) {
        next = e->next;
        struct pod_record *r = lh_entry_v(e);
        unsigned k = keep(ctx, lh_entry_k(e));
        if (!(k & POD_LEDGER_KEEP_PENDING))
            memset(&r->pending, 0, sizeof(r->pending));
        if (!(k & POD_LEDGER_KEEP_POD) || (!r->has_written && !r->fits_since_ms && !r->owed &&
                                           !r->pending.set && !r->verdict.valid))
            lh_table_delete_entry(l->pods, e);
    }
    pthread_mutex_unlock(&l->mu);
}

size_t pod_ledger_len(struct pod_ledger *l)
{
    pthread_mutex_lock(&l->mu);
    size_t n = (size_t)lh_table_length(l->pods);
    pthread_mutex_unlock(&l->mu);
    return n;
}
