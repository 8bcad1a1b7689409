/*
 * informer.h - keep a local copy of one kind of object in sync with the API server.
 *
 * client-go's reflector loop (kubernetes/kubernetes: staging/src/k8s.io/client-go/tools/cache/
 * reflector.go): LIST to get every object and a resourceVersion, then WATCH from that
 * resourceVersion with bookmarks; when a watch ends normally, watch again from the last
 * resourceVersion seen; on 410 Gone (the version was compacted away), LIST again. A relist is
 * bracketed by the handlers' sync_begin and sync_end so objects deleted while the watch was down
 * are noticed. Transport errors back off exponentially (0.8 s doubling to 30 s, with jitter) and
 * never end the loop. A LIST is read item by item (kube/list_parser.h), and the memory its
 * transient JSON used is handed back to the system after it (malloc_trim).
 *
 * Which resourceVersion a LIST asks for, as the reflector's relistResourceVersion() and list():
 *   - the first LIST: resourceVersion=0 with limit=page_size. "0" means any state, so the API
 *     server answers from its watch cache without reading etcd; the cache ignores limit for "0"
 *     and sends everything in one response (kubernetes/kubernetes:
 *     staging/src/k8s.io/apiserver/pkg/storage/cacher/delegator.go, shouldDelegateList: "0" is
 *     never delegated to etcd). That is affordable only because the response is parsed one item
 *     at a time. Should the answer come in pages after all (the watch cache is off), later
 *     relists keep paging (client-go's paginatedResult);
 *   - a relist after a watch ended with 410: resourceVersion=<the last one seen> and no limit,
 *     so the watch cache serves it ("not older than" that version: never back in time). "0" is
 *     not used here: it may answer with a state older than what the store already holds;
 *   - when that LIST itself fails with 410 Expired or 504 "Too large resource version" (a cache
 *     behind the version), at once a LIST of the latest state (no resourceVersion: a consistent
 *     read, paged by page_size; kubernetes/kubernetes:
 *     staging/src/k8s.io/client-go/tools/pager/pager.go), and so on until a LIST succeeds;
 *   - an expired continue token between pages: kube_list lists once more in one response.
 * One-shot tools (informer_list_once, the CLI) list with no resourceVersion: they must see what
 * was just created, which "0" does not promise.
 *
 * An informer runs in its own thread with its own kube_client. Handlers are called from that
 * thread only.
 */
#ifndef GPUTRI_INFORMER_H
#define GPUTRI_INFORMER_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"
#include "util/clock.h"

struct informer_handlers {
    void *ctx;
    /* an object was listed, added or modified; `obj` is borrowed */
    void (*upsert)(void *ctx, json_object *obj);
    /* an object was deleted; `obj` is its last state, borrowed */
    void (*remove)(void *ctx, json_object *obj);
    /* a LIST starts / ended successfully (mark and sweep); may be NULL. sync_begin may come again
     * before sync_end (a LIST that failed, or started over): it starts the marking over. */
    void (*sync_begin)(void *ctx);
    void (*sync_end)(void *ctx);
    /* a watch (re)started or failed: for metrics; may be NULL. `result` is a K_* value. */
    void (*watch_restart)(void *ctx, int result);
    /* an API request failed with HTTP status (0 = transport); may be NULL. */
    void (*api_error)(void *ctx, long http_status);
};

struct informer_options {
    const char *name;          /* for logs, e.g. "pods" */
    const char *path;          /* collection path, e.g. "/api/v1/pods" */
    int page_size;             /* LIST limit, default 500 */
    int watch_timeout_seconds; /* server-side watch timeout, default 300 (randomised +-10%) */
    /* The time the backoff waits on (borrowed; NULL: the system clock). With another clock the
     * thread re-reads it at least every 100 ms while it waits, so a test can move it. */
    const struct clock *clock;
    /* Requests go through this instead of HTTP (kube_client_new_transport; borrowed); NULL for
     * HTTP. For tests. */
    const struct kube_transport *transport;
    /* Bounds of one LIST (0: INFORMER_LIST_MAX_ITEMS / INFORMER_LIST_MAX_PAGES); for tests. */
    size_t list_max_items, list_max_pages;
};

/* The most items and pages one LIST may return: kube/client.h's bounds (past either, K_ETOOBIG,
 * logged; the informer backs off and lists again). */
#define INFORMER_LIST_MAX_ITEMS KUBE_LIST_MAX_ITEMS
#define INFORMER_LIST_MAX_PAGES KUBE_LIST_MAX_PAGES

struct informer;

/*
 * informer_new() - an informer for `opts` (copied) reading through `cfg` (borrowed, must outlive
 * it). Returns NULL on allocation failure.
 */
struct informer *informer_new(const struct kube_config *cfg, const struct informer_options *opts,
                              const struct informer_handlers *handlers);

/* informer_start() - start the thread. Returns K_OK or K_ENOMEM. */
int informer_start(struct informer *inf);

/* informer_has_synced() - true once the first LIST completed. Thread-safe. */
bool informer_has_synced(struct informer *inf);

/*
 * informer_wait_synced() - block until the first LIST completed or `cancel` (may be NULL; set
 * from any thread, polled every 100 ms) becomes non-zero. Returns true when synced. Thread-safe.
 */
bool informer_wait_synced(struct informer *inf, const atomic_int *cancel);

/* informer_stop() - end the watch, join the thread. Safe to call once, from one thread. */
void informer_stop(struct informer *inf);
void informer_free(struct informer *inf);

/*
 * informer_step() - one turn of the informer's loop through `client`: a LIST when there is no
 * resourceVersion to resume from (first, or after 410 Gone), else one WATCH until it ends.
 * Handlers are called from the calling thread. Returns how long to wait before the next step in
 * ms: 0 after a success or a 410 that ended a watch that worked (go on at once), else the backoff
 * (0.8 s doubling to 30 s, jittered to [backoff/2, backoff], at least the server's Retry-After). A
 * watch that ends within 1 s having delivered no event or bookmark counts as a failure and backs
 * off (client-go's "very short watch", kubernetes/client-go: tools/cache/reflector.go); the same
 * holds for a 410 (the relist waits). The backoff is reset only by a watch that delivered events or
 * ran 1 s or more, never by a LIST alone. The informer's thread calls it in a loop; tests call it
 * directly with a fake client instead of informer_start(). Not thread-safe: one caller at a time,
 * and not while the informer's thread runs.
 */
int64_t informer_step(struct informer *inf, struct kube_client *client);

/* What one LIST asks for (informer_list). */
struct informer_list_options {
    /* resourceVersion of the first request: NULL or "" a consistent read of the latest state
     * (what the CLI needs), "0" any state the API server's watch cache holds, "N" at least as
     * fresh as N. See struct kube_list_options. */
    const char *resource_version;
    int page_size;               /* limit=; 0: none */
    size_t max_items, max_pages; /* 0: INFORMER_LIST_MAX_ITEMS / INFORMER_LIST_MAX_PAGES */
    size_t *pages;               /* out, may be NULL: responses read */
};

/*
 * informer_list() - one LIST through `client` (kube_list: item by item, never a whole page in
 * memory), calling handlers->sync_begin, upsert for every item as it arrives, then sync_end. At
 * most max_items items in max_pages responses: beyond, K_ETOOBIG (sync_end is not called; the
 * items before were upserted). After an expired continue token the LIST is made again in one
 * response (kube_list), bracketed by sync_begin once more (so handlers see sync_begin twice and
 * an item may be upserted twice; sync_begin must start the marking over). Returns a K_* value; err
 * receives the details. resource_version (the list's, for a watch) may be NULL. Logs at --v=2 how
 * many items and responses a complete LIST had.
 */
int informer_list(struct kube_client *client, const char *path,
                  const struct informer_list_options *opts,
                  const struct informer_handlers *handlers, char *resource_version, size_t rv_len,
                  struct kube_error *err);

/*
 * informer_list_skipped() - the error of a LIST of which `n` items (n > 0) could not be read: they
 * did not project, or passed a bound of the store. K_EPARSE, with err (may be NULL) saying "LIST
 * PATH: N items could not be read (malformed, or past a bound)", PATH without its query. For
 * one-shot tools, which must not answer from the other items as though they were all; an
 * informer logs and skips them instead. Returns K_EPARSE.
 */
int informer_list_skipped(const char *path, size_t n, struct kube_error *err);

/*
 * informer_list_once() - informer_list() of the latest state (no resourceVersion: a consistent
 * read) in pages of page_size, with the default bounds. For one-shot tools (the CLI), which must
 * see what was just created.
 */
int informer_list_once(struct kube_client *client, const char *path, int page_size,
                       const struct informer_handlers *handlers, char *resource_version,
                       size_t rv_len, struct kube_error *err);

#endif
