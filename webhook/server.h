/*
 * server.h - the HTTPS front of gputri-webhook on libmicrohttpd 0.9.75 (GnuTLS inside).
 *
 * One daemon: internal polling thread + epoll + a thread pool, MHD_USE_TLS with the certificate
 * chosen per handshake by tls_source_retrieve() (MHD_OPTION_HTTPS_CERT_CALLBACK), TLS 1.2 and 1.3
 * only (MHD_OPTION_HTTPS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"), a connection
 * limit and an inactivity timeout (libmicrohttpd's default is none). Requests are dispatched by a
 * route table {method, path, handler}; the query string is ignored (the API server appends
 * ?timeout=Ns).
 *
 * Errors answered by the server itself, never by a handler: unknown path 404, wrong method 405,
 * a body over max_body 413 (at once when Content-Length says so, otherwise after discarding the
 * rest), a body still arriving after request_timeout_ms 408. A client that stalls completely is
 * disconnected by the inactivity timeout. Memory per request is bounded by max_body, and all
 * bodies being received at once by max_buffered: past it a request gets 503 (the API server's
 * failurePolicy then applies).
 *
 * Thread-safety: handlers run concurrently on the pool threads; their ctx must be thread-safe.
 */
#ifndef GPUTRI_WEBHOOK_SERVER_H
#define GPUTRI_WEBHOOK_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "tls_source.h"

#define SERVER_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

struct server_request {
    const char *method;
    const char *path;
    const char *body; /* NUL-terminated, "" when none; valid during the handler call */
    size_t body_len;
};

struct server_response {
    unsigned status;          /* HTTP status; the server preset 200 */
    const char *content_type; /* static string; the server preset "text/plain" */
    char *body;               /* malloc'd by the handler; the server frees it. NULL = empty */
    size_t body_len;
};

typedef void (*server_handler_fn)(void *ctx, const struct server_request *req,
                                  struct server_response *resp);

struct server_route {
    const char *method; /* "GET", "POST" */
    const char *path;   /* exact match, e.g. "/validate" */
    server_handler_fn fn;
    void *ctx;
};

struct server_options {
    const char *bind_address; /* numeric IPv4/IPv6 */
    int port;                 /* 0: any free port (see server_port) */
    int threads;
    int max_connections;
    int connection_timeout; /* seconds of inactivity */
    size_t max_body;
    size_t max_buffered;    /* bodies buffered at once over all connections; 0: 16 x max_body */
    int request_timeout_ms; /* a body must be complete this long after the headers */
    struct tls_source *tls; /* borrowed; installed for the callback */
    const struct server_route *routes; /* borrowed; must outlive the server */
    size_t n_routes;
};

struct server;

/*
 * server_start() - listen and serve. Returns K_OK and *out, K_EINVAL (bad address, TLS not
 * supported by this libmicrohttpd) or K_EIO (bind failed) with a reason in err.
 */
int server_start(const struct server_options *o, struct server **out, char *err, size_t errlen);

/* server_port() - the port actually bound. */
int server_port(struct server *s);

/* server_in_flight() - requests begun and not yet completed. Thread-safe. */
unsigned server_in_flight(struct server *s);

/*
 * server_stop() - stop accepting (MHD_quiesce_daemon), wait up to drain_ms for in-flight
 * requests to finish, then stop the daemon and free everything. NULL-safe. Not concurrent with
 * itself.
 */
void server_stop(struct server *s, int drain_ms);

/*
 * server_json_error() - fill resp with status and a small JSON body {"error": msg}. For
 * handlers; msg is copied (control characters dropped).
 */
void server_json_error(struct server_response *resp, unsigned status, const char *msg);

#endif
