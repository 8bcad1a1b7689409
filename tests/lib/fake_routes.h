/*
 * fake_routes.h - a fake Kubernetes API for unit tests whose answers depend on the path, not on
 * the order of requests: a kube_transport (core/kube/client.h) for clients in several threads
 * (informers) at once. Each route is a path prefix with a status and a body; a request whose
 * path (without its query) matches no route gets 404. A watch (query with "watch=") of a path
 * that has a route gets its status and an empty stream, which ends it at once (the informer backs
 * off and watches again). Every
 * request's path is counted. Routes may be changed while clients run. Thread-safe.
 */
#ifndef GPUTRI_TEST_FAKE_ROUTES_H
#define GPUTRI_TEST_FAKE_ROUTES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"

#define FAKE_ROUTES_MAX 16
#define FAKE_ROUTES_SEEN 256

struct fake_routes {
    pthread_mutex_t mu;
    struct kube_config cfg; /* all empty */
    struct kube_transport transport;
    struct {
        char *prefix, *body;
        long status;
    } routes[FAKE_ROUTES_MAX];
    size_t n_routes;
    char *seen[FAKE_ROUTES_SEEN]; /* paths asked, with their query, in order */
    size_t n_seen;
    char **bodies; /* every answer given, kept until cleanup */
    size_t n_bodies;
};

void fake_routes_init(struct fake_routes *f);
void fake_routes_cleanup(struct fake_routes *f);
/* fake_routes_set() - answer paths starting with `prefix` (exactly, when it has no trailing
 * '*') with status and body (copied); replaces the route of that prefix. body NULL: remove it. */
void fake_routes_set(struct fake_routes *f, const char *prefix, long status, const char *body);
/* fake_routes_count() - requests whose path (with query) contains `needle`. */
size_t fake_routes_count(struct fake_routes *f, const char *needle);
/* fake_routes_forget() - forget the requests seen so far. */
void fake_routes_forget(struct fake_routes *f);

#endif
