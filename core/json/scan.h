/*
 * scan.h - one validating pass over a JSON text that prices the tree json-c would build for it
 * and finds the members a reader never looks at, before any tree is built.
 *
 * Why: json-c allocates about 800 bytes for an empty object ({} is 2 bytes of text), so a few MB
 * of hostile JSON is hundreds of MB of tree. This pass allocates nothing, so every JSON that
 * crosses a trust boundary (an AdmissionReview, a LIST item, a watch event, a GET) can be priced
 * and refused, or read without what is not needed, before it costs anything. tree.h builds the
 * tree from what this pass found.
 *
 * Strictness: RFC 8259 and nothing else: UTF-8 without overlong forms or surrogates (RFC 3629),
 * no control characters in strings, no NaN or Infinity, no leading zeros, no trailing commas,
 * no comments, nothing but JSON white space after the value, at most max_depth nested objects
 * and arrays (json_scan_opts). Everything this accepts, json-c's tokener with
 * JSON_TOKENER_STRICT accepts too (tests/fuzz/fuzz_json.c checks it on every input).
 *
 * Cost model (bytes; json-c 0.16 on x86-64, measured: an empty object 792, an empty array 152, a
 * one-byte string 88, a number 72, a member about 130 besides its value), per value:
 *   object JSON_COST_OBJECT, array JSON_COST_ARRAY, member JSON_COST_MEMBER plus its name's
 *   bytes as written, array element JSON_COST_ELEMENT, string, number, true, false and null
 *   JSON_COST_SCALAR plus a string's bytes as written.
 * It is an upper estimate of the tree of the whole text (members cut below are priced too), so
 * a budget does not depend on which members a reader keeps.
 *
 * Member cuts (a json_schema): a tree of member names. Each node says, for the members of an
 * object, which names are kept and under which node their values are read, and what becomes of
 * any other name (cut, or kept whole). JSON_NODE_ALL keeps a whole value, JSON_NODE_CUT cuts the
 * member (name, value and one comma) from the text the tree is built from. The elements of an
 * array are read under the node of the member whose value the array is. So "only these fields"
 * (the webhook: other = JSON_NODE_CUT) and "all but these fields" (a client dropping
 * managedFields: other = JSON_NODE_ALL, "managedFields" -> JSON_NODE_CUT) are both one schema.
 * Names are matched as json-c keys them: decoded, and ended at an escaped U+0000. Nothing inside
 * a cut member is looked at. At most JSON_SCAN_MAX_CUTS members are cut per text; the rest is
 * kept (and was priced).
 *
 * Regions: a member rule may name a region (1 .. JSON_MAX_REGIONS - 1) whose value is priced
 * apart from the rest (region 0), so a reader can budget it on its own, or read it as null
 * (tree.h). A region's value must occur once in the text: its member and every member on the
 * way to it should be `unique` (a second member of that name in the same object is an error),
 * and no array may be on the way; a second value of a region anywhere is an error too. Regions
 * do not nest: a region member inside another region's value is priced with the outer one.
 *
 * Errors: one message, "malformed JSON: <what> at byte <offset>" (offset from the start of the
 * text), in the caller's buffer.
 *
 * Thread-safety: json_scan() uses only its arguments; a schema is read-only and may be shared
 * by any number of threads.
 */
#ifndef GPUTRI_JSON_SCAN_H
#define GPUTRI_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The cost model above (bytes). */
#define JSON_COST_OBJECT 1024
#define JSON_COST_ARRAY 256
#define JSON_COST_MEMBER 160
#define JSON_COST_ELEMENT 16
#define JSON_COST_SCALAR 96

/* The deepest nesting json_scan_opts.max_depth may ask for (objects and arrays); the scan
 * keeps a few bytes per level on the stack. */
#define JSON_SCAN_MAX_DEPTH 128
/* Members cut per text at most (each is 24 bytes of struct json_scan). */
#define JSON_SCAN_MAX_CUTS 256
/* Regions per text, region 0 (everything outside the others) included. */
#define JSON_MAX_REGIONS 4
/* Member names longer than this (decoded, bytes) match no rule: they take the node's `other`. */
#define JSON_SCAN_NAME_MAX 63

/* Nodes 0 and 1 are these; a schema's own nodes are numbered from 2. */
#define JSON_NODE_CUT 0
#define JSON_NODE_ALL 1

struct json_member_rule {
    const char *name;     /* the member's name, decoded; ASCII, at most JSON_SCAN_NAME_MAX bytes */
    unsigned char node;   /* JSON_NODE_CUT, JSON_NODE_ALL or a node of the schema */
    unsigned char region; /* 0, or the region the value is priced in */
    bool unique;          /* a second member of this name in one object is an error */
    const char *label;    /* the name in error messages (a path, say); NULL: name */
};

struct json_schema_node {
    unsigned char other; /* the node of a member not listed */
    const struct json_member_rule *members;
    size_t n_members; /* `unique` holds for the first 32 */
};

/* A node number at or past n_nodes reads as JSON_NODE_ALL. Read-only once built; static const
 * is the intended place. */
struct json_schema {
    const struct json_schema_node *nodes; /* indexed by node; entries 0 and 1 are not read */
    size_t n_nodes;
    unsigned char root; /* the node of the top-level value (JSON_NODE_ALL: no rule applies) */
};

/* What json_scan() is asked to do. */
struct json_scan_opts {
    const struct json_schema *schema; /* NULL: every member kept, one region */
    unsigned max_depth;               /* 1 .. JSON_SCAN_MAX_DEPTH */
    bool keep_all; /* follow the schema for regions and unique names, but cut nothing */
};

/* A span of the text: bytes [start, end). */
struct json_span {
    size_t start, end;
};

/* A cut: bytes [start, end) of the text read as `repl` ("" for a member, "null" for a value). */
struct json_cut {
    size_t start, end;
    const char *repl;
};

/*
 * What one scan found. The first part is the result; the rest is the scanner's own state,
 * not to be read. About 8 KiB: the caller places it (the stack is fine) and json_scan()
 * initializes it.
 */
struct json_scan {
    /* results (valid after json_scan() returned true) */
    bool root_is_object;
    uint64_t cost[JSON_MAX_REGIONS];         /* estimated bytes of tree per region */
    bool region_seen[JSON_MAX_REGIONS];      /* the region's value is in the text */
    struct json_span span[JSON_MAX_REGIONS]; /* its bytes, when seen */
    size_t values;                           /* values in the text, of every kind */
    struct json_cut cuts[JSON_SCAN_MAX_CUTS + JSON_MAX_REGIONS]; /* sorted, disjoint */
    size_t n_cuts; /* members cut (tree.h appends the regions read as null) */

    /* private */
    const unsigned char *s;
    size_t len, pos;
    const struct json_schema *schema;
    unsigned max_depth;
    bool prune;
    int depth;
    bool is_object[JSON_SCAN_MAX_DEPTH];
    unsigned char node[JSON_SCAN_MAX_DEPTH];
    bool kept[JSON_SCAN_MAX_DEPTH];
    uint32_t unique_seen[JSON_SCAN_MAX_DEPTH];
    size_t comma[JSON_SCAN_MAX_DEPTH];
    unsigned char next_node, next_region;
    size_t key_start;
    int cut_depth, region_depth;
    size_t cut_start;
    bool cut_comma;
    unsigned char region;
    char *err;
    size_t errlen;
};

/*
 * json_scan() - validate text[0, len) (need not be NUL-terminated) as one JSON text and fill
 * *sc: the cost per region, where each region's value is, and the members `opts->schema` cuts.
 * Linear in len; allocates nothing. Returns true, or false with the reason in err (errlen
 * bytes; "malformed JSON: ..." as above) when the text is not strict JSON, nests deeper than
 * opts->max_depth, or repeats a unique member or a region. Thread-safe (see above).
 */
bool json_scan(struct json_scan *sc, const char *text, size_t len,
               const struct json_scan_opts *opts, char *err, size_t errlen);

#endif
