/* httpd.c - metrics and probe endpoints over plain HTTP on core/http/server.c (see httpd.h). */
#include "httpd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/server.h"
#include "http/tls_source.h"
#include "util/errbuf.h"
#include "util/result.h"

#define BODY_LIMIT (16u << 20)

struct httpd {
    struct http_server *srv;
    httpd_handler_fn handler;
    void *ctx;
    httpd_filter_fn filter;
    void *filter_ctx;
    const char *filter_path;
    bool tls;
    struct http_route route; /* GET (and HEAD) on every path */
};

int httpd_parse_address(const char *addr, char *host, size_t hostlen, int *port)
{
    *port = -1;
    host[0] = '\0';
    if (!addr || !*addr || strcmp(addr, "0") == 0)
        return K_OK;
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return K_EINVAL;
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    } else if (memchr(h, ':', hlen)) {
        return K_EINVAL; /* an IPv6 address needs brackets */
    }
    if (hlen >= hostlen)
        return K_EINVAL;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || p < 0 || p > 65535)
        return K_EINVAL;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)p;
    return K_OK;
}

static void serve(void *ctx, const struct http_request *req, struct http_response *resp)
{
    struct httpd *h = ctx;
    if (h->filter && h->filter_path && strcmp(req->path, h->filter_path) == 0) {
        char msg[256] = "";
        unsigned st = h->filter(h->filter_ctx, req->client_addr, req->method, req->path,
                                req->authorization, msg, sizeof(msg));
        if (st) {
            size_t n = strlen(msg);
            resp->status = st;
            resp->body = malloc(n + 2);
            if (resp->body) {
                memcpy(resp->body, msg, n);
                resp->body[n] = '\n';
                resp->body[n + 1] = 0;
                resp->body_len = n + 1;
            }
            return;
        }
    }
    struct buf body;
    const char *type = NULL;
    buf_init(&body, BODY_LIMIT);
    resp->status = h->handler(h->ctx, req->path, &body, &type);
    resp->content_type = type ? type : "text/plain; charset=utf-8";
    resp->body_len = body.len;
    resp->body = buf_take(&body);
}

int httpd_start(const char *addr, httpd_handler_fn handler, void *ctx, struct httpd **out,
                char *err, size_t errlen)
{
    struct httpd_options o = {.addr = addr, .handler = handler, .ctx = ctx};
    return httpd_start_opts(&o, out, err, errlen);
}

int httpd_start_opts(const struct httpd_options *opts, struct httpd **out, char *err, size_t errlen)
{
    char host[256];
    int port;
    const char *addr = opts->addr;
    *out = NULL;
    if (httpd_parse_address(addr, host, sizeof(host), &port) != K_OK || port < 0) {
        errbuf_printf(err, errlen, "invalid bind address \"%s\" (want [host]:port)", addr);
        return K_EINVAL;
    }
    struct httpd *h = calloc(1, sizeof(*h));
    if (!h) {
        errbuf_printf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    h->handler = opts->handler;
    h->ctx = opts->ctx;
    h->filter = opts->filter;
    h->filter_ctx = opts->filter_ctx;
    h->filter_path = opts->filter_path;
    h->tls = opts->tls != NULL;
    h->route = (struct http_route){.method = "GET", .path = NULL, .fn = serve, .ctx = h};
    struct http_server_options o = {
        .host = host,
        .port = port,
        .threads = 1, /* one request at a time (httpd_handler_fn's contract) */
        .max_connections = 64,
        .idle_timeout_s = 10,
        .connection_memory = 32768,
        .max_body = 4096, /* GET and HEAD only: a body is never read */
        .routes = &h->route,
        .n_routes = 1,
        .tls_cert_callback = opts->tls ? (http_fn_ptr)tls_source_retrieve : NULL,
        .tls_priorities = opts->tls ? "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" : NULL,
        .name = opts->tls ? "httpsd" : "httpd",
    };
    if (opts->tls)
        tls_source_install(opts->tls);
    int rc = http_server_start(&o, &h->srv, err, errlen);
    if (rc != K_OK) {
        if (opts->tls)
            tls_source_install(NULL);
        free(h);
        return rc;
    }
    *out = h;
    return K_OK;
}

int httpd_port(struct httpd *h)
{
    return http_server_port(h->srv);
}

void httpd_stop(struct httpd *h)
{
    if (!h)
        return;
    http_server_stop(h->srv, 0);
    if (h->tls)
        tls_source_install(NULL);
    free(h);
}
