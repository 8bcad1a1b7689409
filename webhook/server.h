/*
 * server.h - the HTTPS front of gputri-webhook: core/http/server.h (libmicrohttpd 0.9.75, GnuTLS
 * inside) with the webhook's TLS and limits.
 *
 * TLS 1.2 and 1.3 only (MHD_OPTION_HTTPS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"),
 * the certificate chosen per handshake by tls_source_retrieve() (MHD_OPTION_HTTPS_CERT_CALLBACK),
 * a kept-alive connection may wait connection_timeout seconds for its next request.
 *
 * Fair shares (core/http/server.h, "Fair shares" and "upload rate", with these figures): with a
 * client CA, a quarter of max_connections is kept for connections whose client certificate
 * verified (the API server's) and half of the buffered-body budget (max_buffered, 16 x max_body
 * by default: 48 MiB, of which 24 MiB) for their requests; the rest is shared per client
 * address, an address holding fewer connections than another always getting a slot. A body that
 * did not verify must keep arriving at SERVER_BODY_MIN_RATE (1 MiB/s, the API server sends from
 * memory and gives up after its timeoutSeconds, at most 30 s) with SERVER_BODY_STALL_MS (1 s) of
 * credit, so a stalled upload holds its bytes 1 s, not the body deadline; a verified one only has
 * the body deadline (request_timeout_ms). Bounds, with the defaults (256 connections, 3 MiB
 * bodies): at most 48 MiB of bodies; clients without a verified certificate hold at most 24 MiB
 * and 160 connections, whatever addresses they use; the API server, verified, always finds 24 MiB
 * and 64 connection slots no one else can take, and never has a connection closed to make room.
 * Without a client CA nothing verifies: the per-address shares still apply.
 * Everything else - the route table, the HTTP rules (400/404/405/413/501/503), the header and
 * body deadlines, the drain on stop without MHD_quiesce_daemon - is core/http/server.h's; routes
 * are http_route and handlers http_handler_fn. The API server sends AdmissionReviews as
 * "Content-Type: application/json" (kubernetes/kubernetes:
 * staging/src/k8s.io/apiserver/pkg/util/webhook/webhook.go), so /validate's route requires it.
 *
 * Thread-safety: handlers run concurrently on the pool threads; their ctx must be thread-safe.
 */
#ifndef GPUTRI_WEBHOOK_SERVER_H
#define GPUTRI_WEBHOOK_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "client_ca.h"
#include "http/server.h"
#include "http/tls_source.h"

#define SERVER_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define SERVER_BODY_MIN_RATE (1u << 20) /* bytes/s an unverified body must keep up */
#define SERVER_BODY_STALL_MS 1000       /* the longest it may stop */

/*
 * The lanes the handlers run in (http/lanes.h), so that no review waits behind a costlier one:
 *   SERVER_LANE_REVIEWS  reviews of the API server (or of anyone, without --client-ca-file);
 *   SERVER_LANE_DRA      those that may name ResourceClaims, whose CEL selectors may run up to
 *                        WH_DRA_MAX_CEL_STEPS (warnings.h); at a lower CPU priority;
 *   SERVER_LANE_UNVERIFIED reviews from clients whose certificate did not verify;
 * while the probes and metrics run on the network threads (cheap, and never behind a review). A
 * review that waits longer than SERVER_LANE_MAX_WAIT_MS for a worker is answered without
 * matching devices (the route's shed handler); one that finds its lane's queue full gets 503,
 * which the API server treats as the webhook's failure (failurePolicy Ignore: admitted without
 * warnings).
 */
enum { SERVER_LANE_REVIEWS, SERVER_LANE_DRA, SERVER_LANE_UNVERIFIED, SERVER_LANES };
#define SERVER_LANE_MAX_WAIT_MS 1000 /* a third of the API server's usual 3 s timeout */
#define SERVER_LANE_MAX_QUEUED 256
#define SERVER_LANE_NICE 10 /* the DRA and unverified lanes' workers */

struct server_options {
    const char *bind_address; /* numeric IPv4/IPv6 */
    int port;                 /* 0: any free port (see server_port) */
    int threads;              /* network threads, and the workers of the reviews lane (the DRA and
                                 unverified lanes get half as many, at least 1) */
    int max_connections;
    int connection_timeout; /* seconds of inactivity */
    size_t max_body;
    size_t max_buffered;    /* bodies buffered at once over all connections; 0: 16 x max_body */
    int request_timeout_ms; /* a body must be complete this long after the headers; 0: 10 s */
    int header_timeout_ms;  /* headers complete this long after accept (TLS included); 0: 10 s */
    unsigned body_min_rate; /* bytes/s; 0: SERVER_BODY_MIN_RATE */
    int body_stall_ms;      /* 0: SERVER_BODY_STALL_MS */
    struct tls_source *tls; /* borrowed; installed for the callback */
    /* borrowed; NULL: no client certificate asked for. Set: every handshake asks for one
     * without requiring it, and http_request.client_verified says whether the chain verifies
     * against it (client_ca.h, http/server.h tls_client_trust_pem). */
    struct client_ca *client_ca;
    const struct http_route *routes; /* borrowed; must outlive the server */
    size_t n_routes;
};

struct server;

/*
 * server_start() - listen and serve. Returns K_OK and *out, K_EINVAL (bad address, TLS not
 * supported by this libmicrohttpd), K_EIO (bind failed) or K_ENOMEM with a reason in err.
 */
int server_start(const struct server_options *o, struct server **out, char *err, size_t errlen);

/* server_port() - the port actually bound. */
int server_port(struct server *s);

/* server_in_flight() - requests begun and not yet completed. Thread-safe. */
unsigned server_in_flight(struct server *s);

/* server_stats() - http_server_stats() of the server. Thread-safe. */
void server_stats(struct server *s, struct http_server_stats *out);

/*
 * server_stop() - refuse new connections, wait up to drain_ms for in-flight requests to finish,
 * then stop the daemon and free everything (http_server_stop). NULL-safe. Not concurrent with
 * itself.
 */
void server_stop(struct server *s, int drain_ms);

#endif
