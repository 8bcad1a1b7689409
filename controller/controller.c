/*
 * controller.c - informers -> store -> workqueue -> reconcile workers, with leader election
 * gating the writes, and the metrics and probe endpoints.
 */
#include "controller.h"

#include <json-c/linkhash.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/informer.h"
#include "cache/store.h"
#include "cache/workqueue.h"
#include "event_recorder.h"
#include "httpd.h"
#include "kube/client.h"
#include "kube/lease.h"
#include "leader.h"
#include "metrics.h"
#include "reconcile.h"
#include "util/deadline.h"
#include "util/log.h"
#include "util/result.h"
#include "util/version.h"

#define USER_AGENT "gputri-controller/" GPUTRI_VERSION

struct controller {
    const struct kube_config *cfg;
    struct controller_options opts;
    struct store *store;
    struct workqueue *queue;
    struct informer *pods, *nodes;
    pthread_t *workers;
    int n_workers;
    /* causes written but not yet seen through the watch: "ns/name" -> "<pod uid> <cause>" */
    pthread_mutex_t written_mu;
    struct lh_table *written;
    /* pods whose GPUs fit: "ns/name" -> (intptr_t) monotonic ms when first seen so; under
     * written_mu */
    struct lh_table *fits_since;
    /* while a LIST is being applied, node/usage changes are folded into one requeue at its end */
    atomic_int listing;

    struct metrics *metrics;
    struct event_recorder *events;
    struct httpd *metrics_srv, *health_srv;

    /* leader election: NULL le when off */
    struct leader_elector *le;
    struct kube_client *le_client;
    struct kube_lease_lock le_lock;
    pthread_t le_thread;
    int le_started;
    atomic_int le_stop;
    pthread_mutex_t le_mu;
    pthread_cond_t le_cv;
};

/* Whether this replica may write now: always without leader election, else while leading. */
static int may_write(struct controller *c)
{
    return !c->le || leader_is_leading(c->le);
}

static void free_key(struct lh_entry *e)
{
    free(lh_entry_k(e));
}

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
    if (!atomic_load(&c->listing))
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
    const char *cause = e ? strchr(lh_entry_v(e), ' ') : NULL;
    if (e && (gone || (seen && cause && strcmp(seen, cause + 1) == 0)))
        lh_table_delete_entry(c->written, e);
    if (gone) {
        struct lh_entry *f = lh_table_lookup_entry(c->fits_since, key);
        if (f)
            lh_table_delete_entry(c->fits_since, f);
    }
    pthread_mutex_unlock(&c->written_mu);
}

/*
 * Whether pod `key` may still need a write: it is a pending GPU pod, or it carries a cause (seen
 * or written by us and not yet seen) that may have to become `ok`. Work queued for any other pod
 * (placed without a cause, finished, gone) is dropped.
 */
static int needs_work(struct controller *c, const char *key)
{
    char ns[256], name[256];
    const char *slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name))
        return 1;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    snprintf(name, sizeof(name), "%s", slash + 1);

    pthread_mutex_lock(&c->written_mu);
    int written = lh_table_lookup_entry(c->written, key) != NULL;
    pthread_mutex_unlock(&c->written_mu);
    if (written)
        return 1;
    store_read_lock(c->store);
    const struct kpod *pod = store_pod_get(c->store, ns, name);
    int needed = pod && (store_is_pending_gpu_pod(pod) || pod->cause);
    store_read_unlock(c->store);
    return needed;
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
    if (deleted || !needs_work(c, key))
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

static void pods_watch_restart(void *ctx, int result)
{
    struct controller *c = ctx;
    (void)result;
    metrics_watch_restart(c->metrics, "pods");
}

static void nodes_watch_restart(void *ctx, int result)
{
    struct controller *c = ctx;
    (void)result;
    metrics_watch_restart(c->metrics, "nodes");
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
    atomic_fetch_add(&c->listing, 1);
}

static void list_end(struct controller *c)
{
    atomic_fetch_sub(&c->listing, 1);
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
    pthread_mutex_init(&c->le_mu, NULL);
    pthread_cond_init(&c->le_cv, NULL);
    c->written = lh_kchar_table_new(64, free_written);
    c->fits_since = lh_kchar_table_new(64, free_key);
    c->metrics = metrics_new();
    c->events = event_recorder_new(event_sink_kube(), 10 * 60 * 1000, 4096, NULL);
    c->store = store_new(gpus);
    c->queue = workqueue_new(5, 1000 * 1000, NULL);
    struct informer_handlers ph = {
        .ctx = c,
        .upsert = pod_upsert,
        .remove = pod_remove,
        .sync_begin = pods_sync_begin,
        .sync_end = pods_sync_end,
        .watch_restart = pods_watch_restart,
    };
    struct informer_options po = {.name = "pods", .path = "/api/v1/pods"};
    struct informer_handlers nh = {
        .ctx = c,
        .upsert = node_upsert,
        .remove = node_remove,
        .sync_begin = nodes_sync_begin,
        .sync_end = nodes_sync_end,
        .watch_restart = nodes_watch_restart,
    };
    struct informer_options no = {.name = "nodes", .path = "/api/v1/nodes"};
    c->pods = informer_new(cfg, &po, &ph);
    c->nodes = informer_new(cfg, &no, &nh);
    if (!c->written || !c->fits_since || !c->store || !c->queue || !c->pods || !c->nodes ||
        !c->metrics || !c->events) {
        controller_free(c);
        return NULL;
    }
    if (c->opts.leader_elect) {
        struct leader_options lo = {
            .identity = c->opts.identity,
            .lease_duration_ms = c->opts.lease_duration_ms,
            .renew_deadline_ms = c->opts.renew_deadline_ms,
            .retry_period_ms = c->opts.retry_period_ms,
        };
        c->le_client = kube_client_new(cfg, USER_AGENT " leader-election");
        if (!c->le_client ||
            kube_lease_lock_init(&c->le_lock, c->le_client, c->opts.lease_namespace,
                                 c->opts.lease_name) != K_OK) {
            controller_free(c);
            return NULL;
        }
        struct lease_lock ops = kube_lease_lock_ops(&c->le_lock);
        c->le = leader_new(&lo, &ops, NULL);
        if (!c->le) {
            controller_free(c);
            return NULL;
        }
    }
    return c;
}

/* Handles one key; returns after scheduling any retry. */
/*
 * The writer the workers use: the Kubernetes writer, behind a check that we still lead right
 * before each write, counting what succeeded.
 */
struct gated_writer {
    struct controller *c;
    struct pod_writer inner;
};

static int gated_annotate(void *ctx, const char *ns, const char *name, const char *cause,
                          const char *detail, struct kube_error *err)
{
    struct gated_writer *g = ctx;
    if (!may_write(g->c)) {
        err->code = K_ECANCELED;
        snprintf(err->message, sizeof(err->message), "not the leader");
        return K_ECANCELED;
    }
    int rc = g->inner.annotate(g->inner.ctx, ns, name, cause, detail, err);
    if (rc == K_OK)
        metrics_inc_patches(g->c->metrics);
    return rc;
}

static int gated_event(void *ctx, const struct reconcile_plan *plan, struct kube_error *err)
{
    struct gated_writer *g = ctx;
    if (!may_write(g->c)) {
        err->code = K_ECANCELED;
        snprintf(err->message, sizeof(err->message), "not the leader");
        return K_ECANCELED;
    }
    int rc = g->inner.event(g->inner.ctx, plan, err);
    if (rc == K_OK)
        metrics_inc_events(g->c->metrics);
    return rc;
}

/*
 * A pod whose GPUs fit is only reported once it stayed unplaced for GPU_FITS_GRACE_MS: right
 * after a GPU is freed the scheduler's last PodScheduled=False still stands until its next try,
 * which its backoff (at most 10 s by default) may delay. Returns the ms left to wait, 0 when the
 * grace is over.
 */
#define GPU_FITS_GRACE_MS 10000

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t fits_wait(struct controller *c, const char *key)
{
    int64_t now = now_ms(), wait = GPU_FITS_GRACE_MS;
    pthread_mutex_lock(&c->written_mu);
    void *v = NULL;
    if (lh_table_lookup_ex(c->fits_since, key, &v)) {
        wait = (int64_t)(intptr_t)v + GPU_FITS_GRACE_MS - now;
    } else {
        char *k = strdup(key);
        if (!k || lh_table_insert(c->fits_since, k, (void *)(intptr_t)now) != 0)
            free(k);
    }
    pthread_mutex_unlock(&c->written_mu);
    return wait > 0 ? wait : 0;
}

static void fits_forget(struct controller *c, const char *key)
{
    pthread_mutex_lock(&c->written_mu);
    struct lh_entry *e = lh_table_lookup_entry(c->fits_since, key);
    if (e)
        lh_table_delete_entry(c->fits_since, e);
    pthread_mutex_unlock(&c->written_mu);
}

static void process(struct controller *c, struct pod_writer *w, const char *key)
{
    char written[128] = "";
    /* A follower keeps its caches warm but leaves the work to the leader; a new leader
     * requeues every pending GPU pod. */
    if (!may_write(c)) {
        workqueue_forget(c->queue, key);
        return;
    }
    pthread_mutex_lock(&c->written_mu);
    void *v = NULL;
    if (lh_table_lookup_ex(c->written, key, &v))
        snprintf(written, sizeof(written), "%s", (const char *)v);
    pthread_mutex_unlock(&c->written_mu);

    /* The entry is "<uid> <cause>": it only speaks for the pod with that uid, not for a pod
     * recreated under the same name whose deletion a relist swept away. */
    char *written_cause = strchr(written, ' ');
    if (written_cause)
        *written_cause++ = '\0';
    struct reconcile_plan plan;
    if (reconcile_plan(c->store, key, written_cause, written_cause ? written : NULL, &plan) !=
        K_OK) {
        log_error("invalid key %s", key);
        return;
    }
    if (plan.classified)
        metrics_inc_classifications(c->metrics);
    if (plan.kind == RECONCILE_WRITE && plan.cause == CAUSE_GPU_FITS) {
        int64_t wait = fits_wait(c, key);
        if (wait > 0) {
            workqueue_add_after(c->queue, key, wait);
            return;
        }
    } else {
        fits_forget(c, key);
    }
    if (plan.kind != RECONCILE_WRITE) {
        workqueue_forget(c->queue, key);
        return;
    }
    struct kube_error err = {0};
    int rc = reconcile_apply(&plan, w, &err);
    if (rc == K_ECANCELED) {
        log_info(1, "pod %s: not written: leadership lost", key);
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_ENOTFOUND) {
        log_info(1, "pod %s: gone before its cause could be written (%s)", key, err.message);
        workqueue_forget(c->queue, key);
        return;
    }
    if (rc == K_OK) {
        log_info(1, "pod %s: %s (%s)", key, cause_word(plan.cause), plan.detail);
        pthread_mutex_lock(&c->written_mu);
        char *k = strdup(key), *val = NULL;
        if (asprintf(&val, "%s %s", plan.uid, cause_word(plan.cause)) < 0)
            val = NULL;
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
    /* 429, 5xx and transport errors back off per key, at least for the server's Retry-After. */
    int64_t delay =
        rc == K_ECONFLICT ? 0 : workqueue_add_rate_limited(c->queue, key, err.retry_after * 1000LL);
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
    struct kube_pod_writer kw = {client, c->opts.instance, c->events};
    struct gated_writer g = {c, pod_writer_kube(&kw)};
    struct pod_writer w = {&g, gated_annotate, gated_event};
    for (;;) {
        int64_t queued_ms = 0;
        char *key = workqueue_get(c->queue, &queued_ms);
        if (!key)
            break;
        metrics_queue_latency(c->metrics, queued_ms);
        process(c, &w, key);
        workqueue_done(c->queue, key);
        free(key);
    }
    kube_client_free(client);
    return NULL;
}

/* The elector thread: one step per retry period; a new leader requeues every pending pod. */
static void *elect(void *arg)
{
    struct controller *c = arg;
    int was = 0;
    while (!atomic_load(&c->le_stop)) {
        int leading = leader_step(c->le);
        if (leading && !was)
            enqueue_pending(c);
        was = leading;
        int64_t ms = leader_next_delay_ms(c->le);
        struct timespec ts = deadline_after(CLOCK_REALTIME, ms);
        pthread_mutex_lock(&c->le_mu);
        if (!atomic_load(&c->le_stop))
            pthread_cond_timedwait(&c->le_cv, &c->le_mu, &ts);
        pthread_mutex_unlock(&c->le_mu);
    }
    return NULL;
}

static void stop_elector(struct controller *c)
{
    if (!c->le_started)
        return;
    pthread_mutex_lock(&c->le_mu);
    atomic_store(&c->le_stop, 1);
    pthread_cond_broadcast(&c->le_cv);
    pthread_mutex_unlock(&c->le_mu);
    pthread_join(c->le_thread, NULL);
    c->le_started = 0;
}

/* Every API request of every client, for gputri_api_requests_total. */
static void on_api_request(void *ctx, const char *method, long http_status, int result)
{
    (void)method;
    (void)result;
    metrics_api_request(ctx, http_status);
}

/* One pending_gpu_pods sample being counted. */
struct pending_row {
    const char *cause; /* static */
    char resource[128];
    int64_t count;
};

struct pending_count {
    struct controller *c;
    struct pending_row *rows;
    size_t n, cap;
};

static void count_pending(void *ctx, const char *key)
{
    struct pending_count *pc = ctx;
    char ns[256], name[256];
    const char *slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name))
        return;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    snprintf(name, sizeof(name), "%s", slash + 1);
    const struct kpod *pod = store_pod_get(pc->c->store, ns, name);
    if (!pod)
        return;
    int cause = pod->cause ? cause_from_word(pod->cause) : -1;
    const char *word = pod->cause ? (cause >= 0 ? cause_word(cause) : "other") : "none";
    for (size_t i = 0; i < pod->gpu_requests.n; i++) {
        const char *res = pod->gpu_requests.items[i].name;
        size_t j;
        for (j = 0; j < pc->n; j++)
            if (pc->rows[j].cause == word && strcmp(pc->rows[j].resource, res) == 0)
                break;
        if (j == pc->n) {
            if (pc->n == pc->cap) {
                size_t cap = pc->cap ? pc->cap * 2 : 16;
                struct pending_row *rows = realloc(pc->rows, cap * sizeof(*rows));
                if (!rows)
                    return;
                pc->rows = rows;
                pc->cap = cap;
            }
            pc->rows[j].cause = word;
            snprintf(pc->rows[j].resource, sizeof(pc->rows[j].resource), "%s", res);
            pc->rows[j].count = 0;
            pc->n++;
        }
        pc->rows[j].count++;
    }
}

static unsigned render_metrics(struct controller *c, struct buf *body)
{
    struct pending_count pc = {.c = c};
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, count_pending, &pc);
    store_read_unlock(c->store);
    struct metrics_pending *samples = calloc(pc.n ? pc.n : 1, sizeof(*samples));
    unsigned status = 500;
    if (samples) {
        for (size_t i = 0; i < pc.n; i++) {
            samples[i].cause = pc.rows[i].cause;
            samples[i].resource = pc.rows[i].resource;
            samples[i].count = pc.rows[i].count;
        }
        struct metrics_gauges g = {
            .pending = samples,
            .n_pending = pc.n,
            .queue_depth = workqueue_len(c->queue),
            .leader = may_write(c),
        };
        status = metrics_render(c->metrics, &g, body) == K_OK ? 200 : 500;
    }
    free(samples);
    free(pc.rows);
    return status;
}

static unsigned serve(void *ctx, const char *path, struct buf *body, const char **content_type)
{
    struct controller *c = ctx;
    if (strcmp(path, "/metrics") == 0) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        return render_metrics(c, body);
    }
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
        buf_append_str(body, "ok\n");
        return 200;
    }
    if (strcmp(path, "/readyz") == 0) {
        if (informer_has_synced(c->nodes) && informer_has_synced(c->pods)) {
            buf_append_str(body, "ok\n");
            return 200;
        }
        buf_append_str(body, "caches not synced\n");
        return 503;
    }
    buf_append_str(body, "not found\n");
    return 404;
}

static int start_server(struct controller *c, const char *what, const char *addr,
                        struct httpd **out)
{
    char host[256], err[300];
    int port;
    if (httpd_parse_address(addr, host, sizeof(host), &port) != K_OK) {
        log_error("invalid %s bind address \"%s\"", what, addr);
        return K_EINVAL;
    }
    if (port < 0)
        return K_OK; /* off */
    int rc = httpd_start(addr, serve, c, out, err, sizeof(err));
    if (rc) {
        log_error("%s server: %s", what, err);
        return rc;
    }
    log_info(0, "serving %s on %s (port %d)", what, addr, httpd_port(*out));
    return K_OK;
}

int controller_run(struct controller *c, const atomic_int *stop)
{
    int started_workers = 0, rc = 1;
    kube_set_request_observer(on_api_request, c->metrics);
    if (start_server(c, "metrics", c->opts.metrics_addr, &c->metrics_srv) != K_OK)
        goto out;
    /* One address for both (a fixed port, not 0 = any): serve the probes with the metrics. */
    if (c->opts.health_addr && c->opts.metrics_addr && c->metrics_srv &&
        strcmp(c->opts.health_addr, c->opts.metrics_addr) == 0 &&
        !(strlen(c->opts.health_addr) >= 2 &&
          strcmp(c->opts.health_addr + strlen(c->opts.health_addr) - 2, ":0") == 0)) {
        log_info(0, "health probes served with the metrics");
    } else if (start_server(c, "health probes", c->opts.health_addr, &c->health_srv) != K_OK) {
        goto out;
    }
    if (informer_start(c->nodes) != K_OK || informer_start(c->pods) != K_OK) {
        log_error("cannot start informers");
        goto out;
    }
    if (c->le) {
        log_info(0, "leader election: %s competing for Lease %s/%s", c->opts.identity,
                 c->opts.lease_namespace, c->opts.lease_name);
        kube_client_set_cancel(c->le_client, &c->le_stop);
        if (pthread_create(&c->le_thread, NULL, elect, c) != 0) {
            log_error("cannot start leader election");
            goto out;
        }
        c->le_started = 1;
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
    while (!atomic_load(stop)) {
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
    /* No write is in flight any more: hand the Lease over (client-go ReleaseOnCancel). */
    stop_elector(c);
    if (c->le) {
        kube_client_set_cancel(c->le_client, NULL);
        leader_release(c->le);
    }
    informer_stop(c->pods);
    informer_stop(c->nodes);
    httpd_stop(c->health_srv);
    httpd_stop(c->metrics_srv);
    c->health_srv = c->metrics_srv = NULL;
    kube_set_request_observer(NULL, NULL);
    return rc;
}

void controller_free(struct controller *c)
{
    if (!c)
        return;
    stop_elector(c);
    leader_free(c->le);
    kube_lease_lock_cleanup(&c->le_lock);
    kube_client_free(c->le_client);
    httpd_stop(c->health_srv);
    httpd_stop(c->metrics_srv);
    event_recorder_free(c->events);
    metrics_free(c->metrics);
    pthread_cond_destroy(&c->le_cv);
    pthread_mutex_destroy(&c->le_mu);
    informer_free(c->pods);
    informer_free(c->nodes);
    workqueue_free(c->queue);
    store_free(c->store);
    if (c->written)
        lh_table_free(c->written);
    if (c->fits_since)
        lh_table_free(c->fits_since);
    pthread_mutex_destroy(&c->written_mu);
    free(c->workers);
    free(c);
}
