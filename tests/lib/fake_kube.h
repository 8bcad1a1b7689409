/*
 * fake_kube.h - a recording fake of the Kubernetes API for unit tests: a kube_transport
 * (core/kube/client.h) that answers requests from a script, in order, and records every request
 * it gets (method, path with query, body). Clients made with fake_kube_client() run the real
 * client code above the transport (paging, watch parsing, status mapping).
 *
 * A request with no scripted answer left gets 200 "{}" (enough for a PATCH or POST whose reply
 * is not read). Thread-safe: clients in several threads may share one fake (answers then go to
 * the requests in the order they arrive; every body stays valid until fake_kube_cleanup).
 */
#ifndef GPUTRI_TEST_FAKE_KUBE_H
#define GPUTRI_TEST_FAKE_KUBE_H

#include <json-c/json.h>
#include <pthread.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"
#include "util/clock.h"

#define FAKE_KUBE_MAX 64

struct fake_request {
    char method[8];
    char *path; /* with its query */
    char *body; /* NULL when none */
};

struct fake_answer {
    int rc; /* K_OK, or a transport error */
    long status;
    int retry_after;
    char *body;
    size_t body_len;
    int64_t advance_ms; /* moved on the fake's clock before answering */
};

struct fake_kube {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* a request arrived */
    struct kube_config cfg; /* all empty: the transport needs no server */
    struct kube_transport transport;
    struct fake_answer answers[FAKE_KUBE_MAX];
    size_t n_answers, next_answer;
    struct fake_request requests[FAKE_KUBE_MAX];
    size_t n_requests;        /* requests past FAKE_KUBE_MAX are answered but not recorded */
    struct clock_fake *clock; /* optional: what fake_kube_answer_after() advances */
};

void fake_kube_init(struct fake_kube *f);
void fake_kube_cleanup(struct fake_kube *f);

/* fake_kube_client() - a new client over the fake; kube_client_free() it. */
struct kube_client *fake_kube_client(struct fake_kube *f);

/* fake_kube_answer() - script the next answer: HTTP status, Retry-After seconds, body (copied). */
void fake_kube_answer(struct fake_kube *f, long status, int retry_after, const char *body);
/* fake_kube_answer_bytes() - the same with a body of `len` bytes that may hold NULs (protobuf). */
void fake_kube_answer_bytes(struct fake_kube *f, long status, const void *body, size_t len);
/*
 * fake_kube_answer_after() - like fake_kube_answer(), but the request takes ms: f->clock (which
 * must be set) is advanced by ms before the answer is handed out (a watch that ran that long).
 */
void fake_kube_answer_after(struct fake_kube *f, int64_t ms, long status, const char *body);
/* fake_kube_fail() - script a transport error (K_EIO, K_ETIMEDOUT, ...) as the next answer. */
void fake_kube_fail(struct fake_kube *f, int rc);

/* fake_kube_request() - recorded request i (0-based); fails the test when there is none. */
const struct fake_request *fake_kube_request(struct fake_kube *f, size_t i);
/*
 * fake_kube_body_json() - the body of recorded request i parsed as JSON (the caller puts it);
 * fails the test when there is no such request, no body, or no JSON.
 */
json_object *fake_kube_body_json(struct fake_kube *f, size_t i);

/* fake_kube_count() - requests recorded so far. */
size_t fake_kube_count(struct fake_kube *f);

/*
 * fake_kube_wait() - block until at least n requests have arrived (from another thread's
 * client), without a time limit: ctest's timeout ends a test that waits for nothing.
 */
void fake_kube_wait(struct fake_kube *f, size_t n);

#endif
