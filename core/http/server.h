/*
 * http/server.h - the one libmicrohttpd (0.9.75) server of both daemons: gputri-webhook's HTTPS
 * admission endpoint and gputri-controller's metrics and probe endpoints.
 *
 * One daemon: an internal polling thread (a pool of them when threads > 1) with epoll, a route
 * table {method, path, handler}, and the per-request bookkeeping both need. Of the query string
 * only "timeout" is read (the API server appends ?timeout=Ns to a webhook's URL).
 *
 * HTTP rules, checked by the server before a handler runs (as Go's net/http, which
 * kube-apiserver and controller-runtime serve with, answers them, golang/go:
 * src/net/http/transfer.go, readTransfer, except where said):
 *   - a header name with a character outside RFC 9110's token set (e.g. "Content-Length :",
 *     which libmicrohttpd 0.9.75 keeps as another header and then reads no body: smuggling), or
 *     a value with NUL, CR or LF: 400 (RFC 9112 section 5.1; Go's net/http does the same).
 *   - Content-Length given twice with different values: 400 (an identical repeat is accepted).
 *   - Transfer-Encoding other than one header saying "chunked": 501 (e.g. "gzip, chunked", which
 *     libmicrohttpd would read as a body ending only when the connection closes).
 *   - Content-Length together with Transfer-Encoding: 400, where Go lets Transfer-Encoding win:
 *     RFC 9112 section 6.3 says such a message "ought to be handled as an error" (request
 *     smuggling). Every answer to a request failing one of these framing rules says
 *     "Connection: close" and the connection is closed.
 *   - unknown path 404; known path, other method 405 with Allow. A "GET" route answers HEAD too
 *     (libmicrohttpd drops the body).
 *   - a route with content_type: the request's media type (parameters ignored, case-insensitive)
 *     must be it, else 400 - what controller-runtime's webhook server answers
 *     (kubernetes-sigs/controller-runtime: pkg/webhook/admission/http.go, ServeHTTP: a
 *     Content-Type other than application/json gets Errored(http.StatusBadRequest, ...)).
 *   - a body over max_body: 413, at once when Content-Length says so, else after discarding the
 *     rest; a body that does not fit in its share of the buffered-body budget (below): 503, at once
 *     when Content-Length says so (the connection is then closed), else after discarding the rest.
 *
 * Fair shares. A body is counted against the budget whole when Content-Length announces it
 * (before any of it is read), else as its bytes arrive. Whether a request's client certificate
 * verifies (client_verify) is known once its headers are in: after the TLS handshake, before the
 * body. A connection is "verified" from a request on it that verified; every other open connection
 * is "unverified" (a new one, before its first request, too).
 *   - buffered bodies: at most max_buffered bytes over all requests. Requests that did not
 *     verify hold at most max_buffered - verified_buffered together, so verified ones always
 *     find verified_buffered bytes that no other client can take. Besides, an address's
 *     unverified requests hold at most max(max_body, (max_buffered - verified_buffered) / n)
 *     bytes, n the number of addresses with an unverified body arriving (itself included).
 *   - connection slots: libmicrohttpd holds at most max_connections (MHD_OPTION_CONNECTION_LIMIT;
 *     at the limit it accepts nothing and new clients wait in the kernel's backlog). Unverified
 *     connections are at most max_connections - verified_connections - max_connections / 8 (the
 *     last part left free so that one more can always be accepted and judged): one more is
 *     accepted only by closing the oldest unverified connection of the address holding the most
 *     unverified connections, when that address holds at least as many as the newcomer's
 *     (counting it); otherwise the newcomer is closed at once. So an address holding fewer
 *     connections than any other always gets in, however many addresses the others use, and
 *     verified connections are never closed to make room. Limits: a newcomer that shares its
 *     address with a flood competes with it; per_ip_connections is libmicrohttpd's cap, applied
 *     before any of this. The bookkeeping is one entry per open connection and per distinct
 *     address among them; judging a newcomer looks at every address (at most max_connections).
 *
 * Deadlines, measured on opts.clock:
 *   - header deadline: from accepting a connection (TLS handshake included) the request's
 *     headers must be complete within header_timeout_ms; on a kept-alive connection the next
 *     request's headers within keepalive_timeout_ms of the end of the previous request (so an
 *     idle kept-alive connection is closed then too; with 0 it is header_timeout_ms, as Go's
 *     http.Server does with ReadTimeout and no IdleTimeout, golang/go: src/net/http/server.go,
 *     Server.IdleTimeout: "If zero, the value of ReadTimeout is used").
 *   - body deadline: from the end of the headers the body must be complete within
 *     body_timeout_ms, however steadily its bytes arrive.
 *   - upload rate (with body_min_rate set, for requests that did not verify): the body must keep
 *     arriving at body_min_rate bytes/s on average, with body_stall_ms of credit. Its deadline
 *     starts body_stall_ms after the headers; each n bytes received move it n / body_min_rate
 *     later, but never past body_stall_ms from now (credit is not banked) nor past the body
 *     deadline. So a body that stops is closed body_stall_ms later whatever it sent before, and
 *     a body of L bytes is closed unless complete by body_stall_ms + L / body_min_rate. Verified
 *     requests keep only the body deadline: a worker busy with another request's handler does
 *     not read their bytes meanwhile, and that must not cost the API server its review.
 *   libmicrohttpd 0.9.75 has none of these: its only timeouts are for inactivity
 *   (MHD_OPTION_CONNECTION_TIMEOUT, MHD_CONNECTION_OPTION_TIMEOUT), which a client defeats by
 *   sending a byte now and then, and the connection memory limit bounds only the headers' size.
 *   Past either the connection is closed without an answer: libmicrohttpd 0.9.75 calls no handler
 *   before the headers are complete, and accepts a response only before the body or after all of
 *   it (MHD_queue_response: MHD_CONNECTION_HEADERS_PROCESSED or MHD_CONNECTION_FULL_REQ_RECEIVED),
 *   so there is no point at which a 408 could be sent. A sweeper thread enforces both: every
 *   sweep_interval_ms it shuts down (shutdown(2)) the socket of each connection past its deadline,
 *   and libmicrohttpd then closes the connection as closed by the peer. The connection list is
 *   kept with MHD_OPTION_NOTIFY_CONNECTION, whose CLOSED notification comes before libmicrohttpd
 *   closes the socket, so a descriptor is never shut down after reuse. Besides, libmicrohttpd's
 *   inactivity timeout (idle_timeout_s) closes a connection with no traffic at all.
 *
 * Stopping never calls MHD_quiesce_daemon(): in 0.9.75 it edits every worker's epoll set from the
 * calling thread while the worker may be adding or removing the listen socket itself (at the
 * connection limit), and the loser of that race panics ("Failed to remove listen FD from epoll
 * set.", src/microhttpd/daemon.c MHD_epoll and MHD_quiesce_daemon). Instead http_server_stop()
 * refuses new connections in the accept policy callback, answers requests on kept-alive
 * connections with "Connection: close", waits for the requests in flight by its own count, and
 * then calls MHD_stop_daemon(), which only signals and joins the workers.
 */
#ifndef GPUTRI_HTTP_SERVER_H
#define GPUTRI_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/lanes.h"
#include "util/clock.h"

struct http_request {
    const char *method;
    const char *path; /* without the query string */
    const char *body; /* NUL-terminated, "" when none; valid during the handler call */
    size_t body_len;
    /* TLS with client_verify set: the client presented a certificate chain and client_verify
     * accepted it. Otherwise false. */
    bool client_verified;
    /* the request's "Authorization" header, NULL when absent; valid during the handler call */
    const char *authorization;
    /* the client's address, numeric ("10.0.0.7", "::1"); "" when unknown; valid during the call */
    const char *client_addr;
    /* when the body was complete: clock_mono_ms(NULL) (util/clock.h, the system's clock) */
    int64_t received_ms;
    /* the query's "timeout" in Go's duration spelling, as the API server appends it to a
     * webhook's URL (?timeout=3s: kubernetes/kubernetes: staging/src/k8s.io/apiserver/pkg/
     * admission/plugin/webhook/validating/dispatcher.go, callHook's r.Timeout, which client-go's
     * rest.Request passes as the "timeout" parameter): ms, at most an hour; 0 when absent or not
     * a duration */
    int64_t timeout_ms;
};

/* One certificate of the chain a TLS client presented: DER, leaf first. */
struct http_peer_cert {
    const unsigned char *der;
    size_t len;
};

#define HTTP_MAX_PEER_CHAIN 16 /* certificates of a client chain passed to client_verify */

/* Decides whether a client's chain (n >= 1 certificates, borrowed for the call) is trusted.
 * Called on a server thread once per request of a TLS connection whose client presented a
 * certificate, when the request's headers are in (before its body); must be thread-safe. */
typedef bool (*http_client_verify_fn)(void *ctx, const struct http_peer_cert *chain, unsigned n);

struct http_response {
    unsigned status;          /* HTTP status; preset 200 */
    const char *content_type; /* static string; preset "text/plain; charset=utf-8" */
    char *body;               /* malloc'd by the handler; the server frees it. NULL = empty */
    size_t body_len;
};

/* A handler fills resp. It runs on a server thread, or on a lane's worker (see lanes below),
 * concurrently with other handlers: its ctx must be thread-safe. */
typedef void (*http_handler_fn)(void *ctx, const struct http_request *req,
                                struct http_response *resp);

/* With lanes: which lane (an index into http_server_options.lanes) runs a request. Called on a
 * server thread once the body is in; must be cheap and thread-safe. */
typedef unsigned (*http_lane_fn)(void *ctx, const struct http_request *req);

struct http_route {
    const char *method; /* "GET" (also answers HEAD), "POST", ... */
    const char *path;   /* exact match, e.g. "/validate"; NULL matches every path */
    http_handler_fn fn;
    void *ctx;
    const char *content_type; /* required request media type, e.g. "application/json"; NULL: any */
    http_lane_fn lane;        /* with lanes: the request's lane; NULL: run on the server thread
                               * (for cheap handlers: probes, metrics) */
    http_handler_fn shed;     /* with lanes: the answer when the request waited too long for a
                               * worker (http/lanes.h); NULL: 503. A full lane: 503 */
};

/* A type-erased function pointer for the TLS certificate callback (see tls_cert_callback). */
typedef void (*http_fn_ptr)(void);

struct http_server_options {
    const char *host;  /* numeric IPv4/IPv6 or a name; NULL or "": every interface (dual-stack
                          [::] with IPV6_V6ONLY off when the kernel has IPv6, else 0.0.0.0
                          and one log line saying so) */
    bool numeric_host; /* refuse names (no DNS lookup) */
    int port;          /* 0: any free port (see http_server_port) */
    unsigned threads;  /* 0 or 1: one polling thread; more: a pool */
    unsigned max_connections;        /* 0: 64 */
    unsigned per_ip_connections;     /* per client address; 0: no limit */
    unsigned verified_connections;   /* slots only verified connections can take (see above) */
    unsigned idle_timeout_s;         /* close a connection this long without traffic; 0: none */
    size_t connection_memory;        /* per connection, holds the headers; 0: 32 KiB */
    size_t max_body;                 /* request body cap in bytes */
    size_t max_buffered;             /* bodies held at once over all requests; 0: 16 x max_body */
    size_t verified_buffered;        /* of max_buffered, bytes only verified requests can take */
    int64_t header_timeout_ms;       /* 0: 10 s */
    int64_t body_timeout_ms;         /* 0: 10 s */
    uint64_t body_min_rate;          /* bytes/s an unverified body must keep up; 0: none */
    int64_t body_stall_ms;           /* the upload rate's credit; 0: 1 s */
    int64_t keepalive_timeout_ms;    /* 0: header_timeout_ms */
    int64_t sweep_interval_ms;       /* how often deadlines are checked; 0: 100 ms */
    const struct http_route *routes; /* borrowed; must outlive the server */
    size_t n_routes;
    /* TLS when set: a gnutls_certificate_retrieve_function2 cast to http_fn_ptr, passed as
     * MHD_OPTION_HTTPS_CERT_CALLBACK; tls_priorities is MHD_OPTION_HTTPS_PRIORITIES (NULL:
     * GnuTLS's default). */
    http_fn_ptr tls_cert_callback;
    const char *tls_priorities;
    /* TLS client certificates, optional at the TLS layer: with tls_client_trust_pem set (PEM CA
     * certificates, NUL-terminated; borrowed, must outlive the server), every handshake asks the
     * client for a certificate and proceeds without one (MHD_OPTION_HTTPS_MEM_TRUST, which makes
     * libmicrohttpd 0.9.75 call gnutls_certificate_server_set_request(GNUTLS_CERT_REQUEST); the
     * CAs' names go into the CertificateRequest). GnuTLS does not verify the chain then:
     * client_verify(client_verify_ctx, ...) does, per request, and its verdict is
     * http_request.client_verified; so the CAs can change while the server runs (a kept-alive
     * connection's chain is verified again on each request: a few signature checks). */
    const char *tls_client_trust_pem;
    http_client_verify_fn client_verify;
    void *client_verify_ctx;
    const struct clock *clock; /* for the deadlines (borrowed, must outlive the server); NULL:
                                  the system monotonic clock (util/clock.h) */
    /* Lanes (http/lanes.h): with n_lanes > 0, the handlers of routes with a lane function run on
     * the lanes' workers and the server threads only move bytes: a connection whose request is
     * complete is suspended (MHD_suspend_connection) until its lane has answered, so one slow
     * handler never stalls the other connections of its server thread. When the lane's queue is
     * full the server answers 503 itself. A client that goes away meanwhile costs the handler's
     * work, nothing more. n_lanes 0: handlers run on the server threads. Borrowed for the call
     * to http_server_start. */
    const struct http_lane_options *lanes;
    unsigned n_lanes;
    const char *name; /* for log lines, e.g. "metrics"; NULL: "http" */
};

struct http_server;

/* Counters since start. */
struct http_server_stats {
    unsigned connections;     /* open now */
    uint64_t header_timeouts; /* connections closed at the header deadline */
    uint64_t body_timeouts;   /* connections closed at the body deadline or below the rate */
    uint64_t refused;         /* connections refused while stopping */
    uint64_t evicted;         /* unverified connections closed to let another address in */
    uint64_t shed;            /* new connections closed at once: their address held the most */
    uint64_t over_budget;     /* requests answered 503 for their share of the body budget */
    struct lane_stats lane[HTTP_MAX_LANES]; /* per lane (zeros without lanes) */
};

/*
 * http_server_start() - listen and serve. Returns K_OK and *out; K_EINVAL (bad or unresolvable
 * host, no route, TLS wanted but not built into libmicrohttpd) or K_EIO (cannot listen: address in
 * use or not permitted) with a reason in err (errlen bytes); K_ENOMEM. *out is NULL on failure.
 * Thread-safe (every call makes its own daemon and threads).
 */
int http_server_start(const struct http_server_options *o, struct http_server **out, char *err,
                      size_t errlen);

/* http_server_port() - the port actually bound. Thread-safe. */
int http_server_port(const struct http_server *s);

/* http_server_in_flight() - requests whose headers arrived and whose completion has not been
 * noted yet (a client may already hold the response). Thread-safe. */
unsigned http_server_in_flight(struct http_server *s);

/* http_server_stats() - a snapshot of the counters. Thread-safe. */
void http_server_stats(struct http_server *s, struct http_server_stats *out);

/*
 * http_server_stop() - refuse new connections, wait up to drain_ms (real time) for the requests
 * in flight (with lanes: then the requests still queued are answered shed and the ones running
 * finish), then stop the daemon (open connections are closed) and free everything. Never calls
 * MHD_quiesce_daemon (see above). NULL-safe. Not concurrent with itself or with other calls on s.
 */
void http_server_stop(struct http_server *s, int64_t drain_ms);

/*
 * http_json_error() - fill resp with status and a small JSON body {"error": msg} (msg copied,
 * at most 255 bytes, control characters, quotes and backslashes dropped), freeing a body already
 * there. On allocation failure the body stays empty. Thread-safe for distinct resp.
 */
void http_json_error(struct http_response *resp, unsigned status, const char *msg);

#endif
