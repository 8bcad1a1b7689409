/* Tests for cli/pods.c: which pods become rows, annotation versus live causes, rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "printer.h"
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

/* The rows printed as `-o o` would print them (cli/printer.h over pods_list), -A when all_ns. */
static char *render(const struct pod_rows *rows, const char *o, bool all_ns)
{
    struct printer p;
    char err[256];
    assert_int_equal(printer_parse(o, &p, err, sizeof(err)), K_OK);
    p.all_namespaces = all_ns;
    p.now = 1765000000 + 3700; /* an hour and 100 s after the pods' creationTimestamp */
    json_object *list = NULL;
    assert_int_equal(pods_list(rows, &list), K_OK);
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(printer_print_list(&p, list, &pods_table, &b, err, sizeof(err)), K_OK);
    json_object_put(list);
    printer_cleanup(&p);
    char *s = buf_take(&b);
    return s ? s : strdup("");
}

static void set_created(json_object *pod, const char *when)
{
    json_object *meta;
    json_object_object_get_ex(pod, "metadata", &meta);
    json_object_object_add(meta, "creationTimestamp", json_object_new_string(when));
    json_object *labels = json_object_new_object();
    json_object_object_add(labels, "team", json_object_new_string("ml"));
    json_object_object_add(labels, "app", json_object_new_string("train"));
    json_object_object_add(meta, "labels", labels);
}

static void test_render_table(void **state)
{
    (void)state;
    struct pods_query q;
    assert_int_equal(pods_query_init(&q, &test_gpus, "other"), K_OK);
    node(&q, test_node("n0", "2", "2", NULL, NULL));
    node(&q, test_node("n1", NULL, NULL, NULL, NULL));
    json_object *w = test_pod("other", "waiting", "1", NULL, "Pending", "nope", 1, NULL);
    set_created(w, "2025-12-06T05:46:40Z"); /* 1765000000 */
    observe(&q, w);
    struct pod_rows rows;
    assert_int_equal(pods_query_rows(&q, &rows), K_OK);
    assert_int_equal(rows.items[0].since, 1765000000);
    char *s = render(&rows, "", false);
    assert_string_equal(s, "NAME      GPU                CAUSE            AGE\n"
                           "waiting   nvidia.com/gpu=1   label-mismatch   61m\n");
    free(s);
    s = render(&rows, "wide", true);
    assert_string_equal(s, "NAMESPACE   NAME      GPU                CAUSE            AGE       "
                           "PHASE     NODE      SOURCE    DETAIL\n"
                           "other       waiting   nvidia.com/gpu=1   label-mismatch   61m       "
                           "Pending   <none>    live      "
                           "0 of 2 nodes match nodeSelector kubernetes.io/hostname=nope\n");
    free(s);
    s = render(&rows, "name", false);
    assert_string_equal(s, "pod/waiting\n");
    free(s);
    s = render(&rows, "custom-columns=N:.metadata.name,L:.metadata.labels.team,X:.status.nope",
               false);
    assert_string_equal(s, "N         L         X\n"
                           "waiting   ml        <none>\n");
    free(s);
    s = render(&rows, "jsonpath={range .items[*]}{.metadata.name}={.status.cause}{\"\\n\"}{end}",
               false);
    assert_string_equal(s, "waiting=label-mismatch\n");
    free(s);
    s = render(&rows, "yaml", false);
    assert_non_null(strstr(s, "apiVersion: gputri.io/v1alpha1\nkind: GPUPodList\n"));
    assert_non_null(strstr(s, "    creationTimestamp: \"2025-12-06T05:46:40Z\"\n"));
    assert_non_null(strstr(s, "      nvidia.com/gpu: 1\n"));
    free(s);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);

    struct pod_rows none = {0};
    s = render(&none, "", false);
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
    char *s = render(&rows, "json", false);
    json_object *o = json_tokener_parse(s);
    free(s);
    assert_non_null(o);
    json_object *items, *first, *v, *g, *meta, *st;
    assert_true(json_object_object_get_ex(o, "apiVersion", &v));
    assert_string_equal(json_object_get_string(v), "gputri.io/v1alpha1");
    assert_true(json_object_object_get_ex(o, "kind", &v));
    assert_string_equal(json_object_get_string(v), "GPUPodList");
    assert_true(json_object_object_get_ex(o, "items", &items));
    assert_int_equal(json_object_array_length(items), 4);
    first = json_object_array_get_idx(items, 2); /* ml/zz-big */
    assert_true(json_object_object_get_ex(first, "kind", &v));
    assert_string_equal(json_object_get_string(v), "GPUPod");
    assert_true(json_object_object_get_ex(first, "metadata", &meta));
    assert_true(json_object_object_get_ex(meta, "name", &v));
    assert_string_equal(json_object_get_string(v), "zz-big");
    assert_true(json_object_object_get_ex(first, "status", &st));
    assert_true(json_object_object_get_ex(st, "gpuRequests", &g));
    assert_true(json_object_object_get_ex(g, "nvidia.com/gpu", &v));
    assert_int_equal(json_object_get_int64(v), 4);
    assert_true(json_object_object_get_ex(st, "source", &v));
    assert_string_equal(json_object_get_string(v), "live");
    assert_false(json_object_object_get_ex(st, "nodeName", &v)); /* left out, as the API does */
    json_object_put(o);
    pod_rows_cleanup(&rows);
    pods_query_cleanup(&q);
}

/* The LIST's path carries the selectors, percent-encoded, after status.phase!=Succeeded. */
static void test_pods_path(void **state)
{
    (void)state;
    char path[1024];
    struct pods_selectors sel = {.label_selector = "app in (a,b),team=ml",
                                 .field_selector = "spec.nodeName="};
    assert_int_equal(pods_path("ml", &sel, path, sizeof(path)), K_OK);
    assert_string_equal(path,
                        "/api/v1/namespaces/ml/pods?fieldSelector=status.phase%21%3DSucceeded"
                        "%2Cspec.nodeName%3D&labelSelector=app%20in%20%28a%2Cb%29%2Cteam%3Dml");
    assert_int_equal(pods_path(NULL, NULL, path, sizeof(path)), K_OK);
    assert_string_equal(path, "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded");
    assert_int_equal(pods_path(NULL, &sel, path, 40), K_ETOOBIG);
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
    char *s = render(&rows, "wide", false);
    assert_terminal_safe(s);
    assert_non_null(strstr(s, "x\\x1b]0;t\\x07\\x7f\\u009b2J\\u009d0;t\\u009c\\xff\xc3\xa9\n"));
    free(s);
    static const char *const others[] = {"yaml", "jsonpath={.items[*].status.detail}",
                                         "custom-columns=D:.status.detail",
                                         "jsonpath-as-json={..detail}"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        s = render(&rows, others[i], false);
        assert_terminal_safe(s);
        free(s);
    }
    s = render(&rows, "json", false);
    assert_terminal_safe(s);
    assert_non_null(strstr(s, "\\u009b2J\\u009d0;t\\u009c\\ufffd\xc3\xa9"));
    json_object *o = json_tokener_parse(s), *items, *v, *st;
    free(s);
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "items", &items));
    assert_true(json_object_object_get_ex(json_object_array_get_idx(items, 0), "status", &st));
    assert_true(json_object_object_get_ex(st, "detail", &v));
    assert_string_equal(json_object_get_string(v), "x\x1b]0;t\x07\x7f\xc2\x9b"
                                                   "2J\xc2\x9d"
                                                   "0;t\xc2\x9c\xef\xbf\xbd\xc3\xa9");
    json_object_put(o);
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
        cmocka_unit_test(test_pods_path),
        cmocka_unit_test(test_render_escapes_controls),
        cmocka_unit_test(test_format_requests),
        cmocka_unit_test(test_dra_pods),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
