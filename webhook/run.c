/*
 * run.c - gputri-webhook's start and stop (see run.h): what the flags name is loaded, the caches
 * and the Event recorder started, and the HTTPS server's routes answered here.
 */
#include "run.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission.h"
#include "cache.h"
#include "client_ca.h"
#include "event_verify.h"
#include "events.h"
#include "http/tls_source.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/rate_limit_metrics.h"
#include "model/gpu.h"
#include "selfcert.h"
#include "server.h"
#include "util/log.h"
#include "util/process_metrics.h"
#include "util/result.h"
#include "util/version.h"

#define EVENT_QUEUE_CAPACITY 512
/* A review without ?timeout=: the API server's default for admissionregistration.k8s.io/v1
 * (timeoutSeconds 10). */
#define WH_DEFAULT_REVIEW_TIMEOUT_MS 10000
#define EVENT_REPEAT_WINDOW_MS (10 * 60 * 1000)

struct app {
    struct wh_cache *cache;
    struct event_recorder *events;
    struct selfcert *selfcert; /* --cert-secret; NULL: certificate files */
    const char *host;          /* reportingInstance; NULL: none */
    bool check_client;         /* --client-ca-file given: client certificates are asked for */
    enum wh_event_verification event_mode; /* --event-verification */
    struct wh_verify *verify;              /* reviews looked up before their Events; NULL: off */
    /* AdmissionReviews answered, by client certificate: verified, unverified (none, or one
     * that does not verify: Events only after a lookup), unchecked (no --client-ca-file) */
    atomic_ullong reviews_verified, reviews_unverified, reviews_unchecked;
    atomic_ullong reviews_shed; /* answered without matching devices: waited too long (server.h) */
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
    if (app->selfcert && !selfcert_ready(app->selfcert)) {
        /* the API server would refuse the certificate served: not ready for reviews */
        resp->status = 503;
        resp->body = dup_body("certificate not yet trusted by the caBundle\n", &resp->body_len);
    } else if (wh_cache_synced(app->cache)) {
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
            "--client-ca-file; its Events need a lookup, --event-verification; unchecked: no "
            "--client-ca-file).\n"
            "# TYPE gputri_webhook_admission_reviews_total counter\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"verified\"} %llu\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"unverified\"} %llu\n"
            "gputri_webhook_admission_reviews_total{client_certificate=\"unchecked\"} %llu\n",
            atomic_load(&app->reviews_verified), atomic_load(&app->reviews_unverified),
            atomic_load(&app->reviews_unchecked));
    fprintf(f,
            "# HELP gputri_webhook_reviews_shed_total AdmissionReviews answered without matching "
            "claims' devices against the nodes: they waited over 1 s for a worker (the warning "
            "says so).\n"
            "# TYPE gputri_webhook_reviews_shed_total counter\n"
            "gputri_webhook_reviews_shed_total %llu\n",
            atomic_load(&app->reviews_shed));
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
    struct wh_verify_stats vs = {0};
    if (app->verify)
        wh_verify_stats(app->verify, &vs);
    fprintf(f,
            "# HELP gputri_webhook_event_verifications_queued_total Reviews whose Events wait "
            "until the object is read back with the review's uid (--event-verification).\n"
            "# TYPE gputri_webhook_event_verifications_queued_total counter\n"
            "gputri_webhook_event_verifications_queued_total %llu\n"
            "# HELP gputri_webhook_event_verifications_total Those reviews by result: verified "
            "(found with the review's identity: Events posted for the warnings of the object as "
            "stored), unwarned (found with the review's identity, the object as stored draws no "
            "warning: no Event), absent (not created within the "
            "give-up time: refused after this webhook, or forged), mismatch (found with another "
            "uid or creation time, too old, or verified before), failed (the lookups failed), "
            "dropped (the oldest at a full queue, or waiting at stop).\n"
            "# TYPE gputri_webhook_event_verifications_total counter\n"
            "gputri_webhook_event_verifications_total{result=\"verified\"} %llu\n"
            "gputri_webhook_event_verifications_total{result=\"unwarned\"} %llu\n"
            "gputri_webhook_event_verifications_total{result=\"absent\"} %llu\n"
            "gputri_webhook_event_verifications_total{result=\"mismatch\"} %llu\n"
            "gputri_webhook_event_verifications_total{result=\"failed\"} %llu\n"
            "gputri_webhook_event_verifications_total{result=\"dropped\"} %llu\n"
            "# HELP gputri_webhook_event_verifications_pending Reviews waiting for their lookup.\n"
            "# TYPE gputri_webhook_event_verifications_pending gauge\n"
            "gputri_webhook_event_verifications_pending %zu\n",
            (unsigned long long)vs.queued, (unsigned long long)vs.verified,
            (unsigned long long)vs.unwarned, (unsigned long long)vs.absent,
            (unsigned long long)vs.mismatch, (unsigned long long)vs.failed,
            (unsigned long long)vs.dropped, vs.pending);
    /* the client-side rate limit's waits; process_* (CPU, memory, descriptors, start time), as
     * client libraries export them */
    struct buf proc;
    buf_init(&proc, 16384);
    if (kube_rate_limit_metrics_append(&proc) == K_OK && process_metrics_append(&proc) == K_OK)
        fputs(buf_cstr(&proc), f);
    buf_cleanup(&proc);
    selfcert_metrics(app->selfcert, f);
    if (fclose(f) != 0 || !b) {
        free(b);
        http_json_error(resp, 500, "out of memory");
        return;
    }
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp->body = b;
    resp->body_len = n;
}

/* POST /validate; busy: answered shed (server.h), without matching devices. */
static void validate(struct app *app, const struct http_request *req, struct http_response *resp,
                     bool busy)
{
    /* on the stack (about 3 KiB): an allocation that size per request made glibc consolidate
     * its fast bins every time */
    struct admission_result result, *r = &result;
    struct wh_snapshot snap;
    wh_cache_read(app->cache, &snap);
    snap.dra_busy = busy;
    /* the selectors stop at half the API server's timeout, counted from the body's arrival:
     * the other half is for the wait in the lane, the answer and the network */
    int64_t timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : WH_DEFAULT_REVIEW_TIMEOUT_MS;
    snap.cel_deadline_ns = (req->received_ms + timeout_ms / 2) * 1000000;
    int rc = admission_handle(req->body, req->body_len, &snap, r);
    wh_cache_release(app->cache);
    if (rc == K_EPARSE) {
        log_warn_kv("POST /validate: bad request", LOG_STR("err", r->error));
        http_json_error(resp, 400, r->error);
    } else if (rc != K_OK) {
        log_error_kv("POST /validate failed", LOG_STR("err", k_strerror(rc)));
        http_json_error(resp, 500, k_strerror(rc));
    } else {
        if (!app->check_client)
            atomic_fetch_add(&app->reviews_unchecked, 1);
        else if (req->client_verified)
            atomic_fetch_add(&app->reviews_verified, 1);
        else
            atomic_fetch_add(&app->reviews_unverified, 1);
        /* The object an Event names comes from the request body: only the API server, proven
         * by its client certificate, or a CREATE whose object is then read back with the
         * review's uid, may make the webhook write (events.h, event_verify.h). */
        enum wh_event_path path =
            wh_events_path(app->event_mode, app->check_client, req->client_verified, r);
        if (path == WH_EVENT_LOOKUP && (!app->verify || !wh_verify_queue(app->verify, r)))
            path = WH_EVENT_NONE;
        log_info_kv(1, "review answered", LOG_STR("operation", r->operation),
                    LOG_STR("kind", r->kind), LOG_STR("namespace", r->ns), LOG_STR("name", r->name),
                    LOG_INT("warnings", r->warnings.n), LOG_BOOL("dryRun", r->dry_run),
                    LOG_BOOL("verifiedClient", req->client_verified),
                    LOG_STR("events", path == WH_EVENT_DIRECT   ? "now"
                                      : path == WH_EVENT_LOOKUP ? "once the object is found"
                                                                : "none"));
        for (size_t i = 0; i < r->warnings.n; i++)
            log_info_kv(2, "warning", LOG_STR("kind", r->kind), LOG_STR("namespace", r->ns),
                        LOG_STR("name", r->name), LOG_STR("text", r->warnings.items[i].text));
        if (path == WH_EVENT_DIRECT)
            wh_events_post(app->events, r, true, app->host);
        resp->content_type = "application/json";
        resp->body = r->response;
        resp->body_len = r->response_len;
        r->response = NULL;
    }
    admission_result_cleanup(r);
}

static void handle_validate(void *ctx, const struct http_request *req, struct http_response *resp)
{
    validate(ctx, req, resp, false);
}

static void handle_validate_busy(void *ctx, const struct http_request *req,
                                 struct http_response *resp)
{
    struct app *app = ctx;
    atomic_fetch_add(&app->reviews_shed, 1);
    validate(app, req, resp, true);
}

/*
 * The lane of a review (server.h): by its bytes, before any parse. The API server encodes
 * objects as Go's encoding/json does, which escapes no letter, so a review that may name a
 * claim holds "resourceClaims" (a Pod or a workload's pod template) or "ResourceClaim" (the
 * kinds ResourceClaim and ResourceClaimTemplate). A review that merely mentions them goes to
 * the DRA lane too, which costs it only its place in that queue; a client whose certificate did
 * not verify has a lane of its own whatever it sends.
 */
static unsigned validate_lane(void *ctx, const struct http_request *req)
{
    const struct app *app = ctx;
    if (app->check_client && !req->client_verified)
        return SERVER_LANE_UNVERIFIED;
    if (memmem(req->body, req->body_len, "resourceClaims", 14) ||
        memmem(req->body, req->body_len, "ResourceClaim", 13))
        return SERVER_LANE_DRA;
    return SERVER_LANE_REVIEWS;
}

struct wh_run {
    struct app app;
    struct gpu_set gpus, dra_gpus;
    struct tls_source *tls;
    struct client_ca *client_ca;
    struct kube_config cfg;
    struct kube_client *event_client;
    struct kube_client *verify_client; /* the verifier's thread's */
    struct http_route routes[4];
    struct server *srv;
    char host[128];
};

/* The verifier's snapshot (event_verify.h): the cache's, as a review's. */
static void verify_read(void *ctx, struct wh_snapshot *snap)
{
    wh_cache_read(ctx, snap);
}

static void verify_release(void *ctx)
{
    wh_cache_release(ctx);
}

int wh_run_start(const struct wh_options *o, struct wh_run **out)
{
    char err[512];
    *out = NULL;
    struct wh_run *r = calloc(1, sizeof(*r));
    if (!r) {
        log_error_kv("start-up failed: out of memory");
        return 1;
    }
    if (gpu_set_parse(&r->gpus, o->gpu_resources) != K_OK) {
        fprintf(stderr, "gputri-webhook: invalid --gpu-resources \"%s\"\n", o->gpu_resources);
        wh_run_stop(r, 0);
        return 2;
    }
    /* --gpu-device-classes "": no DRA checks and no DRA informers */
    bool dra = o->dra_gpu_classes && *o->dra_gpu_classes;
    if (dra && gpu_set_parse(&r->dra_gpus, o->dra_gpu_classes) != K_OK) {
        fprintf(stderr, "gputri-webhook: invalid --gpu-device-classes \"%s\"\n",
                o->dra_gpu_classes);
        wh_run_stop(r, 0);
        return 2;
    }
    if (o->cert_secret_ns[0]) {
        /* a throw-away pair until the Secret's is known (not ready until then) */
        char name[320];
        snprintf(name, sizeof(name), "%s.%s.svc", o->cert_service, o->cert_secret_ns);
        const char *names[] = {name};
        if (tls_source_new_self_signed(name, names, 1, &r->tls, err, sizeof(err)) != K_OK) {
            log_error_kv("cannot make the start-up certificate", LOG_STR("err", err));
            wh_run_stop(r, 0);
            return 1;
        }
    } else if (tls_source_new(o->tls_cert_file, o->tls_key_file, &r->tls, err, sizeof(err)) !=
               K_OK) {
        log_error_kv("cannot load the serving certificate", LOG_STR("err", err));
        wh_run_stop(r, 0);
        return 1;
    }
    if (o->client_ca_file &&
        client_ca_new(o->client_ca_file, &r->client_ca, err, sizeof(err)) != K_OK) {
        log_error_kv("cannot load --client-ca-file", LOG_STR("err", err));
        wh_run_stop(r, 0);
        return 1;
    }
    if (o->event_verification == WH_EVENT_VERIFY_OFF)
        log_info_kv(0, "no Events (--event-verification=off)");
    else if (!r->client_ca)
        log_info_kv(
            0,
            "no --client-ca-file: Events only for a CREATE whose object is then read "
            "back with the review's uid",
            LOG_STR("eventVerification", wh_event_verification_name(o->event_verification)));
    if (kube_config_load(o->kubeconfig, &r->cfg, err, sizeof(err)) != K_OK) {
        log_error_kv("cannot load the kubeconfig", LOG_STR("err", err));
        r->cfg = (struct kube_config){0}; /* the load freed what it had */
        wh_run_stop(r, 0);
        return 1;
    }
    struct app *app = &r->app;
    if (o->cert_secret_ns[0]) {
        struct kube_client *cc = kube_client_new(&r->cfg, "gputri-webhook/" GPUTRI_VERSION);
        struct selfcert_options so = {
            .secret_namespace = o->cert_secret_ns,
            .secret_name = o->cert_secret_name,
            .webhook_configuration = o->webhook_configuration,
            .service = o->cert_service,
            .ca_validity_s = o->ca_validity_s,
            .cert_validity_s = o->cert_validity_s,
        };
        int rc = cc ? selfcert_new(&so, cc, r->tls, &app->selfcert, err, sizeof(err)) : K_ENOMEM;
        if (rc == K_OK)
            rc = selfcert_start(app->selfcert);
        if (rc != K_OK) {
            log_error_kv("cannot manage the certificates",
                         LOG_STR("err", rc == K_EINVAL ? err : "out of memory"));
            wh_run_stop(r, 0);
            return rc == K_EINVAL ? 2 : 1;
        }
    }
    gethostname(r->host, sizeof(r->host) - 1);
    app->check_client = r->client_ca != NULL;
    app->event_mode = o->event_verification;
    app->host = r->host[0] ? r->host : NULL;
    r->event_client = kube_client_new(&r->cfg, "gputri-webhook/" GPUTRI_VERSION);
    app->cache =
        wh_cache_new(&r->cfg, &r->gpus, dra ? &r->dra_gpus : NULL, o->assume_ert,
                     &(struct wh_cache_autoscaler){.mode = o->autoscaler,
                                                   .discovery_ms = o->autoscaler_discovery_ms});
    if (o->autoscaler != WH_AUTOSCALER_MODE_AUTO) {
        const char *as = wh_autoscaler_name(wh_autoscaler_mode_bits(o->autoscaler));
        log_info_kv(0, "node autoscaler set by --autoscaler",
                    LOG_STR("autoscaler", as ? as : "none"));
    }
    /* a warning repeats on every re-apply and every UPDATE of the object: the same one within
     * 10 minutes is written once */
    app->events = event_recorder_new(&(struct event_recorder_options){
        .repeat_window_ms = EVENT_REPEAT_WINDOW_MS,
        .limit = &o->events,
        .queue_capacity = EVENT_QUEUE_CAPACITY,
    });
    bool lookup = o->event_verification == WH_EVENT_VERIFY_AUTO ||
                  o->event_verification == WH_EVENT_VERIFY_LOOKUP;
    if (lookup && app->events && r->event_client) {
        app->verify = wh_verify_new(&(struct wh_verify_options){.instance = app->host,
                                                                .snapshot_read = verify_read,
                                                                .snapshot_release = verify_release,
                                                                .snapshot_ctx = app->cache},
                                    app->events);
        r->verify_client = kube_client_clone(r->event_client);
    }
    if (!r->event_client || !app->cache || !app->events || wh_cache_start(app->cache) != K_OK ||
        event_recorder_start(app->events, r->event_client) != K_OK ||
        (lookup && (!app->verify || !r->verify_client ||
                    wh_verify_start(app->verify, r->verify_client) != K_OK))) {
        log_error_kv("start-up failed: out of memory");
        wh_run_stop(r, 0);
        return 1;
    }
    r->routes[0] = (struct http_route){
        "POST",        "/validate",         handle_validate, app, "application/json",
        validate_lane, handle_validate_busy};
    r->routes[1] = (struct http_route){"GET", "/healthz", handle_healthz, app, NULL, NULL, NULL};
    r->routes[2] = (struct http_route){"GET", "/readyz", handle_readyz, app, NULL, NULL, NULL};
    r->routes[3] = (struct http_route){"GET", "/metrics", handle_metrics, app, NULL, NULL, NULL};
    struct server_options so = {
        .bind_address = o->bind_address,
        .port = o->port,
        .threads = o->threads,
        .max_connections = o->max_connections,
        .connection_timeout = o->connection_timeout,
        .max_body = o->max_body,
        .request_timeout_ms = 10000,
        .header_timeout_ms = 10000,
        .tls = r->tls,
        .client_ca = r->client_ca,
        .routes = r->routes,
        .n_routes = sizeof(r->routes) / sizeof(r->routes[0]),
    };
    if (server_start(&so, &r->srv, err, sizeof(err)) != K_OK) {
        log_error_kv("cannot serve", LOG_STR("err", err));
        wh_run_stop(r, 0);
        return 1;
    }
    log_info_kv(0, "gputri-webhook serving", LOG_STR("version", GPUTRI_VERSION),
                LOG_STR("address", o->bind_address[0] ? o->bind_address : "[::] (IPv6 and IPv4)"),
                LOG_INT("port", server_port(r->srv)),
                LOG_STR("kubeconfig", r->cfg.source ? r->cfg.source : "?"),
                LOG_STR("clientCA", o->client_ca_file ? o->client_ca_file : "not checked"),
                LOG_STR("servingCertificate", o->cert_secret_ns[0] ? "secret" : o->tls_cert_file),
                LOG_STR("certSecret", o->cert_secret_ns[0] ? o->cert_secret_ns : ""),
                LOG_STR("certSecretName", o->cert_secret_ns[0] ? o->cert_secret_name : ""));
    *out = r;
    return 0;
}

int wh_run_port(const struct wh_run *r)
{
    return server_port(r->srv);
}

void wh_run_stop(struct wh_run *r, int drain_ms)
{
    if (!r)
        return;
    server_stop(r->srv, drain_ms);
    struct app *app = &r->app;
    if (app->verify) {
        /* what waits for a lookup is dropped; what was verified is in the recorder's queue */
        struct wh_verify_stats vs;
        wh_verify_stop(app->verify);
        wh_verify_stats(app->verify, &vs);
        log_info_kv(1, "event verification stopped", LOG_INT("verified", vs.verified),
                    LOG_INT("unwarned", vs.unwarned), LOG_INT("absent", vs.absent),
                    LOG_INT("mismatch", vs.mismatch), LOG_INT("failed", vs.failed),
                    LOG_INT("dropped", vs.dropped));
    }
    selfcert_free(app->selfcert); /* before the TLS source it feeds */
    app->selfcert = NULL;
    if (app->events) {
        struct event_recorder_stats st;
        event_recorder_stop(app->events, WH_RUN_EVENT_DRAIN_MS);
        event_recorder_stats(app->events, &st);
        log_info_kv(1, "events", LOG_INT("sent", st.created + st.updated),
                    LOG_INT("dropped", st.dropped), LOG_INT("overRateLimit", st.throttled));
    }
    wh_verify_free(app->verify);
    kube_client_free(r->verify_client);
    event_recorder_free(app->events);
    wh_cache_free(app->cache);
    kube_client_free(r->event_client);
    kube_config_cleanup(&r->cfg);
    tls_source_free(r->tls);
    client_ca_free(r->client_ca);
    gpu_set_cleanup(&r->gpus);
    gpu_set_cleanup(&r->dra_gpus);
    free(r);
}
