/*
 * test_triage.c - core/triage/triage.c: the classifier's input built from the caches (every
 * classifier fixture classified from a store as classify() classifies its projections, every DRA
 * fixture through the DRA store), the facts (victims, rejected siblings), the rules of whose pods
 * a verdict is, and the DRA read lock held around classify() and released after.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/dra_store.h"
#include "cache/gang_store.h"
#include "cache/store.h"
#include "classify/classify.h"
#include "classify_world.h"
#include "dra_world.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "triage/triage.h"
#include "util/clock.h"
#include "util/result.h"

/* 2026-01-01T00:00:00Z, the "now" of the facts tests. */
#define NOW 1767225600

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void apply_all(struct store *s, json_object *list, bool nodes)
{
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        unsigned ch = 0;
        json_object *o = json_object_array_get_idx(list, i);
        assert_int_equal(nodes ? store_node_apply_json(s, o, 0, NULL, &ch)
                               : store_pod_apply_json(s, o, 0, NULL, &ch),
                         K_OK);
    }
}

/* A pod from a JSON text (printf format), stored in s. */
__attribute__((format(printf, 2, 3))) static void put_pod(struct store *s, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof(text));
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    unsigned ch = 0;
    assert_int_equal(store_pod_apply_json(s, o, 0, NULL, &ch), K_OK);
    json_object_put(o);
}

/* ---- input building: every classifier fixture ------------------------------------------- */

/*
 * One fixture: triage_pod() from a store holding its objects must find what classify() finds on
 * the fixture's own projections (nodes in name order, as the store holds them; usage summed over
 * the fixture's pods): the cause, the detail, the candidates, every candidate's verdict and the
 * closest node.
 */
static int run_classify_fixture(const char *path, void *ctx)
{
    (void)ctx;
    int failures = 0;
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    struct classify_world w;
    char err[256];
    if (classify_world_load(root, &test_gpus, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", path, err);
    const struct knode **sorted = classify_world_sorted_nodes(&w);
    struct node_verdict *want_v = calloc(w.n_nodes + 1, sizeof(*want_v));
    struct node_verdict *got_v = calloc(w.n_nodes + 1, sizeof(*got_v));
    assert_non_null(want_v);
    assert_non_null(got_v);

    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    apply_all(s, member(root, "nodes"), true);
    apply_all(s, member(root, "pods"), false);
    const struct kpod *tp = &w.pods[w.target];

    store_read_lock(s);
    struct classify_input in = {.pod = tp,
                                .nodes = sorted,
                                .n_nodes = w.n_nodes,
                                .usage = classify_world_usage,
                                .usage_ctx = &w,
                                .no_scheduler_grace = w.no_scheduler_grace};
    struct triage_facts facts;
    triage_fill_facts(s, store_pod_get(s, tp->ns, tp->name), w.now, &facts, &in);
    struct classify_result want = {.verdicts = want_v};
    assert_int_equal(classify(&in, &want), K_OK);

    struct triage_source src = {
        .store = s, .now = w.now, .no_scheduler_grace = w.no_scheduler_grace};
    struct classify_result got = {.verdicts = got_v};
    assert_int_equal(triage_pod(&src, store_pod_get(s, tp->ns, tp->name), &got), K_OK);

    const char *name = strrchr(path, '/') + 1;
    if (got.cause != want.cause || strcmp(got.detail, want.detail) != 0) {
        print_error("%s: from the store %s (%s), from the fixture %s (%s)\n", name,
                    cause_word(got.cause), got.detail, cause_word(want.cause), want.detail);
        failures++;
    }
    if (got.n_candidates != want.n_candidates || got.n_verdicts != want.n_verdicts) {
        print_error("%s: %zu candidates from the store, %zu from the fixture\n", name,
                    got.n_candidates, want.n_candidates);
        failures++;
    }
    for (size_t i = 0; i < got.n_verdicts && i < want.n_verdicts; i++)
        if (strcmp(got_v[i].node->name, want_v[i].node->name) != 0 ||
            got_v[i].step != want_v[i].step || got_v[i].allocated != want_v[i].allocated) {
            print_error("%s: verdict %zu: %s %s %lld, want %s %s %lld\n", name, i,
                        got_v[i].node->name, cause_word(got_v[i].step),
                        (long long)got_v[i].allocated, want_v[i].node->name,
                        cause_word(want_v[i].step), (long long)want_v[i].allocated);
            failures++;
        }
    const char *gc = got.closest.node ? got.closest.node->name : "-";
    const char *wc = want.closest.node ? want.closest.node->name : "-";
    if (strcmp(gc, wc) != 0) {
        print_error("%s: closest %s from the store, %s from the fixture\n", name, gc, wc);
        failures++;
    }
    store_read_unlock(s);

    store_free(s);
    free(got_v);
    free(want_v);
    free(sorted);
    classify_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_classify_fixtures(void **state)
{
    (void)state;
    size_t n;
    int failures = classify_fixtures_each(FIXTURES_DIR, run_classify_fixture, NULL, &n);
    assert_true(failures >= 0);
    assert_true(n >= 7);
    if (failures)
        fail_msg("%d fixture(s) classified differently from the store", failures);
}

/* ---- input building: the DRA view, every DRA fixture through the DRA store ---------------- */

/* A DRA fixture (root, borrowed) into new stores: its DRA objects, nodes and other pods; its
 * "pod" projected into *pod (cleaned up by the caller). */
static void load_dra_fixture(json_object *root, struct dra_store **ds, struct store **st,
                             struct kpod *pod)
{
    assert_non_null(root);
    *ds = dra_store_new();
    *st = store_new(&test_gpus);
    assert_non_null(*ds);
    assert_non_null(*st);
    assert_int_equal(dra_world_apply(*ds, root), K_OK);
    apply_all(*st, member(root, "nodes"), true);
    apply_all(*st, member(root, "pods"), false);
    assert_int_equal(project_pod(member(root, "pod"), &test_gpus, pod), K_OK);
}

static int run_dra_fixture(const char *path, void *ctx)
{
    const struct gpu_set *classes = ctx;
    const char *name = strrchr(path, '/') + 1;
    json_object *root = json_object_from_file(path);
    struct dra_store *ds;
    struct store *st;
    struct kpod pod;
    load_dra_fixture(root, &ds, &st, &pod);

    struct triage_source src = {.store = st, .dra = ds, .dra_classes = classes};
    json_object *now = member(root, "now"); /* binding fixtures: the time of the snapshot */
    if (now)
        assert_true(clock_parse_rfc3339(json_object_get_string(now), &src.now));
    struct classify_result r;
    r.verdicts = NULL;
    store_read_lock(st);
    assert_int_equal(triage_pod(&src, &pod, &r), K_OK);
    store_read_unlock(st);

    json_object *want = member(member(root, "expect"), "cause");
    int failed = !want || strcmp(cause_word(r.cause), json_object_get_string(want)) != 0;
    if (failed)
        print_error("%s: got %s, want %s (%s)\n", name, cause_word(r.cause),
                    want ? json_object_get_string(want) : "?", r.detail);
    pod_cleanup(&pod);
    store_free(st);
    dra_store_free(ds);
    json_object_put(root);
    return failed;
}

static void test_dra_fixtures(void **state)
{
    (void)state;
    struct gpu_set classes;
    assert_int_equal(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT), K_OK);
    size_t n;
    int failures = test_fixtures_each(FIXTURES_DIR, "dra", run_dra_fixture, &classes, &n);
    gpu_set_cleanup(&classes);
    assert_true(n >= 10);
    assert_int_equal(failures, 0);
}

/* Without DRA classes, or without a DRA store, claims are not looked at. */
static void test_dra_needs_store_and_classes(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    struct store *st = store_new(&test_gpus);
    assert_non_null(ds);
    assert_non_null(st);
    put_pod(st, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\"},"
                "\"spec\":{\"containers\":[{\"name\":\"c\"}],"
                "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"missing\"}]},"
                "\"status\":{\"phase\":\"Pending\"}}");
    struct gpu_set classes;
    assert_int_equal(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT), K_OK);
    store_read_lock(st);
    const struct kpod *p = store_pod_get(st, "ns", "p");
    assert_non_null(p);
    struct classify_result r;
    r.verdicts = NULL;
    struct triage_source src = {.store = st, .dra = ds, .dra_classes = &classes};
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_DRA_CLAIM_MISSING);
    src.dra_classes = NULL;
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_NO_REQUEST);
    assert_false(triage_is_ours(p, r.cause));
    src.dra_classes = &classes;
    src.dra = NULL;
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_NO_REQUEST);
    assert_int_equal(triage_pod(&src, NULL, &r), K_EINVAL);
    src.store = NULL;
    assert_int_equal(triage_pod(&src, p, &r), K_EINVAL);
    store_read_unlock(st);
    gpu_set_cleanup(&classes);
    store_free(st);
    dra_store_free(ds);
}

/* The view's callbacks are the DRA store's lookups, over the store given. */
static void test_dra_view(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    json_object *cls = json_tokener_parse("{\"metadata\":{\"name\":\"gpu.example.com\"},"
                                          "\"spec\":{\"selectors\":[]}}");
    assert_int_equal(dra_store_apply_json(ds, DRA_KIND_CLASS, cls, 0), K_OK);
    json_object_put(cls);
    struct gpu_set classes;
    assert_int_equal(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT), K_OK);
    struct dra_view v = triage_dra_view(ds, &classes);
    assert_ptr_equal(v.ctx, ds);
    assert_ptr_equal(v.gpu_classes, &classes);
    dra_store_read_lock(ds);
    assert_non_null(v.device_class(v.ctx, "gpu.example.com"));
    assert_null(v.device_class(v.ctx, "other"));
    assert_null(v.claim(v.ctx, "ns", "c"));
    assert_null(v.claim_template(v.ctx, "ns", "t"));
    assert_int_equal(v.node_slices(v.ctx, "n", NULL, NULL, 0), 0);
    assert_null(v.device_holder(v.ctx, "d", "p", "x"));
    dra_store_read_unlock(ds);
    gpu_set_cleanup(&classes);
    dra_store_free(ds);
}

/* ---- the DRA read lock: held around classify(), released after --------------------------- */

struct writer {
    struct dra_store *ds;
    pthread_t thread;
    bool started;
    atomic_bool done;
    bool done_during_classify;
};

static void *write_class(void *arg)
{
    struct writer *w = arg;
    json_object *o = json_tokener_parse("{\"metadata\":{\"name\":\"late\"},\"spec\":{}}");
    dra_store_apply_json(w->ds, DRA_KIND_CLASS, o, 0); /* takes the write lock */
    json_object_put(o);
    atomic_store(&w->done, true);
    return NULL;
}

/* The usage callback runs inside classify(): start a writer there and see that it waits. */
static int64_t usage_starts_writer(void *ctx, const char *node, const char *resource)
{
    (void)node;
    (void)resource;
    struct writer *w = ctx;
    if (!w->started) {
        w->started = true;
        assert_int_equal(pthread_create(&w->thread, NULL, write_class, w), 0);
        nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
        w->done_during_classify = atomic_load(&w->done);
    }
    return 0;
}

static void test_dra_lock_pairing(void **state)
{
    (void)state;
    json_object *root = test_load_json(FIXTURES_DIR, "dra/hand-mixed-extended-and-dra.json");
    struct dra_store *ds;
    struct store *st;
    struct kpod pod;
    load_dra_fixture(root, &ds, &st, &pod);
    struct gpu_set classes;
    assert_int_equal(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT), K_OK);

    struct writer w = {.ds = ds};
    struct triage_source src = {.store = st,
                                .dra = ds,
                                .dra_classes = &classes,
                                .usage = usage_starts_writer,
                                .usage_ctx = &w};
    struct classify_result r;
    r.verdicts = NULL;
    store_read_lock(st);
    assert_int_equal(triage_pod(&src, &pod, &r), K_OK);
    store_read_unlock(st);
    assert_true(w.started);
    assert_false(w.done_during_classify); /* the read lock kept the writer out */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    assert_int_equal(pthread_timedjoin_np(w.thread, NULL, &until), 0); /* and was released */
    assert_true(atomic_load(&w.done));
    dra_store_read_lock(ds);
    assert_non_null(dra_store_class(ds, "late"));
    dra_store_read_unlock(ds);

    gpu_set_cleanup(&classes);
    pod_cleanup(&pod);
    store_free(st);
    dra_store_free(ds);
    json_object_put(root);
}

/* ---- facts ------------------------------------------------------------------------------ */

#define GPU_CONTAINER                                                                              \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]"

static void test_facts_victims(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    put_pod(s, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"preemptor\",\"uid\":\"pre\"},"
               "\"spec\":{" GPU_CONTAINER "},"
               "\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\"}}");
    /* ten pods being deleted on n1, of any kind: every one counted, the first eight named */
    for (int i = 0; i < 10; i++)
        put_pod(s,
                "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"v%d\",\"uid\":\"v%d\","
                "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]},"
                "\"status\":{\"phase\":\"Running\"}}",
                i, i);
    /* not victims: finished, not being deleted, on another node */
    put_pod(s, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"done\",\"uid\":\"d\","
               "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
               "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]},"
               "\"status\":{\"phase\":\"Succeeded\"}}");
    put_pod(s, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"stays\",\"uid\":\"s\"},"
               "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]},"
               "\"status\":{\"phase\":\"Running\"}}");
    put_pod(s, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"elsewhere\",\"uid\":\"e\","
               "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
               "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\"}]},"
               "\"status\":{\"phase\":\"Running\"}}");
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "preemptor");
    assert_non_null(p);
    struct triage_facts f;
    struct classify_input in = {.rejected_siblings = 7};
    triage_fill_facts(s, p, NOW, &f, &in);
    assert_int_equal(in.now, NOW);
    assert_int_equal(in.rejected_siblings, 0);
    assert_int_equal(in.victims_total, 10);
    assert_int_equal(in.n_victims, TRIAGE_MAX_VICTIMS);
    assert_non_null(in.victims);
    for (size_t i = 0; i < in.n_victims; i++) {
        assert_ptr_equal(in.victims[i], f.names[i]);
        assert_true(strncmp(in.victims[i], "ns/v", 4) == 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(in.victims[i], in.victims[j]);
    }
    /* and classify() names them */
    struct classify_result r;
    r.verdicts = NULL;
    struct triage_source src = {.store = s, .now = NOW};
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_PREEMPTING);
    assert_non_null(strstr(r.detail, "ns/v"));

    /* a pod bound, or without a nominated node, has none */
    const struct kpod *v = store_pod_get(s, "ns", "v0");
    triage_fill_facts(s, v, NOW, &f, &in);
    assert_int_equal(in.victims_total, 0);
    assert_int_equal(in.n_victims, 0);
    assert_null(in.victims);
    store_read_unlock(s);
    store_free(s);
}

/* A pod of owner `owner` its kubelet rejected, created at `created` (RFC 3339). */
static void put_rejected(struct store *s, const char *name, const char *uid, const char *owner,
                         const char *created)
{
    put_pod(s,
            "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"%s\","
            "\"creationTimestamp\":\"%s\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
            "\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"%s\",\"controller\":true}]},"
            "\"spec\":{\"nodeName\":\"n1\"," GPU_CONTAINER "},"
            "\"status\":{\"phase\":\"Failed\",\"reason\":\"UnexpectedAdmissionError\","
            "\"message\":\"Allocate failed\"}}",
            name, uid, created, owner);
}

static void test_facts_siblings(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    put_rejected(s, "p", "p", "rs1", "2025-12-31T23:50:00Z");
    put_rejected(s, "a", "a", "rs1", "2025-12-31T23:30:00Z");     /* in the last hour */
    put_rejected(s, "b", "b", "rs1", "2025-12-31T23:00:01Z");     /* in the last hour */
    put_rejected(s, "old", "o", "rs1", "2025-12-31T22:00:00Z");   /* earlier */
    put_rejected(s, "other", "x", "rs2", "2025-12-31T23:59:00Z"); /* another owner */
    /* the same owner, not rejected */
    put_pod(s, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"running\",\"uid\":\"r\","
               "\"creationTimestamp\":\"2025-12-31T23:59:00Z\",\"ownerReferences\":[{"
               "\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs1\",\"controller\":true}]},"
               "\"spec\":{\"nodeName\":\"n1\"," GPU_CONTAINER "},"
               "\"status\":{\"phase\":\"Running\"}}");
    store_read_lock(s);
    const struct kpod *p = store_pod_get(s, "ns", "p");
    assert_non_null(p);
    assert_true(pod_rejected_by_kubelet(p));
    struct triage_facts f;
    struct classify_input in = {0};
    triage_fill_facts(s, p, NOW, &f, &in);
    assert_int_equal(in.rejected_siblings, 2);
    assert_int_equal(in.victims_total, 0);
    triage_fill_facts(s, p, 0, &f, &in); /* time unknown: every rejected sibling */
    assert_int_equal(in.rejected_siblings, 3);

    struct classify_result r;
    r.verdicts = NULL;
    struct triage_source src = {.store = s, .now = NOW};
    assert_int_equal(triage_pod(&src, p, &r), K_OK);
    assert_int_equal(r.cause, CAUSE_NODE_REJECTED);
    assert_non_null(strstr(r.detail, "2 other pods of the same controller"));

    /* a pod that is not rejected has none */
    triage_fill_facts(s, store_pod_get(s, "ns", "running"), NOW, &f, &in);
    assert_int_equal(in.rejected_siblings, 0);
    store_read_unlock(s);
    store_free(s);
}

/* ---- whose pods ------------------------------------------------------------------------- */

static void test_ours_and_gpu_pods(void **state)
{
    (void)state;
    struct resource_amount gpu = {.name = "nvidia.com/gpu", .value = 1};
    struct pod_claim_ref claim = {0};
    struct kpod with_gpu = {.gpu_requests = {&gpu, 1}};
    struct kpod claims_only = {.claims = &claim, .n_claims = 1};
    struct kpod neither = {0};

    /* no-request of a pod without a GPU request: its claims ask for no GPU, not ours */
    assert_false(triage_is_ours(&claims_only, CAUSE_NO_REQUEST));
    assert_false(triage_is_ours(&neither, CAUSE_NO_REQUEST));
    assert_true(triage_is_ours(&with_gpu, CAUSE_NO_REQUEST));
    for (int c = 0; c < CAUSE_COUNT; c++)
        if (c != CAUSE_NO_REQUEST) {
            assert_true(triage_is_ours(&claims_only, (enum cause)c));
            assert_true(triage_is_ours(&neither, (enum cause)c));
        }

    /* a claims-only pod is a GPU pod once a cause other than no-request was written */
    assert_true(triage_is_gpu_pod(&with_gpu));
    assert_false(triage_claims_ask_gpu(&with_gpu));
    assert_false(triage_is_gpu_pod(&claims_only));
    claims_only.cause = "dra-exhausted";
    assert_true(triage_claims_ask_gpu(&claims_only));
    assert_true(triage_is_gpu_pod(&claims_only));
    claims_only.cause = "no-request";
    assert_false(triage_claims_ask_gpu(&claims_only));
    assert_false(triage_is_gpu_pod(&claims_only));
    claims_only.cause = "not-a-cause";
    assert_false(triage_claims_ask_gpu(&claims_only));
    neither.cause = "taint"; /* no claims: a cause alone does not make a GPU pod */
    assert_false(triage_claims_ask_gpu(&neither));
    assert_false(triage_is_gpu_pod(&neither));
}

/* ---- gangs: members counted in the store, the group and its Event from the gang store ---- */

#define GANG_POD                                                                                   \
    "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\",\"creationTimestamp\":"  \
    "\"2026-01-01T00:00:00Z\",\"annotations\":{\"pod-group-name\":\"pg\"}},\"spec\":{%s"           \
    "\"schedulerName\":\"kai-scheduler\",\"containers\":[{\"name\":\"c\",\"resources\":{"          \
    "\"limits\":{\"nvidia.com/gpu\":\"%s\"}}}]}}"

static void test_gang(void **state)
{
    (void)state;
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    store_keep_gpu_pods_only(s); /* as the controller: members without a GPU are kept too */
    struct gang_store *gs = gang_store_new();
    put_pod(s, GANG_POD, "a", "a", "", "1");
    put_pod(s, GANG_POD, "b", "b", "\"schedulingGates\":[{\"name\":\"x\"}],", "1");
    put_pod(s, GANG_POD, "launcher", "l", "", "0");
    struct gang_group g = {.kind = GANG_KAI, .min = 4, .gang = true};
    strcpy(g.ns, "ns");
    strcpy(g.name, "pg");
    strcpy(g.queue, "team");
    assert_int_equal(gang_store_put(gs, &g, NULL), K_OK);
    struct triage_source src = {.store = s, .gangs = gs, .now = 1767225600 + 3600};
    struct classify_result r;
    store_read_lock(s);
    /* the kind not read: nothing said of the gang; a KAI pod without a condition then reads
       no-scheduler, which is what gang-waiting replaces */
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "a"), &r), K_OK);
    assert_int_equal(r.cause, CAUSE_NO_SCHEDULER);
    gang_store_set_read(gs, GANG_KAI, true);
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "a"), &r), K_OK);
    assert_int_equal(r.cause, CAUSE_GANG_WAITING);
    assert_non_null(strstr(r.detail, "KAI PodGroup ns/pg (scheduling.run.ai) needs minMember 4, "
                                     "3 pods exist, 1 gated"));
    /* the queue's word comes first */
    gang_store_event(gs, GANG_KAI, "ns", "pg", "Unschedulable",
                     "Non-preemptible workload is over quota. Use a preemptible workload", 5);
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "a"), &r), K_OK);
    assert_int_equal(r.cause, CAUSE_QUEUE_WAITING);
    assert_non_null(strstr(r.detail, "Queue team"));
    store_read_unlock(s);
    gang_store_event(gs, GANG_KAI, "ns", "pg", "Scheduled", "pod group is ready", 6);
    put_pod(s, GANG_POD, "c", "c", "", "1");
    put_pod(s, GANG_POD, "d", "d", "", "1");
    store_read_lock(s);
    /* complete (4 not gated of 5): the ladder goes on */
    assert_int_equal(triage_pod(&src, store_pod_get(s, "ns", "a"), &r), K_OK);
    assert_int_equal(r.cause, CAUSE_NO_SCHEDULER);
    struct gang_facts f;
    assert_true(triage_gang_facts(s, gs, store_pod_get(s, "ns", "a"), &f));
    assert_int_equal(f.exist, 5);
    assert_int_equal(f.gated, 1);
    store_read_unlock(s);
    gang_store_free(gs);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_fixtures),
        cmocka_unit_test(test_dra_fixtures),
        cmocka_unit_test(test_dra_needs_store_and_classes),
        cmocka_unit_test(test_dra_view),
        cmocka_unit_test(test_dra_lock_pairing),
        cmocka_unit_test(test_facts_victims),
        cmocka_unit_test(test_facts_siblings),
        cmocka_unit_test(test_ours_and_gpu_pods),
        cmocka_unit_test(test_gang),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
