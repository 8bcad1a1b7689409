/* dra_store.c - the DRA objects in compact form, with the indexes the classifier's lookups need. */
#include "dra_store.h"

#include <json-c/arraylist.h>
#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/informer.h"
#include "cache/key.h"
#include "kube/json.h"
#include "kube/project.h"
#include "util/log.h"
#include "util/result.h"

struct rec {
    enum dra_kind kind;
    int stale;
    union {
        struct dra_claim claim;
        struct dra_template tmpl;
        struct dra_class cls;
        struct dra_slice slice;
        struct dra_taint_rule rule;
    } u;
};

/* A list of borrowed slice pointers, in insertion order. */
struct ptr_list {
    const struct dra_slice **items;
    size_t n, cap;
};

struct dra_store {
    pthread_rwlock_t lock;
    struct lh_table *by_kind[DRA_KIND_COUNT]; /* key -> struct rec* */
    struct lh_table *node_slices;             /* node name -> struct ptr_list* */
    struct ptr_list cluster_slices;           /* allNodes / nodeSelector slices */
    struct lh_table *holders;                 /* "driver\npool\ndevice" -> struct dra_claim* */
    struct lh_table *shares;     /* "driver\npool\ndevice" -> array_list of borrowed dra_claim* */
    struct lh_table *drivers;    /* driver -> number of its slices (uintptr_t) */
    bool synced[DRA_KIND_COUNT]; /* a relist of the kind has ended */
    enum dra_api_version version[DRA_KIND_COUNT]; /* what each kind's objects are read at */
    /* dra_store_discover (one-shot readers): the versions served, and the optional kinds whose
     * version dra_store_list_kind still has to discover */
    unsigned served;
    unsigned undiscovered;
};

static void rec_free(struct rec *r)
{
    if (!r)
        return;
    switch (r->kind) {
    case DRA_KIND_CLAIM:
        dra_claim_cleanup(&r->u.claim);
        break;
    case DRA_KIND_TEMPLATE:
        dra_template_cleanup(&r->u.tmpl);
        break;
    case DRA_KIND_CLASS:
        dra_class_cleanup(&r->u.cls);
        break;
    case DRA_KIND_TAINT_RULE:
        dra_taint_rule_cleanup(&r->u.rule);
        break;
    default:
        dra_slice_cleanup(&r->u.slice);
        break;
    }
    free(r);
}

static void free_rec_entry(struct lh_entry *e)
{
    free(lh_entry_k(e));
    rec_free(lh_entry_v(e));
}

static void free_list_entry(struct lh_entry *e)
{
    struct ptr_list *l = lh_entry_v(e);
    free(lh_entry_k(e));
    if (l)
        free(l->items);
    free(l);
}

static void free_key_entry(struct lh_entry *e)
{
    free(lh_entry_k(e));
}

/* The claims holding shares of one device (results with a shareID): an array_list of borrowed,
 * distinct claims. */
static void borrowed(void *p)
{
    (void)p; /* the claims are the records' own */
}

static void free_claim_list_entry(struct lh_entry *e)
{
    free(lh_entry_k(e));
    if (lh_entry_v(e))
        array_list_free(lh_entry_v(e));
}

struct dra_store *dra_store_new(void)
{
    struct dra_store *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_rwlock_init(&s->lock, NULL);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        s->version[k] = DRA_API_V1;
    int ok = 1;
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        ok &= (s->by_kind[k] = lh_kchar_table_new(64, free_rec_entry)) != NULL;
    s->node_slices = lh_kchar_table_new(64, free_list_entry);
    s->holders = lh_kchar_table_new(64, free_key_entry);
    s->shares = lh_kchar_table_new(16, free_claim_list_entry);
    s->drivers = lh_kchar_table_new(16, free_key_entry);
    if (!ok || !s->node_slices || !s->holders || !s->shares || !s->drivers) {
        dra_store_free(s);
        return NULL;
    }
    return s;
}

void dra_store_free(struct dra_store *s)
{
    if (!s)
        return;
    /* the indexes first: they borrow from the records */
    if (s->holders)
        lh_table_free(s->holders);
    if (s->shares)
        lh_table_free(s->shares);
    if (s->drivers)
        lh_table_free(s->drivers);
    if (s->node_slices)
        lh_table_free(s->node_slices);
    free(s->cluster_slices.items);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        if (s->by_kind[k])
            lh_table_free(s->by_kind[k]);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

void dra_store_read_lock(struct dra_store *s)
{
    pthread_rwlock_rdlock(&s->lock);
}

void dra_store_read_unlock(struct dra_store *s)
{
    pthread_rwlock_unlock(&s->lock);
}

/* ---- indexes -------------------------------------------------------------------------------- */

static int list_add(struct ptr_list *l, const struct dra_slice *p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        const struct dra_slice **items = realloc(l->items, cap * sizeof(*items));
        if (!items)
            return K_ENOMEM;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = p;
    return K_OK;
}

static void list_remove(struct ptr_list *l, const struct dra_slice *p)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->items[i] == p) {
            memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(*l->items));
            l->n--;
            return;
        }
}

/* Where a slice is indexed: its node's list, the cluster-wide list, or nowhere. */
static int slice_is_cluster_wide(const struct dra_slice *sl)
{
    return !sl->node_name && !sl->per_device_nodes && (sl->all_nodes || sl->nodes.present);
}

/* Count the slice under its driver: every slice, whatever reaches which node. Done first in
 * slice_index, so a failure leaves no count behind for slice_unindex to take back. */
static int driver_count(struct dra_store *s, const struct dra_slice *sl)
{
    struct lh_entry *e = lh_table_lookup_entry(s->drivers, sl->driver);
    if (e) {
        lh_entry_set_val(e, (void *)((uintptr_t)lh_entry_v(e) + 1));
        return K_OK;
    }
    char *k = strdup(sl->driver);
    if (!k || lh_table_insert(s->drivers, k, (void *)(uintptr_t)1) != 0) {
        free(k);
        return K_ENOMEM;
    }
    return K_OK;
}

static void driver_uncount(struct dra_store *s, const struct dra_slice *sl)
{
    struct lh_entry *e = lh_table_lookup_entry(s->drivers, sl->driver);
    if (!e)
        return;
    uintptr_t n = (uintptr_t)lh_entry_v(e);
    if (n <= 1)
        lh_table_delete_entry(s->drivers, e);
    else
        lh_entry_set_val(e, (void *)(n - 1));
}

static int slice_index(struct dra_store *s, const struct dra_slice *sl)
{
    int rc = driver_count(s, sl);
    if (rc)
        return rc;
    if (sl->per_device_nodes)
        return K_OK;
    if (sl->node_name) {
        void *v = NULL;
        struct ptr_list *l = NULL;
        if (lh_table_lookup_ex(s->node_slices, sl->node_name, &v)) {
            l = v;
        } else {
            char *k = strdup(sl->node_name);
            l = calloc(1, sizeof(*l));
            if (!k || !l || lh_table_insert(s->node_slices, k, l) != 0) {
                free(k);
                free(l);
                return K_ENOMEM;
            }
        }
        return list_add(l, sl);
    }
    if (slice_is_cluster_wide(sl))
        return list_add(&s->cluster_slices, sl);
    return K_OK;
}

static void slice_unindex(struct dra_store *s, const struct dra_slice *sl)
{
    driver_uncount(s, sl);
    if (sl->node_name) {
        struct lh_entry *e = lh_table_lookup_entry(s->node_slices, sl->node_name);
        if (!e)
            return;
        struct ptr_list *l = lh_entry_v(e);
        list_remove(l, sl);
        if (l->n == 0)
            lh_table_delete_entry(s->node_slices, e);
    } else {
        list_remove(&s->cluster_slices, sl);
    }
}

/* Room for a holder key: a driver (63), a pool name (253) and a device name (63), with room to
 * spare; longer names are not valid API objects and are not indexed. */
#define HOLDER_KEY_MAX 512

/* "driver\npool\ndevice" into key (HOLDER_KEY_MAX bytes); K_ETOOBIG when it does not fit. */
static int holder_key(char *key, const char *driver, const char *pool, const char *device)
{
    int n = snprintf(key, HOLDER_KEY_MAX, "%s\n%s\n%s", driver ? driver : "", pool ? pool : "",
                     device ? device : "");
    return n < 0 || n >= HOLDER_KEY_MAX ? K_ETOOBIG : K_OK;
}

static void claim_unindex(struct dra_store *s, const struct dra_claim *c)
{
    for (size_t i = 0; i < c->n_results; i++) {
        const struct dra_result *r = &c->results[i];
        char k[HOLDER_KEY_MAX];
        if (holder_key(k, r->driver, r->pool, r->device))
            continue; /* never indexed */
        if (r->share_id) {
            struct lh_entry *e = lh_table_lookup_entry(s->shares, k);
            struct array_list *l = e ? lh_entry_v(e) : NULL;
            for (size_t j = 0; l && j < array_list_length(l); j++)
                if (array_list_get_idx(l, j) == c) {
                    array_list_del_idx(l, j, 1);
                    break;
                }
            if (l && array_list_length(l) == 0)
                lh_table_delete_entry(s->shares, e);
            continue;
        }
        struct lh_entry *e = lh_table_lookup_entry(s->holders, k);
        if (e && lh_entry_v(e) == c)
            lh_table_delete_entry(s->holders, e);
    }
}

/* Add c to the claims sharing the device of `key` (once). */
static int share_index(struct dra_store *s, const char *key, const struct dra_claim *c)
{
    void *v = NULL;
    struct array_list *l = lh_table_lookup_ex(s->shares, key, &v) ? v : NULL;
    if (!l) {
        char *k = strdup(key);
        l = array_list_new2(borrowed, 4);
        if (!k || !l || lh_table_insert(s->shares, k, l) != 0) {
            free(k);
            if (l)
                array_list_free(l);
            return K_ENOMEM;
        }
    }
    for (size_t j = 0; j < array_list_length(l); j++)
        if (array_list_get_idx(l, j) == c)
            return K_OK;
    return array_list_add(l, (void *)c) == 0 ? K_OK : K_ENOMEM;
}

static int claim_index(struct dra_store *s, const struct dra_claim *c)
{
    for (size_t i = 0; i < c->n_results; i++) {
        const struct dra_result *r = &c->results[i];
        char buf[HOLDER_KEY_MAX];
        if (r->admin_access)
            continue; /* admin access holds nothing: others may still allocate the device */
        if (holder_key(buf, r->driver, r->pool, r->device))
            continue; /* not a valid device name: nothing can look it up */
        if (r->share_id) {
            int rc = share_index(s, buf, c);
            if (rc != K_OK)
                return rc;
            continue;
        }
        struct lh_entry *e = lh_table_lookup_entry(s->holders, buf);
        if (e) {
            lh_entry_set_val(e, (void *)c); /* the claim written last holds it */
            continue;
        }
        char *k = strdup(buf);
        if (!k || lh_table_insert(s->holders, k, (void *)c) != 0) {
            free(k);
            return K_ENOMEM;
        }
    }
    return K_OK;
}

static void unindex(struct dra_store *s, struct rec *r)
{
    if (r->kind == DRA_KIND_CLAIM)
        claim_unindex(s, &r->u.claim);
    else if (r->kind == DRA_KIND_SLICE)
        slice_unindex(s, &r->u.slice);
}

static int index_rec(struct dra_store *s, struct rec *r)
{
    if (r->kind == DRA_KIND_CLAIM)
        return claim_index(s, &r->u.claim);
    if (r->kind == DRA_KIND_SLICE)
        return slice_index(s, &r->u.slice);
    return K_OK;
}

/* Remove the entry and every index pointing into it. Write lock held. */
static void delete_entry(struct dra_store *s, enum dra_kind kind, struct lh_entry *e)
{
    unindex(s, lh_entry_v(e));
    lh_table_delete_entry(s->by_kind[kind], e);
}

/* ---- writers -------------------------------------------------------------------------------- */

static int project_v1(enum dra_kind kind, json_object *obj, struct rec *r)
{
    switch (kind) {
    case DRA_KIND_CLAIM:
        return project_dra_claim(obj, &r->u.claim);
    case DRA_KIND_TEMPLATE:
        return project_dra_template(obj, &r->u.tmpl);
    case DRA_KIND_CLASS:
        return project_dra_class(obj, &r->u.cls);
    case DRA_KIND_TAINT_RULE:
        return project_dra_taint_rule(obj, &r->u.rule);
    default:
        return project_dra_slice(obj, &r->u.slice);
    }
}

/* `obj` read at version `v`, through its layout in v1 (kube/dra_api.h). */
static int project(enum dra_kind kind, enum dra_api_version v, json_object *obj, struct rec *r)
{
    json_object *v1 = NULL;
    int rc = dra_json_as_v1(kind, v, obj, &v1);
    if (rc == K_OK)
        rc = project_v1(kind, v1, r);
    json_object_put(v1);
    return rc;
}

/* Claims and templates are namespaced, classes and slices are not. */
static int rec_key(enum dra_kind kind, json_object *obj, char *key)
{
    const char *name = kube_json_meta_str(obj, "name");
    if (!name || !name[0])
        return K_EPARSE;
    const char *ns = kind == DRA_KIND_CLAIM || kind == DRA_KIND_TEMPLATE
                         ? kube_json_meta_str(obj, "namespace")
                         : NULL;
    return meta_namespace_key(key, META_KEY_MAX, ns, name);
}

int dra_store_apply_json(struct dra_store *s, enum dra_kind kind, json_object *obj, int deleted)
{
    if (kind >= DRA_KIND_COUNT || !obj)
        return K_EINVAL;
    char key[META_KEY_MAX];
    int rc = rec_key(kind, obj, key);
    if (rc)
        return rc;
    if (deleted) {
        pthread_rwlock_wrlock(&s->lock);
        struct lh_entry *e = lh_table_lookup_entry(s->by_kind[kind], key);
        if (e)
            delete_entry(s, kind, e);
        pthread_rwlock_unlock(&s->lock);
        return K_OK;
    }
    struct rec *r = calloc(1, sizeof(*r));
    char *k = strdup(key);
    if (!r || !k) {
        free(r);
        free(k);
        return K_ENOMEM;
    }
    r->kind = kind;
    pthread_rwlock_rdlock(&s->lock);
    enum dra_api_version version = s->version[kind];
    pthread_rwlock_unlock(&s->lock);
    rc = project(kind, version, obj, r);
    if (rc) {
        free(r); /* project_dra_* cleaned up */
        free(k);
        return rc;
    }
    pthread_rwlock_wrlock(&s->lock);
    struct lh_entry *old = lh_table_lookup_entry(s->by_kind[kind], key);
    if (old)
        delete_entry(s, kind, old);
    if (lh_table_insert(s->by_kind[kind], k, r) != 0) {
        pthread_rwlock_unlock(&s->lock);
        free(k);
        rec_free(r);
        return K_ENOMEM;
    }
    rc = index_rec(s, r);
    if (rc) /* out of memory: drop it rather than keep it half indexed */
        delete_entry(s, kind, lh_table_lookup_entry(s->by_kind[kind], key));
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

void dra_store_sync_begin(struct dra_store *s, enum dra_kind kind)
{
    if (kind >= DRA_KIND_COUNT)
        return;
    struct lh_entry *e;
    pthread_rwlock_wrlock(&s->lock);
    lh_foreach(s->by_kind[kind], e)
    {
        ((struct rec *)lh_entry_v(e))->stale = 1;
    }
    pthread_rwlock_unlock(&s->lock);
}

void dra_store_sync_end(struct dra_store *s, enum dra_kind kind)
{
    if (kind >= DRA_KIND_COUNT)
        return;
    struct lh_entry *e, *tmp;
    pthread_rwlock_wrlock(&s->lock);
    lh_foreach_safe(s->by_kind[kind], e, tmp)
    {
        if (((struct rec *)lh_entry_v(e))->stale)
            delete_entry(s, kind, e);
    }
    s->synced[kind] = true;
    pthread_rwlock_unlock(&s->lock);
}

void dra_store_set_api_version(struct dra_store *s, enum dra_api_version v)
{
    pthread_rwlock_wrlock(&s->lock);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        s->version[k] = v;
    pthread_rwlock_unlock(&s->lock);
}

void dra_store_set_kind_version(struct dra_store *s, enum dra_kind kind, enum dra_api_version v)
{
    if (kind >= DRA_KIND_COUNT)
        return;
    pthread_rwlock_wrlock(&s->lock);
    s->version[kind] = v;
    pthread_rwlock_unlock(&s->lock);
}

enum dra_api_version dra_store_api_version(struct dra_store *s)
{
    return s->version[DRA_KIND_CLAIM];
}

enum dra_api_version dra_store_kind_version(struct dra_store *s, enum dra_kind kind)
{
    return kind < DRA_KIND_COUNT ? s->version[kind] : DRA_API_NONE;
}

void dra_store_unsync(struct dra_store *s)
{
    pthread_rwlock_wrlock(&s->lock);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        s->synced[k] = false;
    pthread_rwlock_unlock(&s->lock);
}

bool dra_store_synced(struct dra_store *s, enum dra_kind kind)
{
    return kind < DRA_KIND_COUNT && s->synced[kind];
}

int dra_store_relist_items(struct dra_store *s, enum dra_kind kind, json_object *items)
{
    if (kind >= DRA_KIND_COUNT)
        return K_EINVAL;
    int first = K_OK;
    size_t n = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
    dra_store_sync_begin(s, kind);
    for (size_t i = 0; i < n; i++) {
        int rc = dra_store_apply_json(s, kind, json_object_array_get_idx(items, i), 0);
        if (first == K_OK)
            first = rc;
    }
    dra_store_sync_end(s, kind);
    return first;
}

/* ---- readers -------------------------------------------------------------------------------- */

static struct rec *lookup(struct dra_store *s, enum dra_kind kind, const char *ns, const char *name)
{
    char key[META_KEY_MAX];
    if (!name || meta_namespace_key(key, sizeof(key), ns, name) != K_OK)
        return NULL;
    void *v = NULL;
    return lh_table_lookup_ex(s->by_kind[kind], key, &v) ? v : NULL;
}

const struct dra_claim *dra_store_claim(void *ctx, const char *ns, const char *name)
{
    struct rec *r = lookup(ctx, DRA_KIND_CLAIM, ns, name);
    return r ? &r->u.claim : NULL;
}

const struct dra_template *dra_store_template(void *ctx, const char *ns, const char *name)
{
    struct rec *r = lookup(ctx, DRA_KIND_TEMPLATE, ns, name);
    return r ? &r->u.tmpl : NULL;
}

const struct dra_class *dra_store_class(void *ctx, const char *name)
{
    struct rec *r = lookup(ctx, DRA_KIND_CLASS, NULL, name);
    return r ? &r->u.cls : NULL;
}

const struct dra_class *dra_store_extended_class(void *ctx, const char *resource)
{
    struct dra_store *s = ctx;
    if (!resource)
        return NULL;
    size_t n = strlen(DRA_EXTENDED_CLASS_PREFIX);
    if (strncmp(resource, DRA_EXTENDED_CLASS_PREFIX, n) == 0)
        return dra_store_class(ctx, resource + n);
    const struct dra_class *best = NULL;
    struct lh_entry *e;
    lh_foreach(s->by_kind[DRA_KIND_CLASS], e)
    {
        const struct rec *r = lh_entry_v(e);
        if (dra_extended_class_serves(&r->u.cls, resource) &&
            dra_extended_class_wins(&r->u.cls, best))
            best = &r->u.cls;
    }
    return best;
}

static void collect(const struct ptr_list *l, const char *driver, const struct dra_slice **buf,
                    size_t cap, size_t *n)
{
    for (size_t i = 0; l && i < l->n; i++) {
        if (driver && strcmp(l->items[i]->driver, driver) != 0)
            continue;
        if (*n < cap)
            buf[*n] = l->items[i];
        (*n)++;
    }
}

size_t dra_store_node_slices(void *ctx, const char *node, const char *driver,
                             const struct dra_slice **buf, size_t cap)
{
    struct dra_store *s = ctx;
    size_t n = 0;
    void *v = NULL;
    if (node && lh_table_lookup_ex(s->node_slices, node, &v))
        collect(v, driver, buf, cap, &n);
    collect(&s->cluster_slices, driver, buf, cap, &n);
    return n;
}

const struct dra_claim *dra_store_device_holder(void *ctx, const char *driver, const char *pool,
                                                const char *device)
{
    struct dra_store *s = ctx;
    char k[HOLDER_KEY_MAX];
    if (holder_key(k, driver, pool, device))
        return NULL;
    void *v = NULL;
    return lh_table_lookup_ex(s->holders, k, &v) ? v : NULL;
}

size_t dra_store_device_taint_rules(void *ctx, const char *driver, const char *pool,
                                    const char *device, const struct dra_taint_rule **buf,
                                    size_t cap)
{
    struct dra_store *s = ctx;
    size_t n = 0;
    struct lh_entry *e;
    lh_foreach(s->by_kind[DRA_KIND_TAINT_RULE], e)
    {
        const struct dra_taint_rule *r = &((struct rec *)lh_entry_v(e))->u.rule;
        if (!dra_taint_rule_selects(r, driver, pool, device))
            continue;
        if (n < cap)
            buf[n] = r;
        n++;
    }
    return n;
}

bool dra_store_driver_published(struct dra_store *s, const char *driver)
{
    return driver && lh_table_lookup_entry(s->drivers, driver) != NULL;
}

static int cmp_class_name(const void *a, const void *b)
{
    const struct dra_class *x = *(const struct dra_class *const *)a;
    const struct dra_class *y = *(const struct dra_class *const *)b;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

size_t dra_store_classes(struct dra_store *s, const struct dra_class **buf, size_t cap)
{
    size_t n = 0;
    struct lh_entry *e;
    lh_foreach(s->by_kind[DRA_KIND_CLASS], e)
    {
        const struct rec *r = lh_entry_v(e);
        if (n < cap)
            buf[n] = &r->u.cls;
        n++;
    }
    if (n && cap)
        qsort(buf, n < cap ? n : cap, sizeof(*buf), cmp_class_name);
    return n;
}

size_t dra_store_count(struct dra_store *s, enum dra_kind kind)
{
    return kind < DRA_KIND_COUNT ? (size_t)lh_table_length(s->by_kind[kind]) : 0;
}

/* dra_store_list's handlers: the feed first, so the feed's sync handlers take it too. */
struct list_ctx {
    struct dra_store_feed f;
    size_t skipped; /* did not project or passed a bound */
};

static void list_upsert(void *ctx, json_object *obj)
{
    struct list_ctx *l = ctx;
    int rc = dra_store_apply_json(l->f.s, l->f.kind, obj, 0);
    if (rc && rc != K_ENOMEM)
        l->skipped++;
}

/* One event into the store; an object that does not project is said once and skipped. */
static void feed_apply(struct dra_store_feed *f, json_object *obj, int deleted)
{
    int rc = dra_store_apply_json(f->s, f->kind, obj, deleted);
    if (rc != K_OK)
        log_warn_kv("skipping an object", LOG_STR("kind", dra_kind_name(f->kind)),
                    LOG_STR("name", kube_json_meta_str(obj, "name")
                                        ? kube_json_meta_str(obj, "name")
                                        : "(no name)"),
                    LOG_STR("err", k_strerror(rc)));
}

static void feed_upsert(void *ctx, json_object *obj)
{
    feed_apply(ctx, obj, 0);
}

static void feed_remove(void *ctx, json_object *obj)
{
    feed_apply(ctx, obj, 1);
}

static void feed_sync_begin(void *ctx)
{
    struct dra_store_feed *f = ctx;
    dra_store_sync_begin(f->s, f->kind);
}

static void feed_sync_end(void *ctx)
{
    struct dra_store_feed *f = ctx;
    dra_store_sync_end(f->s, f->kind);
    log_info_kv(2, "listed", LOG_STR("kind", dra_kind_name(f->kind)));
}

struct informer_handlers dra_store_handlers(struct dra_store_feed *f)
{
    return (struct informer_handlers){
        .ctx = f,
        .upsert = feed_upsert,
        .remove = feed_remove,
        .sync_begin = feed_sync_begin,
        .sync_end = feed_sync_end,
    };
}

int dra_store_discover(struct kube_client *client, struct dra_store *s, struct kube_error *err)
{
    unsigned served = 0;
    int rc = dra_api_discover(client, &served, err);
    if (rc)
        return rc;
    enum dra_api_version v = dra_api_choose(served);
    if (v == DRA_API_NONE) {
        memset(err, 0, sizeof(*err));
        err->code = K_ENOTFOUND;
        snprintf(err->message, sizeof(err->message),
                 "the API server serves none of %s/v1, v1beta2, v1beta1", DRA_API_GROUP);
        return K_ENOTFOUND;
    }
    for (int k = 0; k < DRA_KIND_CORE_COUNT; k++)
        dra_store_set_kind_version(s, (enum dra_kind)k, v);
    s->served = served;
    s->undiscovered = ((1u << DRA_KIND_COUNT) - 1) & ~((1u << DRA_KIND_CORE_COUNT) - 1);
    return K_OK;
}

int dra_store_list(struct kube_client *client, struct dra_store *s, struct kube_error *err)
{
    int rc = dra_store_discover(client, s, err);
    for (int k = 0; rc == K_OK && k < DRA_KIND_COUNT; k++)
        rc = dra_store_list_kind(client, s, (enum dra_kind)k, err);
    return rc;
}

size_t dra_store_device_shares(void *ctx, const char *driver, const char *pool, const char *device,
                               const struct dra_claim **buf, size_t cap)
{
    struct dra_store *s = ctx;
    char k[HOLDER_KEY_MAX];
    if (holder_key(k, driver, pool, device))
        return 0;
    void *v = NULL;
    struct array_list *l = lh_table_lookup_ex(s->shares, k, &v) ? v : NULL;
    size_t n = l ? array_list_length(l) : 0;
    for (size_t i = 0; i < n && i < cap; i++)
        buf[i] = array_list_get_idx(l, i);
    return n;
}

bool dra_store_any_extended(struct dra_store *s)
{
    struct lh_entry *e;
    lh_foreach(s->by_kind[DRA_KIND_CLASS], e)
    {
        const struct rec *r = lh_entry_v(e);
        if (r->u.cls.extended_resource_name)
            return true;
    }
    return false;
}

int dra_store_list_kind(struct kube_client *client, struct dra_store *s, enum dra_kind kind,
                        struct kube_error *err)
{
    struct list_ctx l = {{s, kind}, 0};
    struct informer_handlers h = {
        .ctx = &l, .upsert = list_upsert, .sync_begin = feed_sync_begin, .sync_end = feed_sync_end};
    if (kind < DRA_KIND_COUNT && (s->undiscovered & (1u << kind))) {
        enum dra_api_version found;
        int rc = dra_api_discover_kind(client, kind, s->served, &found, err);
        if (rc)
            return rc;
        dra_store_set_kind_version(s, kind, found);
        s->undiscovered &= ~(1u << kind);
    }
    enum dra_api_version v = dra_store_kind_version(s, kind);
    if (kind >= DRA_KIND_CORE_COUNT && v == DRA_API_NONE)
        return K_OK; /* served at no version read: none apply */
    int rc = informer_list_once(client, dra_kind_path(kind, v), 500, &h, NULL, 0, err);
    if (kind >= DRA_KIND_CORE_COUNT && (rc == K_ENOTFOUND || rc == K_EFORBIDDEN)) {
        memset(err, 0, sizeof(*err));
        return K_OK; /* optional: not served (before 1.37) or not allowed */
    }
    if (rc)
        return rc;
    if (l.skipped) /* the CLI answers from nothing it could not read */
        return informer_list_skipped(dra_kind_path(kind, v), l.skipped, err);
    return K_OK;
}
