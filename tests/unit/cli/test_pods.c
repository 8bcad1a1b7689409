/* Tests for cli/pods.c: which pods become rows, annotation versus live causes, rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dra_world.h"
#include "gpus.h"
#include "objects.h"
#include "pods.h"
#include "util/result.h"

static void observe(struct pods_query *q, json_object *pod)
{
    pods_query_observe(q, pod);
    json_object_put(pod);
}

static void node(struct pods_query *q, json_object *n)
{
    pods_query_add_node(q, n);
    json_object_put(n);
}

static void set_annotation(json_object *pod, const char *cause, const char *detail)
{
    json_object *meta, *ann;
    json_object_object_get_ex(pod, "metadata", &meta);
    if (!json_object_object_get_ex(meta, "annotations", &ann)) {
        ann = json_object_new_object();
        json_object_object_add(meta, "annotations", ann);
    }
    json_object_object_add(ann, "gputri/cause", json_object_new_string(cause));
    json_object_object_add(ann, "gputri/detail", json_object_new_string(detail));
}

/* A small cluster: n0 with 2 GPUs (1 used by ml/holder), n1 without GPUs. */
static void fill(struct pods_query *q)
{
    node(q, test_node("n0", "2", "2", NULL, NULL));
    node(q, test_node("n1", NULL, NULL, NULL, NULL));
    observe(q, test_pod("ml", "holder", "1", "n0", "Running", NULL, 1, NULL));
    observe(q, test_pod("ml", "cpu-only", NULL, NULL, "Pending", NULL, 1, NULL));
    observe(q, test_pod("ml", "done", "1", "n0", "Succeeded", NULL, 1, NULL));
    observe(q, test_pod("ml", "zz-big", "4", NULL, "Pending", NULL, 1, NULL));
    json_object *p = test_pod("ml", "annotated", "1", NULL, "Pending", "n1", 1, NULL);
    set_annotation(p, "no-gpu-node", "node n1 does not list nvidia.com/gpu in status.capacity");
    observe(q, p);
    observe(q, test_pod("ml", "starting", "1", "n0", "Pending", NULL, 1, NULL));
    observe(q, test_pod("other", "waiting", "1", NULL, "Pending", "nope", 1, NULL));
}

static const struct pod_row *find(const struct pod_rows *rows, const char *ns, const char *name)
{
    for (size_t i = 0; i < rows->n; i++)
        if (strcmp(rows->items[i].ns, ns) == 0 && strcmp(rows->items[i].name, name) == 0)
            return &rows->items[i];
    return NULL;
}

static void test_rows_pick_gpu_pods_not_running(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    fill(&q);
    assert_true(pods_query_needs_live(&q));
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 4);                /* annotated, starting, zz-big, other/waiting */
    assert_null(find(&rows, "ml", "holder"));   /* Running */
    assert_null(find(&rows, "ml", "cpu-only")); /* no GPU */
    assert_null(find(&rows, "ml", "done"));     /* terminal */
    /* sorted by namespace, then name */
    assert_string_equal(rows.items[0].name, "annotated");
    assert_string_equal(rows.items[1].name, "starting");
    assert_string_equal(rows.items[2].name, "zz-big");
    assert_string_equal(rows.items[3].ns, "other");

    const struct pod_row *r = find(&rows, "ml", "annotated");
    assert_int_equal(r->source, POD_ROW_ANNOTATION);
    assert_string_equal(r->cause, "no-gpu-node");
    assert_null(r->node);

    r = find(&rows, "ml", "zz-big");
    assert_int_equal(r->source, POD_ROW_LIVE);
    assert_string_equal(r->cause, "exhausted");
    assert_non_null(strstr(r->detail, "allocated 2, free 0, requested 4"));
    assert_int_equal(r->gpus.n, 1);
    assert_int_equal(r->gpus.items[0].value, 4);

    r = find(&rows, "ml", "starting");
    assert_int_equal(r->source, POD_ROW_LIVE);
    assert_string_equal(r->cause, "ok");
    assert_string_equal(r->node, "n0");
    assert_string_equal(r->detail, "bound to node n0; phase Pending");

    r = find(&rows, "other", "waiting");
    assert_string_equal(r->cause, "label-mismatch");
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

static void test_namespace_filter(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, "other"), K_OK);
    fill(&q);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].ns, "other");
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

/* A pod naming more GPU resources than a resource list holds (nvidia.com/gpu and 8,000 implicit
 * DeviceClass names, as e2e/test-hostile's): its row shows what fits, and the
 * listing does not fail for it. */
static void test_row_of_a_pod_naming_too_many_gpu_resources(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    json_object *p = test_pod("ml", "many", "1", NULL, "Pending", NULL, 1, NULL);
    json_object *spec, *containers, *res, *limits;
    json_object_object_get_ex(p, "spec", &spec);
    json_object_object_get_ex(spec, "containers", &containers);
    json_object *c0 = json_object_array_get_idx(containers, 0);
    if (!json_object_object_get_ex(c0, "resources", &res)) {
        res = json_object_new_object();
        json_object_object_add(c0, "resources", res);
    }
    if (!json_object_object_get_ex(res, "limits", &limits)) {
        limits = json_object_new_object();
        json_object_object_add(res, "limits", limits);
    }
    json_object *requests;
    if (!json_object_object_get_ex(res, "requests", &requests)) {
        requests = json_object_new_object();
        json_object_object_add(res, "requests", requests);
    }
    /* as the API server leaves it: the requests defaulted from the limits */
    for (int i = 0; i < 8000; i++) {
        char name[96];
        snprintf(name, sizeof(name), "deviceclass.resource.kubernetes.io/x-%05d.example", i);
        json_object_object_add(limits, name, json_object_new_string("1"));
        json_object_object_add(requests, name, json_object_new_string("1"));
    }
    set_annotation(p, "label-mismatch", "no node matches");
    observe(&q, p);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_int_equal(resource_list_get(&rows.items[0].gpus, "nvidia.com/gpu"), 1);
    assert_true(rows.items[0].gpus.n <= RESOURCE_LIST_MAX);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

static void test_annotations_only_need_no_live_lists(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    json_object *p = test_pod("ml", "a", "1", NULL, "Pending", NULL, 1, NULL);
    set_annotation(p, "taint", "node n0 has untolerated taint x=y:NoSchedule");
    observe(&q, p);
    assert_false(pods_query_needs_live(&q));
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].cause, "taint");
    assert_int_equal(rows.items[0].source, POD_ROW_ANNOTATION);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

static void test_stale_annotation_on_bound_pod_is_ignored(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    node(&q, test_node("n0", "2", "2", NULL, NULL));
    json_object *p = test_pod("ml", "now-bound", "1", "n0", "Pending", NULL, 1, NULL);
    set_annotation(p, "exhausted", "old");
    observe(&q, p);
    assert_true(pods_query_needs_live(&q));
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].cause, "ok");
    assert_int_equal(rows.items[0].source, POD_ROW_LIVE);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

static char *table_text(const struct pod_rows *rows, bool wide)
{
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(pods_render_table(rows, wide, &b), K_OK);
    char *s = buf_take(&b);
    return s ? s : strdup("");
}

static void test_render_table(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, "other"), K_OK);
    fill(&q);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    char *s = table_text(&rows, false);
    assert_string_equal(
        s, "NAMESPACE   POD       GPU REQUESTS       CAUSE            SOURCE    DETAIL\n"
           "other       waiting   nvidia.com/gpu=1   label-mismatch   live      "
           "0 of 2 nodes match nodeSelector kubernetes.io/hostname=nope\n");
    free(s);
    s = table_text(&rows, true);
    assert_string_equal(s, "NAMESPACE   POD       GPU REQUESTS       PHASE     NODE      CAUSE     "
                           "       SOURCE    DETAIL\n"
                           "other       waiting   nvidia.com/gpu=1   Pending   <none>    "
                           "label-mismatch   live      "
                           "0 of 2 nodes match nodeSelector kubernetes.io/hostname=nope\n");
    free(s);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);

    struct pod_rows none = {0};
    s = table_text(&none, false);
    assert_string_equal(s, ""); /* the caller prints "No GPU pods waiting." to stderr */
    free(s);
}

static void test_render_json(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    fill(&q);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(pods_render_json(&rows, &b), K_OK);
    json_object *o = json_tokener_parse(buf_cstr(&b));
    assert_non_null(o);
    json_object *items, *first, *v, *g;
    assert_true(json_object_object_get_ex(o, "items", &items));
    assert_int_equal(json_object_array_length(items), 4);
    first = json_object_array_get_idx(items, 2); /* ml/zz-big */
    assert_true(json_object_object_get_ex(first, "name", &v));
    assert_string_equal(json_object_get_string(v), "zz-big");
    assert_true(json_object_object_get_ex(first, "gpuRequests", &g));
    assert_true(json_object_object_get_ex(g, "nvidia.com/gpu", &v));
    assert_int_equal(json_object_get_int64(v), 4);
    assert_true(json_object_object_get_ex(first, "source", &v));
    assert_string_equal(json_object_get_string(v), "live");
    assert_true(json_object_object_get_ex(first, "node", &v));
    assert_null(v);
    json_object_put(o);
    buf_cleanup(&b);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

/* No byte a terminal acts on: C0 but the newline, DEL, C1 in UTF-8 (0xc2 0x80..0x9f). */
static void assert_terminal_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        assert_true(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
        assert_false(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
        assert_true(*p != 0xff);
    }
}

/* An annotation with ESC, DEL, a C1 CSI and OSC and a byte that is not UTF-8 reaches neither
 * printer raw; the JSON still reads back to the text (the bad byte as U+FFFD), é kept. */
static void test_render_escapes_controls(void **state)
{
    (void)state;
    static const char detail[] = "x\x1b]0;t\x07\x7f\xc2\x9b"
                                 "2J\xc2\x9d"
                                 "0;t\xc2\x9c\xff\xc3\xa9";
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    json_object *p = test_pod("ml", "hostile", "1", NULL, "Pending", NULL, 1, NULL);
    set_annotation(p, "no-gpu-node", detail);
    observe(&q, p);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].detail, detail);
    char *s = table_text(&rows, true);
    assert_terminal_safe(s);
    assert_non_null(strstr(s, "x\\x1b]0;t\\x07\\x7f\\u009b2J\\u009d0;t\\u009c\\xff\xc3\xa9\n"));
    free(s);
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(pods_render_json(&rows, &b), K_OK);
    assert_terminal_safe(buf_cstr(&b));
    assert_non_null(strstr(buf_cstr(&b), "\\u009b2J\\u009d0;t\\u009c\\ufffd\xc3\xa9"));
    json_object *o = json_tokener_parse(buf_cstr(&b)), *items, *v;
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "items", &items));
    assert_true(json_object_object_get_ex(json_object_array_get_idx(items, 0), "detail", &v));
    assert_string_equal(json_object_get_string(v), "x\x1b]0;t\x07\x7f\xc2\x9b"
                                                   "2J\xc2\x9d"
                                                   "0;t\xc2\x9c\xef\xbf\xbd\xc3\xa9");
    json_object_put(o);
    buf_cleanup(&b);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

static void test_format_requests(void **state)
{
    (void)state;
    struct resource_list l = {0};
    struct buf b;
    buf_init(&b, 1024);
    assert_int_equal(pods_format_requests(&l, &b), K_OK);
    assert_string_equal(buf_cstr(&b), "");
    assert_int_equal(resource_list_add(&l, "nvidia.com/gpu", 2), K_OK);
    assert_int_equal(resource_list_add(&l, "nvidia.com/mig-1g.5gb", 1), K_OK);
    assert_int_equal(pods_format_requests(&l, &b), K_OK);
    assert_string_equal(buf_cstr(&b), "nvidia.com/gpu=2,nvidia.com/mig-1g.5gb=1");
    resource_list_cleanup(&l);
    buf_cleanup(&b);
    assert_string_equal(pod_phase_name(POD_PHASE_PENDING), "Pending");
    assert_string_equal(pod_phase_name(POD_PHASE_UNKNOWN), "Unknown");
}

/* DRA: a pending pod with a GPU claim gets a live DRA cause; one with only non-GPU claims no row.
 */
static void dra_fixture(struct pods_query *q, struct dra_store *ds, const char *file, int nodes)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "dra/%s", file);
    json_object *root = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(root);
    assert_int_equal(dra_world_apply(ds, root), K_OK);
    json_object *a = NULL;
    json_object_object_get_ex(root, "nodes", &a);
    for (size_t i = 0; nodes && a && i < json_object_array_length(a); i++)
        pods_query_add_node(q, json_object_array_get_idx(a, i));
    json_object_object_get_ex(root, "pod", &a);
    pods_query_observe(q, a);
    json_object_put(root);
}

static void test_dra_pods(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, NULL), K_OK);
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    dra_fixture(&q, ds, "recorded-dra-template-missing.json", 1);
    dra_fixture(&q, ds, "hand-nongpu-class.json", 0);
    assert_int_equal(q.n_claim_pods, 2);
    assert_true(pods_query_needs_live(&q));
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    pods_query_set_dra(&q, ds, &dra);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].name, "dra-template-missing");
    assert_string_equal(rows.items[0].cause, "dra-template-missing");
    assert_int_equal(rows.items[0].source, POD_ROW_LIVE);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
    gpu_set_cleanup(&dra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_pick_gpu_pods_not_running),
        cmocka_unit_test(test_namespace_filter),
        cmocka_unit_test(test_annotations_only_need_no_live_lists),
        cmocka_unit_test(test_row_of_a_pod_naming_too_many_gpu_resources),
        cmocka_unit_test(test_stale_annotation_on_bound_pod_is_ignored),
        cmocka_unit_test(test_render_table),
        cmocka_unit_test(test_render_json),
        cmocka_unit_test(test_render_escapes_controls),
        cmocka_unit_test(test_format_requests),
        cmocka_unit_test(test_dra_pods),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
