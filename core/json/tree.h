/*
 * tree.h - a json-c tree of a JSON text within a memory budget, without the members its reader
 * never looks at (the pass of scan.h first, then the tree of what it kept).
 *
 * json_tree_parse() validates and prices the text (scan.h), refuses it when the part outside
 * every region (region 0) is over its budget, reads as null each region that is to be skipped
 * or is over its own budget, cuts the members the schema cuts, and builds the tree of the rest.
 * The tree is what json-c 0.16's tokener (json_tokener.c, JSON_TOKENER_STRICT) would build for
 * that text: the same objects, member by member in the same order (a repeated name replaces the
 * value in place, json_object_object_add), strings decoded the same way (an unpaired \u
 * surrogate as U+FFFD, \u0000 kept in a value and ending a member name), numbers read the same
 * way (int64, uint64 above INT64_MAX, a double with its text for a fraction or an exponent).
 * By default it is built straight from the text, the member names decoded in place and given to
 * json-c as constant keys (no copy of each name, one fewer allocation per member);
 * JSON_TREE_TOKENER builds it with json-c's tokener instead (tests/fuzz/fuzz_json.c checks on
 * every input that both give the same tree, and the same as the tokener on the whole text).
 *
 * Memory: at most the copy of the text the tree is built from (inside struct json_tree up to
 * JSON_TREE_STACK_TEXT bytes, else one allocation of at most len + 1 bytes) and the tree, whose
 * estimate is json_tree.built_cost (scan.h's cost model) and is at most the sum of the budgets
 * of the regions built. With JSON_TREE_TOKENER also json-c's string buffer (up to twice the
 * longest string) and one tokener per calling thread, kept between calls (its parse stack is a
 * 2.6 KiB allocation glibc would otherwise consolidate its fast bins for on every call) and
 * freed when the thread exits. CPU: linear in len.
 *
 * Thread-safety: json_tree_parse() uses only its arguments (and, with JSON_TREE_TOKENER, the
 * calling thread's tokener); distinct trees may be parsed on any number of threads at once.
 */
#ifndef GPUTRI_JSON_TREE_H
#define GPUTRI_JSON_TREE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json/scan.h"

/* The text the tree is built from is kept inside struct json_tree up to this size. */
#define JSON_TREE_STACK_TEXT 16384

/* json_tree_opts.flags */
#define JSON_TREE_TOKENER 1u  /* build with json-c's tokener (as before the builder; slower) */
#define JSON_TREE_KEEP_ALL 2u /* cut no member (regions are still priced and read as null) */
#define JSON_TREE_OBJECT 4u   /* the text must be a JSON object */

/* What becomes of a region (scan.h) beyond its budget, and whether it is read at all. */
struct json_region_budget {
    uint64_t max_cost;   /* estimated bytes (scan.h's cost model); 0: no limit */
    bool null_when_over; /* over max_cost: read as null (else the text is refused); not for
                          * region 0, which is always refused */
    bool skip;           /* never read: always null (its cost is still counted) */
};

struct json_tree_opts {
    const struct json_schema *schema; /* the members cut, the regions; NULL: none */
    unsigned max_depth;               /* 1 .. JSON_SCAN_MAX_DEPTH nested objects and arrays */
    struct json_region_budget region[JSON_MAX_REGIONS]; /* [0]: everything outside the others */
    unsigned flags;                                     /* JSON_TREE_* */
};

/*
 * The result. It holds the text the tree's member names point into, so it must stay where it
 * is (not copied or moved) while `root` is in use; json_tree_free() frees both. About 16 KiB:
 * the stack is the intended place.
 */
struct json_tree {
    json_object *root;               /* the tree (owned; NULL for a JSON null and on error) */
    uint64_t cost[JSON_MAX_REGIONS]; /* estimated bytes per region, of the whole text */
    bool region_seen[JSON_MAX_REGIONS];
    bool region_null[JSON_MAX_REGIONS]; /* read as null: skipped, or over its budget */
    uint64_t built_cost; /* the estimate of the regions built (not null), cuts included */
    size_t n_cuts;       /* members cut */
    /* private */
    char *heap;
    char stack[JSON_TREE_STACK_TEXT];
};

/*
 * json_tree_parse() - the tree of text[0, len) (need not be NUL-terminated; at most INT_MAX
 * bytes) under `opts`, into *t. Returns:
 *   K_OK      t->root is the tree (NULL when the text is null), the costs and regions filled;
 *   K_EPARSE  not strict JSON, nested deeper than max_depth, a unique member or a region
 *             repeated, not an object with JSON_TREE_OBJECT ("malformed JSON: ..." in err);
 *   K_ETOOBIG longer than INT_MAX, or region 0 over its budget (t->cost says by how much; err
 *             says so in general words, a caller may say it better);
 *   K_ENOMEM  ("out of memory" in err).
 * err (errlen bytes, when errlen > 0) is always terminated, "" on K_OK. text, opts and the
 * schema are read during the call only: the tree keeps its own copy of what it refers to. Call
 * json_tree_free() in every case.
 */
int json_tree_parse(struct json_tree *t, const char *text, size_t len,
                    const struct json_tree_opts *opts, char *err, size_t errlen);

/* json_tree_free() - free the tree and its text. Idempotent; t may be NULL. */
void json_tree_free(struct json_tree *t);

#endif
