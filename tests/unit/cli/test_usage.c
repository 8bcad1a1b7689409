/*
 * Tests for cli/usage.c and the requests the CLI makes with it (cli/triage.c triage_run,
 * cli/pods.c pods_fetch), against the recording fake API: which nodes a classification needs
 * the pods of, the field selectors sent, and that the result is the one of reading every pod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fake_kube.h"
#include "gpus.h"
#include "objects.h"
#include "pb_write.h"
#include "pods.h"
#include "triage.h"
#include "usage.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/result.h"

#define SEL_NON_TERMINAL "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
#define ALL_PODS "/api/v1/pods?fieldSelector=" SEL_NON_TERMINAL "&limit=500"
#define NODE_PODS(n)                                                                               \
    "/api/v1/pods?fieldSelector=spec.nodeName%3D" n "%2C" SEL_NON_TERMINAL "&resourceVersion=0"

/* A small world: nodes and pods as JSON, in one array each. */
struct world {
    json_object *nodes, *pods;
};

static void world_init(struct world *w)
{
    w->nodes = json_object_new_array();
    w->pods = json_object_new_array();
}

static void world_cleanup(struct world *w)
{
    json_object_put(w->nodes);
    json_object_put(w->pods);
}

/* n0: 4 GPUs, 3 held (a 2 and a 1); n1: no GPU; n2: 4 GPUs, 1 held; n3: 2 GPUs, allocatable 0;
 * plus CPU pods everywhere and a finished GPU pod on n2. */
static void world_small(struct world *w)
{
    world_init(w);
    json_object_array_add(w->nodes, test_node("n0", "4", "4", NULL, NULL));
    json_object_array_add(w->nodes, test_node("n1", NULL, NULL, NULL, NULL));
    json_object_array_add(w->nodes, test_node("n2", "4", "4", NULL, NULL));
    json_object_array_add(w->nodes, test_node("n3", "2", "0", NULL, NULL));
    json_object_array_add(w->pods, test_pod("ml", "a", "2", "n0", "Running", NULL, 1, NULL));
    json_object_array_add(w->pods, test_pod("ml", "b", "1", "n0", "Running", NULL, 1, NULL));
    json_object_array_add(w->pods, test_pod("ml", "c", "1", "n2", "Running", NULL, 1, NULL));
    json_object_array_add(w->pods, test_pod("ml", "cpu0", NULL, "n0", "Running", NULL, 1, NULL));
    json_object_array_add(w->pods, test_pod("ml", "cpu1", NULL, "n1", "Running", NULL, 1, NULL));
    json_object_array_add(w->pods, test_pod("ml", "d", "1", "n3", "Running", NULL, 1, NULL));
}

/* `n` GPU nodes g000.. with 8 GPUs, 4 held on each. */
static void world_wide(struct world *w, size_t n)
{
    world_init(w);
    for (size_t i = 0; i < n; i++) {
        char name[32], pod[32];
        snprintf(name, sizeof(name), "g%03zu", i);
        snprintf(pod, sizeof(pod), "h%03zu", i);
        json_object_array_add(w->nodes, test_node(name, "8", "8", NULL, NULL));
        json_object_array_add(w->pods, test_pod("ml", pod, "4", name, "Running", NULL, 1, NULL));
    }
}

static const char *pod_node_of(json_object *o)
{
    json_object *spec, *node;
    json_object_object_get_ex(o, "spec", &spec);
    return json_object_object_get_ex(spec, "nodeName", &node) ? json_object_get_string(node) : NULL;
}

/* {"kind":"<kind>","metadata":{"resourceVersion":"7"},"items":[...]} of the items of `arr`
 * bound to `node` (NULL: all). */
static void answer_list(struct fake_kube *f, const char *kind, json_object *arr, const char *node)
{
    json_object *list = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object *items = json_object_new_array();
    json_object_object_add(meta, "resourceVersion", json_object_new_string("7"));
    json_object_object_add(list, "kind", json_object_new_string(kind));
    json_object_object_add(list, "metadata", meta);
    json_object_object_add(list, "items", items);
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        const char *on = pod_node_of(o);
        if (!node || (on && strcmp(on, node) == 0))
            json_object_array_add(items, json_object_get(o));
    }
    fake_kube_answer(f, 200, 0, json_object_to_json_string(list));
    json_object_put(list);
}

/* The APIGroup document of an API server that serves resource.k8s.io/v1 (the DRA discovery). */
static void answer_dra_discovery(struct fake_kube *f)
{
    fake_kube_answer(f, 200, 0,
                     "{\"kind\":\"APIGroup\",\"name\":\"resource.k8s.io\",\"versions\":[{"
                     "\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}]}");
}

/* The reference: classify with every node and every pod in the store (what triage_run read
 * before it narrowed its LISTs). */
static void reference(const struct world *w, json_object *pod, struct triage *t)
{
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    unsigned ch = 0;
    for (size_t i = 0; i < json_object_array_length(w->nodes); i++)
        assert_int_equal(
            store_node_apply_json(s, json_object_array_get_idx(w->nodes, i), 0, NULL, &ch), K_OK);
    for (size_t i = 0; i < json_object_array_length(w->pods); i++)
        assert_int_equal(
            store_pod_apply_json(s, json_object_array_get_idx(w->pods, i), 0, NULL, &ch), K_OK);
    char key[STORE_KEY_MAX];
    assert_int_equal(store_pod_apply_json(s, pod, 0, key, &ch), K_OK);
    char *slash = strchr(key, '/');
    *slash = '\0';
    assert_int_equal(triage_from_store(s, key, slash + 1, t), K_OK);
}

/* The nodes usage_nodes_collect() finds for `pod` in world `w`. */
static void collect(const struct world *w, json_object *pod, struct usage_nodes *u)
{
    struct store *s = store_new(&test_gpus);
    assert_non_null(s);
    unsigned ch = 0;
    for (size_t i = 0; i < json_object_array_length(w->nodes); i++)
        assert_int_equal(
            store_node_apply_json(s, json_object_array_get_idx(w->nodes, i), 0, NULL, &ch), K_OK);
    char key[STORE_KEY_MAX];
    assert_int_equal(store_pod_apply_json(s, pod, 0, key, &ch), K_OK);
    char *slash = strchr(key, '/');
    *slash = '\0';
    struct triage_source src = {.store = s, .now = (int64_t)time(NULL)};
    store_read_lock(s);
    assert_int_equal(usage_nodes_collect(&src, store_pod_get(s, key, slash + 1), u), K_OK);
    store_read_unlock(s);
    store_free(s);
}

static void set_path(json_object *o, const char *section, const char *key, json_object *v)
{
    json_object *sec;
    if (!json_object_object_get_ex(o, section, &sec)) {
        sec = json_object_new_object();
        json_object_object_add(o, section, sec);
    }
    json_object_object_add(sec, key, v);
}

/* ---- usage_nodes_collect ------------------------------------------------------------------ */

static void test_collect_narrows_to_the_nodes_that_matter(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    struct usage_nodes u = {0};
    /* a nodeSelector naming one node: that node only */
    json_object *pod = test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL);
    collect(&w, pod, &u);
    assert_false(u.all);
    assert_int_equal(u.n, 1);
    assert_string_equal(u.names[0], "n0");
    json_object_put(pod);
    usage_nodes_cleanup(&u);
    /* no selector: every node listing the resource (n1 lists none: no-gpu-node whatever runs) */
    pod = test_pod("ml", "want", "2", NULL, "Pending", NULL, 1, NULL);
    collect(&w, pod, &u);
    assert_false(u.all);
    assert_int_equal(u.n, 3);
    assert_string_equal(u.names[0], "n0");
    assert_string_equal(u.names[1], "n2");
    assert_string_equal(u.names[2], "n3");
    json_object_put(pod);
    usage_nodes_cleanup(&u);
    /* no node matches (label-mismatch), or the one that does lists no GPU: nothing */
    pod = test_pod("ml", "want", "1", NULL, "Pending", "nowhere", 1, NULL);
    collect(&w, pod, &u);
    assert_int_equal(u.n, 0);
    assert_false(u.all);
    json_object_put(pod);
    pod = test_pod("ml", "want", "1", NULL, "Pending", "n1", 1, NULL);
    collect(&w, pod, &u);
    assert_int_equal(u.n, 0);
    json_object_put(pod);
    /* decided before node selection: scheduling-gated */
    pod = test_pod("ml", "want", "1", NULL, "Pending", NULL, 1, NULL);
    json_object *gates = json_object_new_array(), *g = json_object_new_object();
    json_object_object_add(g, "name", json_object_new_string("example.com/wait"));
    json_object_array_add(gates, g);
    set_path(pod, "spec", "schedulingGates", gates);
    collect(&w, pod, &u);
    assert_int_equal(u.n, 0);
    json_object_put(pod);
    /* preempting: the nominated node (its victims) */
    pod = test_pod("ml", "want", "1", NULL, "Pending", NULL, 1, NULL);
    set_path(pod, "status", "nominatedNodeName", json_object_new_string("n2"));
    collect(&w, pod, &u);
    assert_int_equal(u.n, 1);
    assert_string_equal(u.names[0], "n2");
    json_object_put(pod);
    usage_nodes_cleanup(&u);
    world_cleanup(&w);
}

static void test_collect_many_nodes_is_all(void **state)
{
    (void)state;
    struct world w;
    world_wide(&w, USAGE_PER_NODE_MAX + 1);
    struct usage_nodes u = {0};
    json_object *pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    collect(&w, pod, &u);
    assert_true(u.all);
    assert_int_equal(u.n, USAGE_PER_NODE_MAX);
    json_object_put(pod);
    usage_nodes_cleanup(&u);
    world_cleanup(&w);
    /* exactly the limit: still one by one */
    world_wide(&w, USAGE_PER_NODE_MAX);
    pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    collect(&w, pod, &u);
    assert_false(u.all);
    assert_int_equal(u.n, USAGE_PER_NODE_MAX);
    json_object_put(pod);
    usage_nodes_cleanup(&u);
    world_cleanup(&w);
    /* usage_nodes_add keeps names once */
    assert_int_equal(usage_nodes_add(&u, "x"), K_OK);
    assert_int_equal(usage_nodes_add(&u, "y"), K_OK);
    assert_int_equal(usage_nodes_add(&u, "x"), K_OK);
    assert_int_equal(u.n, 2);
    usage_nodes_cleanup(&u);
}

/* ---- triage_run: the requests ------------------------------------------------------------- */

/* Run triage_run for `pod` against world `w`, scripting the answers the narrowed requests
 * expect: the GET, the nodes, then the pods of `nodes` (NULL: one LIST of every pod). */
static int run_triage(struct fake_kube *f, const struct world *w, json_object *pod,
                      const char *const *nodes, size_t n_nodes, const struct gpu_set *dra,
                      struct triage *t)
{
    fake_kube_answer(f, 200, 0, json_object_to_json_string(pod));
    answer_list(f, "NodeList", w->nodes, NULL);
    if (nodes)
        for (size_t i = 0; i < n_nodes; i++)
            answer_list(f, "PodList", w->pods, nodes[i]);
    else
        answer_list(f, "PodList", w->pods, NULL);
    struct kube_client *c = fake_kube_client(f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    json_object *meta, *ns, *name;
    json_object_object_get_ex(pod, "metadata", &meta);
    json_object_object_get_ex(meta, "namespace", &ns);
    json_object_object_get_ex(meta, "name", &name);
    int rc = triage_run(c, &test_gpus, dra, 0, json_object_get_string(ns),
                        json_object_get_string(name), t, &err);
    kube_client_free(c);
    return rc;
}

static void assert_same(const struct triage *got, const struct triage *want)
{
    assert_string_equal(cause_word(got->result.cause), cause_word(want->result.cause));
    assert_string_equal(got->result.detail, want->result.detail);
    assert_int_equal(got->result.n_candidates, want->result.n_candidates);
    assert_memory_equal(got->result.counts, want->result.counts, sizeof(want->result.counts));
}

static void test_triage_reads_one_node_for_a_selector(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    json_object *pod = test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL);
    struct fake_kube f;
    fake_kube_init(&f);
    struct triage t, ref;
    const char *nodes[] = {"n0"};
    assert_int_equal(run_triage(&f, &w, pod, nodes, 1, NULL, &t), K_OK);
    assert_int_equal(fake_kube_count(&f), 5); /* and Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 0)->path, "/api/v1/namespaces/ml/pods/want");
    assert_string_equal(fake_kube_request(&f, 1)->path, "/api/v1/nodes?limit=500");
    assert_string_equal(fake_kube_request(&f, 2)->path, NODE_PODS("n0"));
    for (size_t i = 0; i < fake_kube_count(&f); i++) /* no cluster-wide pod LIST */
        assert_string_not_equal(fake_kube_request(&f, i)->path, ALL_PODS);
    reference(&w, pod, &ref);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    assert_same(&t, &ref);
    assert_non_null(strstr(t.result.detail, "allocated 3, free 1, requested 2"));
    triage_cleanup(&t);
    triage_cleanup(&ref);
    fake_kube_cleanup(&f);
    json_object_put(pod);
    world_cleanup(&w);
}

/*
 * The per-node LIST answered in protobuf (tests/fixtures/proto/pods.pb, recorded from a real API
 * server: on bench-node-00001 the pods ask for 3 + 5 + 2 + 0 GPUs) gives the same triage as the
 * same list in JSON (pods.json).
 */
static int triage_over(const char *fixture, bool proto, struct triage *t, struct fake_kube *f)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/proto/%s", FIXTURES_DIR, fixture);
    struct buf body;
    buf_init(&body, 1u << 24);
    assert_int_equal(file_read(path, &body, 0), K_OK);
    json_object *pod = test_pod("ml", "want", "1", NULL, "Pending", "bench-node-00001", 1, NULL);
    json_object *nodes = json_object_new_array();
    json_object_array_add(nodes, test_node("bench-node-00001", "8", "8", NULL, NULL));
    fake_kube_answer(f, 200, 0, json_object_to_json_string(pod));
    struct world w = {.nodes = nodes, .pods = json_object_new_array()};
    answer_list(f, "NodeList", w.nodes, NULL);
    if (proto)
        fake_kube_answer_bytes(f, 200, body.data, body.len);
    else
        fake_kube_answer(f, 200, 0, buf_cstr(&body));
    struct kube_client *c = fake_kube_client(f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    int rc = triage_run(c, &test_gpus, NULL, 0, "ml", "want", t, &err);
    kube_client_free(c);
    world_cleanup(&w);
    json_object_put(pod);
    buf_cleanup(&body);
    return rc;
}

static void test_triage_reads_protobuf_lists(void **state)
{
    (void)state;
    struct fake_kube f, g;
    fake_kube_init(&f);
    fake_kube_init(&g);
    struct triage t, ref;
    assert_int_equal(triage_over("pods.pb", true, &t, &f), K_OK);
    assert_int_equal(triage_over("pods.json", false, &ref, &g), K_OK);
    assert_int_equal(fake_kube_count(&f), 5); /* and Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 2)->path, NODE_PODS("bench-node-00001"));
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    assert_same(&t, &ref);
    assert_non_null(strstr(t.result.detail, "allocated 10"));
    triage_cleanup(&t);
    triage_cleanup(&ref);
    fake_kube_cleanup(&f);
    fake_kube_cleanup(&g);
}

/* A pod on a candidate node that does not read as a Pod: its GPU usage is unknown, so no verdict,
 * but K_EPARSE and a message that says how many; the same for an unreadable DRA object. */
static void test_triage_unreadable_usage_pod(void **state)
{
    (void)state;
    json_object *pod = test_pod("ml", "want", "1", NULL, "Pending", "n0", 1, NULL);
    json_object *nodes = json_object_new_array();
    json_object_array_add(nodes, test_node("n0", "8", "8", NULL, NULL));
    struct fake_kube f;
    fake_kube_init(&f);
    fake_kube_answer(&f, 200, 0, json_object_to_json_string(pod));
    answer_list(&f, "NodeList", nodes, NULL);
    fake_kube_answer(&f, 200, 0,
                     "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},"
                     "\"items\":[{\"metadata\":{\"namespace\":\"ml\"}}]}");
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct triage t;
    assert_int_equal(triage_run(c, &test_gpus, NULL, 0, "ml", "want", &t, &err), K_EPARSE);
    assert_string_equal(err.message,
                        "LIST /api/v1/pods: 1 item could not be read (malformed, or past a bound)");
    kube_client_free(c);
    fake_kube_cleanup(&f);

    struct dra_store *dra = dra_store_new();
    assert_non_null(dra);
    fake_kube_init(&f);
    c = fake_kube_client(&f);
    answer_dra_discovery(&f);
    fake_kube_answer(&f, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{},{\"a\":1}]}");
    assert_int_equal(dra_store_list(c, dra, &err), K_EPARSE);
    assert_int_equal(fake_kube_count(&f), 2); /* discovery, then not the next kind */
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/resource.k8s.io");
    assert_non_null(strstr(err.message, ": 2 items could not be read"));
    dra_store_free(dra);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    json_object_put(nodes);
    json_object_put(pod);
}

static void test_triage_few_candidates_node_by_node(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    /* no selector: n0, n2, n3 list the GPU; n2 has 3 free of the 4 asked: exhausted there */
    json_object *pod = test_pod("ml", "want", "4", NULL, "Pending", NULL, 1, NULL);
    struct fake_kube f;
    fake_kube_init(&f);
    struct triage t, ref;
    const char *nodes[] = {"n0", "n2", "n3"};
    assert_int_equal(run_triage(&f, &w, pod, nodes, 3, NULL, &t), K_OK);
    assert_int_equal(fake_kube_count(&f), 7); /* and Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 2)->path, NODE_PODS("n0"));
    assert_string_equal(fake_kube_request(&f, 3)->path, NODE_PODS("n2"));
    assert_string_equal(fake_kube_request(&f, 4)->path, NODE_PODS("n3"));
    reference(&w, pod, &ref);
    assert_same(&t, &ref);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    /* explain reads the same per-node numbers */
    assert_int_equal(t.result.n_verdicts, ref.result.n_verdicts);
    for (size_t i = 0; i < t.result.n_verdicts; i++) {
        if (t.verdicts[i].capacity <= 0)
            continue; /* n1 lists no GPU: its pods are not read (usage.h) */
        assert_int_equal(t.verdicts[i].allocated, ref.verdicts[i].allocated);
    }
    triage_cleanup(&t);
    triage_cleanup(&ref);
    fake_kube_cleanup(&f);
    json_object_put(pod);
    /* label-mismatch and no-gpu-node: no pod LIST at all */
    const char *hosts[] = {"nowhere", "n1"};
    for (size_t k = 0; k < 2; k++) {
        pod = test_pod("ml", "want", "1", NULL, "Pending", hosts[k], 1, NULL);
        fake_kube_init(&f);
        assert_int_equal(run_triage(&f, &w, pod, nodes, 0, NULL, &t), K_OK);
        assert_int_equal(fake_kube_count(&f), 4) /* and the pod's Events */;
        reference(&w, pod, &ref);
        assert_same(&t, &ref);
        triage_cleanup(&t);
        triage_cleanup(&ref);
        fake_kube_cleanup(&f);
        json_object_put(pod);
    }
    world_cleanup(&w);
}

static void test_triage_many_candidates_one_list(void **state)
{
    (void)state;
    struct world w;
    world_wide(&w, USAGE_PER_NODE_MAX + 1);
    json_object *pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    struct fake_kube f;
    fake_kube_init(&f);
    struct triage t, ref;
    assert_int_equal(run_triage(&f, &w, pod, NULL, 0, NULL, &t), K_OK);
    assert_int_equal(fake_kube_count(&f), 5); /* and Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 2)->path, ALL_PODS);
    reference(&w, pod, &ref);
    assert_same(&t, &ref);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    triage_cleanup(&t);
    triage_cleanup(&ref);
    fake_kube_cleanup(&f);
    json_object_put(pod);
    world_cleanup(&w);
}

/* Above USAGE_SEQUENTIAL_MAX candidates the per-node LISTs run in threads: every node is read
 * once, in some order, and the answer is the one a LIST of every pod gives. */
static void test_triage_candidates_read_in_parallel(void **state)
{
    (void)state;
    enum { N = USAGE_SEQUENTIAL_MAX + 24 };
    struct world w;
    world_wide(&w, N);
    json_object *pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    char names[N][8];
    const char *nodes[N];
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "g%03zu", i);
        nodes[i] = names[i];
    }
    struct fake_kube f;
    fake_kube_init(&f);
    struct triage t, ref;
    assert_int_equal(run_triage(&f, &w, pod, nodes, N, NULL, &t), K_OK);
    assert_int_equal(fake_kube_count(&f), 3 + N + 1); /* and Kueue's discovery */
    bool seen[N] = {0};
    for (size_t i = 2; i < 2 + N; i++) {
        const char *path = fake_kube_request(&f, i)->path;
        size_t k;
        for (k = 0; k < N; k++) {
            char want[512]; /* gcc for aarch64 bounds names[k] by the whole array */
            snprintf(want, sizeof(want),
                     "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s%%2C%s&resourceVersion=0",
                     names[k], SEL_NON_TERMINAL);
            if (strcmp(path, want) == 0)
                break;
        }
        assert_true(k < N);
        assert_false(seen[k]);
        seen[k] = true;
    }
    reference(&w, pod, &ref);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    assert_same(&t, &ref);
    triage_cleanup(&t);
    triage_cleanup(&ref);
    fake_kube_cleanup(&f);
    json_object_put(pod);
    world_cleanup(&w);
}

/*
 * Many candidates read in parallel, every answer in protobuf: the worker threads project items at
 * once and write them to one store, and every answer also lists the same pod (ml/shared), which
 * the threads race to store: it is stored once. The triage equals the one from a store that read
 * every pod in JSON. Run under TSan (GPUTRI_TSAN) as well as ASan.
 */
static void test_triage_parallel_protobuf(void **state)
{
    (void)state;
    enum { N = USAGE_SEQUENTIAL_MAX + 24 };
    struct world w;
    world_wide(&w, N);
    json_object_array_add(w.pods, test_pod("ml", "shared", "4", "g000", "Running", NULL, 1, NULL));
    json_object *pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    struct fake_kube f;
    fake_kube_init(&f);
    fake_kube_answer(&f, 200, 0, json_object_to_json_string(pod));
    answer_list(&f, "NodeList", w.nodes, NULL);
    struct buf items, body;
    buf_init(&items, 1u << 20);
    buf_init(&body, 1u << 20);
    for (size_t i = 0; i < N; i++) {
        char node[32], name[32];
        snprintf(node, sizeof(node), "g%03zu", i);
        snprintf(name, sizeof(name), "h%03zu", i);
        pb_put_pod(&items, 2, "ml", name, node, "4", "Running");
        pb_put_pod(&items, 2, "ml", "shared", "g000", "4", "Running");
        buf_reset(&body);
        pb_put_list(&body, "7", &items);
        fake_kube_answer_bytes(&f, 200, body.data, body.len);
    }
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct triage t, ref;
    assert_int_equal(triage_run(c, &test_gpus, NULL, 0, "ml", "want", &t, &err), K_OK);
    kube_client_free(c);
    assert_int_equal(fake_kube_count(&f), 3 + N + 1); /* and Kueue's discovery */
    reference(&w, pod, &ref);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    assert_same(&t, &ref);
    triage_cleanup(&t);
    triage_cleanup(&ref);
    buf_cleanup(&items);
    buf_cleanup(&body);
    fake_kube_cleanup(&f);
    json_object_put(pod);
    world_cleanup(&w);
}

/* One node's LIST fails while the others are read in parallel: triage fails with that error and
 * its message, whatever the other threads were doing, and nothing leaks. */
static void test_triage_parallel_one_list_fails(void **state)
{
    (void)state;
    enum { N = USAGE_SEQUENTIAL_MAX + 24 };
    struct world w;
    world_wide(&w, N);
    json_object *pod = test_pod("ml", "want", "8", NULL, "Pending", NULL, 1, NULL);
    const int fails[] = {K_EIO, K_EFORBIDDEN};
    for (size_t f_i = 0; f_i < sizeof(fails) / sizeof(fails[0]); f_i++) {
        struct fake_kube f;
        fake_kube_init(&f);
        fake_kube_answer(&f, 200, 0, json_object_to_json_string(pod));
        answer_list(&f, "NodeList", w.nodes, NULL);
        for (size_t i = 0; i < N; i++) {
            char name[8];
            snprintf(name, sizeof(name), "g%03zu", i);
            if (i == N / 2 && fails[f_i] == K_EIO)
                fake_kube_fail(&f, K_EIO);
            else if (i == N / 2)
                fake_kube_answer(&f, 403, 0,
                                 "{\"kind\":\"Status\",\"status\":\"Failure\","
                                 "\"message\":\"pods is forbidden\",\"code\":403}");
            else
                answer_list(&f, "PodList", w.pods, name);
        }
        struct kube_client *c = fake_kube_client(&f);
        struct kube_error err;
        memset(&err, 0, sizeof(err));
        struct triage t;
        assert_int_equal(triage_run(c, &test_gpus, NULL, 0, "ml", "want", &t, &err), fails[f_i]);
        assert_int_equal(err.code, fails[f_i]);
        if (fails[f_i] == K_EFORBIDDEN)
            assert_non_null(strstr(err.message, "pods is forbidden"));
        kube_client_free(c);
        fake_kube_cleanup(&f);
    }
    json_object_put(pod);
    world_cleanup(&w);
}

static void test_triage_device_plugin_pod_lists_no_dra(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    json_object *pod = test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL);
    struct fake_kube f;
    fake_kube_init(&f);
    struct triage t;
    /* nvidia.com/gpu may be served by a DeviceClass (KEP-5004): the classes are read, and no
       class has an extendedResourceName here, so nothing else of DRA */
    fake_kube_answer(&f, 200, 0, json_object_to_json_string(pod));
    json_object *none = json_object_new_array();
    answer_dra_discovery(&f);
    answer_list(&f, "DeviceClassList", none, NULL);
    answer_list(&f, "NodeList", w.nodes, NULL);
    answer_list(&f, "PodList", w.pods, "n0");
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    assert_int_equal(triage_run(c, &test_gpus, &dra, 0, "ml", "want", &t, &err), K_OK);
    kube_client_free(c);
    assert_int_equal(fake_kube_count(&f), 7); /* and Kueue's discovery */
    for (size_t i = 0; i < fake_kube_count(&f); i++)
        if (i != 1 && i != 2)
            assert_null(strstr(fake_kube_request(&f, i)->path, "resource.k8s.io"));
    assert_string_equal(fake_kube_request(&f, 1)->path, "/apis/resource.k8s.io");
    assert_non_null(
        strstr(fake_kube_request(&f, 2)->path, "/apis/resource.k8s.io/v1/deviceclasses"));
    json_object_put(none);
    assert_int_equal(t.result.cause, CAUSE_EXHAUSTED);
    triage_cleanup(&t);
    fake_kube_cleanup(&f);
    gpu_set_cleanup(&dra);
    json_object_put(pod);
    world_cleanup(&w);
}

/* ---- pods_fetch: the requests ------------------------------------------------------------- */

#define NOT_RUNNING "fieldSelector=status.phase%21%3DSucceeded"

static void test_pods_annotated_reads_one_list(void **state)
{
    (void)state;
    json_object *pending = json_object_new_array();
    json_object *p = test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, "exhausted");
    json_object_array_add(pending, p);
    struct fake_kube f;
    fake_kube_init(&f);
    answer_list(&f, "PodList", pending, NULL);
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct pod_rows rows;
    assert_int_equal(pods_fetch(c, &test_gpus, NULL, 0, NULL, &rows, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 2); /* and the owners refused by quota */
    assert_string_equal(fake_kube_request(&f, 0)->path, "/api/v1/pods?" NOT_RUNNING "&limit=500");
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].cause, "exhausted");
    assert_int_equal(rows.items[0].source, POD_ROW_ANNOTATION);
    pod_rows_cleanup(&rows);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    json_object_put(pending);
}

static void test_pods_live_reads_the_nodes_it_needs(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    json_object *pending = json_object_new_array();
    json_object_array_add(pending, test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL));
    json_object_array_add(pending,
                          test_pod("ml", "gone", "1", NULL, "Pending", "nowhere", 1, NULL));
    struct fake_kube f;
    fake_kube_init(&f);
    answer_list(&f, "PodList", pending, NULL);
    answer_list(&f, "NodeList", w.nodes, NULL);
    answer_list(&f, "PodList", w.pods, "n0");
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct pod_rows rows;
    assert_int_equal(pods_fetch(c, &test_gpus, NULL, 0, "ml", &rows, &err), K_OK);
    assert_int_equal(fake_kube_count(&f),
                     6); /* the autoscalers' Events, the owners', Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 3)->path,
                        "/api/v1/namespaces/ml/events?fieldSelector=source%3Dcluster-autoscaler"
                        "&limit=500");
    assert_string_equal(fake_kube_request(&f, 0)->path,
                        "/api/v1/namespaces/ml/pods?" NOT_RUNNING "&limit=500");
    assert_string_equal(fake_kube_request(&f, 1)->path, "/api/v1/nodes?limit=500");
    assert_string_equal(fake_kube_request(&f, 2)->path, NODE_PODS("n0"));
    assert_int_equal(rows.n, 2);
    assert_string_equal(rows.items[0].name, "gone");
    assert_string_equal(rows.items[0].cause, "label-mismatch");
    assert_string_equal(rows.items[1].name, "want");
    assert_string_equal(rows.items[1].cause, "exhausted");
    assert_int_equal(rows.items[1].source, POD_ROW_LIVE);
    /* the reference: the same pod classified with every pod read */
    struct triage ref;
    json_object *pod = test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL);
    reference(&w, pod, &ref);
    assert_string_equal(rows.items[1].detail, ref.result.detail);
    triage_cleanup(&ref);
    json_object_put(pod);
    pod_rows_cleanup(&rows);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    json_object_put(pending);
    world_cleanup(&w);
}

static void test_pods_dra_only_for_live_claim_pods(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    struct gpu_set dra;
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    /* a claim pod the controller annotated, and a device-plugin pod it has not */
    json_object *pending = json_object_new_array();
    json_object *claim = test_pod("ml", "claim", NULL, NULL, "Pending", NULL, 1, "dra-exhausted");
    json_object *rc = json_object_new_array(), *ref = json_object_new_object();
    json_object_object_add(ref, "name", json_object_new_string("gpu"));
    json_object_object_add(ref, "resourceClaimName", json_object_new_string("c"));
    json_object_array_add(rc, ref);
    set_path(claim, "spec", "resourceClaims", rc);
    json_object_array_add(pending, claim);
    json_object_array_add(pending, test_pod("ml", "want", "2", NULL, "Pending", "n0", 1, NULL));
    struct fake_kube f;
    fake_kube_init(&f);
    answer_list(&f, "PodList", pending, NULL);
    answer_list(&f, "NodeList", w.nodes, NULL);
    json_object *none = json_object_new_array();
    answer_dra_discovery(&f);
    answer_list(&f, "DeviceClassList", none, NULL); /* KEP-5004: only the classes */
    json_object_put(none);
    answer_list(&f, "PodList", w.pods, "n0");
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct pod_rows rows;
    assert_int_equal(pods_fetch(c, &test_gpus, &dra, 0, NULL, &rows, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), 8); /* the owners' Events, Kueue's discovery */
    for (size_t i = 0; i < fake_kube_count(&f); i++)
        if (i != 2 && i != 3)
            assert_null(strstr(fake_kube_request(&f, i)->path, "resource.k8s.io"));
    assert_string_equal(fake_kube_request(&f, 2)->path, "/apis/resource.k8s.io");
    assert_non_null(
        strstr(fake_kube_request(&f, 3)->path, "/apis/resource.k8s.io/v1/deviceclasses"));
    assert_int_equal(rows.n, 2);
    assert_string_equal(rows.items[0].cause, "dra-exhausted");
    assert_int_equal(rows.items[0].source, POD_ROW_ANNOTATION);
    assert_string_equal(rows.items[1].cause, "exhausted");
    pod_rows_cleanup(&rows);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    gpu_set_cleanup(&dra);
    json_object_put(pending);
    world_cleanup(&w);
}

static void test_pods_shows_rejected_failed_pods(void **state)
{
    (void)state;
    struct world w;
    world_small(&w);
    /* Failed is not filtered out: a pod its kubelet rejected is Failed */
    json_object *pending = json_object_new_array();
    json_object *p = test_pod("ml", "rejected", "1", "n0", "Failed", NULL, 1, NULL);
    set_path(p, "status", "reason", json_object_new_string("UnexpectedAdmissionError"));
    set_path(p, "status", "message",
             json_object_new_string("Allocate failed due to requested number of devices "
                                    "unavailable for nvidia.com/gpu"));
    json_object_array_add(pending, p);
    struct fake_kube f;
    fake_kube_init(&f);
    answer_list(&f, "PodList", pending, NULL);
    answer_list(&f, "NodeList", w.nodes, NULL);
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err;
    memset(&err, 0, sizeof(err));
    struct pod_rows rows;
    assert_int_equal(pods_fetch(c, &test_gpus, NULL, 0, NULL, &rows, &err), K_OK);
    /* classified on the spot before any node step: no pod LIST for usage */
    assert_int_equal(fake_kube_count(&f), 5); /* the owners' Events, Kueue's discovery */
    assert_string_equal(fake_kube_request(&f, 1)->path, "/api/v1/nodes?limit=500");
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].cause, "node-rejected");
    assert_int_equal(rows.items[0].source, POD_ROW_LIVE);
    pod_rows_cleanup(&rows);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    json_object_put(pending);
    world_cleanup(&w);
}

/* usage_list_dra: for pods with extended resources only, the DeviceClasses first; the other kinds
 * only when a class has an extendedResourceName (KEP-5004); a 403 on the classes is no DRA. */
static void test_usage_list_dra_ext(void **state)
{
    (void)state;
    struct fake_kube f;
    struct kube_error err;
    struct dra_store *dra;
    /* a class serving nvidia.com/gpu: every kind is read */
    fake_kube_init(&f);
    json_object *classes = json_object_new_array();
    json_object_array_add(
        classes, json_tokener_parse("{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{"
                                    "\"extendedResourceName\":\"nvidia.com/gpu\"}}"));
    json_object *none = json_object_new_array();
    answer_dra_discovery(&f);
    answer_list(&f, "DeviceClassList", classes, NULL);
    answer_list(&f, "ResourceClaimList", none, NULL);
    answer_list(&f, "ResourceClaimTemplateList", none, NULL);
    answer_list(&f, "ResourceSliceList", none, NULL);
    /* DeviceTaintRules not listed at v1 (before 1.37; the only version served here): not
       listed, no error, none known */
    fake_kube_answer(&f, 200, 0,
                     "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\","
                     "\"resources\":[{\"name\":\"resourceslices\"}]}");
    struct kube_client *c = fake_kube_client(&f);
    memset(&err, 0, sizeof(err));
    assert_int_equal(usage_list_dra(c, false, &dra, &err), K_OK);
    assert_non_null(dra);
    assert_int_equal(fake_kube_count(&f), 6); /* discovery, then the kinds */
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/resource.k8s.io");
    assert_string_equal(fake_kube_request(&f, 5)->path, "/apis/resource.k8s.io/v1");
    assert_non_null(strstr(fake_kube_request(&f, 1)->path, "deviceclasses"));
    dra_store_read_lock(dra);
    assert_non_null(dra_store_extended_class(dra, "nvidia.com/gpu"));
    dra_store_read_unlock(dra);
    dra_store_free(dra);
    kube_client_free(c);
    fake_kube_cleanup(&f);
    /* the user may not read the DRA API: no DRA and no error for pods with extended
       resources only; with claims the same 403 is an error */
    for (int claims = 0; claims < 2; claims++) {
        fake_kube_init(&f);
        fake_kube_answer(&f, 403, 0,
                         "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"deviceclasses "
                         "is forbidden\",\"code\":403}");
        c = fake_kube_client(&f);
        memset(&err, 0, sizeof(err));
        assert_int_equal(usage_list_dra(c, claims, &dra, &err), claims ? K_EFORBIDDEN : K_OK);
        assert_null(dra);
        if (!claims)
            assert_int_equal(err.code, 0);
        kube_client_free(c);
        fake_kube_cleanup(&f);
    }
    json_object_put(classes);
    json_object_put(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collect_narrows_to_the_nodes_that_matter),
        cmocka_unit_test(test_collect_many_nodes_is_all),
        cmocka_unit_test(test_triage_reads_one_node_for_a_selector),
        cmocka_unit_test(test_triage_reads_protobuf_lists),
        cmocka_unit_test(test_triage_unreadable_usage_pod),
        cmocka_unit_test(test_triage_few_candidates_node_by_node),
        cmocka_unit_test(test_triage_many_candidates_one_list),
        cmocka_unit_test(test_triage_candidates_read_in_parallel),
        cmocka_unit_test(test_triage_parallel_protobuf),
        cmocka_unit_test(test_triage_parallel_one_list_fails),
        cmocka_unit_test(test_triage_device_plugin_pod_lists_no_dra),
        cmocka_unit_test(test_pods_annotated_reads_one_list),
        cmocka_unit_test(test_pods_live_reads_the_nodes_it_needs),
        cmocka_unit_test(test_pods_dra_only_for_live_claim_pods),
        cmocka_unit_test(test_usage_list_dra_ext),
        cmocka_unit_test(test_pods_shows_rejected_failed_pods),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
