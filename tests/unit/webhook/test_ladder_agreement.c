/*
 * test_ladder_agreement.c - one ladder: for every classifier fixture (tests/fixtures/classify,
 * loaded with tests/lib/classify_world.h as test_classify.c loads them) the three consumers of
 * the per-node ladder see every node the same way:
 *   - classify() on the fixture's projections, nodes in name order (the order the store and the
 *     webhook snapshot hold them in), usage summed over the fixture's bound non-terminal pods;
 *   - `explain` (cli/triage.c): the fixture loaded into a store, triage_from_store() and
 *     triage_print_explain(); its ladder table must list every candidate once, with the step
 *     classify() found for it, and mark classify()'s closest node "(closest)";
 *   - the webhook (webhook/warnings.c wh_node_verdicts): the target's PodSpec projected as the
 *     webhook projects it, evaluated against a snapshot of the same nodes; every node's verdict
 *     must equal classify()'s (outside the selection: label-mismatch) and its closest node be
 *     classify()'s.
 * The target's spec.nodeName is removed first, so that bound targets (cause ok) are compared on
 * their nodes too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/store.h"
#include "classify/classify.h"
#include "classify_world.h"
#include "explain.h"
#include "kube/project.h"
#include "triage.h"
#include "util/result.h"
#include "warnings.h"

static struct gpu_set gpus; /* the default set, parsed by the test */

/* A fixture's world plus its nodes in name order. */
struct world {
    struct classify_world cw;
    const struct knode **sorted;
};

static int cmp_node_ptrs(const void *a, const void *b)
{
    return strcmp((*(const struct knode *const *)a)->name, (*(const struct knode *const *)b)->name);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The target Pod object of a fixture ("target": "ns/name"), borrowed, or NULL. */
static json_object *find_target(json_object *pods, const char *target)
{
    for (size_t i = 0; i < json_object_array_length(pods); i++) {
        json_object *p = json_object_array_get_idx(pods, i);
        json_object *meta = member(p, "metadata");
        char full[512];
        snprintf(full, sizeof(full), "%s/%s", json_object_get_string(member(meta, "namespace")),
                 json_object_get_string(member(meta, "name")));
        if (strcmp(full, target) == 0)
            return p;
    }
    return NULL;
}

static const struct node_verdict *verdict_of(const struct classify_result *r, const char *node)
{
    for (size_t i = 0; i < r->n_verdicts; i++)
        if (strcmp(r->verdicts[i].node->name, node) == 0)
            return &r->verdicts[i];
    return NULL;
}

/* explain's ladder table against classify(). Returns the failures. */
static int check_explain(const char *file, json_object *nodes, json_object *pods, const char *ns,
                         const char *name, const struct classify_result *want)
{
    int failures = 0;
    struct store *s = store_new(&gpus);
    assert_non_null(s);
    unsigned changed = 0;
    for (size_t i = 0; i < json_object_array_length(nodes); i++)
        assert_int_equal(
            store_node_apply_json(s, json_object_array_get_idx(nodes, i), 0, NULL, &changed), K_OK);
    for (size_t i = 0; i < json_object_array_length(pods); i++)
        assert_int_equal(
            store_pod_apply_json(s, json_object_array_get_idx(pods, i), 0, NULL, &changed), K_OK);
    struct triage t;
    assert_int_equal(triage_from_store(s, ns, name, &t), K_OK);
    if (t.result.cause != want->cause) {
        print_error("%s: explain's cause %s, classify's %s\n", file, cause_word(t.result.cause),
                    cause_word(want->cause));
        failures++;
    }
    char *text = test_explain_text(&t);

    /* the rows after the "NODE  STOPS AT ..." header, up to the next empty line */
    size_t rows = 0;
    bool in_table = false, saw_closest = false;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!in_table) {
            in_table = strncmp(line, "  NODE ", 7) == 0;
            continue;
        }
        if (strncmp(line, "  ", 2) != 0 || line[2] == ' ')
            break; /* the holders' section starts with a sentence */
        char node[256], step[64];
        if (sscanf(line, "%255s %63s", node, step) != 2) {
            print_error("%s: explain row unreadable: %s\n", file, line);
            failures++;
            continue;
        }
        rows++;
        const struct node_verdict *v = verdict_of(want, node);
        if (!v) {
            print_error("%s: explain lists %s, which classify does not count a candidate\n", file,
                        node);
            failures++;
            continue;
        }
        if (strcmp(step, cause_word(v->step)) != 0) {
            print_error("%s: explain says %s stops at %s, classify says %s\n", file, node, step,
                        cause_word(v->step));
            failures++;
        }
        size_t l = strlen(line);
        bool closest = l > 10 && strcmp(line + l - 10, " (closest)") == 0;
        if (closest != (want->closest.node && strcmp(want->closest.node->name, node) == 0)) {
            print_error("%s: explain %s %s as closest; classify's closest is %s\n", file,
                        closest ? "marks" : "does not mark", node,
                        want->closest.node ? want->closest.node->name : "(none)");
            failures++;
        }
        saw_closest |= closest;
    }
    if (rows != want->n_verdicts) {
        print_error("%s: explain lists %zu candidate(s), classify %zu\n", file, rows,
                    want->n_verdicts);
        failures++;
    }
    if (want->n_verdicts > 0 && !saw_closest) {
        print_error("%s: explain marks no closest node\n", file);
        failures++;
    }
    free(text);
    triage_cleanup(&t);
    return failures;
}

static bool same_verdict(const struct node_verdict *a, const struct node_verdict *b)
{
    return a->node == b->node && a->step == b->step && a->resource_step == b->resource_step &&
           a->full_capacity == b->full_capacity && a->taint == b->taint &&
           !strcmp(a->resource ? a->resource : "", b->resource ? b->resource : "") &&
           a->capacity == b->capacity && a->allocatable == b->allocatable &&
           a->allocated == b->allocated && a->requested == b->requested;
}

/* The webhook's node verdicts against classify(). Returns the failures. */
static int check_webhook(const char *file, json_object *target, struct world *w,
                         const struct classify_result *want)
{
    int failures = 0;
    struct kpod pod;
    assert_int_equal(
        project_pod_spec(member(target, "spec"), member(target, "metadata"), &gpus, &pod, NULL),
        K_OK);
    if (want->cause == CAUSE_NO_REQUEST) {
        /* wh_check_pod_spec runs no node check for it */
        if (pod.gpu_requests.n != 0) {
            print_error("%s: the webhook sees a GPU request classify does not\n", file);
            failures++;
        }
        pod_cleanup(&pod);
        return failures;
    }
    struct wh_snapshot snap = {
        .gpus = &gpus,
        .nodes = w->sorted,
        .n_nodes = w->cw.n_nodes,
        .nodes_synced = true,
        .runtime_classes_synced = true,
        .quotas_synced = true,
        .namespaces_synced = true,
    };
    struct node_verdict *v = calloc(w->cw.n_nodes + 1, sizeof(*v));
    assert_non_null(v);
    size_t closest;
    assert_int_equal(wh_node_verdicts(&snap, &pod, classify_world_usage, &w->cw, v, &closest),
                     K_OK);
    for (size_t i = 0; i < w->cw.n_nodes; i++) {
        const struct node_verdict *c = verdict_of(want, w->sorted[i]->name);
        if (!c && v[i].step != CAUSE_LABEL_MISMATCH) {
            print_error("%s: the webhook selects %s, classify does not\n", file,
                        w->sorted[i]->name);
            failures++;
        } else if (c && !same_verdict(c, &v[i])) {
            print_error("%s: node %s: the webhook says %s (%s %lld/%lld), classify %s (%s "
                        "%lld/%lld)\n",
                        file, w->sorted[i]->name, cause_word(v[i].step),
                        v[i].resource ? v[i].resource : "-", (long long)v[i].allocatable,
                        (long long)v[i].allocated, cause_word(c->step),
                        c->resource ? c->resource : "-", (long long)c->allocatable,
                        (long long)c->allocated);
            failures++;
        }
    }
    const struct knode *wc = closest == SIZE_MAX ? NULL : w->sorted[closest];
    if (wc != want->closest.node) {
        print_error("%s: the webhook's closest node %s, classify's %s\n", file,
                    wc ? wc->name : "(none)",
                    want->closest.node ? want->closest.node->name : "(none)");
        failures++;
    }
    free(v);
    pod_cleanup(&pod);
    return failures;
}

static int run_fixture(const char *file, void *ctx)
{
    (void)ctx;
    int failures = 0;
    json_object *root = json_object_from_file(file);
    assert_non_null(root);
    json_object *nodes = member(root, "nodes"), *pods = member(root, "pods");
    const char *target_key = json_object_get_string(member(root, "target"));
    assert_non_null(nodes);
    assert_non_null(pods);
    assert_non_null(target_key);
    json_object *target = find_target(pods, target_key);
    assert_non_null(target);
    /* node-level agreement: the pod as the scheduler would filter nodes for it */
    json_object_object_del(member(target, "spec"), "nodeName");
    json_object_object_del(member(target, "spec"), "schedulingGates");
    json_object_object_del(member(target, "status"), "nominatedNodeName");

    struct world w;
    char err[256];
    if (classify_world_load(root, &gpus, &w.cw, err, sizeof(err)) != 0)
        fail_msg("%s: %s", file, err);
    w.sorted = calloc(w.cw.n_nodes + 1, sizeof(*w.sorted));
    assert_non_null(w.sorted);
    for (size_t i = 0; i < w.cw.n_nodes; i++)
        w.sorted[i] = &w.cw.nodes[i];
    qsort(w.sorted, w.cw.n_nodes, sizeof(*w.sorted), cmp_node_ptrs);

    struct node_verdict *verdicts = calloc(w.cw.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    const struct kpod *tp = &w.cw.pods[w.cw.target];
    struct classify_input in = {.pod = tp,
                                .nodes = w.sorted,
                                .n_nodes = w.cw.n_nodes,
                                .usage = classify_world_usage,
                                .usage_ctx = &w.cw,
                                .dra = NULL};
    struct classify_result want = {.verdicts = verdicts};
    assert_int_equal(classify(&in, &want), K_OK);
    /* explain tells classify the time (a pod of another scheduler may be no-scheduler by now);
     * the webhook looks at nodes only */
    struct node_verdict *verdicts_now = calloc(w.cw.n_nodes + 1, sizeof(*verdicts_now));
    assert_non_null(verdicts_now);
    in.now = (int64_t)time(NULL);
    struct classify_result want_now = {.verdicts = verdicts_now};
    assert_int_equal(classify(&in, &want_now), K_OK);

    failures += check_explain(file, nodes, pods, tp->ns, tp->name, &want_now);
    failures += check_webhook(file, target, &w, &want);
    free(verdicts_now);
    printf("  %-48s %-16s %zu candidate(s), closest %s\n", strrchr(file, '/') + 1,
           cause_word(want.cause), want.n_verdicts,
           want.closest.node ? want.closest.node->name : "-");

    free(verdicts);
    free(w.sorted);
    classify_world_cleanup(&w.cw);
    json_object_put(root);
    return failures;
}

static void test_every_classify_fixture(void **state)
{
    (void)state;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    size_t n;
    int failures = classify_fixtures_each(FIXTURES_DIR, run_fixture, NULL, &n);
    gpu_set_cleanup(&gpus);
    assert_true(failures >= 0);
    assert_true(n >= 7);
    if (failures)
        fail_msg("%d disagreement(s) between classify, explain and the webhook", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_classify_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
