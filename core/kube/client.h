/*
 * client.h - a small Kubernetes API client over libcurl: GET, LIST with pagination, WATCH,
 * merge-patch PATCH, POST, PUT.
 *
 * One struct kube_client per thread: it owns one curl easy handle (connections are reused) and
 * is not thread-safe. Several clients may share one struct kube_config (read-only).
 * Every response body is bounded as it arrives: a single object that is read (GET, and the answer
 * of a PATCH/POST/PUT asked for) KUBE_MAX_OBJECT; the answer of a PATCH/POST/PUT nobody reads is
 * discarded, and of a failed response only the first KUBE_MAX_ERROR_BODY bytes are kept (for the
 * Status message); a watch event KUBE_MAX_WATCH_EVENT; a LIST is read item by item
 * (KUBE_MAX_LIST_ITEM) within a page and item bound (KUBE_LIST_MAX_PAGES, KUBE_LIST_MAX_ITEMS)
 * and, on a client that asks for it, an overall deadline (kube_client_set_list_deadline). Errors:
 * every function returns a K_* value (util/result.h) and fills struct kube_error with the HTTP
 * status and the API's Status message when there is one: 401 K_EUNAUTHORIZED, 403 K_EFORBIDDEN, 404
 * K_ENOTFOUND, 409 K_ECONFLICT, 410 K_EGONE, 429 K_ETHROTTLED, 5xx K_ESERVER, other >= 400 K_EHTTP;
 * transport K_EIO / K_ETIMEDOUT. A K_EIO caused by the kubeconfig's TLS material rather than the
 * network has kube_error.tls set (see enum kube_tls_failure) and a message starting "TLS: ".
 *
 * What every request carries, from struct kube_config (kube/config.h), as client-go's transport
 * does (kubernetes/client-go: transport/round_trippers.go, transport/config.go,
 * plugin/pkg/client/auth/exec/exec.go):
 *   - Authorization: Bearer from the token (tokenFile re-read before each request), else from the
 *     exec plugin's cached credential, which may instead be a client certificate. A request
 *     answered 401 with an exec credential drops that credential, runs the plugin again and is
 *     sent once more (client-go only refreshes for the next request; the retry makes a one-shot
 *     CLI survive a revoked token);
 *   - Impersonate-User, one Impersonate-Group per group and Impersonate-Uid when a user is
 *     impersonated (the loader refuses groups or a uid without one);
 *   - tls-server-name: the request goes to the server's host and port (CURLOPT_CONNECT_TO) while
 *     the URL names tls-server-name, so libcurl sends it as SNI and verifies the certificate
 *     against it; the Host header keeps the server's authority, as Go's http.Transport does;
 *   - proxy-url through CURLOPT_PROXY with no NO_PROXY exceptions; without one libcurl reads the
 *     proxy environment variables;
 *   - --request-timeout as the total time of a non-watch request (0: none; default 60 s).
 */
#ifndef GPUTRI_KUBE_CLIENT_H
#define GPUTRI_KUBE_CLIENT_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/config.h"
#include "kube/list_parser.h"
#include "kube/watch.h"
#include "util/clock.h"

/*
 * 4 MiB: one object read whole (GET; a PATCH/POST/PUT answer that is asked for). The API server
 * refuses a request body over 3 MiB (kubernetes/kubernetes: staging/src/k8s.io/apiserver/pkg/
 * server/config.go, MaxRequestBodyBytes) and etcd one over 1.5 MiB (--max-request-bytes), so no
 * stored object comes near it; a hostile server's larger answer ends the request, K_ETOOBIG.
 */
#define KUBE_MAX_OBJECT (4u << 20)
/* 64 KiB: what is kept of a failed response (for its Status message); the rest is discarded as
 * it arrives. */
#define KUBE_MAX_ERROR_BODY (64u << 10)
/* 256 MiB: one LIST response held whole while it is read (a protobuf page, proto_item) */
#define KUBE_MAX_RESPONSE (256u << 20)
#define KUBE_MAX_WATCH_EVENT (16u << 20) /* 16 MiB: one watch event */
#define KUBE_MAX_LIST_ITEM (16u << 20)   /* 16 MiB: one item of a LIST response */
/* One LIST response, read item by item: 16 GiB, 20 times 150,000 pods of 5 KiB each */
#define KUBE_MAX_LIST_RESPONSE (16ull << 30)
/*
 * The most items and responses one LIST may return when its options name no bound. A server whose
 * continue tokens never end (every page new items and another token) would otherwise be listed
 * forever: past either bound the LIST fails with K_ETOOBIG. 1,000,000 items is 20 times
 * Kubernetes' documented 150,000-pod cluster limit; 10,000 responses hold it at a page size of
 * 500 with room for short pages.
 */
#define KUBE_LIST_MAX_ITEMS 1000000
#define KUBE_LIST_MAX_PAGES 10000

/* Why a TLS handshake failed, when the cause is local configuration rather than the network. */
enum kube_tls_failure {
    KUBE_TLS_NONE = 0,
    KUBE_TLS_SERVER_UNTRUSTED, /* the server's certificate does not verify against the CA */
    KUBE_TLS_CA_UNUSABLE,      /* the kubeconfig's CA data or file cannot be loaded */
    KUBE_TLS_CLIENT_CERT,      /* the client certificate/key cannot be loaded, or was rejected */
    KUBE_TLS_SERVER_NAME,      /* the certificate verifies but names neither the server's host
                                * nor tls-server-name */
};

struct kube_error {
    int code;          /* K_* */
    long http_status;  /* 0 when no response */
    int retry_after;   /* seconds from Retry-After, 0 when absent */
    char message[512]; /* Status.message, curl's error text, or a description */
    /* 1 when the code is K_ETIMEDOUT because a LIST as a whole passed its deadline
     * (kube_client_set_list_deadline), not because the server could not be reached */
    int deadline;
    int tls; /* enum kube_tls_failure; KUBE_TLS_NONE unless code is K_EIO */
    /* 1 when no request was sent because the exec credential plugin failed (kube/exec.h); the
     * message says why, starting `exec plugin of user "U": `. code is then K_EIO (whatever
     * failed: callers back off and retry as for a network failure; a missing plugin is never
     * read as a 404) or K_ENOMEM. */
    int credentials;
};

/*
 * kube_tls_failure_of() - the kind of TLS configuration failure behind a libcurl result
 * `curl_code` (a CURLcode) with curl's error text `curl_message` (may be NULL), or KUBE_TLS_NONE
 * for a network failure or success. CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR and
 * CURLE_SSL_PINNEDPUBKEYNOTMATCH: server untrusted, or KUBE_TLS_SERVER_NAME when the text says
 * the name does not match ("subject name", "does not match target host name"; libcurl's
 * OpenSSL backend); CURLE_SSL_CACERT_BADFILE and
 * CURLE_SSL_CRL_BADFILE: CA unusable; CURLE_SSL_CERTPROBLEM: client certificate; and
 * CURLE_SSL_CONNECT_ERROR only when the text names a verification failure ("certificate verify
 * failed", "self-signed"/"self signed", "unable to get local issuer") or an alert the server sent
 * about the client certificate ("alert bad certificate", "alert certificate required", "alert
 * unknown ca", "alert certificate unknown"). Pure; thread-safe.
 */
enum kube_tls_failure kube_tls_failure_of(int curl_code, const char *curl_message);

/*
 * kube_tls_failure_text() - the message prefix for a kind: "TLS: the API server's certificate is
 * not trusted by the CA in use (certificate-authority, from the kubeconfig or the flag)", "TLS:
 * the CA certificate in use (certificate-authority) cannot be used", "TLS: the client
 * certificate/key in use (client-certificate, client-key) cannot be used", "TLS: the API server's
 * certificate is not valid for the server name (the URL's host, or tls-server-name)"; "" for
 * KUBE_TLS_NONE or an
 * unknown value. Static string. Thread-safe.
 */
const char *kube_tls_failure_text(int kind);

struct kube_client;

/*
 * kube_client_new() - a client for `cfg` (borrowed: it must outlive the client).
 * user_agent: e.g. "gputri-controller/" GPUTRI_VERSION from util/version.h. Returns NULL on
 * allocation failure.
 */
struct kube_client *kube_client_new(const struct kube_config *cfg, const char *user_agent);
void kube_client_free(struct kube_client *c);

/*
 * A transport replaces HTTP under a client, so tests can answer requests without a server and
 * record them. round_trip() gets the method ("GET" also for lists and watches), the path with
 * its query, and the request body (NULL when none, body_len bytes). It returns K_OK with the
 * HTTP *status, *retry_after (seconds, 0 when none) and the response body in *resp and *resp_len
 * (borrowed until the next call; a watch's body is its event stream), or a transport error
 * (K_EIO, K_ETIMEDOUT, ...) as libcurl would. Everything above the transport - paging, the
 * watch parser, status mapping, the request observer - runs as for HTTP.
 */
struct kube_transport {
    void *ctx;
    int (*round_trip)(void *ctx, const char *method, const char *path, const char *body,
                      size_t body_len, long *status, int *retry_after, const char **resp,
                      size_t *resp_len);
};

/*
 * kube_client_new_transport() - a client that sends every request through `t` (borrowed, with
 * its ctx; must outlive the client) instead of libcurl. `cfg` is borrowed as for
 * kube_client_new (its server and credentials are not used). NULL on allocation failure.
 */
struct kube_client *kube_client_new_transport(const struct kube_config *cfg,
                                              const struct kube_transport *t,
                                              const char *user_agent);

/*
 * kube_client_clone() - a new client with the configuration, user agent and transport of `c`
 * (the configuration and a transport stay borrowed), for another thread: each client has its own
 * connection, while an exec credential is shared through the configuration's cache. The cancel
 * flag is not copied. A transport shared by clones that run at once must be thread-safe. NULL on
 * allocation failure.
 */
struct kube_client *kube_client_clone(const struct kube_client *c);

/*
 * kube_client_set_http1() - speak HTTP/1.1 on this client's connections (on: true) instead of
 * HTTP/2, which an https server is otherwise offered through ALPN. For many small requests made
 * side by side on clones, one connection each, where HTTP/2 multiplexes nothing and its framing
 * and flow control cost the API server and the client more per request: 500 per-node pod LISTs
 * took a median 0.47 s over HTTP/1.1 against 0.78 s over HTTP/2 (BENCHMARKS.md, bench/compare).
 * Clones inherit it. Call while no request of `c` is running.
 */
void kube_client_set_http1(struct kube_client *c, bool on);

/*
 * Client-side rate limiting, as client-go's rest.Config QPS and Burst (kubernetes/client-go:
 * rest/config.go, util/flowcontrol/throttle.go): one token bucket for the whole process, shared
 * by every client, so --kube-api-qps bounds what the process sends however many threads and
 * clients it runs. A request waits for its token (it is never refused); a wait over 50 ms is
 * logged at --v=3 and over 1 s at --v=1 ("Waited before sending request due to client-side
 * throttling", as client-go). Watches are never limited (client-go: rest/request.go, Watch); a
 * LIST takes one token per response, a request retried after a 401 one per attempt. The daemons'
 * flags and defaults: util/flags.h (FLAGS_KUBE_API_QPS_DEFAULT).
 */
/*
 * kube_set_rate_limit() - limit every client of the process to `qps` requests a second (> 0;
 * fractions allowed) with bursts of `burst` (>= 1), timed by `clock` (borrowed; NULL: the system
 * clock; the waits themselves always sleep in real time). A negative qps removes the limit (the
 * default: no limit). Returns K_OK, or K_EINVAL (then no limit). Process-wide: call before any
 * client is in use, not while requests run.
 */
int kube_set_rate_limit(double qps, int burst, const struct clock *clock);

/*
 * kube_rate_limit_stats() - how many requests had to wait for the rate limit, and the
 * nanoseconds they were told to wait, since the process started. Thread-safe.
 */
void kube_rate_limit_stats(uint64_t *requests, uint64_t *waited_ns);

/*
 * kube_client_set_rate_limited() - off: this client's requests do not wait for the process's
 * rate limit (a leader-election client, whose renewals must not queue behind writes; client-go's
 * leader election likewise runs on a client of its own). On by default; clones inherit it. Call
 * while no request of `c` is running.
 */
void kube_client_set_rate_limited(struct kube_client *c, bool on);

/*
 * kube_client_set_cancel() - a flag polled (atomic_load) during long requests (watches); when it
 * becomes non-zero the request ends with K_ECANCELED. Another thread may set it at any time.
 * Borrowed; may be NULL. Call while no request of `c` is running.
 */
void kube_client_set_cancel(struct kube_client *c, const atomic_int *cancel);

/*
 * kube_client_set_list_deadline() - on: every LIST of this client must end, all its responses
 * together (and the one more after an expired continue token), within the request timeout
 * (--request-timeout: kube_config.request_timeout_ms when set, 0 meaning none; else 60 s), each
 * request getting what is left of it; past it K_ETIMEDOUT with kube_error.deadline set. With no
 * timeout (0) only the page and item bounds end a LIST whose continue tokens never end. For
 * one-shot tools (the CLI): a daemon's LIST of a large cluster may take longer than one request
 * may. Off (the default): each request is timed alone. Clones inherit it. Call while no request of
 * `c` is running.
 */
void kube_client_set_list_deadline(struct kube_client *c, bool on);

/*
 * kube_get() - GET `path` (e.g. "/api/v1/namespaces/ns/pods/p"), parse the JSON body.
 * On K_OK *out is a new json_object owned by the caller (json_object_put it). A body over
 * KUBE_MAX_OBJECT bytes ends the request with K_ETOOBIG.
 */
int kube_get(struct kube_client *c, const char *path, json_object **out, struct kube_error *err);

/*
 * kube_get_managed_fields() - kube_get() keeping the object's metadata.managedFields, which every
 * other read drops (kube/read_budget.h): for telling when a field manager last wrote a field
 * (kubernetes/kubernetes: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go
 * ManagedFieldsEntry.Time). Same ownership, bounds and errors as kube_get.
 */
int kube_get_managed_fields(struct kube_client *c, const char *path, json_object **out,
                            struct kube_error *err);

/*
 * What kube_list() asks for. Zero-initialised: one response, no resourceVersion (a consistent
 * read of the latest state), no page bound.
 */
struct kube_list_options {
    /* limit= of each request; 0: none. The server may ignore it: a LIST with resourceVersion=0
     * served from its watch cache comes in one response (kubernetes/kubernetes:
     * staging/src/k8s.io/apiserver/pkg/storage/cacher/delegator.go). Either way only one item is
     * held at a time (kube/list_parser.h). */
    int page_size;
    /* resourceVersion= of the first request (continue pages carry none, as client-go's pager);
     * NULL or "": none. "0": any version, served from the watch cache; "N": at least as fresh
     * as N (kubernetes/website: content/en/docs/reference/using-api/api-concepts.md, "Semantics
     * for get and list"). */
    const char *resource_version;
    /* the most responses one LIST may take; 0: KUBE_LIST_MAX_PAGES. Past it: K_ETOOBIG. */
    size_t max_pages;
    /* the most items one LIST may deliver (counted again from 0 after restart); 0:
     * KUBE_LIST_MAX_ITEMS. Past it: K_ETOOBIG, the items before it delivered. */
    size_t max_items;
    /* out, may be NULL: how many responses were requested */
    size_t *pages;
    /* may be NULL: called with fn's ctx before the LIST starts over in one response after an
     * expired continue token; the items delivered so far come again, and a caller that marks
     * and sweeps marks again here */
    void (*restart)(void *ctx);
    /* may be NULL: ask for the protobuf encoding first (KUBE_PROTO_ACCEPT, kube/proto.h), as
     * client-go does for built-in types, and hand each item of a protobuf answer to
     * proto_item(ctx, bytes, len) (the item's encoded message, borrowed for the call; non-zero
     * stops the LIST with K_ECANCELED) instead of fn. A server that answers in JSON is read as
     * without it, item by item to fn. Either answer is then held whole while it is read (at
     * most KUBE_MAX_RESPONSE bytes, K_ETOOBIG past it), so ask for pages (page_size) when a
     * response could be large; the one unpaged response after an expired continue token is
     * asked for in JSON and read item by item, as it holds the whole collection. For reads of many
     * small objects where only a few fields matter: the server writes protobuf several times faster
     * than JSON, and unread fields are skipped. */
    int (*proto_item)(void *ctx, const uint8_t *bytes, size_t len);
};

/*
 * kube_list() - LIST `path` (may carry a query, e.g. "?fieldSelector=..."), following continue
 * tokens, and call fn for every item as it streams in (kube/list_parser.h: no page is ever held
 * whole; each item is borrowed during the call only). On K_OK, resource_version (caller buffer of
 * rv_len bytes; may be NULL) holds the list's metadata.resourceVersion for a following watch.
 * When a continue token has expired (410 on a later page), the LIST is made once more in one
 * response at opts->resource_version, as client-go's pager does (FullListIfExpired,
 * kubernetes/kubernetes: staging/src/k8s.io/client-go/tools/pager/pager.go), after
 * opts->restart: items already delivered are delivered again. A 410 on the first request returns
 * K_EGONE. Bounds: one item KUBE_MAX_LIST_ITEM bytes, one response KUBE_MAX_LIST_RESPONSE bytes
 * (K_ETOOBIG), opts->max_pages responses and opts->max_items items (K_ETOOBIG). Each response is
 * one request under the request timeout (--request-timeout, default 60 s, as kube-apiserver's
 * own for a LIST), and the whole LIST too on a client with kube_client_set_list_deadline
 * (K_ETIMEDOUT). fn returning non-zero stops the LIST with K_ECANCELED. opts may be NULL. Not
 * thread-safe (one client per thread).
 */
int kube_list(struct kube_client *c, const char *path, const struct kube_list_options *opts,
              kube_list_item_fn fn, void *ctx, char *resource_version, size_t rv_len,
              struct kube_error *err);

/*
 * kube_watch() - WATCH `path` from `resource_version` with allowWatchBookmarks=true and a
 * server-side timeoutSeconds of `timeout_seconds`, feeding each event to fn (see watch.h).
 * Returns K_OK when the server closed the stream normally (re-watch from the last
 * resourceVersion), K_EGONE on an ERROR event or HTTP status 410 (relist), K_ECANCELED when fn
 * returned non-zero or the cancel flag was set, or another K_* error (K_EPARSE also when the
 * stream ends inside an event). ERROR events are passed to fn too; for one, err->http_status is
 * the Status "code" (e.g. 410, or 0) and err->message its message. The watch has no total
 * timeout: it fails with K_ETIMEDOUT after timeout_seconds + 60 s without any data.
 */
int kube_watch(struct kube_client *c, const char *path, const char *resource_version,
               int timeout_seconds, kube_watch_fn fn, void *ctx, struct kube_error *err);

/*
 * kube_patch_merge() - PATCH `path` with Content-Type application/merge-patch+json and `body`
 * (borrowed). On K_OK and out != NULL, *out is the updated object (owned by the caller; at most
 * KUBE_MAX_OBJECT bytes, K_ETOOBIG past it). With out == NULL the answer's body is discarded as
 * it arrives, whatever its size.
 */
int kube_patch_merge(struct kube_client *c, const char *path, json_object *body, json_object **out,
                     struct kube_error *err);

/* kube_post() - POST `body` to `path` (a collection). Same ownership rules as kube_patch_merge. */
int kube_post(struct kube_client *c, const char *path, json_object *body, json_object **out,
              struct kube_error *err);

/*
 * kube_put() - PUT (replace) `body` at `path` with Content-Type application/json. Put
 * metadata.resourceVersion in the body for an optimistic update: the server answers 409
 * (K_ECONFLICT) when the object changed since. Same ownership rules as kube_patch_merge.
 */
int kube_put(struct kube_client *c, const char *path, json_object *body, json_object **out,
             struct kube_error *err);

/*
 * A request observer sees every request any client makes, once it has ended: `method` ("GET" for
 * lists and watches), the HTTP status (0 when no response arrived: a transport error) and the
 * K_* result. Called from the thread that made the request, so it must be thread-safe and quick.
 */
typedef void (*kube_request_observer_fn)(void *ctx, const char *method, long http_status,
                                         int result);

/*
 * kube_set_request_observer() - install `fn` (NULL to remove) for all clients, e.g. to count
 * requests for metrics. Process-wide; call before any client is in use.
 */
void kube_set_request_observer(kube_request_observer_fn fn, void *ctx);

/*
 * kube_path_escape() - percent-encode a value for a URL path segment or query value into out
 * (outlen bytes, always NUL-terminated). Returns K_OK or K_ETOOBIG.
 */
int kube_path_escape(const char *in, char *out, size_t outlen);

/*
 * kube_pod_path() - "/api/v1/namespaces/<ns>/pods/<name>" with both escaped, into out (outlen
 * bytes, always NUL-terminated; KUBE_POD_PATH_MAX is enough for any valid names). Returns K_OK
 * or K_ETOOBIG. Pure.
 */
#define KUBE_POD_PATH_MAX 1024
int kube_pod_path(const char *ns, const char *name, char *out, size_t outlen);

#endif
