/* server.c - the webhook's HTTPS server on core/http/server.c (see server.h). */
#include "server.h"

#include <stdlib.h>

#include "util/errbuf.h"
#include "util/result.h"

struct server {
    struct http_server *http;
};

int server_start(const struct server_options *o, struct server **out, char *err, size_t errlen)
{
    *out = NULL;
    struct server *s = calloc(1, sizeof(*s));
    if (!s) {
        errbuf_printf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    unsigned max_conn = o->max_connections > 0 ? (unsigned)o->max_connections : 1;
    size_t max_buffered = o->max_buffered ? o->max_buffered : 16 * o->max_body;
    unsigned threads = o->threads > 1 ? (unsigned)o->threads : 1;
    unsigned half = threads / 2 ? threads / 2 : 1;
    struct http_lane_options lanes[SERVER_LANES] = {
        [SERVER_LANE_REVIEWS] = {.workers = threads,
                                 .max_queued = SERVER_LANE_MAX_QUEUED,
                                 .max_wait_ms = SERVER_LANE_MAX_WAIT_MS},
        [SERVER_LANE_DRA] = {.workers = half,
                             .max_queued = SERVER_LANE_MAX_QUEUED,
                             .max_wait_ms = SERVER_LANE_MAX_WAIT_MS,
                             .nice = SERVER_LANE_NICE},
        [SERVER_LANE_UNVERIFIED] = {.workers = half,
                                    .max_queued = SERVER_LANE_MAX_QUEUED,
                                    .max_wait_ms = SERVER_LANE_MAX_WAIT_MS,
                                    .nice = SERVER_LANE_NICE},
    };
    struct http_server_options ho = {
        .host = o->bind_address,
        .numeric_host = true,
        .port = o->port,
        .threads = threads,
        .max_connections = max_conn,
        /* no cap per address: the shares per address (server.h) replace it */
        .verified_connections = o->client_ca ? max_conn / 4 : 0,
        .idle_timeout_s = o->connection_timeout > 0 ? (unsigned)o->connection_timeout : 0,
        /* headers only (bodies go through the upload callback); at most 32 KiB libmicrohttpd
         * takes it from malloc instead of an mmap and munmap per connection */
        .connection_memory = 32768,
        .max_body = o->max_body,
        .max_buffered = max_buffered,
        .verified_buffered = o->client_ca ? max_buffered / 2 : 0,
        .header_timeout_ms = o->header_timeout_ms,
        .body_timeout_ms = o->request_timeout_ms,
        .body_min_rate = o->body_min_rate ? o->body_min_rate : SERVER_BODY_MIN_RATE,
        .body_stall_ms = o->body_stall_ms > 0 ? o->body_stall_ms : SERVER_BODY_STALL_MS,
        /* the API server keeps connections to the webhook: keep an idle one as long as the
         * inactivity timeout allows rather than make it reconnect */
        .keepalive_timeout_ms =
            o->connection_timeout > 0 ? (int64_t)o->connection_timeout * 1000 : 0,
        .routes = o->routes,
        .n_routes = o->n_routes,
        .tls_cert_callback = (http_fn_ptr)tls_source_retrieve,
        .tls_priorities = SERVER_TLS_PRIORITIES,
        .tls_client_trust_pem = o->client_ca ? client_ca_pem(o->client_ca) : NULL,
        .client_verify = o->client_ca ? client_ca_verify : NULL,
        .client_verify_ctx = o->client_ca,
        .name = "webhook",
        .lanes = lanes,
        .n_lanes = SERVER_LANES,
    };
    tls_source_install(o->tls);
    char why[256];
    int rc = http_server_start(&ho, &s->http, why, sizeof(why));
    if (rc != K_OK) {
        errbuf_printf(err, errlen, "%s%s", rc == K_EINVAL ? "--bind-address: " : "", why);
        tls_source_install(NULL);
        free(s);
        return rc;
    }
    *out = s;
    return K_OK;
}

int server_port(struct server *s)
{
    return http_server_port(s->http);
}

unsigned server_in_flight(struct server *s)
{
    return http_server_in_flight(s->http);
}

void server_stats(struct server *s, struct http_server_stats *out)
{
    http_server_stats(s->http, out);
}

void server_stop(struct server *s, int drain_ms)
{
    if (!s)
        return;
    http_server_stop(s->http, drain_ms);
    tls_source_install(NULL);
    free(s);
}
