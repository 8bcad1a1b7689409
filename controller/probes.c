/*
 * probes.c - the controller's HTTP endpoints: Prometheus metrics on --metrics-bind-address and
 * /healthz, /livez and /readyz on --health-probe-bind-address (controller-runtime's flags), and
 * the API request counter behind gputri_api_requests_total.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/linkhash.h>

#include "cache/key.h"
#include "controller_internal.h"
#include "http/tls_source.h"
#include "kube/rate_limit_metrics.h"
#include "metrics_auth.h"
#include "metrics.h"
#include "triage/triage.h"
#include "util/log.h"
#include "util/process_metrics.h"
#include "util/result.h"

/* Every API request of every client, for gputri_api_requests_total. */
static void on_api_request(void *ctx, const char *method, long http_status, int result)
{
    (void)method;
    (void)result;
    metrics_api_request(ctx, http_status);
}

/* One pending_gpu_pods sample being counted (strings copied: the store's are borrowed only
 * under its lock). */
struct pending_row {
    const char *cause;           /* static */
    char ns[META_NAMESPACE_MAX]; /* a namespace is a DNS label: at most 63 characters */
    char resource[METRICS_RESOURCE_NAME_MAX];
    int64_t count;
};

struct pending_count {
    struct controller *c;
    struct pending_row *rows;
    size_t n, cap;
    struct lh_table *index; /* "cause\nns\nresource" -> row index + 1 */
};

static void free_index_key(struct lh_entry *e)
{
    free(lh_entry_k(e));
}

/* Count one pod of namespace `ns` under (word, resource). */
static void count_row(struct pending_count *pc, const char *word, const char *ns, const char *res)
{
    char *key = NULL;
    /* A name longer than any the API server admits (metrics.h) has no series: its copy would be
     * cut, and two such names would share one. */
    if (strlen(ns) >= sizeof(pc->rows->ns) || strlen(res) >= sizeof(pc->rows->resource))
        return;
    if (!pc->index || asprintf(&key, "%s\n%s\n%s", word, ns, res) < 0)
        return;
    void *v = NULL;
    if (lh_table_lookup_ex(pc->index, key, &v)) {
        free(key);
        pc->rows[(size_t)(intptr_t)v - 1].count++;
        return;
    }
    if (pc->n == pc->cap) {
        size_t cap = pc->cap ? pc->cap * 2 : 16;
        struct pending_row *rows = realloc(pc->rows, cap * sizeof(*rows));
        if (!rows) {
            free(key);
            return;
        }
        pc->rows = rows;
        pc->cap = cap;
    }
    if (lh_table_insert(pc->index, key, (void *)(intptr_t)(pc->n + 1)) != 0) {
        free(key);
        return;
    }
    struct pending_row *r = &pc->rows[pc->n++];
    r->cause = word;
    memcpy(r->ns, ns, strlen(ns) + 1); /* both fit: checked above */
    memcpy(r->resource, res, strlen(res) + 1);
    r->count = 1;
}

static void count_pending(void *ctx, const char *key)
{
    struct pending_count *pc = ctx;
    struct meta_key k;
    if (meta_key_parse(key, &k) != K_OK)
        return;
    const struct kpod *pod = store_pod_get(pc->c->store, k.ns, k.name);
    if (!pod)
        return;
    int cause = pod->cause ? cause_from_word(pod->cause) : -1;
    const char *word = pod->cause ? (cause >= 0 ? cause_word(cause) : "other") : "none";
    for (size_t i = 0; i < pod->gpu_requests.n; i++)
        count_row(pc, word, k.ns, pod->gpu_requests.items[i].name);
    /* A pod asking through ResourceClaims is a GPU pod once the controller has written a cause
     * for it (claims of other devices never get one); the claims' DeviceClasses are not a
     * resource name, so these pods share the resource label "resource.k8s.io/claims". */
    if (triage_claims_ask_gpu(pod))
        count_row(pc, word, k.ns, METRICS_DRA_RESOURCE);
}

static unsigned render_metrics(struct controller *c, struct buf *body)
{
    struct pending_count pc = {.c = c, .index = lh_kchar_table_new(64, free_index_key)};
    store_read_lock(c->store);
    store_for_each_pending_gpu_pod(c->store, count_pending, &pc);
    store_read_unlock(c->store);
    struct metrics_pending *samples = calloc(pc.n ? pc.n : 1, sizeof(*samples));
    unsigned status = 500;
    if (samples && pc.index) {
        for (size_t i = 0; i < pc.n; i++) {
            samples[i].cause = pc.rows[i].cause;
            samples[i].ns = pc.rows[i].ns;
            samples[i].resource = pc.rows[i].resource;
            samples[i].count = pc.rows[i].count;
        }
        struct store_lock_stats st;
        store_lock_stats(c->store, &st);
        struct metrics_gauges g = {
            .pending = samples,
            .n_pending = pc.n,
            .queue_depth = workqueue_len(c->queue),
            .queue_depth_high = workqueue_len_priority(c->queue, WORKQUEUE_HIGH),
            .queue_depth_low = workqueue_len_priority(c->queue, WORKQUEUE_LOW),
            .queue_delayed = workqueue_delayed_len(c->queue),
            .leader = controller_may_write(c),
            .store_write_locks = st.write_locks,
            .store_write_wait_ns = st.write_wait_ns,
            .store_unchanged = st.unchanged,
        };
        _Static_assert(METRICS_QUOTA_OWNER_KINDS == QUOTA_OWNER_KINDS, "one row per owner kind");
        quota_owners_counts(c->quota_owners, g.quota_refused_owners, NULL);
        status = metrics_render(c->metrics, &g, body) == K_OK &&
                         kube_rate_limit_metrics_append(body) == K_OK &&
                         process_metrics_append(body) == K_OK
                     ? 200
                     : 500;
    }
    free(samples);
    free(pc.rows);
    if (pc.index)
        lh_table_free(pc.index);
    return status;
}

unsigned controller_serve(void *ctx, const char *path, struct buf *body, const char **content_type)
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

static unsigned auth_filter(void *ctx, const char *client, const char *method, const char *path,
                            const char *authorization, char *msg, size_t msglen)
{
    return metrics_auth_check_client(ctx, client, method, path, authorization, msg, msglen);
}

/* The certificate, client and cache of --metrics-secure. */
static int secure_setup(struct controller *c)
{
    char err[512];
    int rc;
    if (c->opts.metrics_cert_file) {
        rc = tls_source_new(c->opts.metrics_cert_file, c->opts.metrics_key_file, &c->metrics_tls,
                            err, sizeof(err));
    } else {
        char host[256] = "localhost";
        gethostname(host, sizeof(host) - 1);
        const char *dns[] = {"localhost", host};
        rc = tls_source_new_self_signed("gputri-controller", dns, 2, &c->metrics_tls, err,
                                        sizeof(err));
        if (rc == K_OK)
            log_info_kv(0, "metrics: serving with a self-signed certificate (no "
                           "--metrics-tls-cert-file)");
    }
    if (rc != K_OK) {
        log_error_kv("metrics certificate", LOG_STR("err", err));
        return rc;
    }
    c->auth_client = kube_client_new(c->cfg, "gputri-controller metrics-auth");
    c->metrics_auth = c->auth_client ? metrics_auth_new(c->auth_client, c->opts.clock) : NULL;
    if (!c->metrics_auth) {
        log_error_kv("metrics: out of memory");
        return K_ENOMEM;
    }
    return K_OK;
}

static int start_server(struct controller *c, const char *what, const char *addr,
                        struct httpd **out)
{
    char host[256], err[300];
    int port;
    if (httpd_parse_address(addr, host, sizeof(host), &port) != K_OK) {
        log_error_kv("invalid bind address", LOG_STR("endpoint", what), LOG_STR("address", addr));
        return K_EINVAL;
    }
    if (port < 0)
        return K_OK; /* off */
    bool secure = out == &c->metrics_srv && c->opts.metrics_secure;
    if (secure) {
        int rc = secure_setup(c);
        if (rc != K_OK)
            return rc;
    }
    struct httpd_options o = {
        .addr = addr,
        .handler = controller_serve,
        .ctx = c,
        .tls = secure ? c->metrics_tls : NULL,
        .filter = secure ? auth_filter : NULL,
        .filter_ctx = c->metrics_auth,
        .filter_path = "/metrics",
    };
    int rc = httpd_start_opts(&o, out, err, sizeof(err));
    if (rc) {
        log_error_kv("cannot serve", LOG_STR("endpoint", what), LOG_STR("err", err));
        return rc;
    }
    log_info_kv(
        0, "serving", LOG_STR("endpoint", what), LOG_STR("address", addr),
        LOG_INT("port", httpd_port(*out)), LOG_BOOL("https", secure),
        LOG_STR("auth", secure ? "TokenReview and SubjectAccessReview for /metrics" : NULL));
    return K_OK;
}

int controller_probes_start(struct controller *c)
{
    kube_set_request_observer(on_api_request, c->metrics);
    int rc = start_server(c, "metrics", c->opts.metrics_addr, &c->metrics_srv);
    if (rc != K_OK)
        return rc;
    /* One address for both (a fixed port, not 0 = any): serve the probes with the metrics - not
     * over HTTPS, where the kubelet's probes would need scheme HTTPS (then the bind fails). */
    if (!c->opts.metrics_secure && c->opts.health_addr && c->opts.metrics_addr && c->metrics_srv &&
        strcmp(c->opts.health_addr, c->opts.metrics_addr) == 0 &&
        !(strlen(c->opts.health_addr) >= 2 &&
          strcmp(c->opts.health_addr + strlen(c->opts.health_addr) - 2, ":0") == 0)) {
        log_info_kv(0, "health probes served with the metrics");
        return K_OK;
    }
    return start_server(c, "health probes", c->opts.health_addr, &c->health_srv);
}

void controller_probes_stop(struct controller *c)
{
    httpd_stop(c->health_srv);
    httpd_stop(c->metrics_srv);
    c->health_srv = c->metrics_srv = NULL;
    metrics_auth_free(c->metrics_auth);
    kube_client_free(c->auth_client);
    tls_source_free(c->metrics_tls);
    c->metrics_auth = NULL;
    c->auth_client = NULL;
    c->metrics_tls = NULL;
    kube_set_request_observer(NULL, NULL);
}
