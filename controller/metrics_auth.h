/*
 * metrics_auth.h - who may read /metrics when it is served with --metrics-secure: the request's
 * bearer token is authenticated with a TokenReview (authentication.k8s.io/v1) and the user it
 * names authorized with a SubjectAccessReview (authorization.k8s.io/v1) for the request's verb
 * (the method in lower case: "get") on the non-resource URL (the path, "/metrics"), as
 * controller-runtime's secure metrics do (kubernetes-sigs/controller-runtime:
 * pkg/metrics/filters/filters.go, WithAuthenticationAndAuthorization, with the delegating
 * authenticator and authorizer of k8s.io/apiserver). A reader needs a ClusterRole with
 * `nonResourceURLs: ["/metrics"], verbs: ["get"]`; the controller's own ServiceAccount needs
 * `create` on tokenreviews and subjectaccessreviews.
 *
 * Answers (the HTTP status the caller sends; 0 lets the request through):
 *   401 - no "Authorization: Bearer <token>" header (read as k8s.io/apiserver does), or the
 *         TokenReview says the token is not authenticated, or the TokenReview failed (what
 *         controller-runtime answers then too);
 *   403 - authenticated but the SubjectAccessReview does not allow it;
 *   500 - the SubjectAccessReview failed (controller-runtime: "Authorization for user ... failed");
 *   429 - the decision is not cached and the client, or all clients together, used up the reviews
 *         it may cause (below); nothing is sent to the API server.
 *
 * Decisions are cached, keyed by the SHA-256 of the token with the verb and path (the token itself
 * is never stored): allowed for 1 minute, unauthenticated for 1 minute, denied for 30 seconds -
 * the delegating authenticator's CacheTTL (1 min) and the authorizer's DenyCacheTTL (30 s), with
 * its 5-minute AllowCacheTTL cut to the token cache's minute, since a review of an allowed reader
 * re-authenticates the token. Failed reviews are not cached. Allowed decisions have their own
 * METRICS_AUTH_CACHE_ALLOWED entries, so that a flood of bogus tokens cannot push a reader out;
 * the others at most METRICS_AUTH_CACHE. A new entry replaces an expired one of its kind or else
 * the one closest to expiry.
 *
 * Reviews are rate-limited, so that bogus tokens cannot turn /metrics into a TokenReview flood
 * (k8s.io/apiserver's delegating authenticator caches but has no such limit): a decision not in
 * the cache costs one token of the client's bucket (METRICS_AUTH_CLIENT_BURST at once, one more
 * every METRICS_AUTH_CLIENT_REFILL_MS: 10 a minute) and one of the bucket of all clients
 * (METRICS_AUTH_BURST, one more every METRICS_AUTH_REFILL_MS: 5 a second); with either empty the
 * answer is 429. At most METRICS_AUTH_CLIENTS client buckets are kept; a new client takes a
 * full one's place (as good as new) or else the least recently used. A token allowed before
 * (its entry still in the allowed cache, expired) is reviewed again whatever the buckets hold:
 * a reader's scrape never waits behind a flood. Time is read from the injected clock.
 *
 * Thread-safe (a mutex guards the cache; the reviews run outside it).
 */
#ifndef GPUTRI_CONTROLLER_METRICS_AUTH_H
#define GPUTRI_CONTROLLER_METRICS_AUTH_H

#include <stddef.h>

#include "kube/client.h"
#include "util/clock.h"

#define METRICS_AUTH_CACHE 256
#define METRICS_AUTH_CACHE_ALLOWED 64
#define METRICS_AUTH_CLIENTS 128
#define METRICS_AUTH_CLIENT_BURST 10
#define METRICS_AUTH_CLIENT_REFILL_MS 6000
#define METRICS_AUTH_BURST 50
#define METRICS_AUTH_REFILL_MS 200
#define METRICS_AUTH_ALLOW_TTL_MS 60000
#define METRICS_AUTH_UNAUTHENTICATED_TTL_MS 60000
#define METRICS_AUTH_DENY_TTL_MS 30000
#define METRICS_AUTH_MAX_TOKEN 16384 /* longer Authorization values are refused (401) */

struct metrics_auth;

/*
 * metrics_auth_new() - reviews through `client` (borrowed, must outlive it; thread-safe per
 * core/kube/client.h), time from `clock` (borrowed; NULL: the system clock). NULL on ENOMEM.
 */
struct metrics_auth *metrics_auth_new(struct kube_client *client, const struct clock *clock);

/*
 * metrics_auth_check_client() - decide a request: the client (its address, e.g.
 * http_request.client_addr; NULL: only the bucket of all clients applies), method ("GET"), path
 * ("/metrics"), the raw Authorization header (NULL when absent). Returns 0 (allowed) or
 * 401/403/429/500 as above, with a short reason for the response body in msg (msglen bytes;
 * never the token).
 */
unsigned metrics_auth_check_client(struct metrics_auth *a, const char *client, const char *method,
                                   const char *path, const char *authorization, char *msg,
                                   size_t msglen);

/* metrics_auth_check() - metrics_auth_check_client() without a client. */
unsigned metrics_auth_check(struct metrics_auth *a, const char *method, const char *path,
                            const char *authorization, char *msg, size_t msglen);

/* metrics_auth_reviews() - TokenReviews and SubjectAccessReviews sent so far (for tests). */
unsigned long metrics_auth_reviews(struct metrics_auth *a);

/* metrics_auth_free() - free. NULL-safe. */
void metrics_auth_free(struct metrics_auth *a);

#endif
