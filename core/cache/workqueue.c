/* workqueue.c - deduplicating, delaying, rate-limited queue of keys. */
#include "workqueue.h"

#include <errno.h>
#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/deadline.h"
#include "util/result.h"

struct item {
    char *key;
    int64_t ready_at; /* when it entered the ready queue */
    struct item *next;
};

struct delayed {
    char *key;
    int64_t at;
};

struct workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int shutting_down;
    int64_t base_delay, max_delay;
    struct clock clock;
    struct item *head, *tail; /* ready keys, FIFO */
    size_t len;
    struct lh_table *dirty;      /* keys queued (ready) or to be requeued after done */
    struct lh_table *processing; /* keys handed out */
    struct lh_table *failures;   /* key -> (intptr_t) count */
    struct delayed *heap;        /* min-heap on `at` */
    size_t n_heap, cap_heap;
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
    q->dirty = lh_kchar_table_new(64, free_key);
    q->processing = lh_kchar_table_new(64, free_key);
    q->failures = lh_kchar_table_new(64, free_key);
    if (!q->dirty || !q->processing || !q->failures) {
        workqueue_free(q);
        return NULL;
    }
    return q;
}

void workqueue_free(struct workqueue *q)
{
    if (!q)
        return;
    while (q->head) {
        struct item *it = q->head;
        q->head = it->next;
        free(it->key);
        free(it);
    }
    for (size_t i = 0; i < q->n_heap; i++)
        free(q->heap[i].key);
    free(q->heap);
    if (q->dirty)
        lh_table_free(q->dirty);
    if (q->processing)
        lh_table_free(q->processing);
    if (q->failures)
        lh_table_free(q->failures);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
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

static int push_ready(struct workqueue *q, const char *key)
{
    struct item *it = calloc(1, sizeof(*it));
    if (!it || !(it->key = strdup(key))) {
        free(it);
        return K_ENOMEM;
    }
    it->ready_at = now_ms(q);
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->len++;
    return K_OK;
}

/* Caller holds mu. */
static int add_locked(struct workqueue *q, const char *key)
{
    if (q->shutting_down || lh_table_lookup_entry(q->dirty, key))
        return K_OK;
    int rc = set_add(q->dirty, key);
    if (rc)
        return rc;
    if (lh_table_lookup_entry(q->processing, key))
        return K_OK; /* requeued by workqueue_done() */
    rc = push_ready(q, key);
    if (rc) {
        set_del(q->dirty, key);
        return rc;
    }
    pthread_cond_signal(&q->cv);
    return K_OK;
}

int workqueue_add(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_locked(q, key);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static void heap_swap(struct workqueue *q, size_t a, size_t b)
{
    struct delayed t = q->heap[a];
    q->heap[a] = q->heap[b];
    q->heap[b] = t;
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

static void heap_remove(struct workqueue *q, size_t i)
{
    free(q->heap[i].key);
    q->heap[i] = q->heap[--q->n_heap];
    if (i < q->n_heap) {
        heap_down(q, i);
        heap_up(q, i);
    }
}

/* Caller holds mu. A key already waiting keeps the earlier of the two times. */
static int add_after_locked(struct workqueue *q, const char *key, int64_t delay)
{
    if (q->shutting_down)
        return K_OK;
    if (delay <= 0)
        return add_locked(q, key);
    int64_t at = now_ms(q) + delay;
    for (size_t i = 0; i < q->n_heap; i++) {
        if (strcmp(q->heap[i].key, key) == 0) {
            if (at < q->heap[i].at) {
                q->heap[i].at = at;
                heap_up(q, i);
            }
            return K_OK;
        }
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
    q->heap[q->n_heap].key = k;
    q->heap[q->n_heap].at = at;
    heap_up(q, q->n_heap++);
    pthread_cond_broadcast(&q->cv);
    return K_OK;
}

int workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_after_locked(q, key, delay_ms);
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
    int rc = add_after_locked(q, key, delay);
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

/* Moves delayed keys whose time has come to the ready queue; returns ms until the next one. */
static int64_t promote_locked(struct workqueue *q)
{
    int64_t now = now_ms(q);
    while (q->n_heap && q->heap[0].at <= now) {
        char *key = q->heap[0].key;
        q->heap[0].key = NULL;
        q->heap[0] = q->heap[--q->n_heap];
        if (q->n_heap)
            heap_down(q, 0);
        add_locked(q, key);
        free(key);
    }
    return q->n_heap ? q->heap[0].at - now : -1;
}

static char *pop_locked(struct workqueue *q, int64_t *queued_ms)
{
    struct item *it = q->head;
    q->head = it->next;
    if (!q->head)
        q->tail = NULL;
    q->len--;
    char *key = it->key;
    if (queued_ms)
        *queued_ms = now_ms(q) - it->ready_at;
    free(it);
    set_del(q->dirty, key);
    if (set_add(q->processing, key) != K_OK) {
        free(key);
        return NULL;
    }
    return key;
}

char *workqueue_get(struct workqueue *q, int64_t *queued_ms)
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
        if (q->head) {
            char *key = pop_locked(q, queued_ms);
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

char *workqueue_try_get(struct workqueue *q, int64_t *queued_ms)
{
    pthread_mutex_lock(&q->mu);
    char *key = NULL;
    if (!q->shutting_down) {
        promote_locked(q);
        key = q->head ? pop_locked(q, queued_ms) : NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return key;
}

void workqueue_done(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    set_del(q->processing, key);
    if (lh_table_lookup_entry(q->dirty, key) && !q->shutting_down) {
        if (push_ready(q, key) == K_OK)
            pthread_cond_signal(&q->cv);
        else
            set_del(q->dirty, key);
    }
    pthread_mutex_unlock(&q->mu);
}

void workqueue_drop(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    for (size_t i = 0; i < q->n_heap; i++) {
        if (strcmp(q->heap[i].key, key) == 0) {
            heap_remove(q, i);
            break;
        }
    }
    if (!lh_table_lookup_entry(q->processing, key) && lh_table_lookup_entry(q->dirty, key)) {
        struct item **pp = &q->head, *prev = NULL;
        while (*pp) {
            if (strcmp((*pp)->key, key) == 0) {
                struct item *it = *pp;
                *pp = it->next;
                if (q->tail == it)
                    q->tail = prev;
                free(it->key);
                free(it);
                q->len--;
                break;
            }
            prev = *pp;
            pp = &(*pp)->next;
        }
    }
    set_del(q->dirty, key);
    set_del(q->failures, key);
    pthread_mutex_unlock(&q->mu);
}

size_t workqueue_len(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->len;
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
