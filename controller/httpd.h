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

/* httpd_port() - the port actually bound (useful with port 0). */
int httpd_port(struct httpd *h);

/* httpd_stop() - stop listening, close every connection, free (http_server_stop without a
 * drain). NULL-safe. */
void httpd_stop(struct httpd *h);

#endif
