/* workqueue.c - deduplicating, delaying, rate-limited queue of keys at two priorities. */
#include "workqueue.h"

#include <errno.h>
#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/deadline.h"
#include "util/result.h"

/* A key that is dirty: queued at a level (linked), or parked until its worker calls done(). */
struct item {
    char *key;
    enum workqueue_priority prio;
    bool linked;
    int64_t ready_at; /* when it entered a ready level */
    int64_t high_at;  /* when it was first added high; -1 while low */
    struct item *prev, *next;
};

struct level {
    struct item *head, *tail; /* FIFO */
    size_t len;
};

struct delayed {
    char *key;
    int64_t at;
    enum workqueue_priority prio;
};

/* The recheck table is swept of entries older than the interval when it grows past this. */
#define SWEEP_MIN 1024

struct workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int shutting_down;
    int64_t base_delay, max_delay;
    int64_t recheck_interval;
    struct clock clock;
    struct level ready[WORKQUEUE_PRIORITIES];
    struct lh_table *dirty;      /* key (the item's) -> struct item * */
    struct lh_table *processing; /* keys handed out */
    struct lh_table *failures;   /* key -> (intptr_t) count */
    struct lh_table *taken;      /* key -> (intptr_t) when a worker last took it (coalescing) */
    size_t sweep_at;             /* sweep `taken` when it holds more entries */
    struct delayed *heap;        /* min-heap on `at` */
    size_t n_heap, cap_heap;
    struct lh_table *heap_pos; /* key (the heap entry's) -> (intptr_t) index in heap */
};

static int64_t now_ms(struct workqueue *q)
{
    return clock_mono_ms(&q->clock);
}

static void free_key(struct lh_entry *e)
{
    free(lh_entry_k(e));
}

struct workqueue *workqueue_new(int64_t base_delay_ms, int64_t max_delay_ms,
                                const struct clock *clock)
{
    struct workqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &attr);
    pthread_condattr_destroy(&attr);
    q->base_delay = base_delay_ms > 0 ? base_delay_ms : 5;
    q->max_delay = max_delay_ms > 0 ? max_delay_ms : 1000 * 1000;
    q->clock = clock ? *clock : *clock_system();
    q->sweep_at = SWEEP_MIN;
    q->dirty = lh_kchar_table_new(64, NULL);
    q->processing = lh_kchar_table_new(64, free_key);
    q->failures = lh_kchar_table_new(64, free_key);
    q->taken = lh_kchar_table_new(64, free_key);
    q->heap_pos = lh_kchar_table_new(64, NULL);
    if (!q->dirty || !q->processing || !q->failures || !q->taken || !q->heap_pos) {
        workqueue_free(q);
        return NULL;
    }
    return q;
}

static void item_free(struct item *it)
{
    free(it->key);
    free(it);
}

void workqueue_free(struct workqueue *q)
{
    if (!q)
        return;
    if (q->dirty) {
        struct lh_entry *e, *tmp;
        lh_foreach_safe(q->dirty, e, tmp)
        {
            item_free((struct item *)lh_entry_v(e));
        }
        lh_table_free(q->dirty);
    }
    for (size_t i = 0; i < q->n_heap; i++)
        free(q->heap[i].key);
    free(q->heap);
    if (q->heap_pos)
        lh_table_free(q->heap_pos);
    if (q->processing)
        lh_table_free(q->processing);
    if (q->failures)
        lh_table_free(q->failures);
    if (q->taken)
        lh_table_free(q->taken);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

void workqueue_set_recheck_interval(struct workqueue *q, int64_t interval_ms)
{
    pthread_mutex_lock(&q->mu);
    q->recheck_interval = interval_ms > 0 ? interval_ms : 0;
    pthread_mutex_unlock(&q->mu);
}

static int set_add(struct lh_table *t, const char *key)
{
    if (lh_table_lookup_entry(t, key))
        return K_OK;
    char *k = strdup(key);
    if (!k || lh_table_insert(t, k, NULL) != 0) {
        free(k);
        return K_ENOMEM;
    }
    return K_OK;
}

static void set_del(struct lh_table *t, const char *key)
{
    struct lh_entry *e = lh_table_lookup_entry(t, key);
    if (e)
        lh_table_delete_entry(t, e);
}

static struct item *dirty_item(struct workqueue *q, const char *key)
{
    struct lh_entry *e = lh_table_lookup_entry(q->dirty, key);
    return e ? (struct item *)lh_entry_v(e) : NULL;
}

static void link_tail(struct workqueue *q, struct item *it)
{
    struct level *l = &q->ready[it->prio];
    it->prev = l->tail;
    it->next = NULL;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    l->len++;
    it->linked = true;
}

static void unlink_item(struct workqueue *q, struct item *it)
{
    struct level *l = &q->ready[it->prio];
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        l->tail = it->prev;
    it->prev = it->next = NULL;
    l->len--;
    it->linked = false;
}

/* Caller holds mu. Queue `key` now at `prio` (no coalescing). */
static int add_locked(struct workqueue *q, const char *key, enum workqueue_priority prio)
{
    if (q->shutting_down)
        return K_OK;
    struct item *it = dirty_item(q, key);
    if (it) {
        if (prio <= it->prio)
            return K_OK;
        /* promoted: to the end of the high level, or requeued high at done() */
        bool linked = it->linked;
        if (linked)
            unlink_item(q, it);
        it->prio = prio;
        it->high_at = now_ms(q);
        if (linked) {
            link_tail(q, it);
            pthread_cond_signal(&q->cv);
        }
        return K_OK;
    }
    it = calloc(1, sizeof(*it));
    if (!it || !(it->key = strdup(key))) {
        free(it);
        return K_ENOMEM;
    }
    it->prio = prio;
    it->high_at = prio == WORKQUEUE_HIGH ? now_ms(q) : -1;
    if (lh_table_insert(q->dirty, it->key, it) != 0) {
        item_free(it);
        return K_ENOMEM;
    }
    if (lh_table_lookup_entry(q->processing, key))
        return K_OK; /* parked: requeued by workqueue_done() */
    it->ready_at = now_ms(q);
    link_tail(q, it);
    pthread_cond_signal(&q->cv);
    return K_OK;
}

int workqueue_add(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_locked(q, key, WORKQUEUE_HIGH);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static void heap_set_pos(struct workqueue *q, size_t i)
{
    struct lh_entry *e = lh_table_lookup_entry(q->heap_pos, q->heap[i].key);
    if (e)
        lh_entry_set_val(e, (void *)(intptr_t)i);
}

static void heap_swap(struct workqueue *q, size_t a, size_t b)
{
    struct delayed t = q->heap[a];
    q->heap[a] = q->heap[b];
    q->heap[b] = t;
    heap_set_pos(q, a);
    heap_set_pos(q, b);
}

static void heap_down(struct workqueue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n_heap && q->heap[l].at < q->heap[m].at)
            m = l;
        if (r < q->n_heap && q->heap[r].at < q->heap[m].at)
            m = r;
        if (m == i)
            return;
        heap_swap(q, i, m);
        i = m;
    }
}

static void heap_up(struct workqueue *q, size_t i)
{
    while (i > 0 && q->heap[(i - 1) / 2].at > q->heap[i].at) {
        heap_swap(q, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* Remove entry i; its key is returned to the caller (free it). */
static struct delayed heap_take(struct workqueue *q, size_t i)
{
    struct delayed d = q->heap[i];
    set_del(q->heap_pos, d.key);
    q->heap[i] = q->heap[--q->n_heap];
    if (i < q->n_heap) {
        heap_set_pos(q, i);
        heap_down(q, i);
        heap_up(q, i);
    }
    return d;
}

static ssize_t heap_find(struct workqueue *q, const char *key)
{
    void *v = NULL;
    return lh_table_lookup_ex(q->heap_pos, key, &v) ? (ssize_t)(intptr_t)v : -1;
}

static int add_low_locked(struct workqueue *q, const char *key);

/* Caller holds mu. A key already waiting keeps the earlier of the two times and the higher of
 * the two priorities. */
static int add_after_locked(struct workqueue *q, const char *key, int64_t delay,
                            enum workqueue_priority prio)
{
    if (q->shutting_down)
        return K_OK;
    if (delay <= 0)
        return prio == WORKQUEUE_HIGH ? add_locked(q, key, prio) : add_low_locked(q, key);
    int64_t at = now_ms(q) + delay;
    ssize_t i = heap_find(q, key);
    if (i >= 0) {
        if (prio > q->heap[i].prio)
            q->heap[i].prio = prio;
        if (at < q->heap[i].at) {
            q->heap[i].at = at;
            heap_up(q, (size_t)i);
            pthread_cond_broadcast(&q->cv);
        }
        return K_OK;
    }
    if (q->n_heap == q->cap_heap) {
        size_t cap = q->cap_heap ? q->cap_heap * 2 : 16;
        struct delayed *h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return K_ENOMEM;
        q->heap = h;
        q->cap_heap = cap;
    }
    char *k = strdup(key);
    if (!k)
        return K_ENOMEM;
    size_t n = q->n_heap;
    if (lh_table_insert(q->heap_pos, k, (void *)(intptr_t)n) != 0) {
        free(k);
        return K_ENOMEM;
    }
    q->heap[n] = (struct delayed){k, at, prio};
    q->n_heap++;
    heap_up(q, n);
    pthread_cond_broadcast(&q->cv);
    return K_OK;
}

/* Caller holds mu. A low add, coalesced with the key's last take. */
static int add_low_locked(struct workqueue *q, const char *key)
{
    if (q->shutting_down || dirty_item(q, key))
        return K_OK; /* queued, or requeued at done(): the change will be seen */
    void *v = NULL;
    if (q->recheck_interval > 0 && lh_table_lookup_ex(q->taken, key, &v)) {
        int64_t since = now_ms(q) - (int64_t)(intptr_t)v;
        if (since < q->recheck_interval)
            return add_after_locked(q, key, q->recheck_interval - since, WORKQUEUE_LOW);
    }
    return add_locked(q, key, WORKQUEUE_LOW);
}

int workqueue_add_low(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_low_locked(q, key);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_after_locked(q, key, delay_ms, WORKQUEUE_HIGH);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int64_t workqueue_add_rate_limited(struct workqueue *q, const char *key, int64_t min_delay_ms)
{
    pthread_mutex_lock(&q->mu);
    void *v = NULL;
    intptr_t n = 0;
    struct lh_entry *e = lh_table_lookup_entry(q->failures, key);
    if (e) {
        v = lh_entry_v(e);
        n = (intptr_t)v;
        lh_entry_set_val(e, (void *)(n + 1));
    } else {
        char *k = strdup(key);
        if (!k || lh_table_insert(q->failures, k, (void *)(intptr_t)1) != 0) {
            free(k);
            pthread_mutex_unlock(&q->mu);
            return -1;
        }
    }
    int64_t delay = q->base_delay;
    for (intptr_t i = 0; i < n && delay < q->max_delay; i++)
        delay *= 2;
    if (delay > q->max_delay)
        delay = q->max_delay;
    if (min_delay_ms > delay)
        delay = min_delay_ms;
    int rc = add_after_locked(q, key, delay, WORKQUEUE_HIGH);
    pthread_mutex_unlock(&q->mu);
    return rc ? -1 : delay;
}

void workqueue_forget(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    set_del(q->failures, key);
    pthread_mutex_unlock(&q->mu);
}

int workqueue_failures(struct workqueue *q, const char *key)
{
    void *v = NULL;
    pthread_mutex_lock(&q->mu);
    int n = lh_table_lookup_ex(q->failures, key, &v) ? (int)(intptr_t)v : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Moves delayed keys whose time has come to their level; returns ms until the next one. A low
 * one goes through the coalescing again: a take since it was delayed pushes it further. */
static int64_t promote_locked(struct workqueue *q)
{
    int64_t now = now_ms(q);
    while (q->n_heap && q->heap[0].at <= now) {
        struct delayed d = heap_take(q, 0);
        if (d.prio == WORKQUEUE_HIGH)
            add_locked(q, d.key, WORKQUEUE_HIGH);
        else
            add_low_locked(q, d.key);
        free(d.key);
    }
    return q->n_heap ? q->heap[0].at - now : -1;
}

/* Forget takes older than the interval once the table has doubled since the last sweep, so it
 * holds about the keys taken within one interval. */
static void sweep_taken(struct workqueue *q, int64_t now)
{
    if ((size_t)lh_table_length(q->taken) < q->sweep_at)
        return;
    struct lh_entry *e, *tmp;
    lh_foreach_safe(q->taken, e, tmp)
    {
        if (now - (int64_t)(intptr_t)lh_entry_v(e) >= q->recheck_interval)
            lh_table_delete_entry(q->taken, e);
    }
    size_t n = (size_t)lh_table_length(q->taken);
    q->sweep_at = n * 2 > SWEEP_MIN ? n * 2 : SWEEP_MIN;
}

static void note_taken(struct workqueue *q, const char *key, int64_t now)
{
    if (q->recheck_interval <= 0)
        return;
    struct lh_entry *e = lh_table_lookup_entry(q->taken, key);
    if (e) {
        lh_entry_set_val(e, (void *)(intptr_t)now);
        return;
    }
    sweep_taken(q, now);
    char *k = strdup(key);
    if (k && lh_table_insert(q->taken, k, (void *)(intptr_t)now) != 0)
        free(k); /* not coalesced then: an extra re-check, never a missed one */
}

static char *pop_locked(struct workqueue *q, struct workqueue_got *got)
{
    struct level *l =
        q->ready[WORKQUEUE_HIGH].head ? &q->ready[WORKQUEUE_HIGH] : &q->ready[WORKQUEUE_LOW];
    struct item *it = l->head;
    unlink_item(q, it);
    set_del(q->dirty, it->key);
    int64_t now = now_ms(q);
    if (got) {
        got->queued_ms = now - it->ready_at;
        got->priority = it->prio;
        got->high_since_ms = it->prio == WORKQUEUE_HIGH ? it->high_at : -1;
    }
    char *key = it->key;
    free(it);
    /* this take sees every change a delayed re-check waits for (own timers stay) */
    ssize_t i = heap_find(q, key);
    if (i >= 0 && q->heap[i].prio == WORKQUEUE_LOW)
        free(heap_take(q, (size_t)i).key);
    if (set_add(q->processing, key) != K_OK) {
        free(key);
        return NULL;
    }
    note_taken(q, key, now);
    return key;
}

static bool any_ready(struct workqueue *q)
{
    return q->ready[WORKQUEUE_HIGH].head || q->ready[WORKQUEUE_LOW].head;
}

char *workqueue_get_info(struct workqueue *q, struct workqueue_got *got)
{
    pthread_mutex_lock(&q->mu);
    for (;;) {
        /* After shutdown queued keys are dropped, not drained (client-go workers stop on context
         * cancel): a long queue must not hold the process past its grace period. */
        if (q->shutting_down) {
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        int64_t wait = promote_locked(q);
        if (any_ready(q)) {
            char *key = pop_locked(q, got);
            pthread_mutex_unlock(&q->mu);
            return key;
        }
        if (wait < 0) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else {
            /* Delays are measured on q->clock; an injected one is re-read every second. */
            deadline_wait(&q->cv, &q->mu, CLOCK_MONOTONIC, &q->clock, now_ms(q) + wait, 1000);
        }
    }
}

char *workqueue_get(struct workqueue *q, int64_t *queued_ms)
{
    struct workqueue_got got;
    char *key = workqueue_get_info(q, &got);
    if (key && queued_ms)
        *queued_ms = got.queued_ms;
    return key;
}

char *workqueue_try_get(struct workqueue *q, int64_t *queued_ms)
{
    pthread_mutex_lock(&q->mu);
    char *key = NULL;
    struct workqueue_got got;
    if (!q->shutting_down) {
        promote_locked(q);
        key = any_ready(q) ? pop_locked(q, &got) : NULL;
    }
    pthread_mutex_unlock(&q->mu);
    if (key && queued_ms)
        *queued_ms = got.queued_ms;
    return key;
}

void workqueue_done(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    set_del(q->processing, key);
    struct item *it = dirty_item(q, key);
    if (it && !it->linked) {
        if (q->shutting_down) {
            set_del(q->dirty, key);
            item_free(it);
        } else {
            it->ready_at = now_ms(q);
            link_tail(q, it);
            pthread_cond_signal(&q->cv);
        }
    }
    pthread_mutex_unlock(&q->mu);
}

void workqueue_drop(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    ssize_t i = heap_find(q, key);
    if (i >= 0)
        free(heap_take(q, (size_t)i).key);
    struct item *it = dirty_item(q, key);
    if (it) {
        if (it->linked)
            unlink_item(q, it);
        set_del(q->dirty, key);
        item_free(it);
    }
    set_del(q->failures, key);
    set_del(q->taken, key);
    pthread_mutex_unlock(&q->mu);
}

size_t workqueue_len(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->ready[WORKQUEUE_HIGH].len + q->ready[WORKQUEUE_LOW].len;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t workqueue_len_priority(struct workqueue *q, enum workqueue_priority p)
{
    if (p != WORKQUEUE_HIGH && p != WORKQUEUE_LOW)
        return 0;
    pthread_mutex_lock(&q->mu);
    size_t n = q->ready[p].len;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t workqueue_delayed_len(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->n_heap;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void workqueue_shutdown(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutting_down = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}
