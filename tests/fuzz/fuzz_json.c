/*
 * fuzz_json.c - libFuzzer target for core/json (scan.c, tree.c).
 *
 * Input: one byte of options, then the JSON text. The options pick the schema (none, or SCHEMA
 * below: an allow-list node, deny-list nodes, a cut inside arrays, unique names and two
 * regions), whether the regions are read as null (over a small budget, or skipped) and whether
 * region 0 has a small budget.
 *
 * Checks, besides the sanitizers, what tree.h promises:
 *   - the tree built straight from the text and the tree of json-c's tokener on the same cut
 *     text (JSON_TREE_TOKENER) are the same: the same result and, on K_OK, the same tree
 *     (json_object_equal and the same printed text, member order included);
 *   - against json-c's tokener on the whole input (JSON_TOKENER_STRICT |
 *     JSON_TOKENER_VALIDATE_UTF8, the same depth): whatever json_scan() accepts, json-c accepts,
 *     and the tree is json-c's with the members the schema cuts removed and the regions read as
 *     null set to null (when fewer than JSON_SCAN_MAX_CUTS members were cut); nothing json-c
 *     refuses is accepted;
 *   - the costs are at least the cost model's floor for the values seen, a refusal says why in
 *     one terminated "malformed JSON: " line, json_tree_free() is idempotent.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "json/scan.h"
#include "json/tree.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH 32

enum { N_ROOT = JSON_NODE_ALL + 1, N_META, N_SPEC, N_CONTAINER, N_N };

static const struct json_member_rule ROOT_RULES[] = {
    {"metadata", N_META, 0, true, NULL},   {"spec", N_SPEC, 0, false, NULL},
    {"items", N_ROOT, 0, false, NULL},     {"object", JSON_NODE_ALL, 1, true, "the object"},
    {"old", JSON_NODE_ALL, 2, true, NULL}, {"status", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_member_rule META_RULES[] = {
    {"managedFields", JSON_NODE_CUT, 0, false, NULL},
    {"annotations", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_member_rule SPEC_RULES[] = {
    {"containers", N_CONTAINER, 0, false, NULL},
    {"nodeName", JSON_NODE_ALL, 0, false, NULL},
    {"spec", N_SPEC, 0, false, NULL},
};
static const struct json_member_rule CONTAINER_RULES[] = {
    {"env", JSON_NODE_CUT, 0, false, NULL},
    {"volumeMounts", JSON_NODE_CUT, 0, false, NULL},
};
static const struct json_schema_node NODES[N_N] = {
    /* "all but": other members kept */
    [N_ROOT] = {JSON_NODE_ALL, ROOT_RULES, sizeof(ROOT_RULES) / sizeof(ROOT_RULES[0])},
    [N_META] = {JSON_NODE_ALL, META_RULES, sizeof(META_RULES) / sizeof(META_RULES[0])},
    /* "only": other members cut */
    [N_SPEC] = {JSON_NODE_CUT, SPEC_RULES, sizeof(SPEC_RULES) / sizeof(SPEC_RULES[0])},
    [N_CONTAINER] = {JSON_NODE_ALL, CONTAINER_RULES,
                     sizeof(CONTAINER_RULES) / sizeof(CONTAINER_RULES[0])},
};
static const struct json_schema SCHEMA = {NODES, N_N, N_ROOT};

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_json: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static const struct json_member_rule *rule_of(unsigned char node, const char *key)
{
    if (node == JSON_NODE_ALL || node == JSON_NODE_CUT)
        return NULL;
    for (size_t i = 0; i < NODES[node].n_members; i++)
        if (strcmp(NODES[node].members[i].name, key) == 0)
            return &NODES[node].members[i];
    return NULL;
}

/*
 * json-c's whole tree as the schema reads it: cut members removed, regions read as null set
 * to null. `in_region`: inside a region's value, where regions are not looked for (scan.h).
 */
static void expect(json_object *v, unsigned char node, bool cut, const bool *region_null,
                   bool in_region)
{
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            expect(json_object_array_get_idx(v, i), node, cut, region_null, in_region);
        return;
    }
    if (!json_object_is_type(v, json_type_object))
        return;
    /* the names first: the object is changed below */
    size_t n = (size_t)json_object_object_length(v), k = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    if (!keys)
        abort();
    json_object_object_foreach(v, key, val)
    {
        (void)val;
        keys[k++] = key;
    }
    for (size_t i = 0; i < k; i++) {
        const struct json_member_rule *r = rule_of(node, keys[i]);
        unsigned char child =
            r ? r->node : (node == JSON_NODE_ALL ? JSON_NODE_ALL : NODES[node].other);
        if (child == JSON_NODE_CUT && cut) {
            json_object_object_del(v, keys[i]); /* frees the name: not read again */
            continue;
        }
        bool region = r && r->region && !in_region;
        if (region && region_null[r->region]) {
            json_object_object_add(v, keys[i], NULL);
            continue;
        }
        expect(json_object_object_get(v, keys[i]), child == JSON_NODE_CUT ? JSON_NODE_ALL : child,
               cut, region_null, in_region || region);
    }
    free(keys);
}

static bool same_tree(json_object *a, json_object *b)
{
    if (!json_object_equal(a, b))
        return false;
    if (!a || !b)
        return a == b;
    const int how = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
    return strcmp(json_object_to_json_string_ext(a, how), json_object_to_json_string_ext(b, how)) ==
           0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    uint8_t o = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct json_tree_opts opts = {
        .schema = o & 1 ? &SCHEMA : NULL,
        .max_depth = MAX_DEPTH,
        .region = {[0] = {.max_cost = o & 2 ? 4096 : 0},
                   [1] = {.max_cost = o & 4 ? 2048 : 0, .null_when_over = true},
                   [2] = {.skip = (o & 8) != 0}},
        .flags = (o & 16 ? JSON_TREE_KEEP_ALL : 0u) | (o & 32 ? JSON_TREE_OBJECT : 0u),
    };
    struct json_tree *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    if (!a || !b)
        abort();
    char ea[256], eb[256];
    int ra = json_tree_parse(a, text, len, &opts, ea, sizeof(ea));
    opts.flags |= JSON_TREE_TOKENER;
    int rb = json_tree_parse(b, text, len, &opts, eb, sizeof(eb));
    if (strnlen(ea, sizeof(ea)) == sizeof(ea) || strchr(ea, '\n'))
        fail("an error that is not one terminated line", NULL);
    if (ra == K_ENOMEM || rb == K_ENOMEM)
        goto out;
    if (ra != rb)
        fail("the builder and the tokener answer differently", ea[0] ? ea : eb);
    if (ra != K_OK && ra != K_EPARSE && ra != K_ETOOBIG)
        fail("an unexpected result", k_strerror(ra));
    if ((ra == K_OK) != (ea[0] == 0))
        fail("an error message without an error, or an error without one", ea);
    if (ra == K_EPARSE && strncmp(ea, "malformed JSON: ", 16) != 0)
        fail("K_EPARSE that does not say malformed JSON", ea);
    if (ra == K_OK && !same_tree(a->root, b->root))
        fail("the builder's tree is not the tokener's", NULL);
    if (ra == K_OK && (a->built_cost != b->built_cost || a->n_cuts != b->n_cuts))
        fail("the two ways count differently", NULL);

    /* json-c on the whole input, NUL-terminated as json_tokener_parse() reads it */
    char *copy = malloc(len + 1);
    json_tokener *tok = json_tokener_new_ex(MAX_DEPTH + 1);
    if (!copy || !tok)
        abort();
    memcpy(copy, text, len);
    copy[len] = 0;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *whole = json_tokener_parse_ex(tok, copy, (int)len + 1);
    bool jc_ok = json_tokener_get_error(tok) == json_tokener_success &&
                 json_tokener_get_parse_end(tok) == len;
    /* what this scan accepts (K_ETOOBIG: accepted as JSON, refused for its size) */
    bool scan_ok = ra == K_OK || (ra == K_ETOOBIG && len <= (size_t)INT32_MAX);
    bool object_refused = ra == K_EPARSE && strcmp(ea, "malformed JSON: not an object") == 0;
    if ((scan_ok || object_refused) && !jc_ok)
        fail("accepted what json-c refuses", ea);
    if (object_refused && json_object_is_type(whole, json_type_object))
        fail("an object refused as not an object", NULL);
    if (ra == K_OK) {
        if (a->cost[0] + a->cost[1] + a->cost[2] + a->cost[3] < JSON_COST_SCALAR)
            fail("a value that costs less than a scalar", NULL);
        if (a->n_cuts < JSON_SCAN_MAX_CUTS) {
            expect(whole, opts.schema ? SCHEMA.root : JSON_NODE_ALL,
                   opts.schema && !(opts.flags & JSON_TREE_KEEP_ALL), a->region_null, false);
            if (!same_tree(a->root, whole)) {
                fprintf(stderr, "built:    %s\nexpected: %s\n", json_object_to_json_string(a->root),
                        json_object_to_json_string(whole));
                fail("the tree is not json-c's, cut as the schema says", NULL);
            }
        }
    }
    json_object_put(whole);
    json_tokener_free(tok);
    free(copy);
out:
    json_tree_free(a);
    json_tree_free(a);
    json_tree_free(b);
    free(a);
    free(b);
    return 0;
}
