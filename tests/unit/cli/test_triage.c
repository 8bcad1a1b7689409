/* Tests for cli/triage.c: a DRA pod classified from stores, and its explain report (its ladder
 * table checked against classify() for every classifier fixture). */
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

#include "classify/classify.h"
#include "classify_world.h"
#include "dra_world.h"
#include "explain.h"
#include "gpus.h"
#include "objects.h"
#include "triage.h"
#include "util/result.h"

/* The fixture's nodes, pods and pod into a store, its DRA objects into a DRA store. */
static void load(const char *file, struct store **s, struct dra_store **ds, char *ns, char *name)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "dra/%s", file);
    json_object *root = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(root);
    *s = store_new(&test_gpus);
    *ds = dra_store_new();
    assert_non_null(*s);
    assert_non_null(*ds);
    assert_int_equal(dra_world_apply(*ds, root), K_OK);
    json_object *a = NULL;
    unsigned ch = 0;
    json_object_object_get_ex(root, "nodes", &a);
    for (size_t i = 0; a && i < json_object_array_length(a); i++)
        assert_int_equal(store_node_apply_json(*s, json_object_array_get_idx(a, i), 0, NULL, &ch),
                         K_OK);
    a = NULL;
    json_object_object_get_ex(root, "pods", &a);
    for (size_t i = 0; a && i < json_object_array_length(a); i++)
        assert_int_equal(store_pod_apply_json(*s, json_object_array_get_idx(a, i), 0, NULL, &ch),
                         K_OK);
    json_object *pod = NULL;
    json_object_object_get_ex(root, "pod", &pod);
    char key[STORE_KEY_MAX];
    assert_int_equal(store_pod_apply_json(*s, pod, 0, key, &ch), K_OK);
    char *slash = strchr(key, '/');
    assert_non_null(slash);
    *slash = '\0';
    strcpy(ns, key);
    strcpy(name, slash + 1);
    json_object_put(root);
}

/* triage_fixture() - the fixture's pod triaged from stores loaded with its objects (DRA GPU
 * classes: the default set, in *dra, which the caller cleans up after triage_cleanup()). */
static void triage_fixture(const char *file, struct gpu_set *dra, struct triage *t)
{
    struct store *s;
    struct dra_store *ds;
    char ns[256], name[256];
    load(file, &s, &ds, ns, name);
    assert_int_equal(gpu_set_parse(dra, DRA_GPU_SET_DEFAULT), K_OK);
    assert_int_equal(triage_from_stores(s, ds, dra, ns, name, t), K_OK);
}

static void test_dra_exhausted_explain(void **state)
{
    (void)state;
    struct gpu_set dra;
    struct triage t;
    triage_fixture("recorded-dra-exhausted.json", &dra, &t);
    assert_int_equal(t.result.cause, CAUSE_DRA_EXHAUSTED);
    char *text = test_explain_text(&t);
    if (getenv("GPUTRI_TEST_PRINT"))
        fputs(text, stdout);
    /* the claims, the deciding request per node, the pools and who holds their devices */
    assert_non_null(strstr(text, "Claims:"));
    assert_non_null(strstr(text, "gpu (template single-gpu, claim dra-exhausted-gpu-"));
    assert_non_null(strstr(text, "DRA pools of the driver on those nodes"));
    /* node, driver, pool, devices, matching, allocated, free */
    assert_non_null(strstr(text, "dra-node-0   gpu.nvidia.com   dra-node-0   1         1          "
                                 "1           0"));
    assert_non_null(strstr(text, "gpu-0: dra-triage/dra-ok-gpu-"));
    assert_non_null(strstr(text, "(pod dra-ok)"));
    assert_non_null(strstr(text, "(pod dra-holder)"));
    assert_non_null(strstr(text, "dra-exhausted 2"));
    free(text);
    triage_cleanup(&t);
    gpu_set_cleanup(&dra);
}

/* Shared counters and capacity per device: the counter set a whole GPU used up, the partitions
 * it blocks, and a shared device's capacity used by its shares. */
static void test_dra_counters_explain(void **state)
{
    (void)state;
    struct store *s;
    struct dra_store *ds;
    char ns[256], name[256];
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    load("hand-counters-whole-gpu-blocks-mig.json", &s, &ds, ns, name);
    struct triage t;
    assert_int_equal(triage_from_stores(s, ds, &dra, ns, name, &t), K_OK);
    assert_int_equal(t.result.cause, CAUSE_DRA_EXHAUSTED);
    assert_non_null(strstr(t.result.detail, "counter set gpu-0-counters"));
    char *text = test_explain_text(&t);
    if (getenv("GPUTRI_TEST_PRINT"))
        fputs(text, stdout);
    const char *ctr = strstr(text, "DRA shared counters of those pools");
    assert_non_null(ctr);
    /* node, pool, set, counter, total, left, held by */
    assert_non_null(strstr(ctr, "gpu-0-counters   memory            40Gi      0         "
                                "hand/other-gpu (pod other)"));
    const char *devs = strstr(text, "DRA devices that draw on shared counters");
    assert_non_null(devs);
    assert_non_null(strstr(devs, "allocated to hand/other-gpu (pod other)"));
    assert_non_null(strstr(devs, "gpu-0-mig-1g.5gb-0"));
    assert_non_null(strstr(devs, "blocked: gpu-0-counters has 0 of memory left, needs 5Gi"));
    free(text);
    triage_cleanup(&t);

    load("hand-shared-capacity-used-up.json", &s, &ds, ns, name);
    assert_int_equal(triage_from_stores(s, ds, &dra, ns, name, &t), K_OK);
    assert_int_equal(t.result.cause, CAUSE_DRA_EXHAUSTED);
    text = test_explain_text(&t);
    if (getenv("GPUTRI_TEST_PRINT"))
        fputs(text, stdout);
    devs = strstr(text, "DRA devices that draw on shared counters");
    assert_non_null(devs);
    assert_non_null(strstr(devs, "memory 32Gi of 40Gi used"));
    assert_non_null(strstr(devs, "shared by 1 claim"));
    assert_null(strstr(text, "DRA shared counters of those pools"));
    free(text);
    triage_cleanup(&t);
    gpu_set_cleanup(&dra);
}

/* A request no device satisfies: each pool shows its devices and none of them matching. */
static void test_dra_no_match_explain_pools(void **state)
{
    (void)state;
    struct gpu_set dra;
    struct triage t;
    triage_fixture("recorded-dra-no-match.json", &dra, &t);
    assert_int_equal(t.result.cause, CAUSE_DRA_NO_MATCH);
    char *text = test_explain_text(&t);
    if (getenv("GPUTRI_TEST_PRINT"))
        fputs(text, stdout);
    const char *pools = strstr(text, "DRA pools of the driver on those nodes");
    assert_non_null(pools);
    assert_non_null(strstr(pools, "MATCHING"));
    assert_non_null(strstr(pools, "dra-node-0   gpu.nvidia.com   dra-node-0   1         0"));
    free(text);
    triage_cleanup(&t);
    gpu_set_cleanup(&dra);
}

/* Tainted devices: the word, and explain's table of device taints, from a ResourceSlice and a
 * DeviceTaintRule, with whether each keeps the deciding request off. */
static void test_dra_tainted_explain(void **state)
{
    (void)state;
    struct gpu_set dra;
    struct triage t;
    triage_fixture("hand-taint-rule.json", &dra, &t);
    assert_int_equal(t.result.cause, CAUSE_DRA_TAINTED);
    assert_non_null(strstr(t.result.detail, "DeviceTaintRule maint"));
    char *text = test_explain_text(&t);
    if (getenv("GPUTRI_TEST_PRINT"))
        fputs(text, stdout);
    const char *taints = strstr(text, "DRA device taints on those pools");
    assert_non_null(taints);
    assert_non_null(strstr(taints, "maintenance=true:NoExecute"));
    assert_non_null(strstr(taints, "DeviceTaintRule maint"));
    assert_non_null(strstr(taints, "yes"));
    assert_non_null(strstr(text, "1 matching gpu.example.com devices carry an untolerated taint"));
    free(text);
    triage_cleanup(&t);
    gpu_set_cleanup(&dra);
}

/* Without the DRA objects, or without GPU classes, the same pod has no GPU request. */
static void test_dra_pod_without_dra(void **state)
{
    (void)state;
    struct store *s;
    struct dra_store *ds;
    char ns[256], name[256];
    load("recorded-dra-exhausted.json", &s, &ds, ns, name);
    dra_store_free(ds);
    struct triage t;
    assert_int_equal(triage_from_store(s, ns, name, &t), K_OK);
    assert_int_equal(t.result.cause, CAUSE_NO_REQUEST);
    triage_cleanup(&t);
    load("recorded-dra-exhausted.json", &s, &ds, ns, name);
    assert_int_equal(triage_from_stores(s, ds, NULL, ns, name, &t), K_OK);
    assert_int_equal(t.result.cause, CAUSE_NO_REQUEST);
    triage_cleanup(&t);
}

/* A pod for a scheduler that never answers, created 60 s ago, on a node with a free GPU. */
static struct store *vendor_pod_store(void)
{
    char created[32], pod[1024];
    time_t at = time(NULL) - 60;
    struct tm tm;
    gmtime_r(&at, &tm);
    strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(pod, sizeof(pod),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"ns\",\"uid\":\"u1\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"schedulerName\":\"hami-scheduler\",\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
             "\"status\":{\"phase\":\"Pending\"}}",
             created);
    static const char node[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u2\"},"
        "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"1\"},"
        "\"allocatable\":{\"nvidia.com/gpu\":\"1\"}}}";
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    unsigned ch = 0;
    json_object *o = json_tokener_parse(node);
    assert_non_null(o);
    assert_int_equal(store_node_apply_json(s, o, 0, NULL, &ch), K_OK);
    json_object_put(o);
    o = json_tokener_parse(pod);
    assert_non_null(o);
    assert_int_equal(store_pod_apply_json(s, o, 0, NULL, &ch), K_OK);
    json_object_put(o);
    return s;
}

/* --no-scheduler-grace-period: 60 s without an answer is no-scheduler after the default 30 s,
 * and not yet within an hour's grace (the ladder goes on to the nodes). */
static void test_no_scheduler_grace(void **state)
{
    (void)state;
    struct triage t;
    assert_int_equal(
        triage_from_stores_grace(vendor_pod_store(), NULL, NULL, 0, NULL, NULL, "ns", "p", &t),
        K_OK);
    assert_int_equal(t.result.cause, CAUSE_NO_SCHEDULER);
    triage_cleanup(&t);
    assert_int_equal(
        triage_from_stores_grace(vendor_pod_store(), NULL, NULL, 3600, NULL, NULL, "ns", "p", &t),
        K_OK);
    assert_int_equal(t.result.cause, CAUSE_GPU_FITS);
    triage_cleanup(&t);
}

static char *explain(const struct kpod *pod, enum cause cause)
{
    struct triage t = {.pod = pod};
    t.result.cause = cause;
    snprintf(t.result.detail, sizeof(t.result.detail), "d");
    return test_explain_text(&t);
}

/* A pod without a GPU request is never annotated: explain says so instead of "not yet". */
static void test_annotation_line(void **state)
{
    (void)state;
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    char *text = explain(&pod, CAUSE_NO_REQUEST);
    assert_non_null(strstr(text, "never annotates a pod without a GPU request"));
    assert_null(strstr(text, "has not annotated"));
    free(text);

    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    pod.gpu_requests = (struct resource_list){&req, 1};
    pod.node_name = (char *)"n1";
    text = explain(&pod, CAUSE_OK);
    assert_non_null(strstr(text, "none (gputri-controller has not annotated the pod)"));
    free(text);

    pod.cause = (char *)"ok";
    text = explain(&pod, CAUSE_OK);
    assert_non_null(strstr(text, "gputri/cause=ok"));
    free(text);
}

/* What the API gives (an annotation, a scheduler message, a detail quoting a CEL expression)
 * reaches explain's text escaped: no ESC, DEL, C1 (CSI U+009B, OSC U+009D) or bad byte. */
static void test_explain_escapes_controls(void **state)
{
    (void)state;
    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};
    pod.cause = (char *)"ok\x1b[2J\xc2\x9b"
                        "2J";
    pod.scheduled.status = COND_FALSE;
    pod.scheduled.reason = (char *)"Unschedulable";
    pod.scheduled.message = (char *)"0/1 nodes\r\n\xc2\x9d"
                                    "0;t\xc2\x9c\x7f\xff\xc3\xa9";
    struct triage t = {.pod = &pod};
    t.result.cause = CAUSE_OK; /* a word decided before the per-node view: no stores read */
    snprintf(t.result.detail, sizeof(t.result.detail),
             "selector \"\xc2\x9b"
             "31m\"");
    char *text = test_explain_text(&t);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        assert_true(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
        assert_false(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
        assert_true(*p != 0xff);
    }
    assert_non_null(strstr(text, "gputri/cause=ok\\x1b[2J\\u009b2J (differs"));
    assert_non_null(
        strstr(text, "Unschedulable: 0/1 nodes\\x0d\\x0a\\u009d0;t\\u009c\\x7f\\xff\xc3\xa9\n"));
    assert_non_null(strstr(text, "selector \"\\u009b31m\"\n"));
    free(text);
}

/* ---- explain's ladder table against classify(), every classifier fixture ---------------- */

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const struct node_verdict *verdict_of(const struct classify_result *r, const char *node)
{
    for (size_t i = 0; i < r->n_verdicts; i++)
        if (strcmp(r->verdicts[i].node->name, node) == 0)
            return &r->verdicts[i];
    return NULL;
}

/*
 * One fixture, its target unbound (so that bound targets are compared on their nodes too): the
 * ladder table of `explain` lists every candidate classify() finds once, with its step, and marks
 * classify()'s closest node "(closest)".
 */
static int run_explain_fixture(const char *file, void *ctx)
{
    (void)ctx;
    int failures = 0;
    json_object *root = json_object_from_file(file);
    assert_non_null(root);
    json_object *pods = member(root, "pods");
    struct classify_world w;
    char err[256];
    if (classify_world_load(root, &test_gpus, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", file, err);
    const struct kpod *tp = &w.pods[w.target];
    for (size_t i = 0; i < json_object_array_length(pods); i++) {
        json_object *p = json_object_array_get_idx(pods, i);
        json_object *meta = member(p, "metadata");
        if (strcmp(json_object_get_string(member(meta, "namespace")), tp->ns) != 0 ||
            strcmp(json_object_get_string(member(meta, "name")), tp->name) != 0)
            continue;
        json_object_object_del(member(p, "spec"), "nodeName");
        json_object_object_del(member(p, "spec"), "schedulingGates");
        json_object_object_del(member(p, "status"), "nominatedNodeName");
    }
    classify_world_cleanup(&w);
    if (classify_world_load(root, &test_gpus, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", file, err);
    tp = &w.pods[w.target];

    const struct knode **sorted = classify_world_sorted_nodes(&w);
    struct node_verdict *verdicts = calloc(w.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    /* explain tells classify the time (a pod of another scheduler may be no-scheduler by now) */
    struct classify_input in = {.pod = tp,
                                .nodes = sorted,
                                .n_nodes = w.n_nodes,
                                .usage = classify_world_usage,
                                .usage_ctx = &w,
                                .now = (int64_t)time(NULL)};
    struct classify_result want = {.verdicts = verdicts};
    assert_int_equal(classify(&in, &want), K_OK);

    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    unsigned ch = 0;
    json_object *nodes = member(root, "nodes");
    for (size_t i = 0; i < json_object_array_length(nodes); i++)
        assert_int_equal(
            store_node_apply_json(s, json_object_array_get_idx(nodes, i), 0, NULL, &ch), K_OK);
    for (size_t i = 0; i < json_object_array_length(pods); i++)
        assert_int_equal(store_pod_apply_json(s, json_object_array_get_idx(pods, i), 0, NULL, &ch),
                         K_OK);
    struct triage t;
    assert_int_equal(triage_from_store(s, tp->ns, tp->name, &t), K_OK);
    const char *name = strrchr(file, '/') + 1;
    if (t.result.cause != want.cause) {
        print_error("%s: explain's cause %s, classify's %s\n", name, cause_word(t.result.cause),
                    cause_word(want.cause));
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
            print_error("%s: explain row unreadable: %s\n", name, line);
            failures++;
            continue;
        }
        rows++;
        const struct node_verdict *v = verdict_of(&want, node);
        if (!v) {
            print_error("%s: explain lists %s, which classify does not count a candidate\n", name,
                        node);
            failures++;
            continue;
        }
        if (strcmp(step, cause_word(v->step)) != 0) {
            print_error("%s: explain says %s stops at %s, classify says %s\n", name, node, step,
                        cause_word(v->step));
            failures++;
        }
        size_t l = strlen(line);
        bool closest = l > 10 && strcmp(line + l - 10, " (closest)") == 0;
        if (closest != (want.closest.node && strcmp(want.closest.node->name, node) == 0)) {
            print_error("%s: explain %s %s as closest; classify's closest is %s\n", name,
                        closest ? "marks" : "does not mark", node,
                        want.closest.node ? want.closest.node->name : "(none)");
            failures++;
        }
        saw_closest |= closest;
    }
    if (rows != want.n_verdicts) {
        print_error("%s: explain lists %zu candidate(s), classify %zu\n", name, rows,
                    want.n_verdicts);
        failures++;
    }
    if (want.n_verdicts > 0 && !saw_closest) {
        print_error("%s: explain marks no closest node\n", name);
        failures++;
    }
    /* -o json|yaml: the same rows, each node's step and the closest as classify has them */
    json_object *ex = NULL, *ex_nodes = NULL;
    assert_int_equal(triage_explain_json(&t, &ex), K_OK);
    size_t n_json =
        json_object_object_get_ex(ex, "nodes", &ex_nodes) ? json_object_array_length(ex_nodes) : 0;
    if (n_json != rows) {
        print_error("%s: explain -o json lists %zu nodes, the text %zu\n", name, n_json, rows);
        failures++;
    }
    for (size_t i = 0; i < n_json; i++) {
        json_object *row = json_object_array_get_idx(ex_nodes, i);
        const char *node = json_object_get_string(json_object_object_get(row, "node"));
        const struct node_verdict *v = node ? verdict_of(&want, node) : NULL;
        bool closest = json_object_get_boolean(json_object_object_get(row, "closest"));
        if (!v ||
            strcmp(json_object_get_string(json_object_object_get(row, "stopsAt")),
                   cause_word(v->step)) != 0 ||
            closest != (want.closest.node == v->node) || (i == 0) != closest) {
            print_error("%s: explain -o json row %zu (%s) differs from classify\n", name, i,
                        node ? node : "?");
            failures++;
        }
    }
    json_object_put(ex);
    free(text);
    triage_cleanup(&t);
    free(verdicts);
    free(sorted);
    classify_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_explain_every_classify_fixture(void **state)
{
    (void)state;
    size_t n;
    int failures = classify_fixtures_each(FIXTURES_DIR, run_explain_fixture, NULL, &n);
    assert_true(failures >= 0);
    assert_true(n >= 7);
    if (failures)
        fail_msg("%d disagreement(s) between explain and classify", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotation_line),
        cmocka_unit_test(test_explain_escapes_controls),
        cmocka_unit_test(test_dra_exhausted_explain),
        cmocka_unit_test(test_dra_counters_explain),
        cmocka_unit_test(test_dra_no_match_explain_pools),
        cmocka_unit_test(test_dra_tainted_explain),
        cmocka_unit_test(test_dra_pod_without_dra),
        cmocka_unit_test(test_no_scheduler_grace),
        cmocka_unit_test(test_explain_every_classify_fixture),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
