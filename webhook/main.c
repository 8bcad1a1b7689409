/* main.c - gputri-webhook: flags, signals, and wiring of caches, admission, events and HTTPS. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission.h"
#include "cache.h"
#include "client_ca.h"
#include "events.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/exec.h"
#include "model/gpu.h"
#include "options.h"
#include "server.h"
#include "http/tls_source.h"
#include "util/log.h"
#include "util/result.h"
#include "util/flags.h"
#include "util/version.h"

#define EVENT_QUEUE_CAPACITY 512
#define DRAIN_MS 5000
#define EVENT_DRAIN_MS 2000
#define EVENT_REPEAT_WINDOW_MS (10 * 60 * 1000)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct app {
    struct wh_cache *cache;
    struct event_recorder *events;
    const char *host;  /* reportingInstance; NULL: none */
    bool check_client; /* --client-ca-file given: Events only for a verified client */
    /* AdmissionReviews answered, by client certificate: verified, unverified (none, or one
     * that does not verify: no Event), unchecked (no --client-ca-file) */
    atomic_ullong reviews_verified, reviews_unverified, reviews_unchecked;
};

static char *dup_body(const char *s, size_t *len)
{
    *len = strlen(s);
    char *b = malloc(*len + 1);
    if (b)
        memcpy(b, s, *len + 1);
    return b;
}

static void handle_healthz(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)ctx;
    (void)req;
    resp->body = dup_body("ok\n", &resp->body_len);
}

static void handle_readyz(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)req;
    struct app *app = ctx;
    if (wh_cache_synced(app->cache)) {
        resp->body = dup_body("ok\n", &resp->body_len);
    } else {
        resp->status = 503;
        resp->body = dup_body("caches not synced\n", &resp->body_len);
    }
}

/* Prometheus text format 0.0.4 of the webhook's counters. */
static void handle_metrics(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)req;
    struct app *app = ctx;
    char *b = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&b, &n);
    if (!f) {
        http_json_error(resp, 500, "out of memory");
        return;
    }
    fprintf(f,
            "# HELP gputri_webhook_admission_reviews_total AdmissionReviews answered, by the "
            "caller's TLS client certificate (unverified: none or not issued by "
            "--client-ca-file; such a review causes no Event; unchecked: no --client-ca-file).\n"
            "# TYPE gputri_webhook_admission_reviews_total counter\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"verified\"} %llu\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"unverified\"} %llu\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"unchecked\"} %llu\n",
            atomic_load(&app->reviews_verified), atomic_load(&app->reviews_unverified),
            atomic_load(&app->reviews_unchecked));
    struct event_recorder_stats st;
    event_recorder_stats(app->events, &st);
    fprintf(f,
            "# HELP gputri_webhook_events_total Warning Events of admission warnings, by what "
            "became of them (throttled: refused by the per-namespace or global rate limit).\n"
            "# TYPE gputri_webhook_events_total counter\n"
            "gputri_webhook_events_total{result=\"sent\"} %llu\n"
            "gputri_webhook_events_total{result=\"dropped\"} %llu\n"
            "gputri_webhook_events_total{result=\"throttled\"} %llu\n",
            (unsigned long long)(st.created + st.updated), (unsigned long long)st.dropped,
            (unsigned long long)st.throttled);
    if (fclose(f) != 0 || !b) {
        free(b);
        http_json_error(resp, 500, "out of memory");
        return;
    }
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp->body = b;
    resp->body_len = n;
}

static void handle_validate(void *ctx, const struct http_request *req, struct http_response *resp)
{
    struct app *app = ctx;
    /* Only the API server, proven by its client certificate, may make the webhook write: the
     * object an Event names comes from the request body. */
    bool may_record = !app->check_client || req->client_verified;
    /* on the stack (about 3 KiB): an allocation that size per request made glibc consolidate
     * its fast bins every time */
    struct admission_result result, *r = &result;
    struct wh_snapshot snap;
    wh_cache_read(app->cache, &snap);
    int rc = admission_handle(req->body, req->body_len, &snap, r);
    wh_cache_release(app->cache);
    if (rc == K_EPARSE) {
        log_warn("POST /validate: bad request: %s", r->error);
        http_json_error(resp, 400, r->error);
    } else if (rc != K_OK) {
        log_error("POST /validate: %s", k_strerror(rc));
        http_json_error(resp, 500, k_strerror(rc));
    } else {
        if (!app->check_client)
            atomic_fetch_add(&app->reviews_unchecked, 1);
        else if (req->client_verified)
            atomic_fetch_add(&app->reviews_verified, 1);
        else
            atomic_fetch_add(&app->reviews_unverified, 1);
        log_info(1, "%s %s %s/%s: %zu warning(s)%s%s", r->operation, r->kind, r->ns, r->name,
                 r->warnings.n, r->dry_run ? " (dry run)" : "",
                 may_record ? "" : " (no verified client certificate: no Events)");
        for (size_t i = 0; i < r->warnings.n; i++)
            log_info(2, "warning: %s", r->warnings.items[i].text);
        wh_events_post(app->events, r, may_record, app->host);
        resp->content_type = "application/json";
        resp->body = r->response;
        resp->body_len = r->response_len;
        r->response = NULL;
    }
    admission_result_cleanup(r);
}

int main(int argc, char **argv)
{
    struct wh_options o;
    char err[512];
    if (wh_options_parse(argc, argv, &o, err, sizeof(err)) != K_OK) {
        fprintf(stderr, "gputri-webhook: %s\n", err);
        wh_options_usage(stderr);
        return 2;
    }
    if (flags_answer(&(struct flags_common){.help = o.help, .version = o.version}, "gputri-webhook",
                     wh_options_usage))
        return 0;
    log_set_verbosity(o.verbosity);
    log_set_format(o.log_format);
    /* Blocks of 128 KiB and more (request bodies, large JSON strings and arrays) are mmapped
     * and go back to the system when freed. Setting the threshold turns off glibc's dynamic
     * raise of it, which after the first 3 MiB body would keep later ones in the arenas. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);

    struct gpu_set gpus = {0};
    if (gpu_set_parse(&gpus, o.gpu_resources) != K_OK) {
        fprintf(stderr, "gputri-webhook: invalid --gpu-resources \"%s\"\n", o.gpu_resources);
        return 2;
    }
    /* --gpu-device-classes "": no DRA checks and no DRA informers */
    struct gpu_set dra_gpus = {0};
    bool dra = o.dra_gpu_classes && *o.dra_gpu_classes;
    if (dra && gpu_set_parse(&dra_gpus, o.dra_gpu_classes) != K_OK) {
        fprintf(stderr, "gputri-webhook: invalid --gpu-device-classes \"%s\"\n", o.dra_gpu_classes);
        gpu_set_cleanup(&gpus);
        return 2;
    }
    struct tls_source *tls = NULL;
    if (tls_source_new(o.tls_cert_file, o.tls_key_file, &tls, err, sizeof(err)) != K_OK) {
        log_error("loading the serving certificate: %s", err);
        gpu_set_cleanup(&gpus);
        gpu_set_cleanup(&dra_gpus);
        return 1;
    }
    struct client_ca *client_ca = NULL;
    if (o.client_ca_file && client_ca_new(o.client_ca_file, &client_ca, err, sizeof(err)) != K_OK) {
        log_error("loading --client-ca-file: %s", err);
        tls_source_free(tls);
        gpu_set_cleanup(&gpus);
        gpu_set_cleanup(&dra_gpus);
        return 1;
    }
    if (!client_ca)
        log_warn("no --client-ca-file: any caller reaching the port can make this webhook record "
                 "Events; give the API server a client certificate (README, Deploy on a cluster)");
    struct kube_config cfg = {0};
    kube_exec_set_daemon(); /* an exec plugin never prompts a daemon */
    if (kube_config_load(o.kubeconfig, &cfg, err, sizeof(err)) != K_OK) {
        log_error("kubeconfig: %s", err);
        client_ca_free(client_ca);
        tls_source_free(tls);
        gpu_set_cleanup(&gpus);
        gpu_set_cleanup(&dra_gpus);
        return 1;
    }

    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* block them in every thread; the main thread waits for them in sigsuspend() */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);

    int status = 1;
    char host[128] = "";
    gethostname(host, sizeof(host) - 1);
    struct app app = {.check_client = client_ca != NULL};
    struct kube_client *event_client = kube_client_new(&cfg, "gputri-webhook/" GPUTRI_VERSION);
    app.cache = wh_cache_new(&cfg, &gpus, dra ? &dra_gpus : NULL, o.assume_ert);
    app.host = host[0] ? host : NULL;
    /* a warning repeats on every re-apply and every UPDATE of the object: the same one within
     * 10 minutes is written once */
    app.events = event_recorder_new(&(struct event_recorder_options){
        .repeat_window_ms = EVENT_REPEAT_WINDOW_MS,
        .limit = &o.events,
        .queue_capacity = EVENT_QUEUE_CAPACITY,
    });
    struct server *srv = NULL;
    if (!event_client || !app.cache || !app.events || wh_cache_start(app.cache) != K_OK ||
        event_recorder_start(app.events, event_client) != K_OK) {
        log_error("start-up failed: out of memory");
        goto out;
    }
    const struct http_route routes[] = {
        {"POST", "/validate", handle_validate, &app, "application/json"},
        {"GET", "/healthz", handle_healthz, &app, NULL},
        {"GET", "/readyz", handle_readyz, &app, NULL},
        {"GET", "/metrics", handle_metrics, &app, NULL},
    };
    struct server_options so = {
        .bind_address = o.bind_address,
        .port = o.port,
        .threads = o.threads,
        .max_connections = o.max_connections,
        .connection_timeout = o.connection_timeout,
        .max_body = o.max_body,
        .request_timeout_ms = 10000,
        .header_timeout_ms = 10000,
        .tls = tls,
        .client_ca = client_ca,
        .routes = routes,
        .n_routes = sizeof(routes) / sizeof(routes[0]),
    };
    if (server_start(&so, &srv, err, sizeof(err)) != K_OK) {
        log_error("%s", err);
        goto out;
    }
    log_info(0, "gputri-webhook %s serving https://%s:%d (kubeconfig %s, client certificates %s)",
             GPUTRI_VERSION, o.bind_address, server_port(srv), cfg.source ? cfg.source : "?",
             o.client_ca_file ? o.client_ca_file : "not checked");
    while (!stop)
        sigsuspend(&old);
    log_info(0, "shutting down: draining requests");
    server_stop(srv, DRAIN_MS);
    srv = NULL;
    status = 0;
out:
    server_stop(srv, 0);
    if (app.events) {
        struct event_recorder_stats st;
        event_recorder_stop(app.events, EVENT_DRAIN_MS);
        event_recorder_stats(app.events, &st);
        log_info(1, "events: %llu sent, %llu dropped, %llu over the rate limit",
                 (unsigned long long)(st.created + st.updated), (unsigned long long)st.dropped,
                 (unsigned long long)st.throttled);
    }
    event_recorder_free(app.events);
    wh_cache_free(app.cache);
    kube_client_free(event_client);
    kube_config_cleanup(&cfg);
    tls_source_free(tls);
    client_ca_free(client_ca);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra_gpus);
    return status;
}
