/* Tests for cli/triage.c: a DRA pod classified from stores, and its explain report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classify/classify.h"
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

static void test_dra_exhausted_explain(void **state)
{
    (void)state;
    struct store *s;
    struct dra_store *ds;
    char ns[256], name[256];
    load("recorded-dra-exhausted.json", &s, &ds, ns, name);
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct triage t;
    assert_int_equal(triage_from_stores(s, ds, &dra, ns, name, &t), K_OK);
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

/* A request no device satisfies: each pool shows its devices and none of them matching. */
static void test_dra_no_match_explain_pools(void **state)
{
    (void)state;
    struct store *s;
    struct dra_store *ds;
    char ns[256], name[256];
    load("recorded-dra-no-match.json", &s, &ds, ns, name);
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct triage t;
    assert_int_equal(triage_from_stores(s, ds, &dra, ns, name, &t), K_OK);
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
    assert_int_equal(triage_from_stores_grace(vendor_pod_store(), NULL, NULL, 0, "ns", "p", &t),
                     K_OK);
    assert_int_equal(t.result.cause, CAUSE_NO_SCHEDULER);
    triage_cleanup(&t);
    assert_int_equal(triage_from_stores_grace(vendor_pod_store(), NULL, NULL, 3600, "ns", "p", &t),
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotation_line),
        cmocka_unit_test(test_dra_exhausted_explain),
        cmocka_unit_test(test_dra_no_match_explain_pools),
        cmocka_unit_test(test_dra_pod_without_dra),
        cmocka_unit_test(test_no_scheduler_grace),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
