/* controller.c - informers -> store -> workqueue -> reconcile workers. */
#include "controller.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/informer.h"
#include "cache/store.h"
#include "cache/workqueue.h"
#include "kube/client.h"
#include "reconcile.h"
#include "util/log.h"
#include "util/result.h"

#define USER_AGENT "gputri-controller/0.1.0"

struct controller {
    const struct kube_config *cfg;
    struct controller_options opts;
    struct store *store;
    struct workqueue *queue;
    struct informer *pods, *nodes;
    pthread_t *workers;
    int n_workers;
    volatile int stopping;
    /* causes written but not yet seen through the watch: "ns/name" -> strdup'ed cause */
    pthread_mutex_t written_mu;
    struct lh_table *written;
    /* while a LIST is being applied, node/usage changes are folded into one requeue at its end */
    int listing;
};

static void free_written(struct lh_entry *e)
{
    free(lh_entry_k(e));
    free(lh_entry_v(e));
}

static void enqueue_one(void *ctx, const char *key)
{
    workqueue_add(ctx, key);
}

/* Every pending GPU pod may have a different answer now. */
static void enqueue_pending(struct controller *c)
{
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, enqueue_one, c->queue);
    store_read_unlock(c->store);
}

static void after_change(struct controller *c, unsigned changed)
{
    if (!(changed & (STORE_CHANGED_USAGE | STORE_CHANGED_NODES)))
        return;
    if (!__atomic_load_n(&c->listing, __ATOMIC_SEQ_CST))
        enqueue_pending(c);
}

static const char *annotation(json_object *obj, const char *name)
{
    json_object *meta, *ann, *v;
    if (json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "annotations", &ann) &&
        json_object_object_get_ex(ann, name, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

/* Forget a written cause once the watch shows it, or once the pod is gone. */
static void settle_written(struct controller *c, const char *key, const char *seen, int gone)
{
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->written, key);
    if (e && (gone || (seen && strcmp(seen, lh_entry_v(e)) == 0)))
        lh_table_delete_entry(c->written, e);
    pthread_mutex_unlock(&c->written_mu);
}

static void pod_event(struct controller *c, json_object *obj, int deleted)
{
    char key[STORE_KEY_MAX];
    unsigned changed = 0;
    int rc = store_pod_apply_json(c->store, obj, deleted, key, &changed);
    if (rc) {
        log_warn("skipping a pod that cannot be read: %s", k_strerror(rc));
        return;
    }
    settle_written(c, key, annotation(obj, ANNOTATION_CAUSE), deleted);
    if (deleted)
        workqueue_drop(c->queue, key);
    else if (changed & STORE_CHANGED_POD)
        workqueue_add(c->queue, key);
    after_change(c, changed);
}

static void pod_upsert(void *ctx, json_object *obj)
{
    pod_event(ctx, obj, 0);
}

static void pod_remove(void *ctx, json_object *obj)
{
    pod_event(ctx, obj, 1);
}

static void node_event(struct controller *c, json_object *obj, int deleted)
{
    unsigned changed = 0;
    int rc = store_node_apply_json(c->store, obj, deleted, NULL, &changed);
    if (rc) {
        log_warn("skipping a node that cannot be read: %s", k_strerror(rc));
        return;
    }
    after_change(c, changed);
}

static void node_upsert(void *ctx, json_object *obj)
{
    node_event(ctx, obj, 0);
}

static void node_remove(void *ctx, json_object *obj)
{
    node_event(ctx, obj, 1);
}

/*
 * Both informers share `listing`: they run in different threads, so the flag is only a hint to
 * batch work; a change seen outside a list is requeued directly, and every list ends with a
 * requeue of all pending GPU pods.
 */
static void list_begin(struct controller *c)
{
    __atomic_add_fetch(&c->listing, 1, __ATOMIC_SEQ_CST);
}

static void list_end(struct controller *c)
{
    __atomic_sub_fetch(&c->listing, 1, __ATOMIC_SEQ_CST);
    enqueue_pending(c);
}

static void pods_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    list_begin(c);
    store_pods_sync_begin(c->store);
}

static void pods_sync_end(void *ctx)
{
    struct controller *c = ctx;
    unsigned changed = 0;
    store_pods_sync_end(c->store, &changed);
    list_end(c);
}

static void nodes_sync_begin(void *ctx)
{
    struct controller *c = ctx;
    list_begin(c);
    store_nodes_sync_begin(c->store);
}

static void nodes_sync_end(void *ctx)
{
    struct controller *c = ctx;
    unsigned changed = 0;
    store_nodes_sync_end(c->store, &changed);
    list_end(c);
}

struct controller *controller_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                                  const struct controller_options *opts)
{
    struct controller *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = cfg;
    c->opts = *opts;
    if (c->opts.workers <= 0)
        c->opts.workers = 2;
    if (c->opts.resync_seconds <= 0)
        c->opts.resync_seconds = 300;
    pthread_mutex_init(&c->written_mu, NULL);
    c->written = lh_kchar_table_new(64, free_written);
    c->store = store_new(gpus);
    c->queue = workqueue_new(5, 1000 * 1000, NULL, NULL);
    struct informer_handlers ph = {
        .ctx = c,
        .upsert = pod_upsert,
        .remove = pod_remove,
        .sync_begin = pods_sync_begin,
        .sync_end = pods_sync_end,
    };
    struct informer_options po = {.name = "pods", .path = "/api/v1/pods"};
    struct informer_handlers nh = {
        .ctx = c,
        .upsert = node_upsert,
        .remove = node_remove,
        .sync_begin = nodes_sync_begin,
        .sync_end = nodes_sync_end,
    };
    struct informer_options no = {.name = "nodes", .path = "/api/v1/nodes"};
    c->pods = informer_new(cfg, &po, &ph);
    c->nodes = informer_new(cfg, &no, &nh);
    if (!c->written || !c->store || !c->queue || !c->pods || !c->nodes) {
        controller_free(c);
        return NULL;
    }
    return c;
}

/* Handles one key; returns after scheduling any retry. */
static void process(struct controller *c, struct kube_pod_writer *kw, const char *key)
{
    char written[32] = "";
    pthread_mutex_lock(&c->written_mu);
    void *v = NULL;
    if (lh_table_lookup_ex(c->written, key, &v))
        snprintf(written, sizeof(written), "%s", (const char *)v);
    pthread_mutex_unlock(&c->written_mu);

    struct reconcile_plan plan;
    if (reconcile_plan(c->store, key, written[0] ? written : NULL, &plan) != K_OK) {
        log_error("invalid key %s", key);
        return;
    }
    if (plan.kind != RECONCILE_WRITE) {
        workqueue_forget(c->queue, key);
        return;
    }
    struct pod_writer w = pod_writer_kube(kw);
    struct kube_error err = {0};
    int rc = reconcile_apply(&plan, &w, &err);
    if (rc == K_ENOTFOUND) {
        log_info(1, "pod %s: gone before its cause could be written (%s)", key, err.message);
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_OK) {
        log_info(1, "pod %s: %s (%s)", key, cause_word(plan.cause), plan.detail);
        pthread_mutex_lock(&c->written_mu);
        char *k = strdup(key), *val = strdup(cause_word(plan.cause));
        struct lh_entry *e = lh_table_lookup_entry(c->written, key);
        if (e)
            lh_table_delete_entry(c->written, e);
        if (!k || !val || lh_table_insert(c->written, k, val) != 0) {
            free(k);
            free(val);
        }
        pthread_mutex_unlock(&c->written_mu);
        workqueue_forget(c->queue, key);
        return;
    }
    int64_t delay = rc == K_ECONFLICT ? 0 : workqueue_add_rate_limited(c->queue, key,
                                                                       err.retry_after * 1000LL);
    if (rc == K_ECONFLICT)
        workqueue_add(c->queue, key);
    log_warn("pod %s: writing cause %s failed: %s%s%s; retrying in %lld ms", key,
             cause_word(plan.cause), k_strerror(rc), err.message[0] ? ": " : "", err.message,
             (long long)delay);
}

static void *worker(void *arg)
{
    struct controller *c = arg;
    struct kube_client *client = kube_client_new(c->cfg, USER_AGENT);
    if (!client) {
        log_error("worker: out of memory");
        return NULL;
    }
    struct kube_pod_writer kw = {client, c->opts.instance};
    for (;;) {
        char *key = workqueue_get(c->queue, NULL);
        if (!key)
            break;
        process(c, &kw, key);
        workqueue_done(c->queue, key);
        free(key);
    }
    kube_client_free(client);
    return NULL;
}

int controller_run(struct controller *c, const volatile int *stop)
{
    int started_workers = 0, rc = 1;
    if (informer_start(c->nodes) != K_OK || informer_start(c->pods) != K_OK) {
        log_error("cannot start informers");
        goto out;
    }
    log_info(0, "waiting for the node and pod caches to sync");
    if (!informer_wait_synced(c->nodes, stop) || !informer_wait_synced(c->pods, stop)) {
        rc = 0; /* stopped before the caches synced */
        goto out;
    }
    store_read_lock(c->store);
    log_info(0, "caches synced: %zu nodes, %zu pods, %zu pending GPU pods",
             store_node_count(c->store), store_pod_count(c->store),
             store_pending_gpu_pod_count(c->store));
    store_read_unlock(c->store);
    c->workers = calloc((size_t)c->opts.workers, sizeof(*c->workers));
    if (!c->workers)
        goto out;
    for (; started_workers < c->opts.workers; started_workers++)
        if (pthread_create(&c->workers[started_workers], NULL, worker, c) != 0)
            goto out;
    enqueue_pending(c);
    time_t next_resync = time(NULL) + c->opts.resync_seconds;
    while (!*stop) {
        struct timespec ts = {0, 100 * 1000000};
        nanosleep(&ts, NULL);
        if (time(NULL) >= next_resync) {
            log_info(2, "resync: re-checking every pending GPU pod");
            enqueue_pending(c);
            next_resync = time(NULL) + c->opts.resync_seconds;
        }
    }
    rc = 0;
out:
    log_info(0, "shutting down");
    workqueue_shutdown(c->queue);
    for (int i = 0; i < started_workers; i++)
        pthread_join(c->workers[i], NULL);
    informer_stop(c->pods);
    informer_stop(c->nodes);
    return rc;
}

void controller_free(struct controller *c)
{
    if (!c)
        return;
    informer_free(c->pods);
    informer_free(c->nodes);
    workqueue_free(c->queue);
    store_free(c->store);
    if (c->written)
        lh_table_free(c->written);
    pthread_mutex_destroy(&c->written_mu);
    free(c->workers);
    free(c);
}
