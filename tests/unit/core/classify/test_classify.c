/*
 * test_classify.c - table-driven over the JSON files in tests/fixtures/classify.
 *
 * Each fixture holds real API objects (tests/lib/classify_world.h describes the format). Every file
 * is projected with the default GPU set, node usage is summed over the bound non-terminal pods
 * (the target excluded), classify() runs, and the word and detail substrings are checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/store.h"
#include "classify/classify.h"
#include "classify_world.h"
#include "model/gpu.h"
#include "triage/triage.h"
#include "objects.h"
#include "util/buf.h"
#include "util/result.h"

/* Returns the number of failed checks in one fixture, printing each. */
static int run_fixture(const char *path, void *ctx)
{
    const struct gpu_set *gpus = ctx;
    int failures = 0;
    struct classify_world w = {0};
    json_object *root = json_object_from_file(path);
    if (!root) {
        print_error("%s: not valid JSON\n", path);
        return 1;
    }
    json_object *want = NULL, *contains = NULL, *lacks = NULL;
    json_object_object_get_ex(root, "want", &want);
    json_object_object_get_ex(root, "detail_contains", &contains);
    json_object_object_get_ex(root, "detail_lacks", &lacks);
    char err[256];
    if (!want || classify_world_load(root, gpus, &w, err, sizeof(err)) != 0) {
        print_error("%s: %s\n", path, want ? err : "missing want");
        json_object_put(root);
        return 1;
    }

    const struct knode **ptrs = calloc(w.n_nodes + 1, sizeof(*ptrs));
    struct node_verdict *verdicts = calloc(w.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(ptrs);
    assert_non_null(verdicts);
    for (size_t i = 0; i < w.n_nodes; i++)
        ptrs[i] = &w.nodes[i];
    struct classify_input in = {
        .pod = &w.pods[w.target],
        .nodes = ptrs,
        .n_nodes = w.n_nodes,
        .usage = classify_world_usage,
        .usage_ctx = &w,
        .no_scheduler_grace = w.no_scheduler_grace,
    };
    /* the facts the controller and the CLI take from their store: the same function here */
    struct store *st = store_new(gpus);
    assert_non_null(st);
    json_object *pods = NULL;
    json_object_object_get_ex(root, "pods", &pods);
    for (size_t i = 0; i < json_object_array_length(pods); i++) {
        unsigned ch;
        assert_int_equal(store_pod_apply_json(st, json_object_array_get_idx(pods, i), 0, NULL, &ch),
                         K_OK);
    }
    struct triage_facts facts;
    store_read_lock(st);
    triage_fill_facts(st, in.pod, w.now, &facts, &in);
    struct classify_result res = {.verdicts = verdicts};
    int rc = classify(&in, &res);
    store_read_unlock(st);
    store_free(st);
    if (rc != K_OK) {
        print_error("%s: classify returned %d\n", path, rc);
        failures++;
    }
    const char *got = cause_word(res.cause);
    failures += classify_check_expect(path, &res, want, contains);
    failures += classify_check_lacks(path, &res, lacks);
    /* invariants of every result */
    size_t len = strnlen(res.detail, sizeof(res.detail));
    if (len == 0 || len >= sizeof(res.detail)) {
        print_error("%s: detail empty or unterminated\n", path);
        failures++;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)res.detail[i];
        if (c < 0x20 || c == 0x7f) {
            print_error("%s: control character in detail\n", path);
            failures++;
            break;
        }
    }
    if (strstr(res.detail, "free -")) {
        print_error("%s: negative free count in detail\n", path);
        failures++;
    }
    failures += classify_check_counts(path, &res);
    /* the per-node causes (after label-mismatch on the ladder) come from the closest node; an
     * autoscaler's word replaces the ladder's, which stays in ladder_cause */
    if (cause_rank(res.ladder_cause) > cause_rank(CAUSE_LABEL_MISMATCH) &&
        (!res.closest.node || res.closest.step != res.ladder_cause)) {
        print_error("%s: closest verdict does not carry the cause\n", path);
        failures++;
    }
    printf("  %-48s %-16s %s\n", strrchr(path, '/') + 1, got, res.detail);
    free(ptrs);
    free(verdicts);
    classify_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_fixtures(void **state)
{
    (void)state;
    struct gpu_set gpus;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    size_t n;
    int failures = classify_fixtures_each(FIXTURES_DIR, run_fixture, &gpus, &n);
    assert_true(failures >= 0);
    assert_true(n >= 7);
    gpu_set_cleanup(&gpus);
    if (failures)
        fail_msg("%d fixture check(s) failed", failures);
}

static bool same_verdict(const struct node_verdict *a, const struct node_verdict *b)
{
    return a->node == b->node && a->step == b->step && a->resource_step == b->resource_step &&
           a->full_capacity == b->full_capacity && a->taint == b->taint &&
           !strcmp(a->resource ? a->resource : "", b->resource ? b->resource : "") &&
           a->capacity == b->capacity && a->allocatable == b->allocatable &&
           a->allocated == b->allocated && a->requested == b->requested;
}

/*
 * One fixture: classify_nodes() sees every node as classify() does (the target unbound, ungated
 * and not nominated, so that classify() reaches the nodes; nodes in name order, the order the
 * store and the webhook's snapshot hold them in): each candidate's verdict equal, every other
 * node label-mismatch, the same closest node.
 */
static int run_fixture_nodes(const char *path, void *ctx)
{
    const struct gpu_set *gpus = ctx;
    int failures = 0;
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    struct classify_world w;
    char err[256];
    if (classify_world_load(root, gpus, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", path, err);
    const struct knode **sorted = classify_world_sorted_nodes(&w);
    struct node_verdict *want_v = calloc(w.n_nodes + 1, sizeof(*want_v));
    struct node_verdict *got_v = calloc(w.n_nodes + 1, sizeof(*got_v));
    assert_non_null(want_v);
    assert_non_null(got_v);
    struct kpod pod = w.pods[w.target]; /* a shallow copy: borrowed, not cleaned up */
    pod.node_name = NULL;
    pod.n_scheduling_gates = 0;
    pod.nominated_node = NULL;
    struct classify_input in = {.pod = &pod,
                                .nodes = sorted,
                                .n_nodes = w.n_nodes,
                                .usage = classify_world_usage,
                                .usage_ctx = &w};
    struct classify_result want = {.verdicts = want_v};
    assert_int_equal(classify(&in, &want), K_OK);
    size_t closest = classify_nodes(&pod, sorted, w.n_nodes, classify_world_usage, &w, got_v);
    const char *name = strrchr(path, '/') + 1;
    if (want.cause != CAUSE_NO_REQUEST) { /* no-request is decided before the nodes */
        size_t k = 0;
        for (size_t i = 0; i < w.n_nodes; i++) {
            const struct node_verdict *c =
                k < want.n_verdicts && want_v[k].node == sorted[i] ? &want_v[k++] : NULL;
            if (!c && got_v[i].step != CAUSE_LABEL_MISMATCH) {
                print_error("%s: classify_nodes selects %s, classify does not\n", name,
                            sorted[i]->name);
                failures++;
            } else if (c && !same_verdict(c, &got_v[i])) {
                print_error("%s: node %s: classify_nodes says %s, classify %s\n", name,
                            sorted[i]->name, cause_word(got_v[i].step), cause_word(c->step));
                failures++;
            }
        }
        const struct knode *gc = closest == SIZE_MAX ? NULL : sorted[closest];
        if (gc != want.closest.node) {
            print_error("%s: classify_nodes' closest %s, classify's %s\n", name,
                        gc ? gc->name : "(none)",
                        want.closest.node ? want.closest.node->name : "(none)");
            failures++;
        }
    }
    free(got_v);
    free(want_v);
    free(sorted);
    classify_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_fixtures_nodes(void **state)
{
    (void)state;
    struct gpu_set gpus;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    size_t n;
    int failures = classify_fixtures_each(FIXTURES_DIR, run_fixture_nodes, &gpus, &n);
    gpu_set_cleanup(&gpus);
    assert_true(failures >= 0);
    assert_true(n >= 7);
    if (failures)
        fail_msg("%d disagreement(s) between classify_nodes and classify", failures);
}

/* classify_nodes() by hand: input order kept, NULL entries, the first of equals, no candidate. */
static void test_classify_nodes(void **state)
{
    (void)state;
    struct resource_amount req = {(char *)"nvidia.com/gpu", 2};
    struct resource_amount four = {(char *)"nvidia.com/gpu", 4};
    struct kv label = {(char *)"pool", (char *)"gpu"};
    struct knode a = {.name = (char *)"a"}, b = {.name = (char *)"b"}, c = {.name = (char *)"c"};
    b.labels = c.labels = (struct kv_list){&label, 1};
    b.capacity = b.allocatable = c.capacity = c.allocatable = (struct resource_list){&four, 1};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};
    pod.node_selector = (struct kv_list){&label, 1};
    const struct knode *nodes[] = {&a, NULL, &b, &c};
    struct node_verdict v[4];
    assert_int_equal(classify_nodes(&pod, nodes, 4, NULL, NULL, v), 2); /* b and c tie: b */
    assert_int_equal(v[0].step, CAUSE_LABEL_MISMATCH);
    assert_ptr_equal(v[0].node, &a);
    assert_int_equal(v[1].step, CAUSE_LABEL_MISMATCH);
    assert_null(v[1].node);
    assert_int_equal(v[2].step, CAUSE_GPU_FITS);
    assert_int_equal(v[3].step, CAUSE_GPU_FITS);
    req.value = 8; /* more than either has: exhausted, and the closest is still the first */
    assert_int_equal(classify_nodes(&pod, nodes, 4, NULL, NULL, v), 2);
    assert_int_equal(v[2].step, CAUSE_EXHAUSTED);
    pod.node_selector = (struct kv_list){&(struct kv){(char *)"pool", (char *)"none"}, 1};
    assert_int_equal(classify_nodes(&pod, nodes, 4, NULL, NULL, v), SIZE_MAX);
    assert_int_equal(classify_nodes(&pod, nodes, 0, NULL, NULL, v), SIZE_MAX);
}

/* The pure parts of the API that fixtures do not reach. */
static void test_words(void **state)
{
    (void)state;
    for (int c = CAUSE_NO_REQUEST; c < CAUSE_COUNT; c++) {
        assert_int_equal(cause_from_word(cause_word((enum cause)c)), c);
        assert_non_null(cause_event_reason((enum cause)c));
    }
    assert_int_equal(cause_from_word("nope"), -1);
    assert_int_equal(cause_from_word(NULL), -1);
    assert_string_equal(cause_event_reason(CAUSE_EXHAUSTED), "GPUExhausted");
    assert_false(cause_is_blocking(CAUSE_OK));
    assert_false(cause_is_blocking(CAUSE_NO_REQUEST));
    assert_true(cause_is_blocking(CAUSE_TAINT));
    assert_int_equal(classify(NULL, NULL), K_EINVAL);
}

/* docs/causes.md's Event table names every word's reason and type as the controller writes them
 * (reconcile.c: Warning for the blocking words); no-request is never written. */
static void test_event_table_in_docs(void **state)
{
    (void)state;
    struct buf doc;
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "../../docs/causes.md", &doc), K_OK);
    assert_int_equal(buf_append(&doc, "", 1), K_OK); /* NUL-terminated */
    for (int c = CAUSE_OK; c < CAUSE_COUNT; c++) {
        char row[160];
        snprintf(row, sizeof(row), "\n| `%s` | `%s` | %s |\n", cause_word((enum cause)c),
                 cause_event_reason((enum cause)c),
                 cause_is_blocking((enum cause)c) ? "Warning" : "Normal");
        if (!strstr(doc.data, row))
            fail_msg("docs/causes.md has no row%s", row);
    }
    buf_cleanup(&doc);
}

static void test_detail_sanitized_and_bounded(void **state)
{
    (void)state;
    char msg[3000];
    memset(msg, 'x', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    msg[10] = '\n';
    msg[11] = '\t';
    msg[12] = '\x1b';
    /* a 3-byte UTF-8 character straddling the cut point must not be split */
    for (size_t i = 990; i + 3 < sizeof(msg) - 1; i += 3)
        memcpy(msg + i, "\xe2\x9c\x93", 3);
    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    struct resource_amount cap = {(char *)"nvidia.com/gpu", 2};
    struct knode node = {.name = (char *)"n1"};
    node.capacity = (struct resource_list){&cap, 1};
    node.allocatable = (struct resource_list){&cap, 1};
    const struct knode *nodes[] = {&node};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};
    pod.scheduled = (struct pod_condition){COND_FALSE, (char *)"Unschedulable", msg};
    struct classify_input in = {.pod = &pod, .nodes = nodes, .n_nodes = 1};
    struct classify_result res = {0};
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_GPU_FITS);
    size_t len = strlen(res.detail);
    assert_true(len < sizeof(res.detail));
    assert_true(len > 900);
    for (size_t i = 0; i < len; i++)
        assert_true((unsigned char)res.detail[i] >= 0x20 && res.detail[i] != 0x7f);
    /* ends on a whole character */
    size_t i = len;
    while (i > 0 && ((unsigned char)res.detail[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > 0 && (unsigned char)res.detail[i - 1] >= 0xC0)
        assert_int_equal(len - (i - 1), 3);
}

static void test_no_nodes(void **state)
{
    (void)state;
    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};
    struct classify_input in = {.pod = &pod};
    struct classify_result res = {0};
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_LABEL_MISMATCH);
    assert_non_null(strstr(res.detail, "no Node objects"));
    assert_null(res.closest.node);
}

/* A taint the node controller or a node autoscaler manages: the detail names the node's state,
 * never a toleration. */
static void test_node_condition_taint_detail(void **state)
{
    (void)state;
    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    struct resource_amount cap = {(char *)"nvidia.com/gpu", 4};
    struct taint taint = {(char *)"node.kubernetes.io/not-ready", NULL, (char *)"NoSchedule"};
    struct knode node = {.name = (char *)"gpu-1", .taints = &taint, .n_taints = 1};
    node.capacity = (struct resource_list){&cap, 1};
    node.allocatable = (struct resource_list){&cap, 1};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};
    const struct knode *nodes[] = {&node};
    struct classify_input in = {.pod = &pod, .nodes = nodes, .n_nodes = 1};
    struct classify_result res = {0};
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_TAINT);
    assert_non_null(strstr(res.detail, "node gpu-1 is not ready (taint "
                                       "node.kubernetes.io/not-ready:NoSchedule, set by the node "
                                       "controller); fix the node rather than tolerate it"));
    assert_null(strstr(res.detail, "add toleration"));

    /* the cloud provider's taint likewise */
    taint.key = (char *)"node.cloudprovider.kubernetes.io/uninitialized";
    taint.value = (char *)"true";
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_TAINT);
    assert_non_null(strstr(res.detail, "fix the node rather than tolerate it"));
    assert_null(strstr(res.detail, "add toleration"));

    /* a node autoscaler's taints likewise, each with what to do instead */
    static const struct {
        const char *key, *effect, *says;
    } autoscaler[] = {
        {"karpenter.sh/unregistered", "NoExecute",
         "node gpu-1 is still joining (taint karpenter.sh/unregistered:NoExecute, set by "
         "Karpenter); wait for it to register rather than tolerate it"},
        {"karpenter.sh/disrupted", "NoSchedule",
         "node gpu-1 is being consolidated or replaced (taint karpenter.sh/disrupted:NoSchedule, "
         "set by Karpenter); wait for another node rather than tolerate it"},
        {"karpenter.sh/rebooting", "NoSchedule",
         "node gpu-1 is rebooting (taint karpenter.sh/rebooting:NoSchedule, set by Karpenter); "
         "wait for the reboot rather than tolerate it"},
        {"ToBeDeletedByClusterAutoscaler", "NoSchedule",
         "node gpu-1 is being scaled down (taint "
         "ToBeDeletedByClusterAutoscaler=1733478000:NoSchedule, set by the Cluster Autoscaler); "
         "wait for another node rather than tolerate it"},
    };
    for (size_t i = 0; i < sizeof(autoscaler) / sizeof(autoscaler[0]); i++) {
        taint.key = (char *)autoscaler[i].key;
        taint.effect = (char *)autoscaler[i].effect;
        taint.value = (char *)(i == 3 ? "1733478000" : "");
        assert_int_equal(classify(&in, &res), K_OK);
        /* a node still joining is capacity on its way: scaling-up, the taint named after it */
        assert_int_equal(res.cause, i == 0 ? CAUSE_SCALING_UP : CAUSE_TAINT);
        if (!strstr(res.detail, autoscaler[i].says))
            fail_msg("%s: %s", autoscaler[i].key, res.detail);
        assert_null(strstr(res.detail, "add toleration"));
    }

    /* the Cluster Autoscaler's PreferNoSchedule deletion candidate is ignored, as the scheduler
     * ignores PreferNoSchedule */
    taint.key = (char *)"DeletionCandidateOfClusterAutoscaler";
    taint.value = (char *)"1733478000";
    taint.effect = (char *)"PreferNoSchedule";
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_GPU_FITS);
    assert_null(strstr(res.detail, "DeletionCandidate"));
    taint.effect = (char *)"NoSchedule";

    /* any other taint keeps its toleration advice */
    taint.key = (char *)"nvidia.com/gpu";
    taint.value = (char *)"present";
    assert_int_equal(classify(&in, &res), K_OK);
    assert_non_null(strstr(res.detail, "add toleration {key: nvidia.com/gpu, value: "));
}

/* The exported per-node ladder: selection, cordon before taints, resource steps, the ranking. */
static void test_node_ladder(void **state)
{
    (void)state;
    struct resource_amount req = {(char *)"nvidia.com/gpu", 2};
    struct resource_amount cap = {(char *)"nvidia.com/gpu", 4};
    struct kv label = {(char *)"pool", (char *)"gpu"};
    struct taint taint = {(char *)"nvidia.com/gpu", (char *)"present", (char *)"NoSchedule"};
    struct knode node = {.name = (char *)"n1"};
    node.capacity = (struct resource_list){&cap, 1};
    node.allocatable = (struct resource_list){&cap, 1};
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    pod.gpu_requests = (struct resource_list){&req, 1};

    /* outside the selection: label-mismatch and nothing else */
    pod.node_selector = (struct kv_list){&label, 1};
    struct node_verdict v;
    assert_false(classify_node(&pod, &node, NULL, NULL, &v));
    assert_int_equal(v.step, CAUSE_LABEL_MISMATCH);
    assert_false(v.full_capacity);
    assert_null(v.resource);
    pod.node_selector = (struct kv_list){0};

    /* usage NULL: nothing allocated */
    assert_true(classify_node(&pod, &node, NULL, NULL, &v));
    assert_int_equal(v.step, CAUSE_GPU_FITS);
    assert_true(v.full_capacity);
    assert_int_equal(node_verdict_free(&v), 4);
    struct node_verdict huge = {.allocatable = INT64_MAX, .allocated = -1};
    assert_int_equal(node_verdict_free(&huge), INT64_MAX);
    huge.allocated = INT64_MAX;
    assert_int_equal(node_verdict_free(&huge), 0);

    /* cordoned and tainted: the cordon is reported (NodeUnschedulable runs first), the
     * resource outcome kept */
    node.unschedulable = true;
    node.taints = &taint;
    node.n_taints = 1;
    assert_true(classify_node(&pod, &node, NULL, NULL, &v));
    assert_int_equal(v.step, CAUSE_TAINT);
    assert_null(v.taint);
    assert_int_equal(v.resource_step, CAUSE_GPU_FITS);
    /* tolerating the cordon leaves the taint */
    struct toleration uns = {(char *)"node.kubernetes.io/unschedulable", (char *)"Exists",
                             (char *)"", (char *)"NoSchedule"};
    pod.tolerations = &uns;
    pod.n_tolerations = 1;
    assert_true(classify_node(&pod, &node, NULL, NULL, &v));
    assert_int_equal(v.step, CAUSE_TAINT);
    assert_ptr_equal(v.taint, &taint);
    node.unschedulable = false;
    node.n_taints = 0;
    pod.n_tolerations = 0;

    /* resource steps, overflow-free */
    assert_int_equal(node_resource_step(&node, "amd.com/gpu", 1, 0), CAUSE_NO_GPU_NODE);
    assert_int_equal(node_resource_step(&node, "nvidia.com/gpu", 4, 0), CAUSE_GPU_FITS);
    assert_int_equal(node_resource_step(&node, "nvidia.com/gpu", 5, 0), CAUSE_EXHAUSTED);
    assert_int_equal(node_resource_step(&node, "nvidia.com/gpu", INT64_MAX, INT64_MIN),
                     CAUSE_GPU_FITS);
    assert_int_equal(node_resource_step(&node, "nvidia.com/gpu", 1, INT64_MAX), CAUSE_EXHAUSTED);
    struct resource_amount zero = {(char *)"nvidia.com/gpu", 0};
    node.allocatable = (struct resource_list){&zero, 1};
    assert_int_equal(node_resource_step(&node, "nvidia.com/gpu", 1, 0), CAUSE_ALLOCATABLE_ZERO);

    /* the ranking: full capacity, then the later step, then (exhausted) more free */
    struct node_verdict a = {.full_capacity = true, .step = CAUSE_TAINT};
    struct node_verdict b = {.full_capacity = false, .step = CAUSE_GPU_FITS};
    assert_true(node_verdict_cmp(&a, &b) < 0);
    assert_true(node_verdict_cmp(&b, &a) > 0);
    b.full_capacity = true;
    assert_true(node_verdict_cmp(&b, &a) < 0);
    struct node_verdict e1 = {
        .full_capacity = true, .step = CAUSE_EXHAUSTED, .allocatable = 4, .allocated = 3};
    struct node_verdict e2 = e1;
    e2.allocated = 1;
    assert_true(node_verdict_cmp(&e2, &e1) < 0);
    e2.allocated = 3;
    assert_int_equal(node_verdict_cmp(&e1, &e2), 0);
    /* free counts only between exhausted nodes */
    struct node_verdict f1 = {.full_capacity = true, .step = CAUSE_GPU_FITS, .allocatable = 8};
    struct node_verdict f2 = {.full_capacity = true, .step = CAUSE_GPU_FITS, .allocatable = 2};
    assert_int_equal(node_verdict_cmp(&f1, &f2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_event_table_in_docs),
        cmocka_unit_test(test_fixtures_nodes),
        cmocka_unit_test(test_classify_nodes),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_detail_sanitized_and_bounded),
        cmocka_unit_test(test_no_nodes),
        cmocka_unit_test(test_node_ladder),
        cmocka_unit_test(test_node_condition_taint_detail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
