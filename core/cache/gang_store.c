/* gang_store.c - the gang objects and their Events (cache/gang_store.h). */
#include "cache/gang_store.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

struct rec {
    bool has_group, marked;
    struct gang_group g;
    char reason[64];
    char message[GANG_TEXT_MAX];
    int64_t at;
};

struct gang_store {
    pthread_mutex_t mu;
    struct lh_table *recs; /* "kind/ns/name" -> struct rec */
    bool read[GANG_KIND_COUNT];
    int served[GANG_KIND_COUNT]; /* 0 not asked, 1 not served, 2 served */
    char version[GANG_KIND_COUNT][16];
    size_t count[GANG_KIND_COUNT];
    size_t dropped;
};

static void free_entry(struct lh_entry *e)
{
    free(lh_entry_k(e));
    free(lh_entry_v(e));
}

struct gang_store *gang_store_new(void)
{
    struct gang_store *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->recs = lh_kchar_table_new(64, free_entry);
    if (!s->recs) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

void gang_store_free(struct gang_store *s)
{
    if (!s)
        return;
    lh_table_free(s->recs);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void key_of(char *key, size_t cap, enum gang_kind k, const char *ns, const char *name)
{
    snprintf(key, cap, "%d/%s/%s", (int)k, ns ? ns : "", name ? name : "");
}

#define KEY_MAX (2 * GANG_NAME_MAX + 16)

static struct rec *find(struct gang_store *s, const char *key)
{
    void *v = NULL;
    return lh_table_lookup_ex(s->recs, key, &v) ? v : NULL;
}

/* A record for key, made when absent (NULL at the bound or without memory). */
static struct rec *find_or_make(struct gang_store *s, const char *key)
{
    struct rec *r = find(s, key);
    if (r)
        return r;
    if ((size_t)lh_table_length(s->recs) >= GANG_STORE_MAX_RECORDS) {
        s->dropped++;
        return NULL;
    }
    char *k = strdup(key);
    r = calloc(1, sizeof(*r));
    if (!k || !r || lh_table_insert(s->recs, k, r) != 0) {
        free(k);
        free(r);
        return NULL;
    }
    return r;
}

/* Whether one more record without a group would pass GANG_STORE_MAX_EVENT_ONLY: every record
 * holds a group or an Event (drop_if_empty), so those without a group are the records less the
 * groups counted. */
static bool event_only_full(const struct gang_store *s)
{
    size_t groups = 0;
    for (int k = 0; k < GANG_KIND_COUNT; k++)
        groups += s->count[k];
    size_t n = (size_t)lh_table_length(s->recs);
    return n > groups && n - groups >= GANG_STORE_MAX_EVENT_ONLY;
}

static void drop_if_empty(struct gang_store *s, const char *key, struct rec *r)
{
    if (!r->has_group && !r->reason[0])
        lh_table_delete(s->recs, key);
}

void gang_store_set_read(struct gang_store *s, enum gang_kind k, bool read)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return;
    pthread_mutex_lock(&s->mu);
    s->read[k] = read;
    pthread_mutex_unlock(&s->mu);
}

bool gang_store_is_read(struct gang_store *s, enum gang_kind k)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return false;
    pthread_mutex_lock(&s->mu);
    bool r = s->read[k];
    pthread_mutex_unlock(&s->mu);
    return r;
}

void gang_store_set_served(struct gang_store *s, enum gang_kind k, const char *version)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return;
    pthread_mutex_lock(&s->mu);
    s->served[k] = version ? 2 : 1;
    snprintf(s->version[k], sizeof(s->version[k]), "%s", version ? version : "");
    pthread_mutex_unlock(&s->mu);
}

int gang_store_served(struct gang_store *s, enum gang_kind k, char *version, size_t cap)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return -1;
    pthread_mutex_lock(&s->mu);
    int r = s->served[k] - 1;
    if (version && cap)
        snprintf(version, cap, "%s", s->version[k]);
    pthread_mutex_unlock(&s->mu);
    return r;
}

int gang_store_put(struct gang_store *s, const struct gang_group *g, bool *changed)
{
    if (changed)
        *changed = false;
    if (!s || !g || (int)g->kind <= 0 || g->kind >= GANG_KIND_COUNT)
        return K_EINVAL;
    char key[KEY_MAX];
    key_of(key, sizeof(key), g->kind, g->ns, g->name);
    pthread_mutex_lock(&s->mu);
    struct rec *r = find_or_make(s, key);
    int rc = K_OK;
    if (!r) {
        rc = (size_t)lh_table_length(s->recs) >= GANG_STORE_MAX_RECORDS ? K_ETOOBIG : K_ENOMEM;
    } else {
        bool same = r->has_group && memcmp(&r->g, g, sizeof(*g)) == 0;
        if (!r->has_group)
            s->count[g->kind]++;
        r->g = *g;
        r->has_group = true;
        r->marked = false;
        if (changed)
            *changed = !same;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void gang_store_remove(struct gang_store *s, enum gang_kind k, const char *ns, const char *name)
{
    if (!s)
        return;
    char key[KEY_MAX];
    key_of(key, sizeof(key), k, ns, name);
    pthread_mutex_lock(&s->mu);
    struct rec *r = find(s, key);
    if (r && r->has_group) {
        r->has_group = false;
        s->count[k]--;
        drop_if_empty(s, key, r);
    }
    pthread_mutex_unlock(&s->mu);
}

void gang_store_sync_begin(struct gang_store *s, enum gang_kind k)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    struct lh_entry *e;
    lh_foreach(s->recs, e)
    {
        struct rec *r = (struct rec *)lh_entry_v(e);
        if (r->has_group && r->g.kind == k)
            r->marked = true;
    }
    pthread_mutex_unlock(&s->mu);
}

void gang_store_sync_end(struct gang_store *s, enum gang_kind k,
                         void (*gone)(void *ctx, const struct gang_group *g), void *ctx)
{
    if (!s)
        return;
    struct gang_group *out = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&s->mu);
    struct lh_entry *e, *tmp;
    lh_foreach_safe(s->recs, e, tmp)
    {
        struct rec *r = (struct rec *)lh_entry_v(e);
        if (!r->has_group || r->g.kind != k || !r->marked)
            continue;
        if (gone && n == cap) { /* without memory the callback misses some: they are gone anyway */
            size_t nc = cap ? 2 * cap : 16;
            struct gang_group *grown = realloc(out, nc * sizeof(*out));
            if (grown) {
                out = grown;
                cap = nc;
            }
        }
        if (gone && n < cap)
            out[n++] = r->g;
        r->has_group = r->marked = false;
        s->count[k]--;
        if (!r->reason[0])
            lh_table_delete_entry(s->recs, e);
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++)
        gone(ctx, &out[i]);
    free(out);
}

bool gang_store_event(struct gang_store *s, enum gang_kind k, const char *ns, const char *name,
                      const char *reason, const char *message, int64_t at)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT || !name)
        return false;
    char key[KEY_MAX];
    key_of(key, sizeof(key), k, ns, name);
    bool keep = gang_event_speaks(reason, message);
    bool changed = false;
    pthread_mutex_lock(&s->mu);
    struct rec *r = find(s, key);
    if (!r && keep) {
        if (event_only_full(s))
            s->dropped++;
        else
            r = find_or_make(s, key);
    }
    if (r && (at == 0 || at >= r->at)) {
        if (keep) {
            char old[sizeof(r->message)];
            memcpy(old, r->message, sizeof(old));
            bool same_reason = reason && strcmp(r->reason, reason) == 0;
            snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
            snprintf(r->message, sizeof(r->message), "%s", message ? message : "");
            r->at = at;
            changed = !same_reason || strcmp(old, r->message) != 0;
        } else if (r->reason[0]) { /* the group's scheduler moved on: the old word is stale */
            r->reason[0] = r->message[0] = '\0';
            r->at = at;
            changed = true;
            drop_if_empty(s, key, r);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return changed;
}

void gang_store_event_gone(struct gang_store *s, enum gang_kind k, const char *ns, const char *name)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT || !name)
        return;
    char key[KEY_MAX];
    key_of(key, sizeof(key), k, ns, name);
    pthread_mutex_lock(&s->mu);
    struct rec *r = find(s, key);
    if (r && !r->has_group)
        lh_table_delete(s->recs, key);
    pthread_mutex_unlock(&s->mu);
}

bool gang_store_facts(struct gang_store *s, const struct kpod *pod, struct gang_facts *f)
{
    if (!s || !pod || !pod->gang || (int)pod->gang->kind <= 0 || pod->gang->kind >= GANG_KIND_COUNT)
        return false;
    char key[KEY_MAX];
    key_of(key, sizeof(key), pod->gang->kind, pod->ns, pod->gang->name);
    pthread_mutex_lock(&s->mu);
    f->read = s->read[pod->gang->kind];
    struct rec *r = find(s, key);
    if (r && r->has_group) {
        f->found = true;
        f->group = r->g;
    }
    if (r && r->reason[0]) {
        memcpy(f->event_reason, r->reason, sizeof(f->event_reason));
        memcpy(f->event_message, r->message, sizeof(f->event_message));
    }
    pthread_mutex_unlock(&s->mu);
    return true;
}

size_t gang_store_count(struct gang_store *s, enum gang_kind k)
{
    if (!s || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return 0;
    pthread_mutex_lock(&s->mu);
    size_t n = s->count[k];
    pthread_mutex_unlock(&s->mu);
    return n;
}

size_t gang_store_dropped(struct gang_store *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    size_t n = s->dropped;
    pthread_mutex_unlock(&s->mu);
    return n;
}
