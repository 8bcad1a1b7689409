/*
 * httpd.h - a plain-HTTP server for metrics and health probes on core/http/server.h (one polling
 * thread, 64 connections, 10 s inactivity timeout, and that server's HTTP rules and header/body
 * deadlines). GET and HEAD only (405 with "Allow: GET, HEAD" otherwise); every request is
 * answered by one handler callback.
 */
#ifndef GPUTRI_HTTPD_H
#define GPUTRI_HTTPD_H

#include <stddef.h>

#include "util/buf.h"

/*
 * A request handler: fill `body` (empty, limit 16 MiB) and *content_type (a static string;
 * "text/plain; charset=utf-8" when left NULL) and return the HTTP status. Called from the
 * server's thread, one request at a time; it must be thread-safe with respect to the rest of
 * the program.
 */
typedef unsigned (*httpd_handler_fn)(void *ctx, const char *path, struct buf *body,
                                     const char **content_type);

struct httpd;

/*
 * httpd_parse_address() - split a bind address as controller-runtime takes it: ":8080" (every
 * interface), "127.0.0.1:8080", "[::1]:8080", "localhost:8080". `host` (hostlen bytes) gets ""
 * for every interface; *port gets the port (0 picks a free one). "0" or "" mean "off": returns
 * K_OK with *port = -1. Returns K_EINVAL for anything else.
 */
int httpd_parse_address(const char *addr, char *host, size_t hostlen, int *port);

/*
 * httpd_start() - listen on `addr` (see httpd_parse_address; not "off") and serve with
 * `handler`/`ctx` (borrowed until httpd_stop). On failure returns K_EINVAL (bad address) or
 * K_EIO (cannot listen), writes a reason into err, and *out is NULL.
 */
int httpd_start(const char *addr, httpd_handler_fn handler, void *ctx, struct httpd **out,
                char *err, size_t errlen);

/*
 * A filter in front of the handler for the paths it covers: returns 0 to let the request
 * through, or the HTTP status to answer instead with `msg` (msglen bytes) as a plain-text body.
 * `client` is the peer's address (http_request.client_addr; NULL when unknown), so a filter can
 * keep per-client limits; `authorization` is the request's Authorization header (NULL when
 * absent). Same threading as the handler.
 */
typedef unsigned (*httpd_filter_fn)(void *ctx, const char *client, const char *method,
                                    const char *path, const char *authorization, char *msg,
                                    size_t msglen);

struct tls_source;

struct httpd_options {
    const char *addr; /* see httpd_parse_address; not "off" */
    httpd_handler_fn handler;
    void *ctx;
    /* HTTPS (TLS 1.2 and 1.3) with the certificate of `tls` (borrowed, installed for the
     * GnuTLS callback: one per process, http/tls_source.h); NULL: plain HTTP */
    struct tls_source *tls;
    httpd_filter_fn filter; /* NULL: none */
    void *filter_ctx;
    const char *filter_path; /* the one path the filter covers, e.g. "/metrics" */
};

/* httpd_start_opts() - httpd_start with TLS and a filter; same results. */
int httpd_start_opts(const struct httpd_options *o, struct httpd **out, char *err, size_t errlen);

/* httpd_port() - the port actually bound (useful with port 0). */
int httpd_port(struct httpd *h);

/* httpd_stop() - stop listening, close every connection, free (http_server_stop without a
 * drain). NULL-safe. */
void httpd_stop(struct httpd *h);

#endif
