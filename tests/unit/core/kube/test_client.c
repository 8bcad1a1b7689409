/*
 * test_client.c - the API client (core/kube/client.c) against a tiny scripted HTTP/1.1 server on
 * 127.0.0.1 running in a thread: status mapping, Status messages, Retry-After, pagination,
 * watches, cancellation, request headers, token file re-reads and connection reuse.
 * Real API server behaviour is covered by the e2e suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kube/client.h"
#include "kube/exec.h"
#include "kube/proto.h"
#include "fake_kube.h"
#include "util/result.h"

/* ---- the scripted server ---- */

struct seen {
    char method[16];
    char target[1024];
    char auth[256];
    char content_type[128];
    char user_agent[128];
    char accept[128];
    char body[1024];
    char headers[2048]; /* the whole header block, cut */
};

#define MAX_SEEN 64

static struct {
    int listen_fd;
    int port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t lock;
    struct seen seen[MAX_SEEN];
    int nseen;
    int total; /* requests seen, also past MAX_SEEN */
    int connections;
    int tls_hellos; /* connections that opened with a TLS handshake record, closed at once */
} srv;

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void send_str(int fd, const char *s)
{
    send_all(fd, s, strlen(s));
}

static void reply(int fd, const char *status, const char *extra_headers, const char *body)
{
    char head[512];
    snprintf(head, sizeof(head),
             "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
             status, strlen(body), extra_headers ? extra_headers : "");
    send_str(fd, head);
    send_str(fd, body);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait up to ms for the client to hang up; returns early when it does. */
static void hold_open(int fd, int ms)
{
    for (int waited = 0; waited < ms && !atomic_load(&srv.stop); waited += 20) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 20) > 0) {
            char tmp[256];
            if (recv(fd, tmp, sizeof(tmp), 0) <= 0)
                return;
        }
    }
}

static const char pod_json[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
                               "\"ns\",\"resourceVersion\":\"42\"}}";

static const char watch_events[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"101\"}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"150\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"160\"}}"
    "}"
    "\n";

/* A body of BIG_BODY bytes: a JSON object with one long string, sent in pieces of 64 KiB. */
#define BIG_BODY (8u << 20)

static void reply_big(int fd, const char *status)
{
    char head[256], chunk[64u << 10];
    snprintf(head, sizeof(head),
             "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %u\r\n\r\n", status,
             BIG_BODY);
    send_str(fd, head);
    memset(chunk, 'x', sizeof(chunk));
    send_all(fd, "{\"a\":\"", 6);
    size_t left = BIG_BODY - 6 - 2;
    while (left > 0 && !atomic_load(&srv.stop)) {
        size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
        send_all(fd, chunk, n);
        left -= n;
    }
    send_all(fd, "\"}", 2);
}

/*
 * Answer one request. Returns 0 to keep the connection, 1 to close it (streamed bodies end with
 * the connection).
 */
static int route(int fd, const struct seen *rq)
{
    const char *t = rq->target;

    if (strcmp(t, "/api/v1/namespaces/ns/pods/p") == 0) {
        reply(fd, "200 OK", NULL, pod_json);
    } else if (strcmp(t, "/big") == 0) {
        reply_big(fd, "200 OK");
    } else if (strcmp(t, "/big409") == 0) {
        reply_big(fd, "409 Conflict");
    } else if (strncmp(t, "/api/v1/endless", 15) == 0) {
        /* a continue token that never ends, 20 ms a page */
        sleep_ms(20);
        reply(fd, "200 OK", NULL,
              "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"more\"},\"items\":"
              "[{\"metadata\":{\"name\":\"e\"}}]}");
    } else if (strcmp(t, "/api/v1/namespaces/ns/pods/missing") == 0) {
        reply(
            fd, "404 Not Found", NULL,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
            "\"message\":\"pods \\\"missing\\\" not found\",\"reason\":\"NotFound\",\"code\":404}");
    } else if (strcmp(t, "/throttled") == 0) {
        reply(fd, "429 Too Many Requests", "Retry-After: 7\r\n",
              "{\"kind\":\"Status\",\"message\":\"slow down\",\"code\":429}");
    } else if (strcmp(t, "/broken") == 0) {
        reply(fd, "502 Bad Gateway", NULL, "<html>upstream\r\nfailed</html>");
    } else if (strcmp(t, "/forbidden") == 0) {
        reply(fd, "403 Forbidden", NULL, "{\"kind\":\"Status\",\"message\":\"no RBAC\"}");
    } else if (strcmp(t, "/conflict") == 0) {
        reply(fd, "409 Conflict", NULL, "{}");
    } else if (strcmp(t, "/unauthorized") == 0) {
        reply(fd, "401 Unauthorized", NULL, "");
    } else if (strcmp(t, "/teapot") == 0) {
        reply(fd, "418 I'm a teapot", NULL, "{\"message\":\"short and stout\"}");
    } else if (strcmp(t, "/notjson") == 0) {
        reply(fd, "200 OK", NULL, "{\"a\":1} trailing");
    } else if (strcmp(t, "/api/v1/pods?labelSelector=a%3Db&limit=2") == 0) {
        reply(fd, "200 OK", NULL,
              "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"500\","
              "\"continue\":\"tok/=1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},"
              "{\"metadata\":{\"name\":\"b\"}}]}");
    } else if (strcmp(t, "/api/v1/pods?labelSelector=a%3Db&limit=2&continue=tok%2F%3D1") == 0) {
        reply(fd, "200 OK", NULL,
              "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"500\"},"
              "\"items\":[{\"metadata\":{\"name\":\"c\"}}]}");
    } else if (strcmp(t, "/api/v1/nodes") == 0) {
        reply(fd, "200 OK", NULL,
              "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"9\"}}");
    } else if (strcmp(t, "/api/v1/expired?resourceVersion=7&limit=1") == 0) {
        reply(fd, "200 OK", NULL,
              "{\"metadata\":{\"resourceVersion\":\"1\",\"continue\":\"old\"},\"items\":[]}");
    } else if (strcmp(t, "/api/v1/expired?resourceVersion=7") == 0) {
        reply(fd, "200 OK", NULL,
              "{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[{\"metadata\":{\"name\":"
              "\"x\"}},{\"metadata\":{\"name\":\"y\"}}]}");
    } else if (strcmp(t, "/api/v1/gonelist?limit=1") == 0) {
        reply(fd, "410 Gone", NULL,
              "{\"kind\":\"Status\",\"message\":\"too old resource version: 5 (9)\","
              "\"code\":410}");
    } else if (strcmp(t, "/api/v1/bigpods?resourceVersion=0&limit=500") == 0) {
        /* a watch-cache answer: every item in one response, sent in small pieces */
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Connection: close\r\n\r\n");
        send_str(fd, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                     "{\"resourceVersion\":\"77\"},\"items\":[");
        char item[160];
        for (int i = 0; i < 2000; i++) {
            int n = snprintf(item, sizeof(item),
                             "%s{\"metadata\":{\"name\":\"p%d\",\"labels\":{\"x\":\"a]}\\\"\"}}}",
                             i ? "," : "", i);
            for (int at = 0; at < n; at += 13)
                send_all(fd, item + at, n - at < 13 ? (size_t)(n - at) : 13);
        }
        send_str(fd, "]}\n");
        return 1;
    } else if (strcmp(t, "/api/v1/cutlist") == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        send_str(fd, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{}},");
        return 1;
    } else if (strcmp(t, "/api/v1/expired?limit=1&continue=old") == 0) {
        reply(fd, "410 Gone", NULL,
              "{\"kind\":\"Status\",\"message\":\"The provided continue parameter is too old\","
              "\"code\":410}");
    } else if (strcmp(t, "/api/v1/namespaces/ns/pods/p?fieldManager=gputri") == 0 &&
               strcmp(rq->method, "PATCH") == 0) {
        reply(fd, "200 OK", NULL, rq->body);
    } else if (strcmp(t, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l") == 0 &&
               strcmp(rq->method, "PUT") == 0) {
        if (strstr(rq->body, "\"resourceVersion\":\"stale\""))
            reply(fd, "409 Conflict", NULL,
                  "{\"kind\":\"Status\",\"message\":\"the object has been modified\","
                  "\"code\":409}");
        else
            reply(fd, "200 OK", NULL, rq->body);
    } else if (strcmp(t, "/api/v1/namespaces/ns/events") == 0 && strcmp(rq->method, "POST") == 0) {
        reply(fd, "201 Created", NULL, rq->body);
    } else if (strcmp(t, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=100&"
                         "timeoutSeconds=30") == 0) {
        /* Streamed in pieces that cut events, then the server closes the stream. */
        send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Connection: close\r\n\r\n");
        size_t len = strlen(watch_events);
        for (size_t at = 0; at < len; at += 37) {
            send_all(fd, watch_events + at, len - at < 37 ? len - at : 37);
            sleep_ms(2);
        }
        return 1;
    } else if (strncmp(t, "/api/v1/gone?watch=1", 20) == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        send_str(fd, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                     "\"message\":\"too old resource version: 1 (500)\",\"reason\":\"Expired\","
                     "\"code\":410}}\n");
        hold_open(fd, 2000);
        return 1;
    } else if (strncmp(t, "/api/v1/gone410?watch=1", 23) == 0) {
        reply(fd, "410 Gone", "Connection: close\r\n", "{\"kind\":\"Status\",\"code\":410}");
        return 1;
    } else if (strncmp(t, "/api/v1/truncated?watch=1", 25) == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        send_str(fd, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na");
        return 1;
    } else if (strncmp(t, "/api/v1/hang?watch=1", 20) == 0) {
        send_str(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        hold_open(fd, 3000);
        return 1;
    } else {
        reply(fd, "404 Not Found", NULL, "{\"kind\":\"Status\",\"message\":\"no route\"}");
    }
    return 0;
}

static void header_value(const char *headers, const char *name, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = headers; p && *p; p = strstr(p, "\r\n") ? strstr(p, "\r\n") + 2 : NULL) {
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\r\n");
            snprintf(out, outlen, "%.*s", (int)n, v);
            return;
        }
    }
}

static void serve_connection(int fd)
{
    char buf[16384];
    size_t have = 0;

    for (;;) {
        char *end;
        while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (atomic_load(&srv.stop) || have == sizeof(buf))
                return;
            if (poll(&p, 1, 50) <= 0)
                continue;
            ssize_t n = recv(fd, buf + have, sizeof(buf) - have, 0);
            if (n <= 0)
                return;
            if (have == 0 && buf[0] == 0x16) { /* TLS ClientHello: this server speaks HTTP */
                pthread_mutex_lock(&srv.lock);
                srv.tls_hellos++;
                pthread_mutex_unlock(&srv.lock);
                return;
            }
            have += (size_t)n;
        }
        *end = '\0';
        struct seen rq;
        memset(&rq, 0, sizeof(rq));
        sscanf(buf, "%15s %1023s", rq.method, rq.target);
        snprintf(rq.headers, sizeof(rq.headers), "%.2000s", buf);
        header_value(buf, "Authorization", rq.auth, sizeof(rq.auth));
        header_value(buf, "Content-Type", rq.content_type, sizeof(rq.content_type));
        header_value(buf, "User-Agent", rq.user_agent, sizeof(rq.user_agent));
        header_value(buf, "Accept", rq.accept, sizeof(rq.accept));
        char cl[32];
        header_value(buf, "Content-Length", cl, sizeof(cl));
        size_t body_len = cl[0] ? strtoul(cl, NULL, 10) : 0;
        size_t head_len = (size_t)(end - buf) + 4;
        while (have < head_len + body_len && have < sizeof(buf)) {
            ssize_t n = recv(fd, buf + have, sizeof(buf) - have, 0);
            if (n <= 0)
                return;
            have += (size_t)n;
        }
        snprintf(rq.body, sizeof(rq.body), "%.*s", (int)body_len, buf + head_len);
        pthread_mutex_lock(&srv.lock);
        if (srv.nseen == MAX_SEEN) /* the latest are kept: last_seen() reads them */
            memmove(srv.seen, srv.seen + 1, (MAX_SEEN - 1) * sizeof(srv.seen[0]));
        srv.seen[srv.nseen < MAX_SEEN ? srv.nseen++ : MAX_SEEN - 1] = rq;
        srv.total++;
        pthread_mutex_unlock(&srv.lock);
        int close_it = route(fd, &rq);
        memmove(buf, buf + head_len + body_len, have - head_len - body_len);
        have -= head_len + body_len;
        if (close_it)
            return;
    }
}

static void *serve_one(void *arg)
{
    int fd = (int)(intptr_t)arg;
    serve_connection(fd);
    close(fd);
    return NULL;
}

static void *serve(void *arg)
{
    (void)arg;
    while (!atomic_load(&srv.stop)) {
        struct pollfd p = {.fd = srv.listen_fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(srv.listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&srv.lock);
        srv.connections++;
        pthread_mutex_unlock(&srv.lock);
        /*
         * One thread per connection, so a connection a failed test left open cannot block the
         * next test's.
         */
        pthread_t t;
        if (pthread_create(&t, NULL, serve_one, (void *)(intptr_t)fd) == 0)
            pthread_detach(t);
        else
            close(fd);
    }
    return NULL;
}

static int server_start(void **state)
{
    (void)state;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    srv.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (srv.listen_fd < 0 || bind(srv.listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        listen(srv.listen_fd, 8) != 0 ||
        getsockname(srv.listen_fd, (struct sockaddr *)&addr, &alen) != 0)
        return -1;
    srv.port = ntohs(addr.sin_port);
    pthread_mutex_init(&srv.lock, NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return pthread_create(&srv.thread, NULL, serve, NULL) == 0 ? 0 : -1;
}

static int server_stop(void **state)
{
    (void)state;
    atomic_store(&srv.stop, 1);
    pthread_join(srv.thread, NULL);
    close(srv.listen_fd);
    pthread_mutex_destroy(&srv.lock);
    curl_global_cleanup();
    return 0;
}

static struct seen last_seen(void)
{
    pthread_mutex_lock(&srv.lock);
    struct seen s;
    memset(&s, 0, sizeof(s));
    if (srv.nseen)
        s = srv.seen[srv.nseen - 1];
    pthread_mutex_unlock(&srv.lock);
    return s;
}

static int connections(void)
{
    pthread_mutex_lock(&srv.lock);
    int n = srv.connections;
    pthread_mutex_unlock(&srv.lock);
    return n;
}

/* A config for the test server; strings are heap copies so kube_config_cleanup() works. */
static void test_config(struct kube_config *cfg, const char *token)
{
    char server[64];
    memset(cfg, 0, sizeof(*cfg));
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", srv.port);
    cfg->server = strdup(server);
    cfg->token = token ? strdup(token) : NULL;
    cfg->source = strdup("test");
}

/* ---- tests ---- */

static void test_get_and_headers(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, "tok-123");
    struct kube_client *c = kube_client_new(&cfg, "gputri-test/1.0");
    assert_non_null(c);
    struct kube_error err;
    json_object *obj = NULL;
    int before = connections();

    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_OK);
    assert_int_equal(err.http_status, 200);
    json_object *meta, *name;
    assert_true(json_object_object_get_ex(obj, "metadata", &meta));
    assert_true(json_object_object_get_ex(meta, "name", &name));
    assert_string_equal(json_object_get_string(name), "p");
    json_object_put(obj);

    struct seen s = last_seen();
    assert_string_equal(s.method, "GET");
    assert_string_equal(s.auth, "Bearer tok-123");
    assert_string_equal(s.user_agent, "gputri-test/1.0");
    assert_string_equal(s.accept, "application/json");

    /* Keep-alive: more requests on the same connection. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_OK);
        json_object_put(obj);
    }
    assert_int_equal(connections() - before, 1);

    assert_int_equal(kube_get(c, "no-slash", &obj, NULL), K_EINVAL);
    assert_null(obj);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_status_mapping(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    assert_non_null(c);
    struct kube_error err;
    json_object *obj = NULL;

    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/missing", &obj, &err), K_ENOTFOUND);
    assert_null(obj);
    assert_int_equal(err.code, K_ENOTFOUND);
    assert_int_equal(err.http_status, 404);
    assert_string_equal(err.message, "pods \"missing\" not found");
    assert_string_equal(last_seen().auth, ""); /* no token configured */
    assert_string_equal(last_seen().user_agent, "gputri");

    assert_int_equal(kube_get(c, "/throttled", &obj, &err), K_ETHROTTLED);
    assert_int_equal(err.retry_after, 7);
    assert_string_equal(err.message, "slow down");

    assert_int_equal(kube_get(c, "/broken", &obj, &err), K_ESERVER);
    assert_int_equal(err.http_status, 502);
    assert_int_equal(err.retry_after, 0);
    assert_string_equal(err.message, "HTTP 502: <html>upstream  failed</html>");

    assert_int_equal(kube_get(c, "/forbidden", &obj, &err), K_EFORBIDDEN);
    assert_string_equal(err.message, "no RBAC");
    assert_int_equal(kube_get(c, "/conflict", &obj, &err), K_ECONFLICT);
    assert_string_equal(err.message, "HTTP 409: {}");
    assert_int_equal(kube_get(c, "/unauthorized", &obj, &err), K_EUNAUTHORIZED);
    assert_string_equal(err.message, "HTTP 401");
    assert_int_equal(kube_get(c, "/teapot", &obj, &err), K_EHTTP);
    assert_string_equal(err.message, "short and stout");
    assert_int_equal(kube_get(c, "/notjson", &obj, &err), K_EPARSE);
    assert_null(obj);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_transport_error(void **state)
{
    (void)state;
    struct kube_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    /* A port nothing listens on: bind one, close it, and connect there. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &alen), 0);
    close(fd);
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", ntohs(addr.sin_port));
    cfg.server = server;
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    json_object *obj = NULL;
    assert_int_equal(kube_get(c, "/x", &obj, &err), K_EIO);
    assert_int_equal(err.http_status, 0);
    assert_non_null(strstr(err.message, "127.0.0.1"));
    kube_client_free(c);
}

/* A server without a scheme is reached over TLS: the token never goes out in clear text. */
static void test_default_protocol_https(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, "secret-token");
    char server[64];
    snprintf(server, sizeof(server), "127.0.0.1:%d", srv.port);
    free(cfg.server);
    cfg.server = strdup(server);
    cfg.insecure = true;
    pthread_mutex_lock(&srv.lock);
    int hellos = srv.tls_hellos, seen = srv.total;
    pthread_mutex_unlock(&srv.lock);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    json_object *obj = NULL;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_EIO);
    assert_null(obj);
    pthread_mutex_lock(&srv.lock);
    assert_int_equal(srv.tls_hellos, hellos + 1);
    assert_int_equal(srv.total, seen); /* no plain HTTP request, so no token, arrived */
    pthread_mutex_unlock(&srv.lock);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

/* libcurl's TLS results that come from the kubeconfig are told apart from network failures. */
static void test_tls_failure_kinds(void **state)
{
    (void)state;
    assert_int_equal(kube_tls_failure_of(CURLE_PEER_FAILED_VERIFICATION,
                                         "SSL certificate problem: unable to get local issuer "
                                         "certificate"),
                     KUBE_TLS_SERVER_UNTRUSTED);
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_ISSUER_ERROR, NULL), KUBE_TLS_SERVER_UNTRUSTED);
    assert_int_equal(kube_tls_failure_of(CURLE_PEER_FAILED_VERIFICATION,
                                         "SSL: no alternative certificate subject name matches "
                                         "target host name 'x.example'"),
                     KUBE_TLS_SERVER_NAME);
    assert_non_null(strstr(kube_tls_failure_text(KUBE_TLS_SERVER_NAME), "tls-server-name"));
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_CACERT_BADFILE, "error setting certificate"),
                     KUBE_TLS_CA_UNUSABLE);
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_CERTPROBLEM,
                                         "unable to set private key file: '(memory blob)' type "
                                         "PEM"),
                     KUBE_TLS_CLIENT_CERT);
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_CONNECT_ERROR,
                                         "error:0A000086:SSL routines::certificate verify failed"),
                     KUBE_TLS_SERVER_UNTRUSTED);
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_CONNECT_ERROR,
                                         "OpenSSL/3.0.15: error:0A000412:SSL routines::sslv3 "
                                         "alert bad certificate"),
                     KUBE_TLS_CLIENT_CERT);
    assert_int_equal(
        kube_tls_failure_of(CURLE_SSL_CONNECT_ERROR, "OpenSSL SSL_connect: SSL_ERROR_SYSCALL"),
        KUBE_TLS_NONE);
    assert_int_equal(kube_tls_failure_of(CURLE_SSL_CONNECT_ERROR, NULL), KUBE_TLS_NONE);
    assert_int_equal(kube_tls_failure_of(CURLE_COULDNT_CONNECT, "Connection refused"),
                     KUBE_TLS_NONE);
    assert_int_equal(kube_tls_failure_of(CURLE_OPERATION_TIMEDOUT, "certificate verify failed"),
                     KUBE_TLS_NONE);
    assert_int_equal(kube_tls_failure_of(CURLE_OK, NULL), KUBE_TLS_NONE);
    assert_string_equal(kube_tls_failure_text(KUBE_TLS_NONE), "");
    assert_string_equal(kube_tls_failure_text(99), "");
    assert_non_null(strstr(kube_tls_failure_text(KUBE_TLS_SERVER_UNTRUSTED), "not trusted"));
}

/* A client key that does not load fails before the handshake and is reported as such, not as
 * an unreachable server. */
static void test_bad_client_key_is_tls(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    char server[64];
    snprintf(server, sizeof(server), "https://127.0.0.1:%d", srv.port);
    free(cfg.server);
    cfg.server = strdup(server);
    cfg.insecure = true;
    static const char junk[] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE "
                               "KEY-----\n";
    cfg.cert_pem = strdup(junk);
    cfg.cert_pem_len = strlen(junk);
    cfg.key_pem = strdup(junk);
    cfg.key_pem_len = strlen(junk);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    json_object *obj = NULL;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_EIO);
    assert_null(obj);
    assert_int_equal(err.tls, KUBE_TLS_CLIENT_CERT);
    assert_true(strncmp(err.message,
                        "TLS: the client certificate/key in use (client-certificate, client-key) "
                        "cannot be used: ",
                        strlen("TLS: the client certificate/key in use (client-certificate, "
                               "client-key) cannot be used: ")) == 0);
    assert_non_null(strstr(err.message, server));
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

struct pages {
    char names[256];
    int calls;
    int stop_at;
    int restarts;
};

static void on_restart(void *ctx)
{
    struct pages *p = ctx;
    p->restarts++;
    p->names[0] = '\0';
}

static int on_item(void *ctx, json_object *item)
{
    struct pages *p = ctx;
    p->calls++;
    json_object *meta, *name;
    json_object_object_get_ex(item, "metadata", &meta);
    if (json_object_object_get_ex(meta, "name", &name) && strlen(p->names) < 64)
        strncat(p->names, json_object_get_string(name), sizeof(p->names) - strlen(p->names) - 1);
    return p->stop_at && p->calls == p->stop_at;
}

/* A page of one item named `name` whose continue token is `cont` bytes of 'c'. */
static char *page_with_token(const char *name, size_t cont)
{
    size_t n = cont + 256;
    char *text = malloc(n);
    assert_non_null(text);
    int at = snprintf(text, n, "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"");
    memset(text + at, 'c', cont);
    snprintf(text + at + cont, n - at - cont, "\"},\"items\":[{\"metadata\":{\"name\":\"%s\"}}]}",
             name);
    return text;
}

/* What a hostile server may answer a LIST with: a continue token too long for the next request,
 * one that never ends, a metadata over its bound, a second document after the list. Each ends
 * the LIST with an error after the items before it, without asking for more. */
/* Items of a protobuf answer: their count and total length; JSON items go to `json` (on_item,
 * which reads its context as struct pages: the first member). */
struct proto_items {
    struct pages json;
    size_t n, bytes;
};

static int on_proto_item(void *ctx, const uint8_t *bytes, size_t len)
{
    struct proto_items *it = ctx;
    (void)bytes;
    it->n++;
    it->bytes += len;
    return 0;
}

static void load_fixture(const char *name, char **data, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/proto/%s", FIXTURES_DIR, name);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    *data = malloc(1 << 20);
    assert_non_null(*data);
    *len = fread(*data, 1, 1 << 20, fp);
    fclose(fp);
}

/* A LIST that asks for protobuf: the Accept header, a JSON answer read as JSON, protobuf pages
 * followed by their continue token, and a protobuf Status's message (recorded bodies). */
static void test_list_protobuf(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *hc = kube_client_new(&cfg, "gputri-test/1.0");
    assert_non_null(hc);
    struct kube_error err;
    char rv[32];
    struct proto_items it = {0};
    struct kube_list_options o = {.proto_item = on_proto_item};
    /* a server that answers JSON */
    assert_int_equal(kube_list(hc, "/api/v1/nodes", &o, on_item, &it, rv, sizeof(rv), &err), K_OK);
    assert_string_equal(last_seen().accept, KUBE_PROTO_ACCEPT);
    assert_string_equal(rv, "9");
    assert_int_equal(it.n, 0);
    assert_int_equal(it.json.calls, 0); /* the NodeList has no items */
    kube_client_free(hc);
    kube_config_cleanup(&cfg);

    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    char *page, *all, *status;
    size_t page_len, all_len, status_len;
    load_fixture("pods-page.pb", &page, &page_len);
    load_fixture("pods.pb", &all, &all_len);
    load_fixture("status-notfound.pb", &status, &status_len);
    fake_kube_answer_bytes(&f, 200, page, page_len);
    fake_kube_answer_bytes(&f, 200, all, all_len);
    struct kube_list_options paged = {.page_size = 2, .proto_item = on_proto_item};
    memset(&it, 0, sizeof(it));
    assert_int_equal(
        kube_list(c, "/api/v1/namespaces/fixture/pods", &paged, on_item, &it, rv, sizeof(rv), &err),
        K_OK);
    assert_int_equal(it.n, 2 + 6);
    assert_int_equal(it.json.calls, 0);
    assert_int_equal(fake_kube_count(&f), 2);
    assert_non_null(strstr(fake_kube_request(&f, 1)->path, "limit=2&continue=eyJ2Ijoi"));
    fake_kube_answer_bytes(&f, 404, status, status_len);
    assert_int_equal(
        kube_list(c, "/api/v1/namespaces/fixture/pods", &paged, on_item, &it, rv, sizeof(rv), &err),
        K_ENOTFOUND);
    assert_string_equal(err.message, "pods \"nope\" not found");
    /* a cut protobuf answer */
    fake_kube_answer_bytes(&f, 200, all, all_len / 2);
    assert_int_equal(
        kube_list(c, "/api/v1/namespaces/fixture/pods", &paged, on_item, &it, rv, sizeof(rv), &err),
        K_EPARSE);
    free(page);
    free(all);
    free(status);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

/* A proto_item that stops the LIST at its second item. */
static int stop_second(void *ctx, const uint8_t *bytes, size_t len)
{
    struct proto_items *it = ctx;
    (void)bytes;
    (void)len;
    return ++it->n == 2;
}

/*
 * Answers a server could give a LIST that asked for protobuf, each as a LIST that did not: a JSON
 * list is read item by item (and stopped by its callback the same way), a JSON or protobuf error
 * body gives its message, an empty 200 or a protobuf list without a resourceVersion is malformed,
 * and a protobuf item callback that stops gives K_ECANCELED.
 */
static void test_list_protobuf_odd_answers(void **state)
{
    (void)state;
    static const char two[] =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":["
        "{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}";
    static const char forbidden[] = "{\"kind\":\"Status\",\"message\":\"pods is forbidden\"}";
    struct kube_list_options plain = {0}, proto = {.proto_item = on_proto_item};
    struct kube_list_options stop = {.proto_item = stop_second};
    struct kube_error err;
    char rv[32];
    for (int asked = 0; asked < 2; asked++) {
        const struct kube_list_options *o = asked ? &proto : &plain;
        struct fake_kube f;
        fake_kube_init(&f);
        struct kube_client *c = fake_kube_client(&f);
        struct proto_items it = {0};
        fake_kube_answer(&f, 200, 0, two);
        assert_int_equal(kube_list(c, "/api/v1/pods", o, on_item, &it, rv, sizeof(rv), &err), K_OK);
        assert_string_equal(it.json.names, "ab");
        assert_int_equal(it.n, 0);
        assert_string_equal(rv, "5");
        memset(&it, 0, sizeof(it));
        it.json.stop_at = 1;
        fake_kube_answer(&f, 200, 0, two);
        assert_int_equal(kube_list(c, "/api/v1/pods", o, on_item, &it, rv, sizeof(rv), &err),
                         K_ECANCELED);
        assert_int_equal(err.code, K_ECANCELED);
        assert_string_equal(err.message, "canceled");
        assert_string_equal(it.json.names, "a");
        fake_kube_answer(&f, 403, 0, forbidden);
        assert_int_equal(kube_list(c, "/api/v1/pods", o, on_item, &it, rv, sizeof(rv), &err),
                         K_EFORBIDDEN);
        assert_string_equal(err.message, "pods is forbidden");
        fake_kube_answer_bytes(&f, 200, "", 0);
        assert_int_equal(kube_list(c, "/api/v1/pods", o, on_item, &it, rv, sizeof(rv), &err),
                         K_EPARSE);
        kube_client_free(c);
        fake_kube_cleanup(&f);
    }
    /* protobuf: the item callback stops the LIST; a list without a resourceVersion */
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    char *all;
    size_t all_len;
    load_fixture("pods.pb", &all, &all_len);
    fake_kube_answer_bytes(&f, 200, all, all_len);
    struct proto_items it = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", &stop, on_item, &it, rv, sizeof(rv), &err),
                     K_ECANCELED);
    assert_int_equal(err.code, K_ECANCELED);
    assert_int_equal(it.n, 2);
    static const uint8_t no_rv[] = {'k', '8', 's', 0, 0x12, 0x02, 0x0a, 0x00};
    fake_kube_answer_bytes(&f, 200, no_rv, sizeof(no_rv));
    assert_int_equal(kube_list(c, "/api/v1/pods", &proto, on_item, &it, rv, sizeof(rv), &err),
                     K_EPARSE);
    /* a protobuf Status without a message (code 500, reason not UTF-8): the status alone, not
     * the body's bytes */
    static const uint8_t no_msg[] = {'k',  '8',  's',  0,    0x12, 0x07, 0x30,
                                     0xf4, 0x03, 0x22, 0x02, 0xff, 0xfe};
    fake_kube_answer_bytes(&f, 500, no_msg, sizeof(no_msg));
    assert_int_equal(kube_list(c, "/api/v1/pods", &proto, on_item, &it, rv, sizeof(rv), &err),
                     K_ESERVER);
    assert_string_equal(err.message, "HTTP 500");
    free(all);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

static void test_list_hostile_server(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    char rv[32];
    struct kube_list_options paged = {.page_size = 1, .max_pages = 3};

    /* a token that fits in the metadata bound but not in a request URL */
    char *text = page_with_token("a", 100u << 10);
    fake_kube_answer(&f, 200, 0, text);
    free(text);
    struct pages p = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", &paged, on_item, &p, rv, sizeof(rv), &err),
                     K_ETOOBIG);
    assert_int_equal(err.code, K_ETOOBIG);
    assert_string_equal(p.names, "a");
    assert_int_equal(fake_kube_count(&f), 1);

    /* a token that never ends: max_pages requests, then K_ETOOBIG */
    for (int i = 0; i < 3; i++) {
        text = page_with_token("b", 8);
        fake_kube_answer(&f, 200, 0, text);
        free(text);
    }
    struct pages q = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", &paged, on_item, &q, rv, sizeof(rv), &err),
                     K_ETOOBIG);
    assert_int_equal(q.calls, 3);
    assert_int_equal(fake_kube_count(&f), 1 + 3);
    assert_non_null(strstr(fake_kube_request(&f, 3)->path, "continue=cccccccc"));

    /* more items than the bound: the ones before it, then K_ETOOBIG */
    fake_kube_answer(&f, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":"
                     "{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}},{\"metadata\":"
                     "{\"name\":\"c\"}}]}");
    struct kube_list_options two = {.max_items = 2};
    struct pages u = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", &two, on_item, &u, rv, sizeof(rv), &err),
                     K_ETOOBIG);
    assert_string_equal(u.names, "ab");
    assert_non_null(strstr(err.message, "more than 2 items"));

    /* a metadata above KUBE_LIST_MAX_FIELD */
    text = page_with_token("c", KUBE_LIST_MAX_FIELD);
    fake_kube_answer(&f, 200, 0, text);
    free(text);
    struct pages r = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", NULL, on_item, &r, rv, sizeof(rv), &err),
                     K_ETOOBIG);
    assert_int_equal(r.calls, 0);

    /* items after the end of the list */
    fake_kube_answer(&f, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":"
                     "{\"name\":\"d\"}}]}{\"items\":[{\"metadata\":{\"name\":\"e\"}}]}");
    struct pages t = {0};
    assert_int_equal(kube_list(c, "/api/v1/pods", NULL, on_item, &t, rv, sizeof(rv), &err),
                     K_EPARSE);
    assert_string_equal(t.names, "d");
    assert_string_equal(rv, "");

    kube_client_free(c);
    fake_kube_cleanup(&f);
}

static void test_list_pagination(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    char rv[32];

    struct pages p = {0};
    size_t pages = 0;
    struct kube_list_options two = {.page_size = 2, .pages = &pages};
    assert_int_equal(
        kube_list(c, "/api/v1/pods?labelSelector=a%3Db", &two, on_item, &p, rv, sizeof(rv), &err),
        K_OK);
    assert_int_equal(p.calls, 3);
    assert_int_equal(pages, 2);
    assert_string_equal(p.names, "abc");
    assert_string_equal(rv, "500");

    /* Stop after the first item. */
    struct pages stop = {.stop_at = 1};
    assert_int_equal(kube_list(c, "/api/v1/pods?labelSelector=a%3Db", &two, on_item, &stop, rv,
                               sizeof(rv), &err),
                     K_ECANCELED);
    assert_int_equal(stop.calls, 1);
    assert_string_equal(rv, "");

    /* A bound on the pages: the second is not asked for. */
    struct pages one = {0};
    struct kube_list_options bounded = {.page_size = 2, .max_pages = 1};
    assert_int_equal(kube_list(c, "/api/v1/pods?labelSelector=a%3Db", &bounded, on_item, &one, rv,
                               sizeof(rv), &err),
                     K_ETOOBIG);
    assert_string_equal(one.names, "ab");

    /* A list without items. */
    struct pages empty = {0};
    assert_int_equal(kube_list(c, "/api/v1/nodes", NULL, on_item, &empty, rv, sizeof(rv), &err),
                     K_OK);
    assert_int_equal(empty.calls, 0);
    assert_string_equal(rv, "9");

    /* The resourceVersion must fit. */
    char tiny[1];
    assert_int_equal(kube_list(c, "/api/v1/nodes", NULL, on_item, &empty, tiny, sizeof(tiny), &err),
                     K_ETOOBIG);

    /* An expired continue token: listed again in one response at the requested version, as
     * client-go's pager does; what the first page had may come again. */
    struct pages gone = {0};
    pages = 0;
    struct kube_list_options at7 = {
        .page_size = 1, .resource_version = "7", .pages = &pages, .restart = on_restart};
    assert_int_equal(kube_list(c, "/api/v1/expired", &at7, on_item, &gone, rv, sizeof(rv), &err),
                     K_OK);
    assert_int_equal(pages, 3);
    assert_int_equal(gone.restarts, 1);
    assert_string_equal(gone.names, "xy");
    assert_string_equal(rv, "3");
    /* the same asking for protobuf: the pages do, the one response of the whole collection does
     * not (it could pass KUBE_MAX_RESPONSE, which bounds a response held whole) */
    struct proto_items gone_pb = {0};
    pages = 0;
    at7.proto_item = on_proto_item;
    assert_int_equal(kube_list(c, "/api/v1/expired", &at7, on_item, &gone_pb, rv, sizeof(rv), &err),
                     K_OK);
    assert_int_equal(pages, 3);
    assert_string_equal(last_seen().accept, "application/json");
    assert_string_equal(gone_pb.json.names, "xy");
    assert_string_equal(rv, "3");

    /* 410 on the first page: the caller starts again. */
    struct pages first = {0};
    struct kube_list_options one_each = {.page_size = 1};
    assert_int_equal(
        kube_list(c, "/api/v1/gonelist", &one_each, on_item, &first, rv, sizeof(rv), &err),
        K_EGONE);
    assert_int_equal(err.http_status, 410);
    assert_string_equal(err.message, "too old resource version: 5 (9)");
    assert_string_equal(rv, "");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

/* A resourceVersion=0 LIST answered from the watch cache: every item in one response that
 * arrives in pieces of 13 bytes; and a response cut off inside the items. */
static void test_list_streamed(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    char rv[32];
    struct pages all = {0};
    struct kube_list_options o = {.page_size = 500, .resource_version = "0"};
    assert_int_equal(kube_list(c, "/api/v1/bigpods", &o, on_item, &all, rv, sizeof(rv), &err),
                     K_OK);
    assert_int_equal(all.calls, 2000);
    assert_string_equal(rv, "77");

    struct pages cut = {0};
    assert_int_equal(kube_list(c, "/api/v1/cutlist", NULL, on_item, &cut, rv, sizeof(rv), &err),
                     K_EPARSE);
    assert_int_equal(cut.calls, 1);
    assert_non_null(strstr(err.message, "truncated or malformed"));
    assert_string_equal(rv, "");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_patch_and_post(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    json_object *out = NULL;

    json_object *patch = json_tokener_parse("{\"metadata\":{\"annotations\":{\"gputri/cause\":"
                                            "\"no-gpu-node\"}}}");
    assert_int_equal(
        kube_patch_merge(c, "/api/v1/namespaces/ns/pods/p?fieldManager=gputri", patch, &out, &err),
        K_OK);
    struct seen s = last_seen();
    assert_string_equal(s.method, "PATCH");
    assert_string_equal(s.content_type, "application/merge-patch+json");
    assert_string_equal(s.body,
                        "{\"metadata\":{\"annotations\":{\"gputri/cause\":\"no-gpu-node\"}}}");
    assert_non_null(out);
    json_object_put(out);
    /* out may be NULL. */
    assert_int_equal(
        kube_patch_merge(c, "/api/v1/namespaces/ns/pods/p?fieldManager=gputri", patch, NULL, &err),
        K_OK);
    json_object_put(patch);

    json_object *ev = json_tokener_parse("{\"kind\":\"Event\",\"reason\":\"Stuck\"}");
    assert_int_equal(kube_post(c, "/api/v1/namespaces/ns/events", ev, &out, &err), K_OK);
    assert_int_equal(err.http_status, 201);
    s = last_seen();
    assert_string_equal(s.method, "POST");
    assert_string_equal(s.content_type, "application/json");
    json_object_put(out);
    json_object_put(ev);
    /* A single object past KUBE_MAX_OBJECT is refused as it arrives; the same answer to a PATCH,
     * POST or PUT nobody reads is discarded as it arrives (held, it would pass the bound), and of a
     * failed one only the start is kept. */
    assert_int_equal(kube_get(c, "/big", &out, &err), K_ETOOBIG);
    assert_null(out);
    assert_string_equal(err.message, "GET /big: response larger than 4194304 bytes");
    json_object *body = json_tokener_parse("{\"metadata\":{}}");
    assert_int_equal(kube_patch_merge(c, "/big", body, NULL, &err), K_OK);
    assert_int_equal(kube_post(c, "/big", body, NULL, &err), K_OK);
    assert_int_equal(kube_put(c, "/big", body, NULL, &err), K_OK);
    assert_int_equal(kube_patch_merge(c, "/big", body, &out, &err), K_ETOOBIG);
    assert_null(out);
    assert_int_equal(kube_put(c, "/big409", body, &out, &err), K_ECONFLICT);
    assert_int_equal(err.http_status, 409);
    assert_true(strncmp(err.message, "HTTP 409: {\"a\":\"xxx", 17) == 0);
    json_object_put(body);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

/* On a client that asks for it, a LIST's time as a whole is bounded by the request timeout; with
 * no timeout (0) the page bound still ends an endless continue token. */
static void test_list_deadline(void **state)
{
    (void)state;
    struct kube_error err;
    char rv[32];
    struct pages p = {0};
    struct kube_config cfg;
    test_config(&cfg, NULL);
    cfg.request_timeout_set = true;
    cfg.request_timeout_ms = 300;
    struct kube_client *c = kube_client_new(&cfg, NULL);
    kube_client_set_list_deadline(c, true);
    struct kube_client *clone = kube_client_clone(c); /* inherits it */
    size_t pages = 0;
    struct kube_list_options o = {.page_size = 1, .pages = &pages};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&p, 0, sizeof(p));
    assert_int_equal(kube_list(clone, "/api/v1/endless", &o, on_item, &p, rv, sizeof(rv), &err),
                     K_ETIMEDOUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    /* Bounds that hold on a loaded machine and under qemu-user too: the pages take 20 ms each at
     * the server, so a deadline never kept would run to the page bound (minutes), and at most 15
     * pages fit in 300 ms; a starved process may get only the first. */
    assert_true(ms >= 280 && ms < 10000);
    assert_int_equal(err.deadline, 1);
    assert_true(pages >= 1 && pages < 20);
    assert_non_null(strstr(err.message, "LIST /api/v1/endless: not complete within the request "
                                        "timeout of 300 ms"));
    kube_client_free(clone);
    /* --request-timeout=0: no deadline, the page bound */
    cfg.request_timeout_ms = 0;
    struct kube_list_options five = {.page_size = 1, .max_pages = 5};
    assert_int_equal(kube_list(c, "/api/v1/endless", &five, on_item, &p, rv, sizeof(rv), &err),
                     K_ETOOBIG);
    assert_int_equal(err.deadline, 0);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

struct observed {
    int calls;
    char last[64];
};

static void on_request(void *ctx, const char *method, long http_status, int result)
{
    struct observed *o = ctx;
    o->calls++;
    snprintf(o->last, sizeof(o->last), "%s %ld %d", method, http_status, result);
}

static void test_put_and_observer(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    struct observed o = {0};
    json_object *out = NULL;
    kube_set_request_observer(on_request, &o);

    json_object *lease = json_tokener_parse("{\"metadata\":{\"name\":\"l\","
                                            "\"resourceVersion\":\"12\"},\"spec\":{}}");
    assert_int_equal(
        kube_put(c, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", lease, &out, &err),
        K_OK);
    assert_string_equal(last_seen().method, "PUT");
    assert_string_equal(last_seen().content_type, "application/json");
    assert_non_null(out);
    json_object_put(out);
    json_object_put(lease);
    assert_int_equal(o.calls, 1);
    assert_string_equal(o.last, "PUT 200 0");

    lease = json_tokener_parse("{\"metadata\":{\"name\":\"l\",\"resourceVersion\":\"stale\"}}");
    assert_int_equal(
        kube_put(c, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", lease, &out, &err),
        K_ECONFLICT);
    assert_null(out);
    assert_string_equal(err.message, "the object has been modified");
    json_object_put(lease);
    assert_int_equal(o.calls, 2);
    assert_string_equal(o.last, "PUT 409 8");

    kube_set_request_observer(NULL, NULL);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &out, &err), K_OK);
    json_object_put(out);
    assert_int_equal(o.calls, 2);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

struct events {
    char log[512];
    int stop_at;
    int n;
};

static int on_event(void *ctx, enum kube_event_type type, json_object *obj)
{
    struct events *e = ctx;
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    json_object *meta, *rv;
    const char *rvs = "-";
    if (json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_object_get_ex(meta, "resourceVersion", &rv))
        rvs = json_object_get_string(rv);
    size_t len = strlen(e->log);
    snprintf(e->log + len, sizeof(e->log) - len, "%s %s\n", names[type], rvs);
    e->n++;
    return e->stop_at && e->n == e->stop_at;
}

static void test_watch(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;

    struct events e = {0};
    assert_int_equal(kube_watch(c, "/api/v1/nodes", "100", 30, on_event, &e, &err), K_OK);
    assert_string_equal(e.log, "ADDED 101\nBOOKMARK 150\nMODIFIED 160\n");

    struct events stop = {.stop_at = 2};
    assert_int_equal(kube_watch(c, "/api/v1/nodes", "100", 30, on_event, &stop, &err), K_ECANCELED);
    assert_string_equal(stop.log, "ADDED 101\nBOOKMARK 150\n");

    /* An ERROR event ends the watch with K_EGONE and the Status message. */
    struct events gone = {0};
    assert_int_equal(kube_watch(c, "/api/v1/gone", "1", 30, on_event, &gone, &err), K_EGONE);
    assert_int_equal(err.code, K_EGONE);
    assert_int_equal(err.http_status, 410);
    assert_string_equal(err.message, "too old resource version: 1 (500)");
    assert_string_equal(gone.log, "ERROR -\n");

    /* HTTP 410 for the watch request itself. */
    assert_int_equal(kube_watch(c, "/api/v1/gone410", "1", 0, on_event, &gone, &err), K_EGONE);
    assert_int_equal(err.http_status, 410);

    /* The server closes the stream inside an event. */
    struct events trunc = {0};
    assert_int_equal(kube_watch(c, "/api/v1/truncated", NULL, 5, on_event, &trunc, &err), K_EPARSE);
    assert_string_equal(trunc.log, "");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

struct canceler {
    atomic_int *flag;
    int delay_ms;
};

static void *cancel_later(void *arg)
{
    struct canceler *k = arg;
    sleep_ms(k->delay_ms);
    atomic_store(k->flag, 1);
    return NULL;
}

/* Makes *flag c's cancel flag, cleared, and starts a thread that sets it after ms; join it. */
static pthread_t cancel_after(struct kube_client *c, atomic_int *flag, struct canceler *k, int ms)
{
    atomic_store(flag, 0);
    kube_client_set_cancel(c, flag);
    *k = (struct canceler){flag, ms};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_later, k), 0);
    return t;
}

static void test_watch_cancel(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct kube_error err;
    static atomic_int flag;
    struct canceler k;
    pthread_t t = cancel_after(c, &flag, &k, 200);
    struct events e = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(kube_watch(c, "/api/v1/hang", "5", 60, on_event, &e, &err), K_ECANCELED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(secs < 10); /* the watch's own timeout is 60 s; loose for loaded or emulated runs */

    /* With the flag already set, nothing is sent. */
    json_object *obj = NULL;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_ECANCELED);
    kube_client_set_cancel(c, NULL);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_OK);
    json_object_put(obj);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_token_file_reread(void **state)
{
    (void)state;
    char path[] = "/tmp/gputri-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "first\n", 6), 6);
    close(fd);

    struct kube_config cfg;
    test_config(&cfg, "initial");
    cfg.token_file = strdup(path);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    json_object *obj = NULL;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, NULL), K_OK);
    json_object_put(obj);
    assert_string_equal(last_seen().auth, "Bearer first");

    FILE *f = fopen(path, "w");
    fputs("  second  \n", f);
    fclose(f);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, NULL), K_OK);
    json_object_put(obj);
    assert_string_equal(last_seen().auth, "Bearer second");

    /* A token with CR/LF (header injection) is refused: the last good token is kept. */
    f = fopen(path, "w");
    fputs("third\r\nX-Injected: yes\n", f);
    fclose(f);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, NULL), K_OK);
    json_object_put(obj);
    assert_string_equal(last_seen().auth, "Bearer second");

    /* The file disappears: the last good token is kept. */
    unlink(path);
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, NULL), K_OK);
    json_object_put(obj);
    assert_string_equal(last_seen().auth, "Bearer second");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_watch_query(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    struct events e = {0};
    /* Unknown route: 404, but the request line shows how the query was built. */
    assert_int_equal(
        kube_watch(c, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn", "7 8", 0, on_event, &e, NULL),
        K_ENOTFOUND);
    assert_string_equal(last_seen().target, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn&watch=1&"
                                            "allowWatchBookmarks=true&resourceVersion=7%208");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static void test_path_escape(void **state)
{
    (void)state;
    char out[32];
    assert_int_equal(kube_path_escape("a-b.c_d~e", out, sizeof(out)), K_OK);
    assert_string_equal(out, "a-b.c_d~e");
    assert_int_equal(kube_path_escape("k=v,x/y z", out, sizeof(out)), K_OK);
    assert_string_equal(out, "k%3Dv%2Cx%2Fy%20z");
    assert_int_equal(kube_path_escape("\xc3\xa9", out, sizeof(out)), K_OK);
    assert_string_equal(out, "%C3%A9");
    char small[4];
    assert_int_equal(kube_path_escape("abc", small, sizeof(small)), K_OK);
    assert_int_equal(kube_path_escape("abcd", small, sizeof(small)), K_ETOOBIG);
    assert_string_equal(small, "");
    assert_int_equal(kube_path_escape("/", small, sizeof(small)), K_OK);
    assert_string_equal(small, "%2F");
    assert_int_equal(kube_path_escape("a", out, 0), K_ETOOBIG);
}

/* Impersonation headers, one per group, and --request-timeout accepted by libcurl. */
static void test_impersonation_headers(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, "tok");
    cfg.impersonate_user = strdup("alice");
    cfg.impersonate_groups[0] = strdup("g1");
    cfg.impersonate_groups[1] = strdup("g2");
    cfg.n_impersonate_groups = 2;
    cfg.impersonate_uid = strdup("42");
    cfg.request_timeout_set = true;
    cfg.request_timeout_ms = 30000;
    struct kube_client *c = kube_client_new(&cfg, NULL);
    json_object *obj = NULL;
    struct kube_error err;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_OK);
    json_object_put(obj);
    struct seen s = last_seen();
    assert_non_null(strstr(s.headers, "\r\nImpersonate-User: alice\r\n"));
    assert_non_null(strstr(s.headers, "\r\nImpersonate-Group: g1\r\n"));
    assert_non_null(strstr(s.headers, "\r\nImpersonate-Group: g2\r\n"));
    assert_non_null(strstr(s.headers, "\r\nImpersonate-Uid: 42"));
    assert_string_equal(s.auth, "Bearer tok");
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

static int exec_runner(void *ctx, const struct kube_exec_config *ec, const char *info,
                       bool interactive, char **out, size_t *out_len, char *err, size_t errlen)
{
    (void)ctx;
    (void)ec;
    (void)info;
    (void)interactive;
    (void)err;
    (void)errlen;
    *out = strdup("{\"kind\":\"ExecCredential\",\"apiVersion\":\"" KUBE_EXEC_API_V1
                  "\",\"status\":{\"token\":\"from-plugin\"}}");
    *out_len = strlen(*out);
    return K_OK;
}

/* An exec user's token goes into Authorization; a static token would win (not set here). */
static void test_exec_token_header(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_exec_config ec = {.command = "x",
                                  .api_version = KUBE_EXEC_API_V1,
                                  .user = "u",
                                  .interactive = KUBE_EXEC_NEVER};
    cfg.exec_cache = kube_exec_cache_new(&ec, NULL, NULL, exec_runner, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL);
    json_object *obj = NULL;
    struct kube_error err;
    assert_int_equal(kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err), K_OK);
    json_object_put(obj);
    assert_string_equal(last_seen().auth, "Bearer from-plugin");
    kube_client_free(c);
    kube_exec_cache_free(cfg.exec_cache);
    cfg.exec_cache = NULL;
    kube_config_cleanup(&cfg);
}

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* GET the test pod on `c`: its result. */
static int get_pod(struct kube_client *c)
{
    struct kube_error err;
    json_object *obj = NULL;
    int rc = kube_get(c, "/api/v1/namespaces/ns/pods/p", &obj, &err);
    json_object_put(obj);
    return rc;
}

/* How many requests waited for the rate limit since *n0, and for how many ns at least. */
static uint64_t waits_since(uint64_t n0, uint64_t ns0, uint64_t *ns_out)
{
    uint64_t n, ns;
    kube_rate_limit_stats(&n, &ns);
    if (ns_out)
        *ns_out = ns - ns0;
    return n - n0;
}

/* A clock that stands still: the bucket never refills by itself, so each wait is exactly what
 * the reservations add up to, however slowly the machine (or an emulator) runs the requests. */
static int64_t frozen_ns(void *ctx)
{
    (void)ctx;
    return 1000000000;
}

/* One token bucket for every client of the process; watches and opted-out clients pass. */
static void test_rate_limit(void **state)
{
    (void)state;
    struct kube_config cfg;
    test_config(&cfg, NULL);
    struct kube_client *c = kube_client_new(&cfg, NULL), *c2 = kube_client_clone(c);
    struct kube_error err;
    uint64_t n0, ns0, ns;
    kube_rate_limit_stats(&n0, &ns0);
    assert_int_equal(kube_set_rate_limit(0, 1, NULL), K_EINVAL);
    assert_int_equal(kube_set_rate_limit(20, 0, NULL), K_EINVAL);
    const struct clock frozen = {NULL, frozen_ns, frozen_ns};
    assert_int_equal(kube_set_rate_limit(20, 2, &frozen), K_OK);

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the burst: two requests at once, on two clients */
    assert_int_equal(get_pod(c), K_OK);
    assert_int_equal(get_pod(c2), K_OK);
    assert_int_equal(waits_since(n0, ns0, NULL), 0);
    /* then one every 50 ms, waiting, never refused: the third 50 ms after, the fourth 100 ms */
    assert_int_equal(get_pod(c), K_OK);
    assert_int_equal(get_pod(c2), K_OK);
    assert_int_equal(waits_since(n0, ns0, &ns), 2);
    assert_true(ns >= 149000000ull && ns <= 151000000ull);
    assert_true(since(&t0) >= 0.08);

    /* a watch is not limited: nothing waits, however empty the bucket */
    kube_rate_limit_stats(&n0, &ns0);
    struct events e = {0};
    assert_int_equal(kube_watch(c, "/api/v1/nodes", "100", 30, on_event, &e, &err), K_OK);
    assert_int_equal(kube_watch(c, "/api/v1/nodes", "100", 30, on_event, &e, &err), K_OK);
    /* nor a client taken out of it, nor its clones */
    kube_client_set_rate_limited(c2, false);
    struct kube_client *c3 = kube_client_clone(c2);
    assert_int_equal(get_pod(c3), K_OK);
    assert_int_equal(get_pod(c2), K_OK);
    assert_int_equal(waits_since(n0, ns0, NULL), 0);

    /* a wait ends early when the client is canceled */
    assert_int_equal(kube_set_rate_limit(0.2, 1, NULL), K_OK);
    assert_int_equal(get_pod(c), K_OK);
    static atomic_int flag;
    struct canceler k;
    pthread_t t = cancel_after(c, &flag, &k, 200);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(get_pod(c), K_ECANCELED);
    assert_true(since(&t0) < 4.5); /* not the 5 s the token would take */
    pthread_join(t, NULL);
    kube_client_set_cancel(c, NULL);

    assert_int_equal(kube_set_rate_limit(-1, 0, NULL), K_OK); /* off again */
    kube_client_free(c3);
    kube_client_free(c2);
    kube_client_free(c);
    kube_config_cleanup(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_and_headers),
        cmocka_unit_test(test_impersonation_headers),
        cmocka_unit_test(test_exec_token_header),
        cmocka_unit_test(test_status_mapping),
        cmocka_unit_test(test_transport_error),
        cmocka_unit_test(test_default_protocol_https),
        cmocka_unit_test(test_tls_failure_kinds),
        cmocka_unit_test(test_bad_client_key_is_tls),
        cmocka_unit_test(test_list_pagination),
        cmocka_unit_test(test_list_streamed),
        cmocka_unit_test(test_list_hostile_server),
        cmocka_unit_test(test_patch_and_post),
        cmocka_unit_test(test_put_and_observer),
        cmocka_unit_test(test_list_deadline),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_watch_cancel),
        cmocka_unit_test(test_rate_limit),
        cmocka_unit_test(test_token_file_reread),
        cmocka_unit_test(test_watch_query),
        cmocka_unit_test(test_path_escape),
        cmocka_unit_test(test_list_protobuf),
        cmocka_unit_test(test_list_protobuf_odd_answers),
    };
    return cmocka_run_group_tests(tests, server_start, server_stop);
}
