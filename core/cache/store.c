/* store.c - the object cache behind the controller, the CLI and the webhook. */
#include "store.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/containers.h"
#include "util/clock.h"
#include "util/result.h"

struct pod_rec {
    struct kpod pod;
    int stale;
};

struct node_rec {
    struct knode node;
    int stale;
};

/*
 * One resource's usage on one node: the exact sum of the requests of the pods counted there, and
 * how many pods contribute to it. The sum is kept in 128 bits, so it never saturates: each
 * contribution is an int64_t (|v| <= 2^63) and there are fewer than 2^64 pods, so |sum| < 2^127.
 * Removing a pod therefore always gives back exactly the sum before it was added, even after the
 * value readers see (clamped to int64_t by store_node_usage) had saturated at INT64_MAX. An entry
 * is dropped when its last pod leaves, so a node's list names only what its pods request now.
 */
struct usage_entry {
    char *name;
    __int128 sum;
    size_t pods;
};

/* A node's usage: at most RESOURCE_LIST_MAX entries. */
struct node_usage {
    struct usage_entry *items;
    size_t n, cap;
};

struct store {
    const struct gpu_set *gpus;
    pthread_rwlock_t lock; /* writer-preferring: see store_new() */
    /* store_lock_stats(); relaxed atomics, read without the lock */
    atomic_uint_fast64_t write_locks, write_wait_ns, unchanged;
    struct lh_table *pods;     /* "ns/name" -> struct pod_rec* */
    struct lh_table *nodes;    /* name -> struct node_rec* */
    struct lh_table *usage;    /* node name -> struct node_usage* */
    struct lh_table *pending;  /* "ns/name" -> NULL: pending GPU pods */
    struct lh_table *starting; /* "ns/name" -> NULL: store_is_starting_gpu_pod */
    struct knode **sorted;     /* nodes sorted by name; points into node_rec */
    size_t n_sorted, cap_sorted;
    atomic_bool gpu_pods_only; /* store_keep_gpu_pods_only(); read outside the lock too */
};

static void free_pod_entry(struct lh_entry *e)
{
    struct pod_rec *r = lh_entry_v(e);
    free(lh_entry_k(e));
    if (r) {
        pod_cleanup(&r->pod);
        free(r);
    }
}

static void free_node_entry(struct lh_entry *e)
{
    struct node_rec *r = lh_entry_v(e);
    free(lh_entry_k(e));
    if (r) {
        node_cleanup(&r->node);
        free(r);
    }
}

static void free_usage_entry(struct lh_entry *e)
{
    struct node_usage *u = lh_entry_v(e);
    free(lh_entry_k(e));
    if (u) {
        for (size_t i = 0; i < u->n; i++)
            free(u->items[i].name);
        free(u->items);
        free(u);
    }
}

static void free_key_entry(struct lh_entry *e)
{
    free(lh_entry_k(e));
}

struct store *store_new(const struct gpu_set *gpus)
{
    struct store *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->gpus = gpus;
    /*
     * Writers first. With glibc's default (readers preferred) a new reader gets the lock while
     * a writer waits, so the informers, the only writers, waited behind a stream of overlapping
     * reads (workers classifying, /metrics, enqueue passes): during churn the pods informer
     * spent most of its time in wrlock. Shortening the read sections instead would not bound
     * that wait: it is the overlap of many short reads that starves. The price of preferring
     * writers: a thread holding the read lock must not take it again (a waiting writer would
     * block the second rdlock, and itself wait for the first: a deadlock), stated in store.h;
     * no caller in the tree nests it. Write sections are one object each, so readers wait
     * little behind them.
     */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    s->pods = lh_kchar_table_new(1024, free_pod_entry);
    s->nodes = lh_kchar_table_new(64, free_node_entry);
    s->usage = lh_kchar_table_new(64, free_usage_entry);
    s->pending = lh_kchar_table_new(64, free_key_entry);
    s->starting = lh_kchar_table_new(64, free_key_entry);
    if (!s->pods || !s->nodes || !s->usage || !s->pending || !s->starting) {
        store_free(s);
        return NULL;
    }
    return s;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    if (s->pods)
        lh_table_free(s->pods);
    if (s->nodes)
        lh_table_free(s->nodes);
    if (s->usage)
        lh_table_free(s->usage);
    if (s->pending)
        lh_table_free(s->pending);
    if (s->starting)
        lh_table_free(s->starting);
    free(s->sorted);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

const struct gpu_set *store_gpus(const struct store *s)
{
    return s->gpus;
}

void store_read_lock(struct store *s)
{
    pthread_rwlock_rdlock(&s->lock);
}

void store_read_unlock(struct store *s)
{
    pthread_rwlock_unlock(&s->lock);
}

/* Takes the write lock, counting the time spent waiting for it (none when it is free). */
static void write_lock(struct store *s)
{
    if (pthread_rwlock_trywrlock(&s->lock) != 0) {
        int64_t t0 = clock_mono_ns(NULL);
        pthread_rwlock_wrlock(&s->lock);
        int64_t waited = clock_mono_ns(NULL) - t0;
        atomic_fetch_add_explicit(&s->write_wait_ns, (uint_fast64_t)(waited > 0 ? waited : 0),
                                  memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&s->write_locks, 1, memory_order_relaxed);
}

static void write_unlock(struct store *s)
{
    pthread_rwlock_unlock(&s->lock);
}

void store_lock_stats(struct store *s, struct store_lock_stats *out)
{
    out->write_locks = atomic_load_explicit(&s->write_locks, memory_order_relaxed);
    out->write_wait_ns = atomic_load_explicit(&s->write_wait_ns, memory_order_relaxed);
    out->unchanged = atomic_load_explicit(&s->unchanged, memory_order_relaxed);
}

int store_is_pending_gpu_pod(const struct kpod *p)
{
    return !p->node_name && !pod_is_terminal(p) &&
           (p->gpu_requests.n > 0 || p->n_claims > 0 || pod_has_ext_requests(p));
}

int store_is_rejected_gpu_pod(const struct kpod *p)
{
    return (p->gpu_requests.n > 0 || p->n_claims > 0 || pod_has_ext_requests(p)) &&
           pod_rejected_by_kubelet(p);
}

int store_is_starting_gpu_pod(const struct kpod *p)
{
    /* whether a claim asks for a GPU only the DRA objects tell: a container referencing one
     * counts as a GPU container here (model/containers.h) */
    return p->node_name && !pod_is_terminal(p) && !p->deleting && p->containers &&
           (p->gpu_requests.n > 0 || p->n_claims > 0 || pod_has_ext_requests(p)) &&
           !pod_rejected_by_kubelet(p) && !pod_gpu_containers_started(p, true);
}

static int interesting(const struct kpod *p)
{
    return store_is_pending_gpu_pod(p) || store_is_rejected_gpu_pod(p) ||
           store_is_starting_gpu_pod(p) || p->cause != NULL;
}

/*
 * Whether a bound pod's extended-resource requests (kpod.ext, KEP-5004) are read again once the
 * store holds it, when the store keeps GPU pods only (the controller's; `gpu_pods_only`). The
 * controller reads them for pending pods (the DRA ladder, the re-checks after DRA events), for
 * bound pods it still classifies (rejected by their kubelet, or starting: triage_pod's DRA view)
 * and, through pod_has_ext_requests, for whether a pod is a GPU pod at all (kept(), the
 * store_is_*_gpu_pod predicates): that last one only when the pod has no GPU request and no
 * claim to say so. Node usage counts gpu_requests, never ext. The CLI's stores (every pod kept)
 * keep ext: explain prints a bound pod's extendedResourceClaimStatus, pods lists its requests
 * of a DeviceClass's implicit name.
 */
static bool ext_read_when_bound(const struct kpod *p, bool gpu_pods_only)
{
    return !gpu_pods_only || (p->gpu_requests.n == 0 && p->n_claims == 0) ||
           store_is_starting_gpu_pod(p) || store_is_rejected_gpu_pod(p);
}

/* Bound pods never need their scheduling constraints again: drop them to stay compact. A pod
 * compacted already comes out the same. */
static void compact(struct kpod *p, bool gpu_pods_only)
{
    if (store_is_pending_gpu_pod(p))
        return;
    struct kpod keep = {0};
    keep.packed = p->packed; /* ns, name, uid and node_name may live there: it goes with them */
    p->packed = NULL;
    keep.ns = p->ns;
    keep.name = p->name;
    keep.uid = p->uid;
    keep.node_name = p->node_name;
    keep.phase = p->phase;
    keep.deleting = p->deleting;
    keep.gpu_requests = p->gpu_requests;
    keep.cause = p->cause;
    keep.detail = p->detail;
    /* DRA: whether a bound pod is a GPU pod at all is in its claims (few pods have any) */
    keep.claims = p->claims;
    keep.n_claims = p->n_claims;
    keep.claim_statuses = p->claim_statuses;
    keep.n_claim_statuses = p->n_claim_statuses;
    /* extended resources DRA may serve: every GPU pod has some; kept where they are read */
    if (ext_read_when_bound(p, gpu_pods_only)) {
        keep.ext = p->ext;
        p->ext = NULL;
    }
    keep.gang = p->gang; /* a gang's members are counted, bound or not (model/gang.h) */
    /* a bound GPU pod whose GPU containers have not all started: what the kubelet says of
     * them, and the RuntimeClass its sandbox asks for (forgotten once they have started) */
    if (store_is_starting_gpu_pod(p)) {
        keep.containers = p->containers;
        keep.runtime_class = p->runtime_class;
        p->containers = NULL;
        p->runtime_class = NULL;
    }
    /* a pod its kubelet rejected: the reason, and what counts its siblings */
    keep.created = p->created;
    if (store_is_rejected_gpu_pod(p)) {
        keep.owner_uid = p->owner_uid;
        keep.failed_reason = p->failed_reason;
        keep.failed_message = p->failed_message;
        p->owner_uid = p->failed_reason = p->failed_message = NULL;
    }
    p->ns = p->name = p->uid = p->node_name = p->cause = p->detail = NULL;
    p->gpu_requests.items = NULL;
    p->gpu_requests.n = 0;
    p->claims = NULL;
    p->n_claims = 0;
    p->claim_statuses = NULL;
    p->n_claim_statuses = 0;
    p->gang = NULL;
    pod_cleanup(p);
    *p = keep;
    (void)pod_pack_names(p); /* out of memory: kept unpacked, as good */
}

static int make_key(char *key, const char *ns, const char *name)
{
    return meta_namespace_key(key, STORE_KEY_MAX, ns, name);
}

/* Whether the pod's requests count on its node: bound, not terminal, requesting a GPU. */
static int counts(const struct kpod *p)
{
    return p && p->node_name && !pod_is_terminal(p) && p->gpu_requests.n > 0;
}

static struct node_usage *usage_of_node(struct store *s, const char *node)
{
    void *v = NULL;
    return lh_table_lookup_ex(s->usage, node, &v) ? v : NULL;
}

static struct usage_entry *usage_find(struct node_usage *u, const char *name)
{
    for (size_t i = 0; u && i < u->n; i++)
        if (strcmp(u->items[i].name, name) == 0)
            return &u->items[i];
    return NULL;
}

/* How many of the first `n` entries of `l` are named `name` (a list from a hand-built pod may
 * repeat a name; resource_list_add never does). */
static size_t names_in(const struct resource_list *l, size_t n, const char *name)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < l->n; i++)
        k += strcmp(l->items[i].name, name) == 0;
    return k;
}

/* Drops the entries no pod contributes to any more; frees the node's usage when it is empty. */
static void usage_prune(struct store *s, const char *node, struct node_usage *u)
{
    size_t j = 0;
    for (size_t i = 0; i < u->n; i++) {
        if (u->items[i].pods == 0)
            free(u->items[i].name);
        else
            u->items[j++] = u->items[i];
    }
    u->n = j;
    if (u->n == 0)
        lh_table_delete(s->usage, node); /* frees u */
}

/*
 * Moves the node usage from what `old` requested to what `nw` requests (either may be NULL or a
 * pod that does not count), all or nothing: every allocation and the RESOURCE_LIST_MAX check
 * happen before anything is changed, so on K_ENOMEM or K_ETOOBIG the usage is exactly as before.
 * Removing a pod alone (nw NULL) allocates nothing and never fails.
 */
static int usage_update(struct store *s, const struct kpod *old, const struct kpod *nw,
                        unsigned *changed)
{
    if (!counts(old))
        old = NULL;
    if (!counts(nw))
        nw = NULL;
    if (!old && !nw)
        return K_OK;

    struct node_usage *to = NULL;
    char *fresh[RESOURCE_LIST_MAX];
    size_t n_fresh = 0;
    if (nw) {
        const struct resource_list *r = &nw->gpu_requests;
        int created = 0;
        to = usage_of_node(s, nw->node_name);
        if (!to) {
            char *k = strdup(nw->node_name);
            to = calloc(1, sizeof(*to));
            if (!k || !to || lh_table_insert(s->usage, k, to) != 0) {
                free(k);
                free(to);
                return K_ENOMEM;
            }
            created = 1;
        }
        /* Names the node's list lacks, and entries that only `old` holds and `nw` drops. */
        size_t needed = 0, freed = 0;
        for (size_t i = 0; i < r->n; i++)
            if (!usage_find(to, r->items[i].name) && names_in(r, i, r->items[i].name) == 0)
                needed++;
        if (old && strcmp(old->node_name, nw->node_name) == 0)
            for (size_t i = 0; i < to->n; i++)
                if (names_in(r, r->n, to->items[i].name) == 0 &&
                    names_in(&old->gpu_requests, old->gpu_requests.n, to->items[i].name) ==
                        to->items[i].pods)
                    freed++;
        int rc = K_OK;
        if (to->n + needed - freed > RESOURCE_LIST_MAX) {
            rc = K_ETOOBIG;
        } else if (to->cap < to->n + needed) {
            struct usage_entry *items = realloc(to->items, (to->n + needed) * sizeof(*items));
            if (items) {
                to->items = items;
                to->cap = to->n + needed;
            } else {
                rc = K_ENOMEM;
            }
        }
        for (size_t i = 0; rc == K_OK && i < r->n; i++) {
            if (usage_find(to, r->items[i].name) || names_in(r, i, r->items[i].name) > 0)
                continue;
            if (!(fresh[n_fresh] = strdup(r->items[i].name)))
                rc = K_ENOMEM;
            else
                n_fresh++;
        }
        if (rc != K_OK) {
            while (n_fresh > 0)
                free(fresh[--n_fresh]);
            if (created)
                lh_table_delete(s->usage, nw->node_name);
            return rc;
        }
    }

    /* Commit: nothing below can fail. Entries are pruned only at the end, so a name both pods
     * request keeps its entry (and the capacity reserved above stays enough). */
    struct node_usage *from = old ? usage_of_node(s, old->node_name) : NULL;
    for (size_t i = 0; from && i < old->gpu_requests.n; i++) {
        struct usage_entry *e = usage_find(from, old->gpu_requests.items[i].name);
        if (e && e->pods > 0) {
            e->sum -= old->gpu_requests.items[i].value;
            e->pods--;
        }
    }
    for (size_t i = 0, k = 0; to && i < nw->gpu_requests.n; i++) {
        struct usage_entry *e = usage_find(to, nw->gpu_requests.items[i].name);
        if (!e) {
            e = &to->items[to->n++];
            e->name = fresh[k++];
            e->sum = 0;
            e->pods = 0;
        }
        e->sum += nw->gpu_requests.items[i].value;
        e->pods++;
    }
    if (from && from != to)
        usage_prune(s, old->node_name, from);
    if (to)
        usage_prune(s, nw->node_name, to);
    *changed |= STORE_CHANGED_USAGE;
    return K_OK;
}

/* A key set (the pending and the starting pods): adding may fail (K_ENOMEM), removing never
 * does. */
static int set_add(struct lh_table *set, const char *key, int *added)
{
    *added = 0;
    if (lh_table_lookup_entry(set, key))
        return K_OK;
    char *k = strdup(key);
    if (!k || lh_table_insert(set, k, NULL) != 0) {
        free(k);
        return K_ENOMEM;
    }
    *added = 1;
    return K_OK;
}

static void set_remove(struct lh_table *set, const char *key)
{
    struct lh_entry *e = lh_table_lookup_entry(set, key);
    if (e)
        lh_table_delete_entry(set, e);
}

static int pending_add(struct store *s, const char *key, int *added)
{
    return set_add(s->pending, key, added);
}

static void pending_remove(struct store *s, const char *key)
{
    set_remove(s->pending, key);
}

static int same_usage(const struct kpod *a, const struct kpod *b)
{
    int ca = counts(a), cb = counts(b);
    if (ca != cb)
        return 0;
    if (!ca)
        return 1;
    if (strcmp(a->node_name, b->node_name) != 0 || a->gpu_requests.n != b->gpu_requests.n)
        return 0;
    for (size_t i = 0; i < a->gpu_requests.n; i++)
        if (resource_list_get(&b->gpu_requests, a->gpu_requests.items[i].name) !=
            a->gpu_requests.items[i].value)
            return 0;
    return 1;
}

void store_delta_cleanup(struct store_delta *d)
{
    if (!d)
        return;
    if (d->old_node) {
        node_cleanup(d->old_node);
        free(d->old_node);
    }
    memset(d, 0, sizeof(*d));
}

/* Name `node` in the delta; false (overflow set) when it is another node or too long. */
static bool delta_node(struct store_delta *d, const char *node)
{
    if (d->node[0] && strcmp(d->node, node) != 0) {
        d->overflow = true;
        return false;
    }
    if (strlen(node) >= sizeof(d->node)) {
        d->overflow = true;
        return false;
    }
    snprintf(d->node, sizeof(d->node), "%s", node);
    return true;
}

/* Remember the sum of `resource` on d->node now, once per name. */
static void delta_usage_add(struct store *s, struct store_delta *d, const char *resource)
{
    for (size_t i = 0; i < d->n_usage; i++)
        if (strcmp(d->usage[i].resource, resource) == 0)
            return;
    if (d->n_usage == STORE_DELTA_MAX_USAGE || strlen(resource) >= STORE_DELTA_NAME_MAX) {
        d->overflow = true;
        return;
    }
    struct store_delta_usage *u = &d->usage[d->n_usage++];
    snprintf(u->resource, sizeof(u->resource), "%s", resource);
    u->before = u->after = store_node_usage(s, d->node, resource);
}

/* Before moving usage from `old` to `nw` (either may be NULL or not count): the node and the
 * resources whose sums may move, with their sums now. d may be NULL. */
static void delta_usage_before(struct store *s, struct store_delta *d, const struct kpod *old,
                               const struct kpod *nw)
{
    if (!d)
        return;
    const struct kpod *pods[2] = {counts(old) ? old : NULL, counts(nw) ? nw : NULL};
    for (int k = 0; k < 2 && !d->overflow; k++) {
        if (!pods[k] || !delta_node(d, pods[k]->node_name))
            continue;
        for (size_t i = 0; i < pods[k]->gpu_requests.n && !d->overflow; i++)
            delta_usage_add(s, d, pods[k]->gpu_requests.items[i].name);
    }
}

/* After the move: the sums now; entries that did not move are dropped. */
static void delta_usage_after(struct store *s, struct store_delta *d)
{
    if (!d || d->overflow)
        return;
    size_t j = 0;
    for (size_t i = 0; i < d->n_usage; i++) {
        struct store_delta_usage u = d->usage[i];
        u.after = store_node_usage(s, d->node, u.resource);
        if (u.after == u.before)
            continue;
        d->what |= u.after < u.before ? STORE_DELTA_USAGE_FREED : STORE_DELTA_USAGE_TAKEN;
        d->usage[j++] = u;
    }
    d->n_usage = j;
    if (j == 0 && !(d->what & ~(unsigned)(STORE_DELTA_USAGE_FREED | STORE_DELTA_USAGE_TAKEN)))
        d->node[0] = '\0';
}

/*
 * All or nothing: the pending set is grown first, then the usage moved (usage_update), and only
 * then the record replaced; a failure at any step undoes the steps before it, so the store keeps
 * the old record with the old accounting, or no record and no accounting for a new pod.
 */
static void pod_delete_entry(struct store *s, struct lh_entry *e, unsigned *changed,
                             struct store_delta *d);

/* What store_keep_gpu_pods_only() keeps: a pod with a GPU request or a claim, one being deleted
 * (a preemption victim, whatever it asks for), one carrying gputri/cause, or a gang member (its
 * gang's pending GPU pods count it, model/gang.h). */
static int kept(const struct store *s, const struct kpod *p)
{
    return !atomic_load_explicit(&s->gpu_pods_only, memory_order_relaxed) ||
           p->gpu_requests.n > 0 || p->n_claims > 0 || pod_has_ext_requests(p) || p->deleting ||
           p->cause != NULL || p->gang != NULL;
}

static int pod_upsert_locked(struct store *s, struct kpod *pod, unsigned *changed,
                             struct store_delta *d)
{
    char key[STORE_KEY_MAX];
    int rc = make_key(key, pod->ns, pod->name);
    if (rc) {
        pod_cleanup(pod);
        return rc;
    }
    struct lh_entry *e = lh_table_lookup_entry(s->pods, key);
    if (!kept(s, pod)) {
        if (e)
            pod_delete_entry(s, e, changed, d);
        pod_cleanup(pod);
        return K_OK;
    }
    compact(pod, atomic_load_explicit(&s->gpu_pods_only, memory_order_relaxed));
    struct pod_rec *rec = e ? lh_entry_v(e) : NULL;
    struct pod_rec *fresh_rec = NULL;
    char *fresh_key = NULL;
    int pending = store_is_pending_gpu_pod(pod), added = 0;
    int starting = store_is_starting_gpu_pod(pod), added_starting = 0;
    unsigned ch = 0;

    if (rec) {
        /* The pod exists whether or not this version can be accounted: a relist keeps it. */
        rec->stale = 0;
    } else {
        fresh_rec = calloc(1, sizeof(*fresh_rec));
        fresh_key = strdup(key);
        if (!fresh_rec || !fresh_key) {
            rc = K_ENOMEM;
            goto fail;
        }
    }
    if (pending && (rc = pending_add(s, key, &added)) != K_OK)
        goto fail;
    if (starting && (rc = set_add(s->starting, key, &added_starting)) != K_OK)
        goto fail;
    if (!rec || !same_usage(&rec->pod, pod)) {
        delta_usage_before(s, d, rec ? &rec->pod : NULL, pod);
        if ((rc = usage_update(s, rec ? &rec->pod : NULL, pod, &ch)) != K_OK)
            goto fail;
        delta_usage_after(s, d);
    }
    if (fresh_rec) {
        if (lh_table_insert(s->pods, fresh_key, fresh_rec) != 0) {
            unsigned ignored = 0;
            usage_update(s, pod, NULL, &ignored); /* a removal: cannot fail */
            if (d)
                memset(d, 0, sizeof(*d));
            rc = K_ENOMEM;
            goto fail;
        }
        rec = fresh_rec;
        if (interesting(pod))
            ch |= STORE_CHANGED_POD;
    } else {
        if (interesting(&rec->pod) || interesting(pod))
            ch |= STORE_CHANGED_POD;
        if (d && (ch & STORE_CHANGED_POD) && pod_equal_but_scheduled_message(&rec->pod, pod))
            d->what |= STORE_DELTA_POD_SCHEDULED_MESSAGE;
        pod_cleanup(&rec->pod);
    }
    rec->pod = *pod;
    memset(pod, 0, sizeof(*pod));
    if (!pending)
        pending_remove(s, key);
    if (!starting)
        set_remove(s->starting, key);
    *changed |= ch;
    return K_OK;
fail:
    if (added)
        pending_remove(s, key);
    if (added_starting)
        set_remove(s->starting, key);
    free(fresh_rec);
    free(fresh_key);
    pod_cleanup(pod);
    return rc;
}

void store_keep_gpu_pods_only(struct store *s)
{
    atomic_store_explicit(&s->gpu_pods_only, true, memory_order_relaxed);
}

/*
 * Whether writing `pod` (compacted) would change nothing: the store holds a record equal to it
 * that no relist has marked stale (the write would clear the mark), or it would not keep the pod
 * and holds no record of it. Read lock held.
 */
static bool pod_unchanged_locked(struct store *s, const struct kpod *pod)
{
    char key[STORE_KEY_MAX];
    void *v = NULL;
    if (make_key(key, pod->ns, pod->name) != K_OK)
        return false; /* the write path refuses it */
    bool held = lh_table_lookup_ex(s->pods, key, &v);
    if (!kept(s, pod))
        return !held;
    const struct pod_rec *rec = v;
    return held && !rec->stale && pod_equal(&rec->pod, pod);
}

/* One pod write: an unchanged pod is found under the read lock and written under none. */
static int pod_upsert(struct store *s, struct kpod *pod, unsigned *changed, struct store_delta *d)
{
    if (kept(s, pod))
        compact(pod, atomic_load_explicit(&s->gpu_pods_only, memory_order_relaxed));
    /* the form the record would take, outside the lock */
    store_read_lock(s);
    bool unchanged = pod_unchanged_locked(s, pod);
    store_read_unlock(s);
    if (unchanged) {
        atomic_fetch_add_explicit(&s->unchanged, 1, memory_order_relaxed);
        pod_cleanup(pod);
        return K_OK;
    }
    write_lock(s);
    int rc = pod_upsert_locked(s, pod, changed, d);
    write_unlock(s);
    return rc;
}

int store_pod_upsert(struct store *s, struct kpod *pod, unsigned *changed)
{
    return pod_upsert(s, pod, changed, NULL);
}

int store_pod_upsert_delta(struct store *s, struct kpod *pod, struct store_delta *d)
{
    memset(d, 0, sizeof(*d));
    int rc = pod_upsert(s, pod, &d->changed, d);
    if (rc != K_OK)
        memset(d, 0, sizeof(*d)); /* a pod write hands over no node */
    return rc;
}

static void pod_delete_entry(struct store *s, struct lh_entry *e, unsigned *changed,
                             struct store_delta *d)
{
    struct pod_rec *rec = lh_entry_v(e);
    delta_usage_before(s, d, &rec->pod, NULL);
    usage_update(s, &rec->pod, NULL, changed); /* a removal: cannot fail */
    delta_usage_after(s, d);
    if (interesting(&rec->pod))
        *changed |= STORE_CHANGED_POD;
    pending_remove(s, lh_entry_k(e));
    set_remove(s->starting, lh_entry_k(e));
    lh_table_delete_entry(s->pods, e);
}

static int pod_delete(struct store *s, const char *ns, const char *name, unsigned *changed,
                      struct store_delta *d)
{
    char key[STORE_KEY_MAX];
    int rc = make_key(key, ns, name);
    if (rc)
        return rc;
    store_read_lock(s);
    bool held = lh_table_lookup_entry(s->pods, key) != NULL;
    store_read_unlock(s);
    if (!held) { /* a pod the store did not keep (store_keep_gpu_pods_only), or gone already */
        atomic_fetch_add_explicit(&s->unchanged, 1, memory_order_relaxed);
        return K_OK;
    }
    write_lock(s);
    struct lh_entry *e = lh_table_lookup_entry(s->pods, key);
    if (e)
        pod_delete_entry(s, e, changed, d);
    write_unlock(s);
    return K_OK;
}

int store_pod_delete(struct store *s, const char *ns, const char *name, unsigned *changed)
{
    return pod_delete(s, ns, name, changed, NULL);
}

int store_pod_delete_delta(struct store *s, const char *ns, const char *name, struct store_delta *d)
{
    memset(d, 0, sizeof(*d));
    return pod_delete(s, ns, name, &d->changed, d);
}

/* Position of `name` in the sorted node array, or where it would be inserted. */
static size_t node_pos(const struct store *s, const char *name, int *found)
{
    size_t lo = 0, hi = s->n_sorted;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->sorted[mid]->name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int kv_equal(const struct kv_list *a, const struct kv_list *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const char *v = kv_list_get(b, a->items[i].key);
        if (!v || strcmp(v, a->items[i].value) != 0)
            return 0;
    }
    return 1;
}

static int resources_equal(const struct resource_list *a, const struct resource_list *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        int found = 0;
        for (size_t j = 0; j < b->n; j++) {
            if (strcmp(a->items[i].name, b->items[j].name) == 0) {
                found = a->items[i].value == b->items[j].value;
                break;
            }
        }
        if (!found)
            return 0;
    }
    return 1;
}

static int taints_equal(const struct knode *a, const struct knode *b)
{
    if (a->n_taints != b->n_taints)
        return 0;
    for (size_t i = 0; i < a->n_taints; i++) {
        if (strcmp(a->taints[i].key, b->taints[i].key) ||
            strcmp(a->taints[i].value, b->taints[i].value) ||
            strcmp(a->taints[i].effect, b->taints[i].effect))
            return 0;
    }
    return 1;
}

/* What differs between two versions of a node, as STORE_DELTA_* bits (0: nothing the ladder
 * reads). */
static unsigned node_diff(const struct knode *a, const struct knode *b)
{
    unsigned what = 0;
    if (a->unschedulable != b->unschedulable)
        what |= STORE_DELTA_UNSCHEDULABLE;
    if (!taints_equal(a, b))
        what |= STORE_DELTA_TAINTS;
    if (!kv_equal(&a->labels, &b->labels))
        what |= STORE_DELTA_LABELS;
    if (!resources_equal(&a->capacity, &b->capacity))
        what |= STORE_DELTA_CAPACITY;
    if (!resources_equal(&a->allocatable, &b->allocatable))
        what |= STORE_DELTA_ALLOCATABLE;
    return what;
}

/* Hand the node record `old` (its contents; zeroed) over to the delta, or clean it up when
 * there is no delta or no memory for the copy (then the delta says overflow). */
static void delta_take_node(struct store_delta *d, struct knode *old)
{
    struct knode *copy = d ? malloc(sizeof(*copy)) : NULL;
    if (copy) {
        *copy = *old;
        memset(old, 0, sizeof(*old));
        d->old_node = copy;
        return;
    }
    if (d)
        d->overflow = true;
    node_cleanup(old);
}

static int node_upsert_locked(struct store *s, struct knode *node, unsigned *changed,
                              struct store_delta *d)
{
    struct lh_entry *e = lh_table_lookup_entry(s->nodes, node->name);
    if (e) {
        struct node_rec *rec = lh_entry_v(e);
        rec->stale = 0;
        unsigned what = node_diff(&rec->node, node);
        if (!what) {
            node_cleanup(node);
            return K_OK;
        }
        if (d && delta_node(d, node->name))
            d->what |= what;
        /* Replace in place: the sorted array points at rec->node, whose name is unchanged. */
        delta_take_node(d, &rec->node);
        rec->node = *node;
        memset(node, 0, sizeof(*node));
        *changed |= STORE_CHANGED_NODES;
        return K_OK;
    }
    if (s->n_sorted == s->cap_sorted) {
        size_t cap = s->cap_sorted ? s->cap_sorted * 2 : 64;
        struct knode **p = realloc(s->sorted, cap * sizeof(*p));
        if (!p)
            goto nomem;
        s->sorted = p;
        s->cap_sorted = cap;
    }
    struct node_rec *rec = calloc(1, sizeof(*rec));
    char *k = strdup(node->name);
    if (!rec || !k || lh_table_insert(s->nodes, k, rec) != 0) {
        free(rec);
        free(k);
        goto nomem;
    }
    rec->node = *node;
    memset(node, 0, sizeof(*node));
    int found;
    size_t pos = node_pos(s, rec->node.name, &found);
    memmove(s->sorted + pos + 1, s->sorted + pos, (s->n_sorted - pos) * sizeof(*s->sorted));
    s->sorted[pos] = &rec->node;
    s->n_sorted++;
    *changed |= STORE_CHANGED_NODES;
    if (d && delta_node(d, rec->node.name))
        d->what |= STORE_DELTA_NODE_ADDED;
    return K_OK;
nomem:
    node_cleanup(node);
    return K_ENOMEM;
}

/* Whether writing `node` would change nothing: the store holds an equal record no relist has
 * marked stale. Read lock held. */
static bool node_unchanged_locked(struct store *s, const struct knode *node)
{
    void *v = NULL;
    if (!node->name || !lh_table_lookup_ex(s->nodes, node->name, &v))
        return false;
    const struct node_rec *rec = v;
    return !rec->stale && node_diff(&rec->node, node) == 0;
}

/* One node write: an unchanged node (a heartbeat) is found under the read lock and written under
 * none. */
static int node_upsert(struct store *s, struct knode *node, unsigned *changed,
                       struct store_delta *d)
{
    store_read_lock(s);
    bool unchanged = node_unchanged_locked(s, node);
    store_read_unlock(s);
    if (unchanged) { /* status.conditions and the like, which are not kept */
        atomic_fetch_add_explicit(&s->unchanged, 1, memory_order_relaxed);
        node_cleanup(node);
        return K_OK;
    }
    write_lock(s);
    int rc = node_upsert_locked(s, node, changed, d);
    write_unlock(s);
    return rc;
}

int store_node_upsert(struct store *s, struct knode *node, unsigned *changed)
{
    return node_upsert(s, node, changed, NULL);
}

int store_node_upsert_delta(struct store *s, struct knode *node, struct store_delta *d)
{
    memset(d, 0, sizeof(*d));
    return node_upsert(s, node, &d->changed, d); /* on an error nothing was written: d is zero */
}

static void node_delete_entry(struct store *s, struct lh_entry *e, unsigned *changed,
                              struct store_delta *d)
{
    struct node_rec *rec = lh_entry_v(e);
    int found;
    size_t pos = node_pos(s, rec->node.name, &found);
    if (found) {
        memmove(s->sorted + pos, s->sorted + pos + 1, (s->n_sorted - pos - 1) * sizeof(*s->sorted));
        s->n_sorted--;
    }
    if (d && delta_node(d, rec->node.name)) {
        d->what |= STORE_DELTA_NODE_REMOVED;
        delta_take_node(d, &rec->node);
    }
    lh_table_delete_entry(s->nodes, e);
    *changed |= STORE_CHANGED_NODES;
}

static int node_delete(struct store *s, const char *name, unsigned *changed, struct store_delta *d)
{
    write_lock(s);
    struct lh_entry *e = lh_table_lookup_entry(s->nodes, name);
    if (e)
        node_delete_entry(s, e, changed, d);
    write_unlock(s);
    return K_OK;
}

int store_node_delete(struct store *s, const char *name, unsigned *changed)
{
    return node_delete(s, name, changed, NULL);
}

int store_node_delete_delta(struct store *s, const char *name, struct store_delta *d)
{
    memset(d, 0, sizeof(*d));
    return node_delete(s, name, &d->changed, d);
}

int store_pod_apply_json(struct store *s, json_object *obj, int deleted, char *key,
                         unsigned *changed)
{
    const char *name = kube_json_meta_str(obj, "name");
    const char *ns = kube_json_meta_str(obj, "namespace");
    if (!name)
        return K_EPARSE;
    if (key && make_key(key, ns, name) != K_OK)
        return K_ETOOBIG;
    if (deleted)
        return store_pod_delete(s, ns, name, changed);
    struct kpod pod;
    int rc = project_pod(obj, s->gpus, &pod);
    if (rc)
        return rc;
    return store_pod_upsert(s, &pod, changed);
}

int store_node_apply_json_delta(struct store *s, json_object *obj, int deleted, char *key,
                                struct store_delta *d)
{
    memset(d, 0, sizeof(*d));
    const char *name = kube_json_meta_str(obj, "name");
    if (!name)
        return K_EPARSE;
    if (key && meta_namespace_key(key, STORE_KEY_MAX, NULL, name) != K_OK)
        return K_ETOOBIG;
    if (deleted)
        return store_node_delete_delta(s, name, d);
    struct knode node;
    int rc = project_node(obj, s->gpus, &node);
    if (rc)
        return rc;
    return store_node_upsert_delta(s, &node, d);
}

int store_node_apply_json(struct store *s, json_object *obj, int deleted, char *key,
                          unsigned *changed)
{
    struct store_delta d;
    int rc = store_node_apply_json_delta(s, obj, deleted, key, &d);
    *changed |= d.changed;
    store_delta_cleanup(&d);
    return rc;
}

void store_pods_sync_begin(struct store *s)
{
    struct lh_entry *e;
    write_lock(s);
    lh_foreach(s->pods, e)
    {
        ((struct pod_rec *)lh_entry_v(e))->stale = 1;
    }
    write_unlock(s);
}

void store_pods_sync_end(struct store *s, unsigned *changed)
{
    struct lh_entry *e, *tmp;
    write_lock(s);
    lh_foreach_safe(s->pods, e, tmp)
    {
        if (((struct pod_rec *)lh_entry_v(e))->stale)
            pod_delete_entry(s, e, changed, NULL);
    }
    write_unlock(s);
}

void store_nodes_sync_begin(struct store *s)
{
    struct lh_entry *e;
    write_lock(s);
    lh_foreach(s->nodes, e)
    {
        ((struct node_rec *)lh_entry_v(e))->stale = 1;
    }
    write_unlock(s);
}

void store_nodes_sync_end(struct store *s, unsigned *changed)
{
    struct lh_entry *e, *tmp;
    write_lock(s);
    lh_foreach_safe(s->nodes, e, tmp)
    {
        if (((struct node_rec *)lh_entry_v(e))->stale)
            node_delete_entry(s, e, changed, NULL);
    }
    write_unlock(s);
}

const struct kpod *store_pod_get(struct store *s, const char *ns, const char *name)
{
    char key[STORE_KEY_MAX];
    void *v = NULL;
    if (make_key(key, ns, name) != K_OK || !lh_table_lookup_ex(s->pods, key, &v))
        return NULL;
    return &((struct pod_rec *)v)->pod;
}

const struct knode *store_node_get(struct store *s, const char *name)
{
    void *v = NULL;
    if (!name || !lh_table_lookup_ex(s->nodes, name, &v))
        return NULL;
    return &((struct node_rec *)v)->node;
}

const struct knode *const *store_nodes(struct store *s, size_t *n)
{
    *n = s->n_sorted;
    return (const struct knode *const *)s->sorted;
}

int64_t store_node_usage(void *ctx, const char *node, const char *resource)
{
    struct usage_entry *e = usage_find(usage_of_node(ctx, node), resource);
    if (!e)
        return 0;
    if (e->sum > INT64_MAX)
        return INT64_MAX;
    if (e->sum < INT64_MIN)
        return INT64_MIN;
    return (int64_t)e->sum;
}

void store_for_each_pending_gpu_pod(struct store *s, void (*fn)(void *ctx, const char *key),
                                    void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pending, e)
    {
        fn(ctx, lh_entry_k(e));
    }
}

void store_for_each_gpu_pod_on_node(struct store *s, const char *node,
                                    void (*fn)(void *ctx, const struct kpod *pod), void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pods, e)
    {
        const struct kpod *p = &((struct pod_rec *)lh_entry_v(e))->pod;
        if (p->node_name && strcmp(p->node_name, node) == 0 && !pod_is_terminal(p) &&
            p->gpu_requests.n)
            fn(ctx, p);
    }
}

void store_for_each_bound_gpu_pod(struct store *s, void (*fn)(void *ctx, const struct kpod *pod),
                                  void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pods, e)
    {
        const struct kpod *p = &((struct pod_rec *)lh_entry_v(e))->pod;
        if (counts(p)) /* exactly the pods usage_update() sums */
            fn(ctx, p);
    }
}

void store_for_each_pod_on_node(struct store *s, const char *node,
                                void (*fn)(void *ctx, const struct kpod *pod), void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pods, e)
    {
        const struct kpod *p = &((struct pod_rec *)lh_entry_v(e))->pod;
        if (p->node_name && strcmp(p->node_name, node) == 0)
            fn(ctx, p);
    }
}

void store_for_each_pod_of_owner(struct store *s, const char *owner_uid,
                                 void (*fn)(void *ctx, const struct kpod *pod), void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pods, e)
    {
        const struct kpod *p = &((struct pod_rec *)lh_entry_v(e))->pod;
        if (p->owner_uid && strcmp(p->owner_uid, owner_uid) == 0)
            fn(ctx, p);
    }
}

void store_for_each_pod_of_gang(struct store *s, const char *ns, const struct pod_gang *g,
                                void (*fn)(void *ctx, const struct kpod *pod), void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->pods, e)
    {
        const struct kpod *p = &((struct pod_rec *)lh_entry_v(e))->pod;
        if (p->gang && p->ns && ns && p->gang->kind == g->kind && strcmp(p->ns, ns) == 0 &&
            strcmp(p->gang->name, g->name) == 0 &&
            (!g->sub || (p->gang->sub && strcmp(p->gang->sub, g->sub) == 0 &&
                         !p->gang->replica == !g->replica &&
                         (!g->replica || strcmp(p->gang->replica, g->replica) == 0))))
            fn(ctx, p);
    }
}

size_t store_pod_count(struct store *s)
{
    return (size_t)lh_table_length(s->pods);
}

size_t store_node_count(struct store *s)
{
    return s->n_sorted;
}

size_t store_pending_gpu_pod_count(struct store *s)
{
    return (size_t)lh_table_length(s->pending);
}

void store_for_each_starting_gpu_pod(struct store *s, void (*fn)(void *ctx, const char *key),
                                     void *ctx)
{
    struct lh_entry *e;
    lh_foreach(s->starting, e)
    {
        fn(ctx, lh_entry_k(e));
    }
}

size_t store_starting_gpu_pod_count(struct store *s)
{
    return (size_t)lh_table_length(s->starting);
}
