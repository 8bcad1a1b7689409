/*
 * client.c - Kubernetes API requests over one reused libcurl easy handle (see client.h).
 *
 * Every request resets the handle and sets all options again, so nothing from a previous request
 * (a body, a custom method, a timeout) leaks into the next; curl_easy_reset() keeps the live
 * connections, so keep-alive and TLS session reuse still work.
 */
#include "kube/client.h"
#include "kube/exec.h"
#include "kube/json.h"
#include "kube/list_parser.h"
#include "kube/proto.h"
#include "kube/read_budget.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>

#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/result.h"
#include "util/token_bucket.h"

#define CONNECT_TIMEOUT_S 10L
#define REQUEST_TIMEOUT_S 60L
/* A watch without timeoutSeconds lasts up to twice the server's --min-request-timeout (1800s). */
#define WATCH_DEFAULT_S 3600L
/* A watch silent for this much longer than its server-side timeout is considered dead. */
#define WATCH_IDLE_MARGIN_S 60L
#define URL_MAX (64u << 10)
#define TOKEN_FILE_MAX (64u << 10)
#define RETRY_AFTER_MAX 3600

struct kube_client {
    const struct kube_config *cfg;
    CURL *curl;
    char *user_agent;
    const atomic_int *cancel;
    char *token;        /* last token read from cfg->token_file, or NULL */
    bool token_refused; /* the file's token has a control character (logged once) */
    const struct kube_transport *transport; /* instead of curl, for tests; NULL for HTTP */
    struct kube_exec_cred exec_cred;        /* this request's exec credential, when exec_used */
    uint64_t exec_gen;
    bool exec_used;
    bool http1;         /* HTTP/1.1 instead of HTTP/2 (kube_client_set_http1) */
    bool list_deadline; /* a LIST as a whole within the request timeout */
    bool unlimited;     /* not under the process's rate limit (kube_client_set_rate_limited) */
    char errbuf[CURL_ERROR_SIZE];
};

/* State shared with the curl callbacks for one request. */
struct request {
    struct kube_client *c;
    struct buf body;                  /* response body; for a watch only a failed response's */
    struct kube_watch_parser *parser; /* set for watches */
    struct kube_list_parser *list;    /* set for LISTs */
    unsigned long long list_bytes;    /* bytes of a LIST response fed so far */
    int write_rc;                     /* K_* when the write callback stopped the transfer */
    int canceled;                     /* the cancel flag stopped the transfer */
    int retry_after;
    const char *accept; /* the Accept header's value; NULL: application/json */
    bool discard;       /* nobody reads a 2xx body: dropped as it arrives */
    long timeout_ms;    /* > 0: this request's total time instead of the configured one */
};

/* Watch state: the caller's handler plus what an ERROR event said. */
struct watch_state {
    kube_watch_fn fn;
    void *ctx;
    int error_event; /* an ERROR event arrived */
    int error_code;
    int handler_stop;
    char message[sizeof(((struct kube_error *)0)->message)];
};

static _Atomic(kube_request_observer_fn) observer_fn;
static _Atomic(void *) observer_ctx;

void kube_set_request_observer(kube_request_observer_fn fn, void *ctx)
{
    atomic_store(&observer_ctx, ctx);
    atomic_store(&observer_fn, fn);
}

static void err_set(struct kube_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void err_set(struct kube_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
}

static bool contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return false;
}

enum kube_tls_failure kube_tls_failure_of(int curl_code, const char *curl_message)
{
    static const char *const verify[] = {"certificate verify failed", "self-signed", "self signed",
                                         "unable to get local issuer"};
    static const char *const client[] = {"alert bad certificate", "alert certificate required",
                                         "alert unknown ca", "alert certificate unknown"};
    static const char *const name[] = {"subject name", "does not match target host name"};
    switch (curl_code) {
    case CURLE_PEER_FAILED_VERIFICATION:
        for (size_t i = 0; i < sizeof(name) / sizeof(name[0]); i++)
            if (contains_ci(curl_message, name[i]))
                return KUBE_TLS_SERVER_NAME;
        return KUBE_TLS_SERVER_UNTRUSTED;
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return KUBE_TLS_SERVER_UNTRUSTED;
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
        return KUBE_TLS_CA_UNUSABLE;
    case CURLE_SSL_CERTPROBLEM:
        return KUBE_TLS_CLIENT_CERT;
    case CURLE_SSL_CONNECT_ERROR:
        for (size_t i = 0; i < sizeof(client) / sizeof(client[0]); i++)
            if (contains_ci(curl_message, client[i]))
                return KUBE_TLS_CLIENT_CERT;
        for (size_t i = 0; i < sizeof(verify) / sizeof(verify[0]); i++)
            if (contains_ci(curl_message, verify[i]))
                return KUBE_TLS_SERVER_UNTRUSTED;
        return KUBE_TLS_NONE;
    default:
        return KUBE_TLS_NONE;
    }
}

const char *kube_tls_failure_text(int kind)
{
    switch (kind) {
    case KUBE_TLS_SERVER_UNTRUSTED:
        return "TLS: the API server's certificate is not trusted by the CA in use "
               "(certificate-authority, from the kubeconfig or the flag)";
    case KUBE_TLS_CA_UNUSABLE:
        return "TLS: the CA certificate in use (certificate-authority) cannot be used";
    case KUBE_TLS_CLIENT_CERT:
        return "TLS: the client certificate/key in use (client-certificate, client-key) cannot be "
               "used";
    case KUBE_TLS_SERVER_NAME:
        return "TLS: the API server's certificate is not valid for the server name (the URL's "
               "host, or tls-server-name)";
    default:
        return "";
    }
}

struct kube_client *kube_client_new(const struct kube_config *cfg, const char *user_agent)
{
    struct kube_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = cfg;
    c->user_agent = strdup(user_agent && *user_agent ? user_agent : "gputri");
    c->curl = curl_easy_init();
    if (!c->user_agent || !c->curl) {
        kube_client_free(c);
        return NULL;
    }
    return c;
}

struct kube_client *kube_client_new_transport(const struct kube_config *cfg,
                                              const struct kube_transport *t,
                                              const char *user_agent)
{
    struct kube_client *c = kube_client_new(cfg, user_agent);
    if (c)
        c->transport = t;
    return c;
}

struct kube_client *kube_client_clone(const struct kube_client *c)
{
    struct kube_client *n = kube_client_new(c->cfg, c->user_agent);
    if (n) {
        n->transport = c->transport;
        n->http1 = c->http1;
        n->list_deadline = c->list_deadline;
        n->unlimited = c->unlimited;
    }
    return n;
}

void kube_client_set_rate_limited(struct kube_client *c, bool on)
{
    c->unlimited = !on;
}

void kube_client_set_http1(struct kube_client *c, bool on)
{
    c->http1 = on;
}

void kube_client_set_list_deadline(struct kube_client *c, bool on)
{
    c->list_deadline = on;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    kube_exec_cred_cleanup(&c->exec_cred);
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->user_agent);
    if (c->token) {
        OPENSSL_cleanse(c->token, strlen(c->token));
        free(c->token);
    }
    free(c);
}

void kube_client_set_cancel(struct kube_client *c, const atomic_int *cancel)
{
    c->cancel = cancel;
}

static int canceled(const struct kube_client *c)
{
    return c->cancel && atomic_load(c->cancel);
}

/* ---- client-side rate limit (kube_set_rate_limit) ---- */

static struct token_bucket limiter_bucket;
static _Atomic(struct token_bucket *) limiter; /* NULL: no limit */
static atomic_ullong throttled_requests, throttled_ns;

int kube_set_rate_limit(double qps, int burst, const struct clock *clock)
{
    struct token_bucket *old = atomic_exchange(&limiter, NULL);
    if (old)
        token_bucket_destroy(old);
    if (qps < 0)
        return K_OK;
    int rc = token_bucket_init(&limiter_bucket, qps, burst, clock);
    if (rc == K_OK)
        atomic_store(&limiter, &limiter_bucket);
    return rc;
}

void kube_rate_limit_stats(uint64_t *requests, uint64_t *waited_ns)
{
    *requests = atomic_load(&throttled_requests);
    *waited_ns = atomic_load(&throttled_ns);
}

/*
 * Waits for the process's rate limiter before a request, as client-go's Request.tryThrottle
 * (kubernetes/client-go: rest/request.go): a wait over 50 ms is logged at --v=3, over 1 s at
 * --v=1. K_ECANCELED when the cancel flag is set while waiting.
 */
static int throttle(struct kube_client *c, const char *method, const char *path,
                    struct kube_error *err)
{
    struct token_bucket *b = atomic_load(&limiter);
    if (!b || c->unlimited)
        return K_OK;
    int64_t wait = token_bucket_reserve(b);
    if (wait <= 0)
        return K_OK;
    atomic_fetch_add(&throttled_requests, 1);
    atomic_fetch_add(&throttled_ns, (unsigned long long)wait);
    int64_t end = clock_mono_ns(NULL) + wait;
    for (int64_t left = wait; left > 0; left = end - clock_mono_ns(NULL)) {
        if (canceled(c)) {
            err_set(err, K_ECANCELED,
                    "%s %s: canceled while waiting for the client-side rate "
                    "limit",
                    method, path);
            return K_ECANCELED;
        }
        int64_t step = left < 100000000 ? left : 100000000; /* poll the cancel flag at 10 Hz */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step};
        nanosleep(&ts, NULL);
    }
    if (wait >= 50000000)
        log_info_kv(wait >= 1000000000 ? 1 : 3,
                    "Waited before sending request due to client-side throttling",
                    LOG_INT("waitMs", wait / 1000000), LOG_STR("verb", method),
                    LOG_STR("path", path));
    return K_OK;
}

int kube_path_escape(const char *in, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    if (outlen == 0)
        return K_ETOOBIG;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        /* RFC 3986 unreserved characters pass; everything else is percent-encoded. */
        int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
        size_t need = plain ? 1 : 3;
        if (o + need >= outlen) {
            out[0] = '\0';
            return K_ETOOBIG;
        }
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return K_OK;
}

int kube_pod_path(const char *ns, const char *name, char *out, size_t outlen)
{
    char ns_esc[256], name_esc[512];
    if (outlen == 0)
        return K_ETOOBIG;
    out[0] = '\0';
    if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) ||
        kube_path_escape(name, name_esc, sizeof(name_esc)))
        return K_ETOOBIG;
    int n = snprintf(out, outlen, "/api/v1/namespaces/%s/pods/%s", ns_esc, name_esc);
    if (n < 0 || (size_t)n >= outlen) {
        out[0] = '\0';
        return K_ETOOBIG;
    }
    return K_OK;
}

/* Append a percent-encoded query value to b. */
static int append_escaped(struct buf *b, const char *value)
{
    size_t n = strlen(value) * 3 + 1;
    char *tmp = malloc(n);
    if (!tmp)
        return K_ENOMEM;
    int rc = kube_path_escape(value, tmp, n);
    if (!rc)
        rc = buf_append_str(b, tmp);
    free(tmp);
    return rc;
}

/*
 * The bearer token for this request: re-read from token_file when one is set, so rotated
 * projected service-account tokens are picked up; on a failed read the last good token (or the
 * configured one) is used, as client-go's cached token source does.
 */
static const char *current_token(struct kube_client *c)
{
    const char *path = c->cfg->token_file;
    struct buf b;
    buf_init(&b, TOKEN_FILE_MAX - 1);
    if (path && file_read(path, &b, 0) == K_OK) {
        char *tok = b.data;
        size_t len = b.len;
        while (len > 0 && strchr(" \t\r\n", tok[len - 1]))
            tok[--len] = '\0';
        size_t start = strspn(tok, " \t\r\n");
        if (tok[start] && !memchr(tok, '\0', len) && !kube_header_value_ok(tok + start)) {
            if (!c->token_refused)
                log_error_kv("tokenFile: the token contains a control character; keeping the "
                             "previous token",
                             LOG_STR("file", path));
            c->token_refused = true;
        } else if (tok[start] && !memchr(tok, '\0', len)) {
            c->token_refused = false;
            memmove(tok, tok + start, len - start + 1);
            if (c->token) {
                OPENSSL_cleanse(c->token, strlen(c->token));
                free(c->token);
            }
            c->token = buf_take(&b);
        }
    }
    if (b.data)
        OPENSSL_cleanse(b.data, b.len);
    buf_cleanup(&b);
    return c->token ? c->token : c->cfg->token;
}

/* Take n bytes of a response with HTTP `status`. Returns K_OK, or the K_* that ends it. */
static int deliver(struct request *rq, long status, const char *data, size_t n)
{
    bool ok = status >= 200 && status < 300;
    if (ok && rq->parser)
        return kube_watch_parser_feed(rq->parser, data, n);
    if (ok && rq->list) {
        if (n > KUBE_MAX_LIST_RESPONSE - rq->list_bytes)
            return K_ETOOBIG;
        rq->list_bytes += n;
        return kube_list_parser_feed(rq->list, data, n);
    }
    if (ok)
        return rq->discard ? K_OK : buf_append(&rq->body, data, n);
    /* A failed response: keep the start of the body for the Status message, drop the rest. */
    size_t keep = rq->body.limit < KUBE_MAX_ERROR_BODY ? rq->body.limit : KUBE_MAX_ERROR_BODY;
    size_t room = rq->body.len < keep ? keep - rq->body.len : 0;
    int rc = buf_append(&rq->body, data, n < room ? n : room);
    return rc == K_ENOMEM ? rc : K_OK;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct request *rq = userdata;
    size_t n = size * nmemb;
    long status = 0;

    curl_easy_getinfo(rq->c->curl, CURLINFO_RESPONSE_CODE, &status);
    int rc = deliver(rq, status, data, n);
    if (rc) {
        rq->write_rc = rc;
        return 0;
    }
    return n;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3). */
static int parse_retry_after(const char *v)
{
    char *end;
    errno = 0;
    long s = strtol(v, &end, 10);
    if (end != v && *end == '\0' && errno == 0) {
        if (s < 0)
            return 0;
        return s > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : (int)s;
    }
    time_t when = curl_getdate(v, NULL);
    if (when == -1)
        return 0;
    time_t now = time(NULL);
    if (when <= now)
        return 0;
    return when - now > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : (int)(when - now);
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct request *rq = userdata;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";

    /* A new status line starts a new header block (e.g. after "100 Continue"). */
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        rq->retry_after = 0;
    } else if (n > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        char v[128];
        size_t i = sizeof(name) - 1, o = 0;
        while (i < n && (data[i] == ' ' || data[i] == '\t'))
            i++;
        while (i < n && data[i] != '\r' && data[i] != '\n' && o < sizeof(v) - 1)
            v[o++] = data[i++];
        while (o > 0 && (v[o - 1] == ' ' || v[o - 1] == '\t'))
            o--;
        v[o] = '\0';
        rq->retry_after = parse_retry_after(v);
    }
    return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct request *rq = userdata;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    if (canceled(rq->c)) {
        rq->canceled = 1;
        return 1;
    }
    return 0;
}

static int status_result(long status)
{
    switch (status) {
    case 401:
        return K_EUNAUTHORIZED;
    case 403:
        return K_EFORBIDDEN;
    case 404:
        return K_ENOTFOUND;
    case 409:
        return K_ECONFLICT;
    case 410:
        return K_EGONE;
    case 429:
        return K_ETHROTTLED;
    }
    return status >= 500 ? K_ESERVER : K_EHTTP;
}

/*
 * Parse a whole response body: one JSON object, within its memory budget and without the members
 * no reader looks at (kube/read_budget.h). Trailing whitespace is allowed, anything else after
 * the object is not. Returns K_OK with *out owned by the caller; K_EPARSE; K_ETOOBIG over the
 * budget (*cost, when not NULL, the estimate); K_ENOMEM.
 */
static int parse_json_as(enum kube_read_shape shape, const char *data, size_t len,
                         json_object **out, uint64_t *cost)
{
    struct json_tree t;
    char err[160];
    int rc = kube_read_parse(&t, shape, data, len, err, sizeof(err));
    if (cost)
        *cost = t.cost[0];
    if (rc == K_OK)
        *out = json_object_get(t.root); /* the tokener's tree: its keys are its own */
    json_tree_free(&t);
    kube_read_trim(len);
    return rc;
}

static int parse_json(const char *data, size_t len, json_object **out, uint64_t *cost)
{
    return parse_json_as(KUBE_READ_OBJECT, data, len, out, cost);
}

/*
 * The message for a failed response: the API Status message when the body is one, else the start
 * of the body with control characters replaced, else just the status.
 */
static void status_message(struct kube_error *err, long status, const struct buf *body)
{
    json_object *obj = NULL;
    const char *msg;

    if (kube_proto_is(body->data, body->len)) {
        /* a Status in protobuf, answering a request that asked for it; its bytes are not text */
        if (!kube_proto_status_message(body->data, body->len, err->message, sizeof(err->message)))
            snprintf(err->message, sizeof(err->message), "HTTP %ld", status);
    } else if (body->len && parse_json(body->data, body->len, &obj, NULL) == K_OK &&
               (msg = kube_json_str(obj, "message")) != NULL) {
        snprintf(err->message, sizeof(err->message), "%s", msg);
    } else if (body->len) {
        int n = snprintf(err->message, sizeof(err->message), "HTTP %ld: ", status);
        size_t o = n > 0 ? (size_t)n : 0;
        for (size_t i = 0; i < body->len && o < 200 && o + 1 < sizeof(err->message); i++) {
            unsigned char ch = (unsigned char)body->data[i];
            err->message[o++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
        }
        err->message[o] = '\0';
    } else {
        snprintf(err->message, sizeof(err->message), "HTTP %ld", status);
    }
    json_object_put(obj);
}

static void observe(const char *method, long status, int rc)
{
    kube_request_observer_fn fn = atomic_load(&observer_fn);
    if (fn)
        fn(atomic_load(&observer_ctx), method, status, rc);
}

/* The message for a response the write side refused (rc from deliver()). */
static void write_error(struct kube_error *err, int rc, const char *method, const char *path,
                        const struct request *rq)
{
    if (rc == K_ETOOBIG && rq->list)
        err_set(err, rc,
                "LIST %s: an item larger than %u bytes, a list field larger than %u bytes, or a "
                "response larger than %llu bytes",
                path, KUBE_MAX_LIST_ITEM, KUBE_LIST_MAX_FIELD, KUBE_MAX_LIST_RESPONSE);
    else if (rc == K_ETOOBIG)
        err_set(err, rc, "%s %s: response larger than %zu bytes", method, path,
                rq->parser ? (size_t)KUBE_MAX_WATCH_EVENT : rq->body.limit);
    else if (rc == K_EPARSE && rq->list)
        err_set(err, rc, "LIST %s: malformed list response", path);
    else if (rc == K_EPARSE)
        err_set(err, rc, "%s %s: malformed watch stream", method, path);
    else if (rc == K_ECANCELED && rq->list)
        err_set(err, rc, "canceled");
    else
        err_set(err, rc, "%s", k_strerror(rc));
}

/* The parts of a server URL "scheme://authority/rest" that tls-server-name needs. */
struct authority {
    const char *authority; /* host[:port], borrowed */
    size_t authority_len;
    const char *host; /* with brackets for IPv6 */
    size_t host_len;
    char port[8];
    const char *rest; /* the server's path, "" or starting with '/' */
};

static bool split_server(const char *server, struct authority *a)
{
    const char *p = strstr(server, "://");
    if (!p)
        return false;
    bool https = strncasecmp(server, "https", 5) == 0;
    a->authority = p + 3;
    a->authority_len = strcspn(a->authority, "/?#");
    a->rest = a->authority + a->authority_len;
    a->host = a->authority;
    const char *end = a->authority + a->authority_len;
    const char *colon = NULL;
    if (a->host[0] == '[') {
        const char *rb = memchr(a->host, ']', a->authority_len);
        if (!rb)
            return false;
        a->host_len = (size_t)(rb + 1 - a->host);
        if (rb + 1 < end && rb[1] == ':')
            colon = rb + 1;
    } else {
        colon = memchr(a->host, ':', a->authority_len);
        a->host_len = colon ? (size_t)(colon - a->host) : a->authority_len;
    }
    size_t plen = colon ? (size_t)(end - colon - 1) : 0;
    if (a->host_len == 0 || plen >= sizeof(a->port))
        return false;
    if (colon && plen) {
        memcpy(a->port, colon + 1, plen);
        a->port[plen] = '\0';
    } else {
        snprintf(a->port, sizeof(a->port), "%s", https ? "443" : "80");
    }
    return true;
}

/* Append "Name: value" and its NUL to b (a list of header lines); *bad names a refused value. */
static int header_line(struct buf *b, const char *name, const char *value, const char **bad)
{
    if (!kube_header_value_ok(value)) {
        *bad = name;
        return K_EINVAL;
    }
    int rc = buf_printf(b, "%s: %s", name, value);
    return rc ? rc : buf_append(b, "", 1);
}

/* perform() through a kube_transport instead of libcurl. */
static int perform_transport(struct kube_client *c, const char *method, const char *path,
                             const char *body, size_t body_len, struct request *rq,
                             struct kube_error *err)
{
    long status = 0;
    int retry_after = 0;
    const char *resp = NULL;
    size_t resp_len = 0;
    int rc = c->transport->round_trip(c->transport->ctx, method, path, body, body_len, &status,
                                      &retry_after, &resp, &resp_len);
    err->http_status = status;
    err->retry_after = retry_after;
    if (rc != K_OK) {
        err_set(err, rc, "%s %s: %s", method, path, k_strerror(rc));
    } else if (resp_len && (rc = deliver(rq, status, resp, resp_len)) != K_OK) {
        write_error(err, rc, method, path, rq);
    } else if (status < 200 || status >= 300) {
        rc = status >= 400 ? status_result(status) : K_EHTTP;
        err->code = rc;
        status_message(err, status, &rq->body);
    }
    observe(method, status, rc);
    if (rc)
        err->code = rc;
    return rc;
}

#define SETOPT(opt, val)                                                                           \
    do {                                                                                           \
        if (cres == CURLE_OK)                                                                      \
            cres = curl_easy_setopt(curl, opt, val);                                               \
    } while (0)

/*
 * Run one request. method: "GET", "POST", "PATCH" or "PUT"; body/content_type for the others.
 * watch_idle_s > 0 makes it a watch: no total timeout, but the transfer fails after that many
 * seconds without data. On K_OK the status was 2xx and, unless rq->parser is set, the body is in
 * rq->body. On failure err is filled.
 */
static int perform_once(struct kube_client *c, const char *method, const char *path,
                        const char *body, size_t body_len, const char *content_type,
                        long watch_idle_s, struct request *rq, struct kube_error *err)
{
    const struct kube_config *cfg = c->cfg;
    CURL *curl = c->curl;
    CURLcode cres = CURLE_OK;
    struct curl_slist *headers = NULL, *h, *connect_list = NULL;
    struct buf url, auth, connect_to, host_hdr, imp;
    long status = 0;
    int rc = K_OK, observed = 0;

    buf_init(&url, URL_MAX);
    buf_init(&auth, TOKEN_FILE_MAX + 64);
    buf_init(&connect_to, 4096);
    buf_init(&host_hdr, 4096);
    buf_init(&imp, 64u << 10);
    if (canceled(c)) {
        err_set(err, K_ECANCELED, "canceled");
        return K_ECANCELED;
    }
    if (path[0] != '/') {
        err_set(err, K_EINVAL, "request path \"%.100s\" does not start with '/'", path);
        return K_EINVAL;
    }
    if (c->transport) {
        buf_cleanup(&auth);
        buf_cleanup(&url);
        buf_cleanup(&connect_to);
        buf_cleanup(&host_hdr);
        buf_cleanup(&imp);
        return perform_transport(c, method, path, body, body_len, rq, err);
    }
    struct authority a;
    bool sni = cfg->tls_server_name && *cfg->tls_server_name &&
               strncasecmp(cfg->server, "https://", 8) == 0 && split_server(cfg->server, &a);
    if (sni) {
        /* The URL names tls-server-name (SNI and the name verified); CONNECT_TO sends the
         * connection to the server's real host and port. */
        rc = buf_printf(&url, "https://%s:%s%s", cfg->tls_server_name, a.port, a.rest);
        if (!rc)
            rc = buf_printf(&connect_to, "%s:%s:%.*s:%s", cfg->tls_server_name, a.port,
                            (int)a.host_len, a.host, a.port);
        if (!rc)
            rc = buf_printf(&host_hdr, "Host: %.*s", (int)a.authority_len, a.authority);
    } else {
        rc = buf_append_str(&url, cfg->server);
    }
    if (!rc)
        rc = buf_append_str(&url, path);
    if (rc) {
        err_set(err, rc, "request URL longer than %u bytes", URL_MAX);
        goto out;
    }

#define ADD_HEADER(s)                                                                              \
    do {                                                                                           \
        h = curl_slist_append(headers, s);                                                         \
        if (!h) {                                                                                  \
            rc = K_ENOMEM;                                                                         \
            goto out;                                                                              \
        }                                                                                          \
        headers = h;                                                                               \
    } while (0)

    {
        char accept[128];
        snprintf(accept, sizeof(accept), "Accept: %s",
                 rq->accept ? rq->accept : "application/json");
        ADD_HEADER(accept);
    }
    /* No "Expect: 100-continue" round trip before large bodies. */
    ADD_HEADER("Expect:");
    if (content_type) {
        char ct[128];
        snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
        ADD_HEADER(ct);
    }
    const char *token = c->exec_used ? c->exec_cred.token : current_token(c);
    if (token && *token) {
        rc = buf_printf(&auth, "Authorization: Bearer %s", token);
        if (rc) {
            err_set(err, rc, "bearer token too long");
            goto out;
        }
        ADD_HEADER(auth.data);
    }
    if (sni)
        ADD_HEADER(host_hdr.data);
    if (cfg->impersonate_user && *cfg->impersonate_user) {
        const char *bad = NULL;
        rc = header_line(&imp, "Impersonate-User", cfg->impersonate_user, &bad);
        for (size_t i = 0; !rc && i < cfg->n_impersonate_groups; i++)
            rc = header_line(&imp, "Impersonate-Group", cfg->impersonate_groups[i], &bad);
        if (!rc && cfg->impersonate_uid && *cfg->impersonate_uid)
            rc = header_line(&imp, "Impersonate-Uid", cfg->impersonate_uid, &bad);
        if (rc) {
            err_set(err, rc, "impersonation: %s", bad ? bad : "headers too long");
            goto out;
        }
        for (size_t off = 0; off < imp.len; off += strlen(imp.data + off) + 1)
            ADD_HEADER(imp.data + off);
    }
#undef ADD_HEADER

    curl_easy_reset(curl);
    c->errbuf[0] = '\0';
    SETOPT(CURLOPT_ERRORBUFFER, c->errbuf);
    SETOPT(CURLOPT_URL, url.data);
    /* Only http and https, and https for a URL without a scheme: a token is never sent in clear
     * text because a scheme was left out or misread. */
    SETOPT(CURLOPT_PROTOCOLS_STR, "https,http");
    SETOPT(CURLOPT_DEFAULT_PROTOCOL, "https");
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_USERAGENT, c->user_agent);
    SETOPT(CURLOPT_HTTPHEADER, headers);
    SETOPT(CURLOPT_ACCEPT_ENCODING, ""); /* gzip for large LIST pages */
    if (c->http1)
        SETOPT(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SETOPT(CURLOPT_TCP_KEEPALIVE, 1L);
    SETOPT(CURLOPT_TCP_KEEPIDLE, 30L);
    SETOPT(CURLOPT_TCP_KEEPINTVL, 10L);
    SETOPT(CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
    if (watch_idle_s > 0) {
        SETOPT(CURLOPT_LOW_SPEED_LIMIT, 1L);
        SETOPT(CURLOPT_LOW_SPEED_TIME, watch_idle_s);
    } else if (rq->timeout_ms > 0) {
        SETOPT(CURLOPT_TIMEOUT_MS, rq->timeout_ms);
    } else if (cfg->request_timeout_set) {
        SETOPT(CURLOPT_TIMEOUT_MS, (long)cfg->request_timeout_ms);
    } else {
        SETOPT(CURLOPT_TIMEOUT, REQUEST_TIMEOUT_S);
    }
    if (sni) {
        connect_list = curl_slist_append(NULL, connect_to.data);
        if (!connect_list) {
            rc = K_ENOMEM;
            goto out;
        }
        SETOPT(CURLOPT_CONNECT_TO, connect_list);
    }
    if (cfg->proxy_url) {
        SETOPT(CURLOPT_PROXY, cfg->proxy_url);
        SETOPT(CURLOPT_NOPROXY, "");
    }
    SETOPT(CURLOPT_WRITEFUNCTION, on_write);
    SETOPT(CURLOPT_WRITEDATA, rq);
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, rq);
    SETOPT(CURLOPT_NOPROGRESS, 0L);
    SETOPT(CURLOPT_XFERINFOFUNCTION, on_progress);
    SETOPT(CURLOPT_XFERINFODATA, rq);

    /* TLS. In-memory PEM wins over files; a configured CA replaces the system trust store. An
     * https:// proxy-url is verified against the same CA, as Go's http.Transport dials the proxy
     * with the transport's own TLS configuration (net/http: transport.go, addTLS). */
    if (cfg->ca_pem) {
        struct curl_blob blob = {cfg->ca_pem, cfg->ca_pem_len, CURL_BLOB_NOCOPY};
        SETOPT(CURLOPT_CAINFO, NULL);
        SETOPT(CURLOPT_CAPATH, NULL);
        SETOPT(CURLOPT_CAINFO_BLOB, &blob);
        if (cfg->proxy_url) {
            SETOPT(CURLOPT_PROXY_CAINFO, NULL);
            SETOPT(CURLOPT_PROXY_CAPATH, NULL);
            SETOPT(CURLOPT_PROXY_CAINFO_BLOB, &blob);
        }
    } else if (cfg->ca_file) {
        SETOPT(CURLOPT_CAPATH, NULL);
        SETOPT(CURLOPT_CAINFO, cfg->ca_file);
        if (cfg->proxy_url) {
            SETOPT(CURLOPT_PROXY_CAPATH, NULL);
            SETOPT(CURLOPT_PROXY_CAINFO, cfg->ca_file);
        }
    }
    if (c->exec_used && c->exec_cred.cert_pem) {
        struct curl_blob cb = {c->exec_cred.cert_pem, c->exec_cred.cert_pem_len, CURL_BLOB_COPY};
        struct curl_blob kb = {c->exec_cred.key_pem, c->exec_cred.key_pem_len, CURL_BLOB_COPY};
        SETOPT(CURLOPT_SSLCERT_BLOB, &cb);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
        SETOPT(CURLOPT_SSLKEY_BLOB, &kb);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cfg->cert_pem) {
        struct curl_blob blob = {cfg->cert_pem, cfg->cert_pem_len, CURL_BLOB_NOCOPY};
        SETOPT(CURLOPT_SSLCERT_BLOB, &blob);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
    } else if (cfg->cert_file) {
        SETOPT(CURLOPT_SSLCERT, cfg->cert_file);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (c->exec_used && c->exec_cred.cert_pem) {
        /* the key came with the certificate above */
    } else if (cfg->key_pem) {
        struct curl_blob blob = {cfg->key_pem, cfg->key_pem_len, CURL_BLOB_NOCOPY};
        SETOPT(CURLOPT_SSLKEY_BLOB, &blob);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cfg->key_file) {
        SETOPT(CURLOPT_SSLKEY, cfg->key_file);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (cfg->insecure) {
        SETOPT(CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(CURLOPT_SSL_VERIFYHOST, 0L);
        if (cfg->proxy_url) {
            SETOPT(CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
            SETOPT(CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
        }
    }

    if (strcmp(method, "GET") != 0) {
        SETOPT(CURLOPT_POSTFIELDS, body ? body : "");
        SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
        if (strcmp(method, "POST") != 0)
            SETOPT(CURLOPT_CUSTOMREQUEST, method);
    }
    if (cres != CURLE_OK) {
        rc = cres == CURLE_OUT_OF_MEMORY ? K_ENOMEM : K_EIO;
        err_set(err, rc, "curl setup: %s", curl_easy_strerror(cres));
        goto out;
    }

    cres = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    err->http_status = status;
    err->retry_after = rq->retry_after;
    observed = 1;

    if (cres != CURLE_OK) {
        if (rq->canceled) {
            rc = K_ECANCELED;
            err_set(err, rc, "canceled");
        } else if (cres == CURLE_WRITE_ERROR && rq->write_rc) {
            rc = rq->write_rc;
            write_error(err, rc, method, path, rq);
        } else {
            if (cres == CURLE_OPERATION_TIMEDOUT)
                rc = K_ETIMEDOUT;
            else if (cres == CURLE_OUT_OF_MEMORY)
                rc = K_ENOMEM;
            else
                rc = K_EIO;
            const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cres);
            enum kube_tls_failure tls = kube_tls_failure_of((int)cres, why);
            if (tls != KUBE_TLS_NONE && rc == K_EIO)
                err_set(err, rc, "%s: %s (%s %s)", kube_tls_failure_text(tls), why, method,
                        url.data);
            else
                err_set(err, rc, "%s %s: %s", method, url.data, why);
            err->tls = rc == K_EIO ? (int)tls : KUBE_TLS_NONE;
        }
        goto out;
    }
    if (status < 200 || status >= 300) {
        rc = status >= 400 ? status_result(status) : K_EHTTP;
        err->code = rc;
        status_message(err, status, &rq->body);
        goto out;
    }
out:
    if (observed)
        observe(method, status, rc);
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_list);
    if (auth.data)
        OPENSSL_cleanse(auth.data, auth.len);
    buf_cleanup(&auth);
    buf_cleanup(&url);
    buf_cleanup(&connect_to);
    buf_cleanup(&host_hdr);
    buf_cleanup(&imp);
    if (rc)
        err->code = rc;
    return rc;
}

#undef SETOPT

/*
 * Run one request with the credential it needs: the exec plugin's when the config has an exec
 * user and no token, refreshed and sent once more after a 401.
 */
static int perform(struct kube_client *c, const char *method, const char *path, const char *body,
                   size_t body_len, const char *content_type, long watch_idle_s, struct request *rq,
                   struct kube_error *err)
{
    const struct kube_config *cfg = c->cfg;
    int rc = K_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        /* every request but a watch, each attempt, as client-go (watches are not limited) */
        if (watch_idle_s == 0 && (rc = throttle(c, method, path, err)) != K_OK)
            return rc;
        kube_exec_cred_cleanup(&c->exec_cred);
        c->exec_used = false;
        if (cfg->exec_cache && !(cfg->token && *cfg->token) && !cfg->token_file) {
            char why[sizeof(err->message)];
            rc =
                kube_exec_cache_get(cfg->exec_cache, &c->exec_cred, &c->exec_gen, why, sizeof(why));
            if (rc) {
                rc = rc == K_ENOMEM ? K_ENOMEM : K_EIO;
                err_set(err, rc, "%s", why);
                err->credentials = 1;
                return rc;
            }
            c->exec_used = true;
        }
        rc = perform_once(c, method, path, body, body_len, content_type, watch_idle_s, rq, err);
        if (rc != K_EUNAUTHORIZED || !c->exec_used || attempt == 1)
            break;
        log_info_kv(1, "exec plugin: the API server answered 401; running it again",
                    LOG_STR("user", cfg->exec->user ? cfg->exec->user : ""));
        kube_exec_cache_invalidate(cfg->exec_cache, c->exec_gen);
        buf_reset(&rq->body);
        rq->write_rc = 0;
        rq->retry_after = 0;
        memset(err, 0, sizeof(*err));
    }
    kube_exec_cred_cleanup(&c->exec_cred);
    return rc;
}

static void request_init(struct request *rq, struct kube_client *c, size_t body_limit)
{
    memset(rq, 0, sizeof(*rq));
    rq->c = c;
    buf_init(&rq->body, body_limit);
}

/* A request whose 2xx response is a JSON document: *out owned by the caller when out != NULL. */
static int request_json_as(struct kube_client *c, enum kube_read_shape shape, const char *method,
                           const char *path, json_object *body, json_object **out,
                           struct kube_error *err)
{
    struct request rq;
    const char *text = NULL;
    size_t text_len = 0;
    int rc;

    if (out)
        *out = NULL;
    request_init(&rq, c, KUBE_MAX_OBJECT);
    rq.discard = out == NULL; /* an answer nobody reads is not held, whatever its size */
    if (body) {
        text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text) {
            err_set(err, K_ENOMEM, "serialising the request body");
            rc = K_ENOMEM;
            goto out;
        }
        text_len = strlen(text);
    }
    rc = perform(c, method, path, text, text_len,
                 !body                          ? NULL
                 : strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
                                                : "application/json",
                 0, &rq, err);
    if (rc || !out)
        goto out;
    uint64_t cost = 0;
    rc = parse_json_as(shape, buf_cstr(&rq.body), rq.body.len, out, &cost);
    if (rc == K_ETOOBIG) {
        kube_read_over_budget("a response", cost, rq.body.len);
        err_set(err, rc,
                "%s %s: the response is too large to read (about %" PRIu64
                " KiB of JSON tree, limit %u KiB)",
                method, path, cost >> 10, KUBE_READ_MAX_COST >> 10);
    } else if (rc) {
        err_set(err, rc, "%s %s: malformed JSON response", method, path);
    }
    if (rc)
        goto out;
out:
    buf_cleanup(&rq.body);
    return rc;
}

static int request_json(struct kube_client *c, const char *method, const char *path,
                        json_object *body, json_object **out, struct kube_error *err)
{
    return request_json_as(c, KUBE_READ_OBJECT, method, path, body, out, err);
}

int kube_get(struct kube_client *c, const char *path, json_object **out, struct kube_error *err)
{
    struct kube_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    return request_json(c, "GET", path, NULL, out, err);
}

int kube_get_managed_fields(struct kube_client *c, const char *path, json_object **out,
                            struct kube_error *err)
{
    struct kube_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    return request_json_as(c, KUBE_READ_OBJECT_MANAGED_FIELDS, "GET", path, NULL, out, err);
}

int kube_patch_merge(struct kube_client *c, const char *path, json_object *body, json_object **out,
                     struct kube_error *err)
{
    struct kube_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    return request_json(c, "PATCH", path, body, out, err);
}

int kube_post(struct kube_client *c, const char *path, json_object *body, json_object **out,
              struct kube_error *err)
{
    struct kube_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    return request_json(c, "POST", path, body, out, err);
}

int kube_put(struct kube_client *c, const char *path, json_object *body, json_object **out,
             struct kube_error *err)
{
    struct kube_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    return request_json(c, "PUT", path, body, out, err);
}

/* The longest resourceVersion or continue token a protobuf LIST answer may carry. */
#define LIST_META_MAX 8192

/* A protobuf LIST answer, held whole: its items to proto_item, *rv and *cont (owned). */
static int list_page_proto(const char *path, const struct buf *body,
                           int (*proto_item)(void *, const uint8_t *, size_t), void *ctx, char **rv,
                           char **cont, struct kube_error *err)
{
    char v[LIST_META_MAX], next[LIST_META_MAX];
    int rc = kube_proto_list(body->data, body->len, proto_item, ctx, v, next, sizeof(v));
    if (rc == K_EPARSE || rc == K_ETOOBIG) {
        err_set(err, rc, "LIST %s: malformed protobuf list response", path);
        return rc;
    }
    if (rc) {
        rc = K_ECANCELED;
        err_set(err, rc, "LIST %s: stopped by the caller", path);
        return rc;
    }
    if (!*v) {
        err_set(err, K_EPARSE, "LIST %s: response without metadata.resourceVersion", path);
        return K_EPARSE;
    }
    *rv = strdup(v);
    *cont = *next ? strdup(next) : NULL;
    if (!*rv || (*next && !*cont)) {
        err_set(err, K_ENOMEM, "out of memory");
        return K_ENOMEM;
    }
    return K_OK;
}

/* One page of a LIST: GET `url`, its items to fn (or proto_item); *rv and *cont (owned) from its
 * metadata. */
static int list_page(struct kube_client *c, const char *path, const char *url, long timeout_ms,
                     kube_list_item_fn fn, int (*proto_item)(void *, const uint8_t *, size_t),
                     void *ctx, char **rv, char **cont, struct kube_error *err)
{
    struct request rq;
    request_init(&rq, c, proto_item ? KUBE_MAX_RESPONSE : KUBE_MAX_ERROR_BODY);
    rq.timeout_ms = timeout_ms;
    rq.list = kube_list_parser_new(KUBE_MAX_LIST_ITEM, fn, ctx);
    int rc;
    if (!rq.list) {
        rc = K_ENOMEM;
        err_set(err, rc, "out of memory");
        goto out;
    }
    if (proto_item) { /* the body is held, then read by its encoding */
        rq.accept = KUBE_PROTO_ACCEPT;
        struct kube_list_parser *json = rq.list;
        rq.list = NULL;
        rc = perform(c, "GET", url, NULL, 0, NULL, 0, &rq, err);
        rq.list = json;
        if (rc == K_ETOOBIG)
            err_set(err, rc, "LIST %s: response larger than %u bytes", path, KUBE_MAX_RESPONSE);
        if (rc)
            goto out;
        if (kube_proto_is(rq.body.data, rq.body.len)) {
            log_info_kv(4, "LIST answered in protobuf", LOG_STR("path", path),
                        LOG_INT("bytes", rq.body.len));
            rc = list_page_proto(path, &rq.body, proto_item, ctx, rv, cont, err);
            goto out;
        }
        /* JSON: read as the stream a LIST without proto_item reads, with its errors */
        rc = kube_list_parser_feed(rq.list, rq.body.data ? rq.body.data : "", rq.body.len);
        if (rc) {
            write_error(err, rc, "GET", path, &rq);
            goto out;
        }
    } else {
        rc = perform(c, "GET", url, NULL, 0, NULL, 0, &rq, err);
        if (rc)
            goto out;
    }
    rc = kube_list_parser_finish(rq.list);
    if (rc) {
        err_set(err, rc, "LIST %s: truncated or malformed list response", path);
        goto out;
    }
    const char *v = kube_list_parser_resource_version(rq.list);
    if (!v) {
        rc = K_EPARSE;
        err_set(err, rc, "LIST %s: response without metadata.resourceVersion", path);
        goto out;
    }
    const char *next = kube_list_parser_continue(rq.list);
    *rv = strdup(v);
    *cont = next && *next ? strdup(next) : NULL;
    if (!*rv || (next && *next && !*cont)) {
        rc = K_ENOMEM;
        err_set(err, rc, "out of memory");
    }
out:
    kube_list_parser_free(rq.list);
    buf_cleanup(&rq.body);
    return rc;
}

/* The items of one LIST, counted against its bound on their way to the caller. */
struct list_items {
    kube_list_item_fn fn;
    int (*proto_item)(void *, const uint8_t *, size_t);
    void (*restart)(void *);
    void *ctx;
    size_t n, max;
    bool over; /* one more than max came */
};

static int count_item(struct list_items *li)
{
    if (li->n == li->max) {
        li->over = true;
        return 1;
    }
    li->n++;
    return 0;
}

static int counted_item(void *ctx, json_object *item)
{
    struct list_items *li = ctx;
    return count_item(li) ? 1 : li->fn(li->ctx, item);
}

static int counted_proto_item(void *ctx, const uint8_t *bytes, size_t len)
{
    struct list_items *li = ctx;
    return count_item(li) ? 1 : li->proto_item(li->ctx, bytes, len);
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The request timeout in ms (--request-timeout, else the default); 0: none. */
static int64_t request_timeout_ms(const struct kube_config *cfg)
{
    return cfg->request_timeout_set ? cfg->request_timeout_ms : REQUEST_TIMEOUT_S * 1000;
}

int kube_list(struct kube_client *c, const char *path, const struct kube_list_options *opts,
              kube_list_item_fn fn, void *ctx, char *resource_version, size_t rv_len,
              struct kube_error *err)
{
    struct kube_error dummy;
    struct buf url;
    char *cont = NULL, *rv = NULL;
    int rc = K_OK;
    int page_size = opts && opts->page_size > 0 ? opts->page_size : 0;
    const char *from = opts && opts->resource_version ? opts->resource_version : "";
    size_t max_pages = opts && opts->max_pages ? opts->max_pages : KUBE_LIST_MAX_PAGES, pages = 0;
    bool full_list = false; /* falling back to one unpaged response after an expired token */
    struct list_items li = {.fn = fn,
                            .proto_item = opts ? opts->proto_item : NULL,
                            .ctx = ctx,
                            .max = opts && opts->max_items ? opts->max_items : KUBE_LIST_MAX_ITEMS};
    int64_t timeout = c->list_deadline ? request_timeout_ms(c->cfg) : 0;
    int64_t deadline = timeout > 0 ? monotonic_ms() + timeout : 0;

    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    buf_init(&url, URL_MAX);
    if (resource_version && rv_len)
        resource_version[0] = '\0';
    const char *sep = strchr(path, '?') ? "&" : "?";

    for (;;) {
        if (pages == max_pages) {
            rc = K_ETOOBIG;
            err_set(err, rc,
                    "LIST %s: more than %zu pages (the server's continue tokens do not end)", path,
                    max_pages);
            goto out;
        }
        buf_reset(&url);
        rc = buf_append_str(&url, path);
        const char *amp = sep;
        /* The resourceVersion goes with the first request only: the API server refuses it next
         * to a continue token (client-go: tools/pager/pager.go clears it). */
        if (!rc && *from && !cont) {
            rc = buf_printf(&url, "%sresourceVersion=", amp);
            if (!rc)
                rc = append_escaped(&url, from);
            amp = "&";
        }
        if (!rc && page_size > 0 && !full_list) {
            rc = buf_printf(&url, "%slimit=%d", amp, page_size);
            amp = "&";
        }
        if (!rc && cont) {
            rc = buf_printf(&url, "%scontinue=", amp);
            if (!rc)
                rc = append_escaped(&url, cont);
        }
        if (rc) {
            err_set(err, rc, "LIST %s: request path too long", path);
            goto out;
        }
        bool had_cont = cont != NULL;
        free(cont);
        cont = NULL;
        free(rv);
        rv = NULL;
        int64_t left = deadline ? deadline - monotonic_ms() : 0;
        if (deadline && left <= 0) {
            rc = K_ETIMEDOUT;
            goto past_deadline;
        }
        pages++;
        /* the whole collection in one response is streamed as JSON, not held (proto_item) */
        rc = list_page(c, path, url.data, (long)left, counted_item,
                       li.proto_item && !full_list ? counted_proto_item : NULL, &li, &rv, &cont,
                       err);
        if (li.over) {
            rc = K_ETOOBIG;
            err_set(err, rc,
                    "LIST %s: more than %zu items (the server's continue tokens do not end?); "
                    "stopped in response %zu",
                    path, li.max, pages);
            goto out;
        }
        if (rc == K_ETIMEDOUT && deadline && pages > 1)
            goto past_deadline; /* the request had only what was left of the LIST's time */
        if (rc == K_EGONE && had_cont && !full_list) {
            /* The continue token expired (the snapshot was compacted) between pages: as
             * client-go's pager (FullListIfExpired, kubernetes/kubernetes:
             * staging/src/k8s.io/client-go/tools/pager/pager.go), list everything once more in
             * one response at the requested resourceVersion; the caller hears of it first
             * (opts->restart), as the items delivered so far come again. */
            log_info_kv(2, "LIST: continue token expired; listing again without paging",
                        LOG_STR("path", path));
            full_list = true;
            memset(err, 0, sizeof(*err));
            li.n = 0; /* the items come again */
            if (opts && opts->restart)
                opts->restart(ctx);
            continue;
        }
        if (rc)
            goto out;
        if (resource_version && rv_len) {
            if (strlen(rv) >= rv_len) {
                rc = K_ETOOBIG;
                err_set(err, rc, "LIST %s: resourceVersion longer than %zu bytes", path,
                        rv_len - 1);
                goto out;
            }
            memcpy(resource_version, rv, strlen(rv) + 1);
        }
        if (!cont || full_list)
            break;
        if (canceled(c)) {
            rc = K_ECANCELED;
            err_set(err, rc, "canceled");
            goto out;
        }
    }
past_deadline:
    if (rc == K_ETIMEDOUT) {
        err_set(err, rc,
                "LIST %s: not complete within the request timeout of %lld ms (--request-timeout) "
                "after %zu responses",
                path, (long long)timeout, pages);
        err->deadline = 1;
    }
out:
    if (opts && opts->pages)
        *opts->pages = pages;
    free(cont);
    free(rv);
    buf_cleanup(&url);
    if (rc && resource_version && rv_len)
        resource_version[0] = '\0';
    return rc;
}

/* Parser callback for kube_watch: pass events on, and stop after an ERROR event. */
static int on_watch_event(void *ctx, enum kube_event_type type, json_object *object)
{
    struct watch_state *w = ctx;
    if (type == KUBE_EVENT_ERROR) {
        const char *msg = kube_json_str(object, "message");
        w->error_event = 1;
        w->error_code = kube_watch_error_code(object);
        if (msg)
            snprintf(w->message, sizeof(w->message), "%s", msg);
        else
            snprintf(w->message, sizeof(w->message), "watch ERROR event, code %d", w->error_code);
        w->fn(w->ctx, type, object);
        /* The server ends the stream after an ERROR; the caller must relist either way. */
        return 1;
    }
    if (w->fn(w->ctx, type, object) != 0) {
        w->handler_stop = 1;
        return 1;
    }
    return 0;
}

int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               int timeout_seconds, kube_watch_fn fn, void *ctx, struct kube_error *err)
{
    struct kube_error dummy;
    struct watch_state w = {.fn = fn, .ctx = ctx};
    struct request rq;
    struct buf url;
    int rc;

    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    buf_init(&url, URL_MAX);
    request_init(&rq, c, KUBE_MAX_ERROR_BODY);
    rq.parser = kube_watch_parser_new(KUBE_MAX_WATCH_EVENT, on_watch_event, &w);
    if (!rq.parser) {
        rc = K_ENOMEM;
        err_set(err, rc, "out of memory");
        goto out;
    }

    rc = buf_printf(&url, "%s%swatch=1&allowWatchBookmarks=true", path,
                    strchr(path, '?') ? "&" : "?");
    if (!rc && resource_version && *resource_version) {
        rc = buf_append_str(&url, "&resourceVersion=");
        if (!rc)
            rc = append_escaped(&url, resource_version);
    }
    if (!rc && timeout_seconds > 0)
        rc = buf_printf(&url, "&timeoutSeconds=%d", timeout_seconds);
    if (rc) {
        err_set(err, rc, "WATCH %s: request path too long", path);
        goto out;
    }

    long idle = (timeout_seconds > 0 ? timeout_seconds : WATCH_DEFAULT_S) + WATCH_IDLE_MARGIN_S;
    rc = perform(c, "GET", url.data, NULL, 0, NULL, idle, &rq, err);
    if (w.error_event) {
        /* Stopped by our own callback after an ERROR event: report the Status. */
        rc = K_EGONE;
        err->code = rc;
        err->http_status = w.error_code;
        snprintf(err->message, sizeof(err->message), "%s", w.message);
        goto out;
    }
    if (rc == K_ECANCELED && w.handler_stop) {
        err_set(err, rc, "stopped by the event handler");
        goto out;
    }
    if (rc)
        goto out;
    rc = kube_watch_parser_finish(rq.parser);
    if (rc)
        err_set(err, rc, "WATCH %s: stream ended inside an event", path);
out:
    kube_watch_parser_free(rq.parser);
    buf_cleanup(&rq.body);
    buf_cleanup(&url);
    return rc;
}
