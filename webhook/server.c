/* server.c - libmicrohttpd HTTPS daemon, route table, body cap and request timeout. */
#include "server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/log.h"
#include "util/result.h"

struct server {
    struct MHD_Daemon *d;
    struct server_options o;
    atomic_uint in_flight;
    atomic_size_t buffered; /* body bytes held over all requests */
    int port;
};

struct req_state {
    const struct server_route *route;
    unsigned error;     /* a status the server answers itself, 0 = none */
    const char *reason; /* for that status */
    long long start_ms;
    size_t counted; /* bytes of this body counted in server.buffered */
    struct buf body;
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void server_json_error(struct server_response *resp, unsigned status, const char *msg)
{
    char clean[256];
    size_t j = 0;
    for (size_t i = 0; msg && msg[i] && j + 1 < sizeof(clean); i++) {
        unsigned char c = (unsigned char)msg[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            clean[j++] = (char)c;
    }
    clean[j] = 0;
    free(resp->body);
    resp->status = status;
    resp->content_type = "application/json";
    resp->body = NULL;
    resp->body_len = 0;
    char *b = malloc(j + 16);
    if (b) {
        int n = snprintf(b, j + 16, "{\"error\":\"%s\"}\n", clean);
        resp->body = b;
        resp->body_len = (size_t)n;
    }
}

static enum MHD_Result queue(struct MHD_Connection *conn, struct server_response *r,
                             const char *allow)
{
    struct MHD_Response *mr;
    if (r->body)
        mr = MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_MUST_FREE);
    else
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!mr) {
        free(r->body);
        r->body = NULL;
        return MHD_NO;
    }
    r->body = NULL; /* owned by the response now */
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "text/plain");
    if (allow)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(conn, r->status, mr);
    MHD_destroy_response(mr);
    return ret;
}

static const struct server_route *find_route(const struct server *s, const char *method,
                                             const char *path, const char **allow)
{
    *allow = NULL;
    for (size_t i = 0; i < s->o.n_routes; i++) {
        const struct server_route *r = &s->o.routes[i];
        if (strcmp(r->path, path) != 0)
            continue;
        if (strcmp(r->method, method) == 0)
            return r;
        *allow = r->method;
    }
    return NULL;
}

static enum MHD_Result answer_error(struct MHD_Connection *conn, unsigned status,
                                    const char *reason, const char *allow)
{
    struct server_response r = {0};
    server_json_error(&r, status, reason);
    return queue(conn, &r, allow);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct server *s = cls;
    struct req_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof(*st));
        if (!st)
            return MHD_NO;
        *con_cls = st;
        atomic_fetch_add(&s->in_flight, 1);
        st->start_ms = now_ms();
        buf_init(&st->body, s->o.max_body);
        const char *allow;
        st->route = find_route(s, method, url, &allow);
        if (!st->route) {
            log_info(2, "%s %s: %s", method, url, allow ? "405" : "404");
            return allow ? answer_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed",
                                        allow)
                         : answer_error(conn, MHD_HTTP_NOT_FOUND, "not found", NULL);
        }
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            unsigned long long n = strtoull(cl, &end, 10);
            if (*end || n > s->o.max_body) {
                log_warn("%s %s: Content-Length %s above the %zu-byte cap", method, url, cl,
                         s->o.max_body);
                return answer_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large",
                                    NULL);
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!st->error && now_ms() - st->start_ms > s->o.request_timeout_ms) {
            st->error = MHD_HTTP_REQUEST_TIMEOUT;
            st->reason = "request body too slow";
            buf_cleanup(&st->body);
        }
        if (!st->error) {
            size_t now = atomic_fetch_add(&s->buffered, *upload_data_size) + *upload_data_size;
            st->counted += *upload_data_size;
            if (now > s->o.max_buffered) {
                st->error = MHD_HTTP_SERVICE_UNAVAILABLE;
                st->reason = "too many request bodies in flight";
                buf_cleanup(&st->body);
            }
        }
        if (!st->error) {
            int rc = buf_append(&st->body, upload_data, *upload_data_size);
            if (rc != K_OK) {
                st->error =
                    rc == K_ETOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_INTERNAL_SERVER_ERROR;
                st->reason = rc == K_ETOOBIG ? "request body too large" : "out of memory";
                buf_cleanup(&st->body);
            }
        }
        *upload_data_size = 0; /* consumed (or discarded) */
        return MHD_YES;
    }
    if (st->error) {
        log_warn("%s %s: %u %s", method, url, st->error, st->reason);
        return answer_error(conn, st->error, st->reason, NULL);
    }
    struct server_request req = {
        .method = method,
        .path = url,
        .body = buf_cstr(&st->body),
        .body_len = st->body.len,
    };
    struct server_response resp = {.status = 200, .content_type = "text/plain"};
    st->route->fn(st->route->ctx, &req, &resp);
    buf_cleanup(&st->body);
    return queue(conn, &resp, NULL);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    struct server *s = cls;
    struct req_state *st = *con_cls;
    if (!st)
        return;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        log_info(2, "request ended early (code %d)", (int)toe);
    buf_cleanup(&st->body);
    atomic_fetch_sub(&s->buffered, st->counted);
    free(st);
    *con_cls = NULL;
    atomic_fetch_sub(&s->in_flight, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    log_info(2, "libmicrohttpd: %s", line);
}

int server_start(const struct server_options *o, struct server **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s", "");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
        MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES) {
        snprintf(err, errlen, "libmicrohttpd lacks TLS or the HTTPS certificate callback");
        return K_EINVAL;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS |
                     MHD_USE_ERROR_LOG | MHD_USE_ITC;
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, o->bind_address, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)o->port);
    } else if (inet_pton(AF_INET6, o->bind_address, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)o->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "--bind-address %s is not a numeric IPv4 or IPv6 address",
                 o->bind_address);
        return K_EINVAL;
    }
    struct server *s = calloc(1, sizeof(*s));
    if (!s)
        return K_ENOMEM;
    s->o = *o;
    if (s->o.request_timeout_ms <= 0)
        s->o.request_timeout_ms = 10000;
    if (s->o.max_buffered == 0)
        s->o.max_buffered = 16 * s->o.max_body;
    tls_source_install(o->tls);
    s->d = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
        NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_HTTPS_CERT_CALLBACK,
        tls_source_retrieve, MHD_OPTION_HTTPS_PRIORITIES, SERVER_TLS_PRIORITIES,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(o->threads > 1 ? o->threads : 1),
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
        /* one client (a slowloris) may hold at most half the connections */
        MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)(o->max_connections > 1 ? o->max_connections / 2 : 1),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, errlen, "cannot listen on %s port %d (address in use or not permitted)",
                 o->bind_address, o->port);
        tls_source_install(NULL);
        free(s);
        return K_EIO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    *out = s;
    return K_OK;
}

int server_port(struct server *s)
{
    return s->port;
}

unsigned server_in_flight(struct server *s)
{
    return atomic_load(&s->in_flight);
}

void server_stop(struct server *s, int drain_ms)
{
    if (!s)
        return;
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    long long deadline = now_ms() + drain_ms;
    while (atomic_load(&s->in_flight) > 0 && now_ms() < deadline)
        usleep(10000);
    if (atomic_load(&s->in_flight) > 0)
        log_warn("stopping with %u request(s) still in flight", atomic_load(&s->in_flight));
    MHD_stop_daemon(s->d);
    tls_source_install(NULL);
    free(s);
}
