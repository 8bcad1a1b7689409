/*
 * Tests for webhook/server.c over real HTTPS (libcurl as the client): routing (404, 405 with
 * Allow), the body cap (413 from Content-Length and from a chunked body), the body and header
 * deadlines, Content-Type (400), Transfer-Encoding (501) and duplicate Content-Length (400), the
 * budget over all bodies (503) and what of it and of the connection slots only a verified client
 * certificate may take, TLS versions, and a certificate replaced on disk being served to new
 * connections.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "server.h"
#include "http/tls_source.h"
#include "util/buf.h"
#include "util/result.h"

#define TLS_DIR FIXTURES_DIR "/admission/tls"
#define MAX_BODY 4096

static void echo_len(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)ctx;
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%zu", req->body_len);
    resp->body = strdup(tmp);
    resp->body_len = (size_t)n;
}

static void ok(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)ctx;
    (void)req;
    resp->body = strdup("ok");
    resp->body_len = 2;
}

/* Says whether the client's certificate verified, and echoes the Authorization header. */
static void whoami(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)ctx;
    char tmp[128];
    int n = snprintf(tmp, sizeof(tmp), "%s %s", req->client_verified ? "verified" : "unverified",
                     req->authorization ? req->authorization : "-");
    resp->body = strdup(tmp);
    resp->body_len = (size_t)n;
}

static const struct http_route routes[] = {
    {"GET", "/whoami", whoami, NULL, NULL, NULL, NULL},
    {"POST", "/echo", echo_len, NULL, NULL, NULL, NULL},
    {"POST", "/json", echo_len, NULL, "application/json", NULL, NULL},
    {"GET", "/healthz", ok, NULL, NULL, NULL, NULL},
};

struct fx {
    char dir[64], cert[128], key[128];
    struct tls_source *tls;
    struct client_ca *client_ca;
    struct server *srv;
    int port;
};

static void install(const char *src_name, const char *dst)
{
    char src[512], tmp[256], cmd[1024];
    snprintf(src, sizeof(src), "%s/%s", TLS_DIR, src_name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, tmp);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(rename(tmp, dst), 0);
}

static size_t max_buffered; /* 0: the server's default */
static int max_connections = 16;
static int body_stall_ms;   /* 0: the server's default */
static bool with_client_ca; /* --client-ca-file client-ca.crt */
/* Generous by default: a TLS handshake under valgrind takes a while. */
static int request_timeout_ms = 10000, header_timeout_ms = 10000;

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/gputri-srv-test.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->cert, sizeof(f->cert), "%s/tls.crt", f->dir);
    snprintf(f->key, sizeof(f->key), "%s/tls.key", f->dir);
    install("a.crt", f->cert);
    install("a.key", f->key);
    char err[512];
    if (tls_source_new(f->cert, f->key, &f->tls, err, sizeof(err)) != K_OK)
        return -1;
    if (with_client_ca &&
        client_ca_new(TLS_DIR "/client-ca.crt", &f->client_ca, err, sizeof(err)) != K_OK)
        return -1;
    struct server_options o = {
        .bind_address = "127.0.0.1",
        .port = 0,
        .threads = 2,
        .max_connections = max_connections,
        .body_stall_ms = body_stall_ms,
        .connection_timeout = 5,
        .max_body = MAX_BODY,
        .max_buffered = max_buffered,
        .request_timeout_ms = request_timeout_ms,
        .header_timeout_ms = header_timeout_ms,
        .tls = f->tls,
        .client_ca = f->client_ca,
        .routes = routes,
        .n_routes = sizeof(routes) / sizeof(routes[0]),
    };
    if (server_start(&o, &f->srv, err, sizeof(err)) != K_OK) {
        fprintf(stderr, "server_start: %s\n", err);
        return -1;
    }
    f->port = server_port(f->srv);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    server_stop(f->srv, 1000);
    tls_source_free(f->tls);
    client_ca_free(f->client_ca);
    unlink(f->cert);
    unlink(f->key);
    rmdir(f->dir);
    free(f);
    return 0;
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    buf_append(ud, p, size * n);
    return size * n;
}

struct slow {
    int chunks;
    int delay_ms;
    size_t chunk;
};

static size_t slow_read(char *p, size_t size, size_t n, void *ud)
{
    struct slow *s = ud;
    if (s->chunks-- <= 0)
        return 0;
    usleep((useconds_t)s->delay_ms * 1000);
    size_t len = s->chunk < size * n ? s->chunk : size * n;
    memset(p, 'x', len);
    return len;
}

struct call {
    const char *method, *path, *ca;
    const char *body;
    size_t body_len;
    struct slow *slow;       /* chunked upload without a length */
    long tls_max;            /* CURL_SSLVERSION_MAX_* or 0 */
    const char *te;          /* the slow upload's Transfer-Encoding header; NULL: chunked */
    const char *hdr[3];      /* more request headers */
    const char *client;      /* client certificate and key: <client>.crt and <client>.key */
    const char *src;         /* source address (127.0.0.2, ...); NULL: any */
    curl_read_callback read; /* with slow: the upload's read callback instead of slow_read */
};

/* Returns the HTTP status (0 on a transport/TLS error); body into out when non-NULL. */
static long call(const struct fx *f, const struct call *c, struct buf *out, char *allow,
                 size_t allow_len)
{
    CURL *h = curl_easy_init();
    char url[256], ca[512];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", f->port, c->path);
    snprintf(ca, sizeof(ca), "%s/%s", TLS_DIR, c->ca ? c->ca : "a.crt");
    struct buf sink;
    buf_init(&sink, 1 << 20);
    struct buf hdr;
    buf_init(&hdr, 1 << 16);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out ? out : &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &hdr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
    if (c->tls_max)
        curl_easy_setopt(h, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1 | c->tls_max);
    char cc[512], ck[512];
    if (c->client) {
        snprintf(cc, sizeof(cc), "%s/%s.crt", TLS_DIR, c->client);
        snprintf(ck, sizeof(ck), "%s/%s.key", TLS_DIR, c->client);
        curl_easy_setopt(h, CURLOPT_SSLCERT, cc);
        curl_easy_setopt(h, CURLOPT_SSLKEY, ck);
    }
    if (c->src)
        curl_easy_setopt(h, CURLOPT_INTERFACE, c->src);
    struct curl_slist *hl = NULL;
    if (c->slow) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, c->read ? c->read : slow_read);
        curl_easy_setopt(h, CURLOPT_READDATA, c->slow);
        hl = curl_slist_append(hl, c->te ? c->te : "Transfer-Encoding: chunked");
        hl = curl_slist_append(hl, "Expect:");
    } else if (c->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)c->body_len);
    }
    for (size_t i = 0; i < sizeof(c->hdr) / sizeof(c->hdr[0]) && c->hdr[i]; i++)
        hl = curl_slist_append(hl, c->hdr[i]);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    if (c->method)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
    long status = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (allow) {
        const char *a = strstr(buf_cstr(&hdr), "Allow: ");
        snprintf(allow, allow_len, "%s", a ? a + 7 : "");
        allow[strcspn(allow, "\r\n")] = 0;
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    buf_cleanup(&sink);
    buf_cleanup(&hdr);
    return status;
}

/* The server finishes a request's bookkeeping (in-flight count, body budget) after the client
 * already has the response: wait for it, up to 2 s. */
static void wait_idle(struct fx *f)
{
    for (int i = 0; i < 200 && server_in_flight(f->srv) != 0; i++)
        usleep(10 * 1000);
}

static void test_routes(void **state)
{
    struct fx *f = *state;
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(call(f, &(struct call){.path = "/healthz"}, &b, NULL, 0), 200);
    assert_string_equal(buf_cstr(&b), "ok");
    assert_int_equal(call(f, &(struct call){.path = "/healthz?x=1"}, NULL, NULL, 0), 200);
    assert_int_equal(call(f, &(struct call){.path = "/nope"}, NULL, NULL, 0), 404);
    char allow[64];
    assert_int_equal(call(f, &(struct call){.path = "/healthz", .body = "x", .body_len = 1}, NULL,
                          allow, sizeof(allow)),
                     405);
    assert_string_equal(allow, "GET, HEAD");
    buf_reset(&b);
    char body[1000];
    memset(body, 'y', sizeof(body));
    assert_int_equal(
        call(f, &(struct call){.path = "/echo?timeout=3s", .body = body, .body_len = 1000}, &b,
             NULL, 0),
        200);
    assert_string_equal(buf_cstr(&b), "1000");
    buf_cleanup(&b);
    wait_idle(f);
    assert_int_equal(server_in_flight(f->srv), 0);
}

static void test_body_cap(void **state)
{
    struct fx *f = *state;
    char *big = malloc(MAX_BODY + 1);
    memset(big, 'z', MAX_BODY + 1);
    struct buf b;
    buf_init(&b, 1 << 20);
    /* exactly the cap is fine, one byte more is 413 */
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = big, .body_len = MAX_BODY}, &b, NULL, 0),
        200);
    assert_int_equal(call(f, &(struct call){.path = "/echo", .body = big, .body_len = MAX_BODY + 1},
                          NULL, NULL, 0),
                     413);
    /* chunked, no Content-Length: counted as it arrives */
    struct slow s = {.chunks = 3, .delay_ms = 0, .chunk = 2000};
    assert_int_equal(call(f, &(struct call){.path = "/echo", .slow = &s}, NULL, NULL, 0), 413);
    free(big);
    buf_cleanup(&b);
}

/* A body trickling in faster than any inactivity timeout is still cut at the body deadline
 * (400 ms here): the client, which would go on for 20 s, finds its connection closed. */
static void test_slow_body(void **state)
{
    struct fx *f = *state;
    struct slow s = {.chunks = 1000, .delay_ms = 20, .chunk = 1};
    assert_int_equal(call(f, &(struct call){.path = "/echo", .slow = &s}, NULL, NULL, 0), 0);
    assert_true(s.chunks > 0);
    struct http_server_stats st;
    server_stats(f->srv, &st);
    assert_int_equal(st.body_timeouts, 1);
}

/* A connection that never completes its TLS handshake and headers is closed at the header
 * deadline (400 ms here), long before the 5 s inactivity timeout would matter. */
static void test_header_deadline(void **state)
{
    struct fx *f = *state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    /* keep it busy below the inactivity timeout: one byte of a ClientHello now and then */
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200 * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char c;
    ssize_t n = -1;
    int sent = 0;
    for (; sent < 50; sent++) { /* 50 x 200 ms: far past the deadline */
        if (send(fd, "\x16", 1, MSG_NOSIGNAL) != 1)
            break;
        n = recv(fd, &c, 1, 0);
        if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            break;
    }
    close(fd);
    assert_true(sent < 50);
    struct http_server_stats st;
    server_stats(f->srv, &st);
    assert_int_equal(st.header_timeouts, 1);
}

static void test_content_type(void **state)
{
    struct fx *f = *state;
    const char *body = "{}";
    /* curl's default for a POST is application/x-www-form-urlencoded */
    assert_int_equal(
        call(f, &(struct call){.path = "/json", .body = body, .body_len = 2}, NULL, NULL, 0), 400);
    assert_int_equal(
        call(f,
             &(struct call){.path = "/json", .body = body, .body_len = 2, .hdr = {"Content-Type:"}},
             NULL, NULL, 0),
        400);
    assert_int_equal(
        call(f,
             &(struct call){
                 .path = "/json", .body = body, .body_len = 2, .hdr = {"Content-Type: text/json"}},
             NULL, NULL, 0),
        400);
    assert_int_equal(call(f,
                          &(struct call){.path = "/json",
                                         .body = body,
                                         .body_len = 2,
                                         .hdr = {"Content-Type: application/json"}},
                          NULL, NULL, 0),
                     200);
    assert_int_equal(call(f,
                          &(struct call){.path = "/json",
                                         .body = body,
                                         .body_len = 2,
                                         .hdr = {"Content-Type: Application/JSON; charset=utf-8"}},
                          NULL, NULL, 0),
                     200);
}

static void test_framing(void **state)
{
    struct fx *f = *state;
    /* a coding libmicrohttpd does not decode: answered at once, not after the inactivity timeout */
    struct slow s = {.chunks = 1, .delay_ms = 0, .chunk = 4};
    assert_int_equal(
        call(f,
             &(struct call){.path = "/echo", .slow = &s, .te = "Transfer-Encoding: gzip, chunked"},
             NULL, NULL, 0),
        501);
    s.chunks = 1;
    assert_int_equal(call(f, &(struct call){.path = "/echo", .slow = &s}, NULL, NULL, 0), 200);
    /* two different lengths: which one frames the body is ambiguous */
    assert_int_equal(call(f,
                          &(struct call){.path = "/echo",
                                         .body = "abcd",
                                         .body_len = 4,
                                         .hdr = {"Content-Length: 4", "Content-Length: 5"}},
                          NULL, NULL, 0),
                     400);
    struct buf b;
    buf_init(&b, 1 << 10);
    assert_int_equal(call(f,
                          &(struct call){.path = "/echo",
                                         .body = "abcd",
                                         .body_len = 4,
                                         .hdr = {"Content-Length: 4", "Content-Length: 4"}},
                          &b, NULL, 0),
                     200);
    assert_string_equal(buf_cstr(&b), "4");
    buf_cleanup(&b);
}

static void test_tls_versions(void **state)
{
    struct fx *f = *state;
    assert_int_equal(
        call(f, &(struct call){.path = "/healthz", .tls_max = CURL_SSLVERSION_MAX_TLSv1_1}, NULL,
             NULL, 0),
        0);
    assert_int_equal(
        call(f, &(struct call){.path = "/healthz", .tls_max = CURL_SSLVERSION_MAX_TLSv1_2}, NULL,
             NULL, 0),
        200);
    assert_int_equal(
        call(f, &(struct call){.path = "/healthz", .tls_max = CURL_SSLVERSION_MAX_TLSv1_3}, NULL,
             NULL, 0),
        200);
}

static void test_cert_rotation(void **state)
{
    struct fx *f = *state;
    /* the reloader looks at the files at most once a second: of the fake clock */
    static struct clock_fake clk;
    clock_fake_init(&clk, 0);
    static struct clock fake;
    fake = clock_fake_clock(&clk);
    tls_source_set_clock(f->tls, &fake);
    assert_int_equal(call(f, &(struct call){.path = "/healthz", .ca = "a.crt"}, NULL, NULL, 0),
                     200);
    install("b.key", f->key);
    install("b.crt", f->cert);
    clock_fake_advance_ms(&clk, 1000);
    /* the first handshake after a second notices the change and already gets b */
    assert_int_equal(call(f, &(struct call){.path = "/healthz", .ca = "b.crt"}, NULL, NULL, 0),
                     200);
    assert_int_equal(call(f, &(struct call){.path = "/healthz", .ca = "a.crt"}, NULL, NULL, 0), 0);
    assert_int_equal(tls_source_generation(f->tls), 2);
    /* a broken replacement keeps b */
    install("garbage.pem", f->cert);
    clock_fake_advance_ms(&clk, 1000);
    assert_int_equal(call(f, &(struct call){.path = "/healthz", .ca = "b.crt"}, NULL, NULL, 0),
                     200);
    assert_int_equal(tls_source_generation(f->tls), 2);
}

static int setup_client_ca(void **state)
{
    with_client_ca = true;
    int rc = setup(state);
    with_client_ca = false;
    return rc;
}

/* The certificate is asked for, not required: every caller is answered; only a chain from the
 * client CA, for client authentication, is verified. */
static void test_client_certificates(void **state)
{
    struct fx *f = *state;
    const char *hdr[3] = {"Authorization: Bearer abc"};
    for (int tls13 = 0; tls13 < 2; tls13++) {
        long max = tls13 ? CURL_SSLVERSION_MAX_TLSv1_3 : CURL_SSLVERSION_MAX_TLSv1_2;
        struct buf out;
        buf_init(&out, 4096);
        assert_int_equal(call(f, &(struct call){.path = "/whoami", .tls_max = max, .hdr = {hdr[0]}},
                              &out, NULL, 0),
                         200);
        assert_string_equal(buf_cstr(&out), "unverified Bearer abc");
        buf_reset(&out);
        assert_int_equal(call(f,
                              &(struct call){.path = "/whoami", .tls_max = max, .client = "client"},
                              &out, NULL, 0),
                         200);
        assert_string_equal(buf_cstr(&out), "verified -");
        buf_reset(&out);
        assert_int_equal(
            call(f, &(struct call){.path = "/whoami", .tls_max = max, .client = "client-other"},
                 &out, NULL, 0),
            200);
        assert_string_equal(buf_cstr(&out), "unverified -");
        buf_cleanup(&out);
    }
}

/* Without a client CA no certificate is asked for, and none counts as verified. */
static void test_no_client_ca(void **state)
{
    struct fx *f = *state;
    struct buf out;
    buf_init(&out, 4096);
    assert_int_equal(call(f, &(struct call){.path = "/whoami", .client = "client"}, &out, NULL, 0),
                     200);
    assert_string_equal(buf_cstr(&out), "unverified -");
    buf_cleanup(&out);
}

static int setup_short_body(void **state)
{
    request_timeout_ms = 400;
    int rc = setup(state);
    request_timeout_ms = 10000;
    return rc;
}

static int setup_short_headers(void **state)
{
    header_timeout_ms = 400;
    int rc = setup(state);
    header_timeout_ms = 10000;
    return rc;
}

static int setup_small_budget(void **state)
{
    max_buffered = 1000;
    int rc = setup(state);
    max_buffered = 0;
    return rc;
}

static void test_buffer_budget(void **state)
{
    struct fx *f = *state;
    char body[2000];
    memset(body, 'q', sizeof(body));
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = body, .body_len = 500}, NULL, NULL, 0),
        200);
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = body, .body_len = 2000}, NULL, NULL, 0),
        503);
    /* the budget is given back when requests end */
    wait_idle(f);
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = body, .body_len = 900}, NULL, NULL, 0),
        200);
}

/* An upload of HOLD_BYTES that then waits (up to 5 s) for `release`, then ends. */
#define HOLD_BYTES 4000
static atomic_bool release;
static atomic_int held;

static size_t hold_read(char *p, size_t size, size_t n, void *ud)
{
    struct slow *s = ud;
    if (s->chunks-- > 0) {
        size_t len = HOLD_BYTES < size * n ? HOLD_BYTES : size * n;
        memset(p, 'h', len);
        atomic_fetch_add(&held, 1);
        return len;
    }
    for (int i = 0; i < 500 && !atomic_load(&release); i++)
        usleep(10 * 1000);
    return 0;
}

struct holder {
    struct fx *f;
    struct slow slow;
    pthread_t t;
};

static void *hold(void *arg)
{
    struct holder *h = arg;
    call(h->f,
         &(struct call){.path = "/echo", .slow = &h->slow, .read = hold_read, .src = "127.0.0.2"},
         NULL, NULL, 0);
    return NULL;
}

static int setup_reserve(void **state)
{
    max_buffered = 2 * MAX_BODY; /* half of it kept for verified requests */
    body_stall_ms = 10000;       /* the holder's stall is the test's to end */
    with_client_ca = true;
    int rc = setup(state);
    max_buffered = 0;
    body_stall_ms = 0;
    with_client_ca = false;
    return rc;
}

/*
 * The verified client's reserve: an unverified upload from 127.0.0.2 holds all that unverified
 * requests may hold (4,000 of 4,096 bytes); another unverified body gets 503 at once, one from
 * the verified client certificate is answered.
 */
static void test_verified_reserve(void **state)
{
    struct fx *f = *state;
    atomic_store(&release, false);
    atomic_store(&held, 0);
    struct holder h = {.f = f, .slow = {.chunks = 1}};
    assert_int_equal(pthread_create(&h.t, NULL, hold, &h), 0);
    for (int i = 0; i < 500 && (atomic_load(&held) == 0 || server_in_flight(f->srv) == 0); i++)
        usleep(10 * 1000);
    usleep(100 * 1000); /* the 4,000 bytes read by the server */
    char body[3000];
    memset(body, 'q', sizeof(body));
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = body, .body_len = 3000}, NULL, NULL, 0),
        503);
    struct buf out;
    buf_init(&out, 4096);
    assert_int_equal(
        call(f, &(struct call){.path = "/echo", .body = body, .body_len = 3000, .client = "client"},
             &out, NULL, 0),
        200);
    assert_string_equal(buf_cstr(&out), "3000");
    buf_cleanup(&out);
    atomic_store(&release, true);
    pthread_join(h.t, NULL);
    struct http_server_stats st;
    server_stats(f->srv, &st);
    assert_int_equal(st.over_budget, 1);
}

static int setup_few_connections(void **state)
{
    max_connections = 8; /* 1 kept free, 2 for verified connections: 5 unverified */
    with_client_ca = true;
    int rc = setup(state);
    max_connections = 16;
    with_client_ca = false;
    return rc;
}

/* Idle connections from 127.0.0.2 fill every unverified slot; the verified client still gets
 * in (its new connection is not known to verify until its headers: one idle one is closed for
 * it), and then an unverified client from another address fits in the slot left. */
static void test_connection_slots(void **state)
{
    struct fx *f = *state;
    enum { IDLE = 5 };
    int fds[IDLE];
    for (int i = 0; i < IDLE; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in me = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
        inet_pton(AF_INET, "127.0.0.2", &me.sin_addr);
        inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
        to.sin_port = htons((uint16_t)f->port);
        assert_int_equal(bind(fds[i], (struct sockaddr *)&me, sizeof(me)), 0);
        assert_int_equal(connect(fds[i], (struct sockaddr *)&to, sizeof(to)), 0);
    }
    struct http_server_stats st;
    for (int i = 0; i < 200; i++) {
        server_stats(f->srv, &st);
        if (st.connections == IDLE)
            break;
        usleep(10 * 1000);
    }
    assert_int_equal(st.connections, IDLE);
    struct buf out;
    buf_init(&out, 4096);
    assert_int_equal(call(f, &(struct call){.path = "/whoami", .client = "client"}, &out, NULL, 0),
                     200);
    assert_string_equal(buf_cstr(&out), "verified -");
    buf_reset(&out);
    assert_int_equal(call(f, &(struct call){.path = "/whoami", .src = "127.0.0.3"}, &out, NULL, 0),
                     200);
    assert_string_equal(buf_cstr(&out), "unverified -");
    buf_cleanup(&out);
    server_stats(f->srv, &st);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(st.shed, 0);
    for (int i = 0; i < IDLE; i++)
        close(fds[i]);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_body_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_body, setup_short_body, teardown),
        cmocka_unit_test_setup_teardown(test_header_deadline, setup_short_headers, teardown),
        cmocka_unit_test_setup_teardown(test_content_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cert_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffer_budget, setup_small_budget, teardown),
        cmocka_unit_test_setup_teardown(test_client_certificates, setup_client_ca, teardown),
        cmocka_unit_test_setup_teardown(test_no_client_ca, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verified_reserve, setup_reserve, teardown),
        cmocka_unit_test_setup_teardown(test_connection_slots, setup_few_connections, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
