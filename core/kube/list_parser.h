/*
 * list_parser.h - split a Kubernetes LIST response into its items while it streams in.
 *
 * A LIST response is one JSON object, {"kind": K, "apiVersion": V, "metadata": {...,
 * "resourceVersion": RV, "continue": C}, "items": [O, O, ...]} (kubernetes/apimachinery:
 * pkg/apis/meta/v1/types.go, ListMeta; the API server writes the keys in that order, but any
 * order is read). A whole page of 500 pods is a few MB of text and, as one json-c tree, ten times
 * that in small allocations; an RV=0 LIST served from the API server's watch cache is every object
 * in one response. This parser never holds more than one item: a small scanner follows strings,
 * escapes and nesting through the response as the HTTP layer hands it over in chunks, collects
 * the bytes of one element of the top-level "items" array at a time (at most max_item), parses
 * that element alone within its memory budget (kube/read_budget.h: the members no projection
 * reads are not built, and an element whose tree would be over the budget is skipped and
 * counted, not built), hands it to the caller and frees it. The top-level "metadata"
 * is collected and parsed alone (its resourceVersion and continue are kept); any other
 * top-level member is collected and parsed only to check it, then dropped. Both within the tree
 * budget of kube_read_parse_value (K_ETOOBIG above it).
 *
 * Bounds: an item above max_item bytes, and a "metadata" or other top-level member, key included,
 * above KUBE_LIST_MAX_FIELD bytes, is K_ETOOBIG; nesting deeper than KUBE_LIST_MAX_DEPTH inside
 * "metadata" or another top-level member is K_EPARSE at the byte that passes it; an item nested
 * that deep (a CustomResource that keeps unknown fields can be, and anyone who may create one
 * could otherwise stop the LIST for every other) is collected to its end, then skipped and
 * counted with the items over budget (kube_read_too_deep), its syntax past the bound not checked.
 * The caller bounds the number of items (its handler) and the bytes of one response
 * (kube/client.c).
 *
 * Strictness: the items and members are strict JSON as json-c reads it (JSON_TOKENER_STRICT: no
 * trailing commas, single quotes, NaN); the bytes must be UTF-8 (RFC 3629) without NUL; the
 * response must be one JSON object followed by nothing but JSON whitespace; "items" is an array
 * of objects, or null (no items); "metadata" an object; "items" and "metadata" each at most once.
 * Anything else is K_EPARSE. Which items are delivered, and the result, do not depend on how the
 * response is cut into chunks.
 *
 * Not thread-safe; one parser per response.
 */
#ifndef GPUTRI_KUBE_LIST_PARSER_H
#define GPUTRI_KUBE_LIST_PARSER_H

#include <json-c/json.h>
#include <stddef.h>

/* The largest "metadata" (or other top-level member of a LIST response, or key) read: 1 MiB. */
#define KUBE_LIST_MAX_FIELD (1u << 20)
/* The deepest nesting of objects and arrays inside one item or member, as the watch parser. */
#define KUBE_LIST_MAX_DEPTH 128

/*
 * One item: `item` (a JSON object) is borrowed and freed as soon as the call returns (take a
 * reference with json_object_get to keep it). Return 0 to go on, non-zero to stop the response.
 */
typedef int (*kube_list_item_fn)(void *ctx, json_object *item);

struct kube_list_parser;

/*
 * kube_list_parser_new() - a parser that calls fn(ctx, item) per element of "items" and refuses
 * an element larger than max_item bytes (at most INT32_MAX: json-c takes an int length). NULL on
 * allocation failure.
 */
struct kube_list_parser *kube_list_parser_new(size_t max_item, kube_list_item_fn fn, void *ctx);

/*
 * kube_list_parser_feed() - consume `len` bytes of the response. Returns K_OK; K_EPARSE for
 * malformed JSON or a response that is not a list as above; K_ETOOBIG for an item or member over
 * its bound; K_ECANCELED when the handler returned non-zero; K_ENOMEM. Items that complete before
 * the offending byte are delivered first. After an error every further call returns it and the
 * parser must be freed.
 */
int kube_list_parser_feed(struct kube_list_parser *p, const char *data, size_t len);

/*
 * kube_list_parser_finish() - call when the response has ended. Returns K_OK when it held one
 * complete list object, K_EPARSE when it ended early (truncated) or was empty, or the error an
 * earlier feed returned.
 */
int kube_list_parser_finish(struct kube_list_parser *p);

/*
 * kube_list_parser_resource_version() - metadata.resourceVersion when the response had one as a
 * string, else NULL; kube_list_parser_continue() - metadata.continue likewise ("" is returned as
 * ""). Borrowed from the parser; valid until it is freed.
 */
const char *kube_list_parser_resource_version(const struct kube_list_parser *p);
const char *kube_list_parser_continue(const struct kube_list_parser *p);

/* kube_list_parser_items() - how many items were handed to the handler. */
size_t kube_list_parser_items(const struct kube_list_parser *p);

/* kube_list_parser_over_budget() - how many items were skipped as over their memory budget or
 * nested too deep (above; kube/read_budget.h: counted and logged there; the handler never saw
 * them). */
size_t kube_list_parser_over_budget(const struct kube_list_parser *p);

void kube_list_parser_free(struct kube_list_parser *p);

#endif
