/*
 * snapshot_fixture.h - the webhook's snapshot (webhook/snapshot.h) built from the "snapshot"
 * member of a fixture (the JSON files of tests/fixtures/admission: arrays "nodes",
 * "runtimeClasses", "resourceQuotas", "namespaces", "deviceClasses", "resourceSlices",
 * "resourceClaims", "resourceClaimTemplates", and "assumeExtendedResourceToleration"), for the
 * benchmarks. The webhook itself fills its snapshot from informers (webhook/cache.c); this reads a
 * file.
 *
 * Each list is projected with the webhook's and core's projections and sorted as
 * webhook/snapshot.h requires; the DRA objects go into a core DRA store (core/cache/dra_store.h),
 * read-locked from snapshot_fixture_build() to snapshot_fixture_cleanup() as a review holds it.
 * The node, runtime class, quota and namespace lists count as synced always, a DRA kind when the
 * fixture has its key. Not thread-safe while building; the snapshot is read-only afterwards.
 */
#ifndef GPUTRI_BENCH_SNAPSHOT_FIXTURE_H
#define GPUTRI_BENCH_SNAPSHOT_FIXTURE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/gpu.h"
#include "snapshot.h"

/* The lists of a snapshot_fixture, in the order of snapshot_fixture.c's table. */
enum snapshot_fixture_list {
    SF_NODES,
    SF_RUNTIME_CLASSES,
    SF_QUOTAS,
    SF_NAMESPACES,
    SF_LISTS,
};

struct snapshot_fixture {
    struct wh_snapshot snap; /* points into the arrays below */
    void *items[SF_LISTS];   /* owned arrays of projected objects */
    size_t n[SF_LISTS];
    const struct knode **node_ptrs;
    struct gpu_set dra_gpus; /* DRA_GPU_SET_DEFAULT */
    struct dra_store *dra;   /* owned */
    bool dra_locked;
};

/*
 * snapshot_fixture_build() - project `snapshot` (borrowed) with GPU set `gpus` (borrowed; must
 * outlive the snapshot) into *f. Returns K_OK, or the first projection's error (K_EPARSE,
 * K_ENOMEM, ...); *f must be cleaned up either way.
 */
int snapshot_fixture_build(struct snapshot_fixture *f, json_object *snapshot,
                           const struct gpu_set *gpus);

/* snapshot_fixture_cleanup() - free everything *f owns; it is zeroed. */
void snapshot_fixture_cleanup(struct snapshot_fixture *f);

#endif
