/* event_limit.c - per-namespace and global token buckets for the webhook's Events. */
#include "event_limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_MAX 254 /* a namespace name is a DNS label (63), room for anything longer */

struct bucket {
    double tokens;
    int64_t last_ms; /* monotonic time tokens were last brought up to date */
};

struct ns_bucket {
    struct bucket b;
    uint64_t hash;
    int64_t used_ms; /* last event_limit_allow() for it; 0 = slot empty */
    char ns[NS_MAX];
};

struct event_limit {
    struct event_limit_options o;
    const struct clock *clock;
    struct bucket global;
    struct ns_bucket *table;
    size_t n;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

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

struct event_limit *event_limit_new(const struct event_limit_options *o, const struct clock *clock)
{
    if ((o->ns_burst && o->ns_refill_ms <= 0) || (o->burst && o->refill_ms <= 0))
        return NULL;
    struct event_limit *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->o = *o;
    if (!l->o.max_namespaces)
        l->o.max_namespaces = EVENT_LIMIT_MAX_NAMESPACES;
    l->clock = clock;
    if (l->o.ns_burst) {
        l->table = calloc(l->o.max_namespaces, sizeof(*l->table));
        if (!l->table) {
            free(l);
            return NULL;
        }
    }
    l->global.tokens = l->o.burst;
    l->global.last_ms = clock_mono_ms(clock);
    return l;
}

/* The bucket of ns, made (full) when missing, evicting as event_limit.h says. */
static struct ns_bucket *ns_bucket(struct event_limit *l, const char *ns, int64_t now)
{
    uint64_t h = fnv1a(ns);
    struct ns_bucket *victim = NULL;
    for (size_t i = 0; i < l->n; i++) {
        struct ns_bucket *e = &l->table[i];
        if (e->hash == h && strcmp(e->ns, ns) == 0)
            return e;
    }
    if (l->n < l->o.max_namespaces) {
        victim = &l->table[l->n++];
    } else {
        for (size_t i = 0; i < l->n; i++) {
            struct ns_bucket *e = &l->table[i];
            refill(&e->b, l->o.ns_burst, l->o.ns_refill_ms, now);
            if (e->b.tokens >= l->o.ns_burst) {
                victim = e;
                break;
            }
            if (!victim || e->used_ms < victim->used_ms)
                victim = e;
        }
    }
    victim->hash = h;
    snprintf(victim->ns, sizeof(victim->ns), "%s", ns);
    victim->b.tokens = l->o.ns_burst;
    victim->b.last_ms = now;
    return victim;
}

bool event_limit_allow(struct event_limit *l, const char *ns)
{
    int64_t now = clock_mono_ms(l->clock);
    struct ns_bucket *nb = NULL;
    if (l->o.ns_burst) {
        nb = ns_bucket(l, ns ? ns : "", now);
        nb->used_ms = now > 0 ? now : 1;
        refill(&nb->b, l->o.ns_burst, l->o.ns_refill_ms, now);
        if (nb->b.tokens < 1.0)
            return false;
    }
    if (l->o.burst) {
        refill(&l->global, l->o.burst, l->o.refill_ms, now);
        if (l->global.tokens < 1.0)
            return false;
        l->global.tokens -= 1.0;
    }
    if (nb)
        nb->b.tokens -= 1.0;
    return true;
}

void event_limit_free(struct event_limit *l)
{
    if (!l)
        return;
    free(l->table);
    free(l);
}
