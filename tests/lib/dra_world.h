/*
 * dra_world.h - the DRA classifier fixtures of tests/fixtures/dra (format in its README), shared
 * by the tests that run them (tests/unit/core/classify/test_dra_ladder.c,
 * tests/unit/core/cache/test_dra_store.c, tests/unit/cli/).
 *
 * A fixture holds real API objects: {"pod": Pod, "nodes": [Node...], "pods": [Pod...],
 * "resourceclaims": [...], "resourceclaimtemplates": [...], "deviceclasses": [...],
 * "resourceslices": [...], "devicetaintrules": [...], "expect": {...}}; every list may be absent.
 */
#ifndef GPUTRI_TEST_DRA_WORLD_H
#define GPUTRI_TEST_DRA_WORLD_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dra.h"
#include "model/gpu.h"
#include "model/model.h"

/* One fixture's objects, projected with core/kube/project.h, in fixture order. */
struct dra_world {
    struct kpod pod; /* the pod classified */
    struct knode *nodes;
    const struct knode **node_ptrs; /* &nodes[i], for classify_input.nodes */
    size_t n_nodes;
    struct kpod *pods; /* the other pods (node usage) */
    size_t n_pods;
    struct dra_claim *claims;
    size_t n_claims;
    struct dra_template *templates;
    size_t n_templates;
    struct dra_class *classes;
    size_t n_classes;
    struct dra_slice *slices;
    size_t n_slices;
    struct dra_taint_rule *rules; /* "devicetaintrules" */
    size_t n_rules;
    struct gpu_set dra_gpus; /* DRA_GPU_SET_DEFAULT */
};

/*
 * dra_world_load() - project every object of `root` with `gpus` as the GPU resource set. Returns
 * 0, or -1 with a message in err (w is then cleaned up). Each list holds one spare zeroed entry,
 * so an empty list is not NULL.
 */
int dra_world_load(json_object *root, const struct gpu_set *gpus, struct dra_world *w, char *err,
                   size_t errlen);

/* dra_world_node_ptrs() - fill w->node_ptrs from w->nodes (again after nodes were sorted). */
void dra_world_node_ptrs(struct dra_world *w);

void dra_world_cleanup(struct dra_world *w);

struct dra_store;

/* dra_world_taint_rules() - classify.h dra_view.device_taint_rules over w->rules (ctx = w). */
size_t dra_world_taint_rules(void *ctx, const char *driver, const char *pool, const char *device,
                             const struct dra_taint_rule **buf, size_t cap);

/*
 * dra_world_apply() - put root's DRA objects ("resourceclaims", "resourceclaimtemplates",
 * "deviceclasses", "resourceslices", "devicetaintrules", the order of enum dra_kind) into `ds` with
 * core/cache/dra_store.h dra_store_apply_json(), every one tried. Returns K_OK, or the first
 * error.
 */
int dra_world_apply(struct dra_store *ds, json_object *root);

#endif
