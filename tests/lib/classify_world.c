/* classify_world.c - loading the classifier fixtures for unit tests. */
#include "classify_world.h"
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify/classify.h"
#include "kube/project.h"
#include "objects.h"
#include "util/result.h"

int classify_world_load(json_object *root, const struct gpu_set *gpus, struct classify_world *w,
                        char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    json_object *nodes = NULL, *pods = NULL, *target = NULL;
    json_object_object_get_ex(root, "nodes", &nodes);
    json_object_object_get_ex(root, "pods", &pods);
    json_object_object_get_ex(root, "target", &target);
    if (!json_object_is_type(nodes, json_type_array) ||
        !json_object_is_type(pods, json_type_array) || !target) {
        snprintf(err, errlen, "missing nodes, pods or target");
        return -1;
    }
    size_t n_nodes = json_object_array_length(nodes), n_pods = json_object_array_length(pods);
    w->nodes = calloc(n_nodes + 1, sizeof(*w->nodes));
    w->pods = calloc(n_pods + 1, sizeof(*w->pods));
    if (!w->nodes || !w->pods) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (; w->n_nodes < n_nodes; w->n_nodes++) {
        if (project_node(json_object_array_get_idx(nodes, w->n_nodes), gpus,
                         &w->nodes[w->n_nodes]) != K_OK) {
            snprintf(err, errlen, "node %zu does not project", w->n_nodes);
            goto fail;
        }
    }
    json_object *now = NULL, *grace = NULL;
    if (json_object_object_get_ex(root, "now", &now) &&
        !clock_parse_rfc3339(json_object_get_string(now), &w->now)) {
        snprintf(err, errlen, "now is not an RFC 3339 time");
        goto fail;
    }
    if (json_object_object_get_ex(root, "no_scheduler_grace", &grace))
        w->no_scheduler_grace = json_object_get_int64(grace);
    w->target = (size_t)-1;
    const char *tname = json_object_get_string(target);
    for (; w->n_pods < n_pods; w->n_pods++) {
        struct kpod *p = &w->pods[w->n_pods];
        if (project_pod(json_object_array_get_idx(pods, w->n_pods), gpus, p) != K_OK) {
            snprintf(err, errlen, "pod %zu does not project", w->n_pods);
            goto fail;
        }
        char full[512];
        snprintf(full, sizeof(full), "%s/%s", p->ns ? p->ns : "", p->name);
        if (strcmp(full, tname) == 0)
            w->target = w->n_pods;
    }
    if (w->target == (size_t)-1) {
        snprintf(err, errlen, "target %s not among the pods", tname);
        goto fail;
    }
    return 0;
fail:
    classify_world_cleanup(w);
    return -1;
}

void classify_world_cleanup(struct classify_world *w)
{
    for (size_t i = 0; i < w->n_nodes; i++)
        node_cleanup(&w->nodes[i]);
    for (size_t i = 0; i < w->n_pods; i++)
        pod_cleanup(&w->pods[i]);
    free(w->nodes);
    free(w->pods);
    memset(w, 0, sizeof(*w));
}

int64_t classify_world_usage(void *ctx, const char *node, const char *resource)
{
    const struct classify_world *w = ctx;
    int64_t sum = 0;
    for (size_t i = 0; i < w->n_pods; i++) {
        const struct kpod *p = &w->pods[i];
        if (i == w->target || !p->node_name || strcmp(p->node_name, node) != 0 ||
            pod_is_terminal(p))
            continue;
        sum += resource_list_get(&p->gpu_requests, resource);
    }
    return sum;
}

static int cmp_node_ptrs(const void *a, const void *b)
{
    return strcmp((*(const struct knode *const *)a)->name, (*(const struct knode *const *)b)->name);
}

const struct knode **classify_world_sorted_nodes(const struct classify_world *w)
{
    const struct knode **sorted = calloc(w->n_nodes + 1, sizeof(*sorted));
    assert_non_null(sorted);
    for (size_t i = 0; i < w->n_nodes; i++)
        sorted[i] = &w->nodes[i];
    qsort(sorted, w->n_nodes, sizeof(*sorted), cmp_node_ptrs);
    return sorted;
}

int classify_fixtures_each(const char *fixtures_dir, int (*fn)(const char *path, void *ctx),
                           void *ctx, size_t *n)
{
    return test_fixtures_each(fixtures_dir, "classify", fn, ctx, n);
}

int classify_check_expect(const char *path, const struct classify_result *res, json_object *want,
                          json_object *contains)
{
    int failures = 0;
    const char *got = cause_word(res->cause);
    if (!want || strcmp(got, json_object_get_string(want)) != 0) {
        print_error("%s: got %s, want %s\n  detail: %s\n", path, got,
                    want ? json_object_get_string(want) : "?", res->detail);
        failures++;
    }
    size_t n = contains ? json_object_array_length(contains) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *needle = json_object_get_string(json_object_array_get_idx(contains, i));
        if (!strstr(res->detail, needle)) {
            print_error("%s: detail lacks \"%s\"\n  detail: %s\n", path, needle, res->detail);
            failures++;
        }
    }
    return failures;
}

int classify_check_lacks(const char *path, const struct classify_result *res, json_object *lacks)
{
    int failures = 0;
    size_t n = lacks ? json_object_array_length(lacks) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *needle = json_object_get_string(json_object_array_get_idx(lacks, i));
        if (needle && strstr(res->detail, needle)) {
            print_error("%s: detail has \"%s\"\n  detail: %s\n", path, needle, res->detail);
            failures++;
        }
    }
    return failures;
}

int classify_check_counts(const char *path, const struct classify_result *res)
{
    size_t sum = 0;
    for (size_t i = 0; i < CAUSE_COUNT; i++)
        sum += res->counts[i];
    if (sum == res->n_candidates && res->n_verdicts == res->n_candidates)
        return 0;
    print_error("%s: counts %zu / verdicts %zu != candidates %zu\n", path, sum, res->n_verdicts,
                res->n_candidates);
    return 1;
}
