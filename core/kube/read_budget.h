/*
 * read_budget.h - the memory budget of every Kubernetes object the clients read as JSON (a LIST
 * item, a watch event, a GET), priced before any tree is built (json/scan.h, json/tree.h).
 *
 * Why: json-c allocates about 800 bytes per empty object, so a 1.1 MB pod with 375,000 empty
 * imagePullSecrets entries is some 300 MB of tree. A user who may only create objects in one
 * namespace could then keep the controller and the webhook out of memory for the whole cluster.
 *
 * What is read: one schema for every kind the clients project (Pod, Node, the DRA kinds; core/kube
 * project.c, project_dra.c). Three members no projection reads are priced on their own and read
 * as null whatever their size: metadata.managedFields, spec.imagePullSecrets and spec.volumes
 * (the regions; for a watch event, the same members of "object"). Inside containers[],
 * initContainers[] and ephemeralContainers[], env, envFrom, volumeMounts, volumeDevices, ports,
 * args, command, the probes and lifecycle are cut before the tree is built. Everything else is
 * kept, so a projection reads the same values as from the whole text (tests/unit/core/kube/
 * test_read_budget.c projects every fixture both ways).
 *
 * Bound per item: the rest of the text (region 0, cut members included) may cost at most
 * KUBE_READ_MAX_COST estimated bytes of tree (scan.h's cost model, an upper estimate); above it
 * the item is not built (K_ETOOBIG). One item then holds at most its text twice (the reader's
 * buffer, KUBE_MAX_LIST_ITEM or KUBE_MAX_WATCH_EVENT bytes, and the copy the tree is built from)
 * plus KUBE_READ_MAX_COST of tree: 48 MiB at most, a few times the text in practice.
 * Bound per process: that, once per thread reading at the same time (one per informer: the
 * controller's pods, nodes and DRA informers; the webhook's), and the memory is handed back to
 * the system after an item above KUBE_READ_TRIM_BYTES of text (malloc_trim).
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef GPUTRI_KUBE_READ_BUDGET_H
#define GPUTRI_KUBE_READ_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "json/tree.h"

/* The most estimated bytes of tree one object may cost outside the regions above: 16 MiB (a
 * pod of 4,000 containers with resources, or 1 MB of labels and annotations, fits easily). */
#define KUBE_READ_MAX_COST (16u << 20)
/* After an item with more text than this, memory is handed back to the system. */
#define KUBE_READ_TRIM_BYTES (1u << 20)
/* Nesting of objects and arrays in one item or event. */
#define KUBE_READ_MAX_DEPTH 128

/* What the text is: one object (a LIST item, a GET), or a watch event {"type", "object"};
 * KUBE_READ_OBJECT_MANAGED_FIELDS is one object whose metadata.managedFields is kept (within
 * the same budget), for the one reader of when a field manager wrote (cli/answer.h). */
enum kube_read_shape { KUBE_READ_OBJECT, KUBE_READ_EVENT, KUBE_READ_OBJECT_MANAGED_FIELDS };

/*
 * kube_read_parse() - the tree of text[0, len) under the schema and budget above, into *t (see
 * json_tree_parse for *t; call json_tree_free() in every case). The text must be a JSON object.
 * The tree's keys are its own (json-c's tokener builds it), so parts of it may be kept past
 * json_tree_free() with json_object_get. Returns K_OK; K_EPARSE (not strict JSON, not an object,
 * nested deeper than KUBE_READ_MAX_DEPTH, "metadata", "spec" or a region member twice in one
 * object); K_ETOOBIG (over budget: t->cost[0] says by how much; counted, see below); K_ENOMEM.
 * err (errlen bytes) says why.
 */
int kube_read_parse(struct json_tree *t, enum kube_read_shape shape, const char *text, size_t len,
                    char *err, size_t errlen);

/* The most estimated bytes of tree of one small value read outside the schema above (a LIST
 * response's own metadata or other top-level members, an exec plugin's ExecCredential): 4 MiB,
 * a few times the largest such text (1 MiB) and far below what 1 MiB of "[{},{},...]" would
 * cost whole (some 280 MiB). */
#define KUBE_READ_MAX_VALUE_COST (4u << 20)

/*
 * kube_read_parse_value() - the tree of any JSON value text[0, len) (a scalar too; JSON null is
 * t->root == NULL), nothing cut, refused when its tree would cost more than
 * KUBE_READ_MAX_VALUE_COST estimated bytes or nest deeper than KUBE_READ_MAX_DEPTH. For the small
 * values the clients read outside an object's schema. Returns K_OK, K_EPARSE (not strict JSON),
 * K_ETOOBIG, K_ENOMEM; err (errlen bytes) says why. Call json_tree_free() in every case. The keys
 * are json-c's own (as kube_read_parse).
 */
int kube_read_parse_value(struct json_tree *t, const char *text, size_t len, char *err,
                          size_t errlen);

/*
 * kube_read_over_budget() - note an object of `len` bytes that was not built (K_ETOOBIG from
 * kube_read_parse; `cost` its tree's estimate outside the regions, t->cost[0]): counted, and logged
 * as a warning with `what` (e.g. "LIST /api/v1/pods item") at most once a minute per process (the
 * count of the others since is in the next line).
 */
void kube_read_over_budget(const char *what, uint64_t cost, size_t len);

/*
 * kube_read_too_deep() - note an object of `len` bytes that was not built because it nests
 * deeper than KUBE_READ_MAX_DEPTH (valid JSON, as a CustomResource that keeps unknown fields may
 * hold): counted with the over-budget ones (one object must not stop a LIST or a watch for every
 * other), and logged with `what` under the same once-a-minute limit.
 */
void kube_read_too_deep(const char *what, size_t len);

/* kube_read_over_budget_total() - objects not built for their size or depth since the process
 * started. */
uint64_t kube_read_over_budget_total(void);

/* kube_read_trim() - hand memory back to the system when a read of `len` bytes was large. */
void kube_read_trim(size_t len);

#endif
