/*
 * classify_world.h - the classifier fixtures of tests/fixtures/classify, shared by the tests that
 * run them (tests/unit/core/classify/test_classify.c, tests/unit/core/triage/test_triage.c,
 * tests/unit/cli/test_triage.c).
 *
 * A fixture holds real API objects: {"description", "nodes": [Node...], "pods": [Pod...],
 * "target": "namespace/name", "want": "<cause word>", "detail_contains": ["..."]}, and optionally
 * "detail_lacks": ["..."] (strings the detail must not contain), "now" (RFC 3339: the time
 * classify() is told; absent: unknown) and "no_scheduler_grace" (seconds).
 */
#ifndef GPUTRI_TEST_CLASSIFY_WORLD_H
#define GPUTRI_TEST_CLASSIFY_WORLD_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "model/gpu.h"
#include "model/model.h"

/* One fixture's objects, projected with core/kube/project.h. */
struct classify_world {
    struct knode *nodes; /* fixture order */
    size_t n_nodes;
    struct kpod *pods;
    size_t n_pods;
    size_t target;              /* index into pods */
    int64_t now;                /* "now" in seconds since the epoch, 0 when absent */
    int64_t no_scheduler_grace; /* "no_scheduler_grace", 0 when absent */
};

/*
 * classify_world_load() - project root's "nodes" and "pods" and find "target". Returns 0, or -1
 * with a message in err (w is then cleaned up).
 */
int classify_world_load(json_object *root, const struct gpu_set *gpus, struct classify_world *w,
                        char *err, size_t errlen);
void classify_world_cleanup(struct classify_world *w);

/*
 * classify_world_usage() - the classifier's node_usage_fn over a world (ctx): the GPU requests of
 * the non-terminal pods bound to `node`, the target excluded.
 */
int64_t classify_world_usage(void *ctx, const char *node, const char *resource);

/*
 * classify_world_sorted_nodes() - pointers to the world's nodes in name order (the order the
 * store and the webhook's snapshot hold them in): a new array of n_nodes + 1 entries, freed by
 * the caller; fails the test when out of memory.
 */
const struct knode **classify_world_sorted_nodes(const struct classify_world *w);

/*
 * classify_fixtures_each() - objects.h test_fixtures_each() over <fixtures_dir>/classify.
 */
int classify_fixtures_each(const char *fixtures_dir, int (*fn)(const char *path, void *ctx),
                           void *ctx, size_t *n);

struct classify_result;

/*
 * classify_check_expect() - compare a result with a fixture's expectation: the cause word `want`
 * (a JSON string; NULL fails) and every string of the array `contains` (NULL: none) found in the
 * detail. Prints each mismatch with `path` (cmocka print_error) and returns how many there were.
 */
int classify_check_expect(const char *path, const struct classify_result *res, json_object *want,
                          json_object *contains);

/*
 * classify_check_lacks() - none of the strings of the array `lacks` (NULL: none) is in the
 * detail. Prints each one found with `path`; returns how many there were.
 */
int classify_check_lacks(const char *path, const struct classify_result *res, json_object *lacks);

/*
 * classify_check_counts() - the invariant of every result: the per-cause counts add up to the
 * candidates, and there is one verdict per candidate. Prints a mismatch with `path`; returns 0
 * or 1.
 */
int classify_check_counts(const char *path, const struct classify_result *res);

#endif
