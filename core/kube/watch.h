/*
 * watch.h - split a Kubernetes watch stream into events.
 *
 * The API server sends one JSON object per event, {"type": T, "object": O}, separated by
 * newlines, in HTTP chunks that need not line up with events. A parser is fed chunks as they
 * arrive and calls back once per complete event. T is ADDED, MODIFIED, DELETED, BOOKMARK or
 * ERROR (kubernetes/apimachinery: pkg/watch/watch.go). For ERROR, O is a metav1.Status.
 * Each event is parsed within its memory budget (kube/read_budget.h): the members no projection
 * reads are not built, and an event over the budget, or nested deeper than KUBE_READ_MAX_DEPTH
 * (valid JSON: a CustomResource that keeps unknown fields), is skipped and counted, not built.
 * Not thread-safe; one parser per stream.
 */
#ifndef GPUTRI_KUBE_WATCH_H
#define GPUTRI_KUBE_WATCH_H

#include <json-c/json.h>
#include <stddef.h>

enum kube_event_type {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK,
    KUBE_EVENT_ERROR,
};

/*
 * One event handler call. `object` is borrowed and valid only during the call (take a
 * reference with json_object_get to keep it). Return 0 to go on, non-zero to stop the stream.
 */
typedef int (*kube_watch_fn)(void *ctx, enum kube_event_type type, json_object *object);

struct kube_watch_parser;

/*
 * kube_watch_parser_new() - a parser that calls fn(ctx, ...) per event and refuses events larger
 * than max_event bytes. Returns NULL on allocation failure.
 */
struct kube_watch_parser *kube_watch_parser_new(size_t max_event, kube_watch_fn fn, void *ctx);

/*
 * kube_watch_parser_feed() - consume `len` bytes. Returns K_OK; K_EPARSE for malformed JSON, a
 * byte that is not UTF-8 (RFC 3629) or is NUL, an object without a known "type" or without an
 * "object"; K_ETOOBIG for an event above the limit; K_ECANCELED when the handler returned
 * non-zero. Events that complete before the offending byte are delivered first. The events
 * delivered and the result do not depend on how the stream is cut into chunks. After an error
 * the parser must be freed.
 */
int kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len);

/*
 * kube_watch_parser_finish() - call when the stream has ended. Returns K_OK when the input ended
 * between events, K_EPARSE when it ended inside one (a truncated stream), or the error an earlier
 * feed returned.
 */
int kube_watch_parser_finish(struct kube_watch_parser *p);

/*
 * kube_watch_parser_last_rv() - the metadata.resourceVersion of the last ADDED, MODIFIED,
 * DELETED or BOOKMARK event whose handler returned 0, "" before the first. Borrowed; valid until
 * the next feed.
 */
const char *kube_watch_parser_last_rv(const struct kube_watch_parser *p);

/*
 * kube_watch_parser_over_budget() - how many events were skipped as over their memory budget, or
 * nested deeper than KUBE_READ_MAX_DEPTH (kube/read_budget.h: counted and logged there; the handler
 * never saw them, and the last resourceVersion did not advance).
 */
size_t kube_watch_parser_over_budget(const struct kube_watch_parser *p);

/*
 * kube_watch_error_code() - for an ERROR event's Status object, its "code" (e.g. 410), 0 when
 * absent.
 */
int kube_watch_error_code(json_object *status);

void kube_watch_parser_free(struct kube_watch_parser *p);

#endif
