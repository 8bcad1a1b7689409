/*
 * test_dra_agreement.c - one ladder for DRA: for every DRA classifier fixture
 * (tests/fixtures/dra, format in its README) the webhook's device count
 * (core/classify dra_count_matching over the webhook snapshot's lookups, webhook/snapshot.c)
 * equals what classify() reports as `dra_matching` for the deciding request on every candidate
 * node, when both read the same snapshot. Nothing is allocated in either (the webhook ignores
 * allocations; matching counts held devices too), and the pod's requests are found through
 * its own claims, as the ladder resolves them.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/classify.h"
#include "gpus.h"
#include "kube/project.h"
#include "snapshot.h"
#include "util/result.h"

struct world {
    struct kpod pod;
    struct knode *nodes;
    const struct knode **node_ptrs;
    size_t n_nodes;
    struct dra_claim *claims;
    size_t n_claims;
    struct dra_template *templates;
    size_t n_templates;
    struct dra_class *classes;
    size_t n_classes;
    struct dra_slice *slices;
    size_t n_slices;
    struct gpu_set dra_gpus;
    struct wh_snapshot snap;
};

static json_object *arr(json_object *root, const char *key, size_t *n)
{
    json_object *a = NULL;
    json_object_object_get_ex(root, key, &a);
    *n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
    return a;
}

#define LOAD(key, field, count, fn)                                                                \
    do {                                                                                           \
        size_t n_;                                                                                 \
        json_object *a_ = arr(root, key, &n_);                                                     \
        w->field = calloc(n_ + 1, sizeof(*w->field));                                              \
        assert_non_null(w->field);                                                                 \
        for (; w->count < n_; w->count++)                                                          \
            assert_int_equal(fn(json_object_array_get_idx(a_, w->count), &w->field[w->count]),     \
                             K_OK);                                                                \
    } while (0)

static int node_fn(json_object *o, struct knode *n)
{
    return project_node(o, &test_gpus, n);
}

static int cmp_node(const void *a, const void *b)
{
    return strcmp(((const struct knode *)a)->name, ((const struct knode *)b)->name);
}

static void world_load(json_object *root, struct world *w)
{
    memset(w, 0, sizeof(*w));
    assert_int_equal(gpu_set_parse(&w->dra_gpus, DRA_GPU_SET_DEFAULT), K_OK);
    json_object *pod = NULL;
    json_object_object_get_ex(root, "pod", &pod);
    assert_int_equal(project_pod(pod, &test_gpus, &w->pod), K_OK);
    LOAD("nodes", nodes, n_nodes, node_fn);
    LOAD("resourceclaims", claims, n_claims, project_dra_claim);
    LOAD("resourceclaimtemplates", templates, n_templates, project_dra_template);
    LOAD("deviceclasses", classes, n_classes, project_dra_class);
    LOAD("resourceslices", slices, n_slices, project_dra_slice);
    /* the snapshot's orders (snapshot.h), as the cache keeps them */
    qsort(w->nodes, w->n_nodes, sizeof(*w->nodes), cmp_node);
    qsort(w->claims, w->n_claims, sizeof(*w->claims), wh_dra_claim_cmp);
    qsort(w->templates, w->n_templates, sizeof(*w->templates), wh_dra_template_cmp);
    qsort(w->classes, w->n_classes, sizeof(*w->classes), wh_dra_class_cmp);
    qsort(w->slices, w->n_slices, sizeof(*w->slices), wh_dra_slice_cmp);
    w->node_ptrs = calloc(w->n_nodes + 1, sizeof(*w->node_ptrs));
    assert_non_null(w->node_ptrs);
    for (size_t i = 0; i < w->n_nodes; i++)
        w->node_ptrs[i] = &w->nodes[i];
    w->snap = (struct wh_snapshot){
        .gpus = &test_gpus,
        .nodes = w->node_ptrs,
        .n_nodes = w->n_nodes,
        .nodes_synced = true,
        .dra_gpus = &w->dra_gpus,
        .device_classes = w->classes,
        .n_device_classes = w->n_classes,
        .slices = w->slices,
        .n_slices = w->n_slices,
        .claims = w->claims,
        .n_claims = w->n_claims,
        .claim_templates = w->templates,
        .n_claim_templates = w->n_templates,
        .device_classes_synced = true,
        .slices_synced = true,
        .claims_synced = true,
        .claim_templates_synced = true,
    };
}

static void world_cleanup(struct world *w)
{
    pod_cleanup(&w->pod);
    for (size_t i = 0; i < w->n_nodes; i++)
        node_cleanup(&w->nodes[i]);
    for (size_t i = 0; i < w->n_claims; i++)
        dra_claim_cleanup(&w->claims[i]);
    for (size_t i = 0; i < w->n_templates; i++)
        dra_template_cleanup(&w->templates[i]);
    for (size_t i = 0; i < w->n_classes; i++)
        dra_class_cleanup(&w->classes[i]);
    for (size_t i = 0; i < w->n_slices; i++)
        dra_slice_cleanup(&w->slices[i]);
    free(w->nodes);
    free(w->node_ptrs);
    free(w->claims);
    free(w->templates);
    free(w->classes);
    free(w->slices);
    gpu_set_cleanup(&w->dra_gpus);
}

/* The pod's spec (template or claim, through status.resourceClaimStatuses for generated
 * claims) holding request `req` with an alternative of class `cls`; NULL when none or when two
 * differ (ambiguous: not compared). */
static const struct dra_exact *find_alt(const struct world *w, const char *req, const char *cls)
{
    const struct dra_exact *found = NULL;
    const char *ns = w->pod.ns ? w->pod.ns : "";
    for (size_t i = 0; i < w->pod.n_claims; i++) {
        const struct pod_claim_ref *ref = &w->pod.claims[i];
        const struct dra_claim_spec *spec = NULL;
        const char *cname = ref->claim_name;
        for (size_t k = 0; !cname && k < w->pod.n_claim_statuses; k++)
            if (w->pod.claim_statuses[k].name && ref->name &&
                strcmp(w->pod.claim_statuses[k].name, ref->name) == 0)
                cname = w->pod.claim_statuses[k].claim_name;
        const struct dra_claim *c = cname ? wh_snapshot_claim(&w->snap, ns, cname) : NULL;
        if (c)
            spec = &c->spec;
        else if (ref->template_name) {
            const struct dra_template *t =
                wh_snapshot_claim_template(&w->snap, ns, ref->template_name);
            spec = t ? &t->spec : NULL;
        }
        for (size_t r = 0; spec && r < spec->n_requests; r++) {
            const struct dra_request *q = &spec->requests[r];
            if (!q->name || strcmp(q->name, req) != 0)
                continue;
            size_t n = q->has_exactly ? 1 : q->n_first_available;
            for (size_t a = 0; a < n; a++) {
                const struct dra_exact *e = q->has_exactly ? &q->exactly : &q->first_available[a];
                if (!e->class_name || strcmp(e->class_name, cls) != 0)
                    continue;
                if (found && found != e)
                    return NULL;
                found = e;
            }
        }
    }
    return found;
}

static size_t compared;

static int run_fixture(const char *path)
{
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    struct world w;
    world_load(root, &w);
    struct dra_view view = wh_snapshot_dra_view(&w.snap);
    struct node_verdict *verdicts = calloc(w.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    struct classify_input in = {
        .pod = &w.pod, .nodes = w.node_ptrs, .n_nodes = w.n_nodes, .dra = &view};
    struct classify_result res;
    memset(&res, 0, sizeof(res));
    res.verdicts = verdicts;
    /* the node checks run on a pod not yet bound, as at admission */
    free(w.pod.node_name);
    w.pod.node_name = NULL;
    assert_int_equal(classify(&in, &res), K_OK);
    int failures = 0;
    for (size_t i = 0; i < res.n_verdicts; i++) {
        const struct node_verdict *v = &verdicts[i];
        if (!v->dra_request || !v->dra_class)
            continue;
        const struct dra_exact *e = find_alt(&w, v->dra_request, v->dra_class);
        const struct dra_class *cls = wh_snapshot_device_class(&w.snap, v->dra_class);
        if (!e || !cls)
            continue;
        struct dra_match_count mc;
        const struct knode *one[1] = {v->node};
        assert_int_equal(dra_count_matching(&view, e, cls, one, 1, &mc), K_OK);
        compared++;
        if (mc.most != v->dra_matching || mc.devices != v->dra_devices) {
            print_error(
                "%s: node %s request %s: classify %zu matching of %zu, webhook %zu of %zu\n", path,
                v->node->name, v->dra_request, v->dra_matching, v->dra_devices, mc.most,
                mc.devices);
            failures++;
        }
    }
    free(verdicts);
    world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_agreement(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/dra", FIXTURES_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        failures += run_fixture(path);
        free(names[i]);
    }
    assert_true(n > 10);
    assert_true(compared > 10); /* the comparison ran on real nodes */
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agreement),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
