/*
 * test_dra_agreement.c - one ladder for DRA: for every DRA classifier fixture
 * (tests/fixtures/dra, format in its README) the webhook's device count
 * (core/classify dra_count_matching over the webhook snapshot's lookups, webhook/snapshot.c)
 * equals what classify() reports as `dra_matching` for the deciding request on every candidate
 * node, when both read the same snapshot. Nothing is allocated in either (the webhook ignores
 * allocations; matching counts held devices too), and the pod's requests are found through
 * its own claims, as the ladder resolves them.
 */
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
#include "dra_world.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "snapshot.h"
#include "util/result.h"

/* A DRA fixture and the webhook snapshot over it. */
struct world {
    struct dra_world d;
    struct wh_snapshot snap;
};

static int cmp_node(const void *a, const void *b)
{
    return strcmp(((const struct knode *)a)->name, ((const struct knode *)b)->name);
}

static void world_load(json_object *root, const char *path, struct world *w)
{
    char err[256];
    if (dra_world_load(root, &test_gpus, &w->d, err, sizeof(err)) != 0)
        fail_msg("%s: %s", path, err);
    struct dra_world *d = &w->d;
    /* the snapshot's orders (snapshot.h), as the cache keeps them */
    qsort(d->nodes, d->n_nodes, sizeof(*d->nodes), cmp_node);
    qsort(d->claims, d->n_claims, sizeof(*d->claims), wh_dra_claim_cmp);
    qsort(d->templates, d->n_templates, sizeof(*d->templates), wh_dra_template_cmp);
    qsort(d->classes, d->n_classes, sizeof(*d->classes), wh_dra_class_cmp);
    qsort(d->slices, d->n_slices, sizeof(*d->slices), wh_dra_slice_cmp);
    dra_world_node_ptrs(d);
    w->snap = (struct wh_snapshot){
        .gpus = &test_gpus,
        .nodes = d->node_ptrs,
        .n_nodes = d->n_nodes,
        .nodes_synced = true,
        .dra_gpus = &d->dra_gpus,
        .device_classes = d->classes,
        .n_device_classes = d->n_classes,
        .slices = d->slices,
        .n_slices = d->n_slices,
        .claims = d->claims,
        .n_claims = d->n_claims,
        .claim_templates = d->templates,
        .n_claim_templates = d->n_templates,
        .device_classes_synced = true,
        .slices_synced = true,
        .claims_synced = true,
        .claim_templates_synced = true,
    };
}

/* The pod's spec (template or claim, through status.resourceClaimStatuses for generated
 * claims) holding request `req` with an alternative of class `cls`; NULL when none or when two
 * differ (ambiguous: not compared). */
static const struct dra_exact *find_alt(const struct world *w, const char *req, const char *cls)
{
    const struct dra_exact *found = NULL;
    const char *ns = w->d.pod.ns ? w->d.pod.ns : "";
    for (size_t i = 0; i < w->d.pod.n_claims; i++) {
        const struct pod_claim_ref *ref = &w->d.pod.claims[i];
        const struct dra_claim_spec *spec = NULL;
        const char *cname = ref->claim_name;
        for (size_t k = 0; !cname && k < w->d.pod.n_claim_statuses; k++)
            if (w->d.pod.claim_statuses[k].name && ref->name &&
                strcmp(w->d.pod.claim_statuses[k].name, ref->name) == 0)
                cname = w->d.pod.claim_statuses[k].claim_name;
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

static int run_fixture(const char *path, void *ctx)
{
    (void)ctx;
    json_object *root = json_object_from_file(path);
    assert_non_null(root);
    struct world w;
    world_load(root, path, &w);
    struct dra_view view = wh_snapshot_dra_view(&w.snap);
    struct node_verdict *verdicts = calloc(w.d.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    struct classify_input in = {
        .pod = &w.d.pod, .nodes = w.d.node_ptrs, .n_nodes = w.d.n_nodes, .dra = &view};
    struct classify_result res;
    memset(&res, 0, sizeof(res));
    res.verdicts = verdicts;
    /* the node checks run on a pod not yet bound, as at admission */
    free(w.d.pod.node_name);
    w.d.pod.node_name = NULL;
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
    dra_world_cleanup(&w.d);
    json_object_put(root);
    return failures;
}

static void test_agreement(void **state)
{
    (void)state;
    size_t n;
    int failures = test_fixtures_each(FIXTURES_DIR, "dra", run_fixture, NULL, &n);
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
