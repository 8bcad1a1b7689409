/* httpd.c - metrics and probe endpoints over plain HTTP (see httpd.h). */
#include "httpd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "util/log.h"
#include "util/result.h"

#define BODY_LIMIT (16u << 20)

struct httpd {
    struct MHD_Daemon *d;
    httpd_handler_fn handler;
    void *ctx;
    int port;
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct httpd *h = cls;
    (void)version;
    (void)upload_data;
    if (!*con_cls) {
        *con_cls = h; /* first call: headers only */
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0; /* ignore request bodies */
        return MHD_YES;
    }
    struct buf body;
    const char *type = NULL;
    unsigned status;
    buf_init(&body, BODY_LIMIT);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        buf_append_str(&body, "method not allowed\n");
    } else {
        status = h->handler(h->ctx, url, &body, &type);
    }
    size_t len = body.len;
    char *data = buf_take(&body);
    struct MHD_Response *r =
        data ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            type ? type : "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* libmicrohttpd's log callback: fmt is its printf format, checked like one. */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
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

static struct MHD_Daemon *start(struct httpd *h, unsigned flags, const struct sockaddr *sa)
{
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER,
                            mhd_log, NULL, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_END);
}

int httpd_start(const char *addr, httpd_handler_fn handler, void *ctx, struct httpd **out,
                char *err, size_t errlen)
{
    char host[256];
    int port;
    *out = NULL;
    if (httpd_parse_address(addr, host, sizeof(host), &port) != K_OK || port < 0) {
        snprintf(err, errlen, "invalid bind address \"%s\" (want [host]:port)", addr);
        return K_EINVAL;
    }
    struct httpd *h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    h->handler = handler;
    h->ctx = ctx;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (!host[0]) {
        /* Every interface: dual-stack [::] when the kernel has IPv6, else 0.0.0.0. */
        struct sockaddr_in6 in6 = {
            .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
        h->d = start(h, flags | MHD_USE_DUAL_STACK, (struct sockaddr *)&in6);
        if (!h->d) {
            struct sockaddr_in in4 = {.sin_family = AF_INET,
                                      .sin_port = htons((uint16_t)port),
                                      .sin_addr.s_addr = htonl(INADDR_ANY)};
            h->d = start(h, flags, (struct sockaddr *)&in4);
        }
    } else {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        char service[16];
        snprintf(service, sizeof(service), "%d", port);
        int gai = getaddrinfo(host, service, &hints, &ai);
        if (gai != 0) {
            snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(gai));
            free(h);
            return K_EINVAL;
        }
        for (struct addrinfo *a = ai; a && !h->d; a = a->ai_next)
            h->d = start(h, a->ai_family == AF_INET6 ? flags | MHD_USE_IPv6 : flags, a->ai_addr);
        freeaddrinfo(ai);
    }
    if (!h->d) {
        snprintf(err, errlen, "cannot listen on %s (address in use or not permitted)", addr);
        free(h);
        return K_EIO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    *out = h;
    return K_OK;
}

int httpd_port(struct httpd *h)
{
    return h->port;
}

void httpd_stop(struct httpd *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
