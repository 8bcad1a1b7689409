/*
 * nodes.h - `kubectl gputri nodes` and `gputri nodes`: where the GPUs are, per node.
 *
 * One row per node and GPU resource (the --gpu-resources set) that the node lists in
 * status.capacity or status.allocatable:
 *   CAPACITY, ALLOCATABLE  status.capacity / status.allocatable of the resource;
 *   IN USE                 the requests of the node's non-terminal pods, as kube-scheduler counts
 *                          them (model/requests.h: init containers, sidecars, overhead; the
 *                          store's per-node sums, cache/store.h store_node_usage);
 *   FREE                   allocatable - in use, at least 0;
 *   UNHEALTHY              capacity - allocatable when above 0 (the device plugin withholds them);
 *   PODS, HOLDERS          the pods holding them (namespace/name and how many each holds);
 *   WHY                    what keeps a new GPU pod off these GPUs: cordoned (spec.unschedulable),
 *                          each NoSchedule / NoExecute taint except one whose key is the resource
 *                          itself (the taint GPU node pools carry, which the
 *                          ExtendedResourceToleration admission plugin tolerates for pods asking
 *                          the resource), named after the node condition the node lifecycle
 *                          controller derives it from (node.kubernetes.io/not-ready: "not ready",
 *                          ...; kubernetes/kubernetes: pkg/controller/nodelifecycle, taint-based
 *                          conditions: the scheduler reads the taint, not the condition); the
 *                          unhealthy count; a node an autoscaler is still adding and the GPU stack
 *                          states of the NVIDIA GPU Operator (classify/node_state.h).
 * and, where the API server serves resource.k8s.io, one row per node and GPU DeviceClass (the
 * --gpu-device-classes patterns, by class or driver name) with devices reaching the node:
 *   CAPACITY the devices the class selects (newest generation of each pool reaching the node; a
 *   cluster-wide slice counts on every node it reaches), IN USE those allocated (a claim holds
 *   them, or a shared device has no capacity left), TAINTED those with a NoSchedule / NoExecute
 *   device taint (ResourceSlice or DeviceTaintRule) a request without tolerations does not
 *   tolerate, ALLOCATABLE capacity - tainted, FREE neither allocated nor tainted; HOLDERS the pods
 *   the holding claims are reserved for (a claim reserved for none is named as claim ns/name).
 *   Both counts come from the ladder's own evaluation (classify.h dra_class_devices).
 * Rows are sorted free-first: FREE descending, then node, then resource rows before class rows,
 * then name.
 *
 * Split for testing: nodes_query_* works on JSON objects and stores (no I/O); nodes_fetch() does
 * the reads; nodes_render_*() format the rows.
 */
#ifndef GPUTRI_CLI_NODES_H
#define GPUTRI_CLI_NODES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/dra_store.h"
#include "cache/store.h"
#include "kube/client.h"
#include "model/gpu.h"
#include "util/buf.h"

/* The apiVersion and kind of the JSON list (nodes_rows_json). */
#define NODES_API_VERSION "gputri.io/v1alpha1"
#define NODES_LIST_KIND "GPUNodeList"
#define NODES_ITEM_KIND "GPUNode"

/* The prefix of a class row's resource in the table and in --resource. */
#define NODES_CLASS_PREFIX "deviceclass/"

/* Holders kept per row (the rest is counted in node_row.more_holders). */
#define NODES_MAX_HOLDERS 256
/* Reasons kept per row. */
#define NODES_MAX_WHY 16

enum node_row_type {
    NODE_ROW_RESOURCE,     /* an extended resource of status.capacity / allocatable */
    NODE_ROW_DEVICE_CLASS, /* a DRA DeviceClass's devices reaching the node */
};

struct node_holder {
    char *ns, *name; /* a pod, or with `claim` a ResourceClaim reserved for no pod */
    bool claim;
    int64_t count; /* units of the resource, or devices, it holds */
};

struct node_row {
    char *node;
    char *resource; /* the resource name, or the DeviceClass name */
    enum node_row_type type;
    char *driver; /* class rows: the driver the class selects, or NULL */
    int64_t capacity, allocatable, in_use, free, unhealthy, tainted;
    struct node_holder *holders; /* sorted by namespace, then name */
    size_t n_holders;
    size_t more_holders; /* holders past NODES_MAX_HOLDERS, not listed */
    size_t pods;         /* distinct pods among the holders (listed or not) */
    char *why[NODES_MAX_WHY];
    size_t n_why;
};

struct node_rows {
    struct node_row *items;
    size_t n, cap;
    /* a line for stderr when the rows are not the whole answer (DRA objects not readable), or
     * NULL; owned */
    char *note;
};

struct nodes_query {
    struct store *store; /* owned */
    /* the DRA objects (owned, freed by nodes_query_cleanup; NULL: no class rows) and the GPU
     * DeviceClass patterns (borrowed, must outlive q; set with dra) */
    struct dra_store *dra;
    const struct gpu_set *dra_classes;
    const char *resource; /* --resource (borrowed), or NULL for every resource */
    int error;            /* first K_ENOMEM while observing */
    size_t skipped;       /* objects that did not project */
};

/* nodes_query_init() - an empty query over `gpus` (borrowed). Returns K_OK or K_ENOMEM. */
int nodes_query_init(struct nodes_query *q, const struct gpu_set *gpus, const char *resource);

/* nodes_query_add_node() / nodes_query_add_pod() - a listed Node / Pod (borrowed) into the store;
 * objects that do not project are counted in q->skipped, K_ENOMEM is kept in q->error. */
void nodes_query_add_node(struct nodes_query *q, json_object *node);
void nodes_query_add_pod(struct nodes_query *q, json_object *pod);

/* nodes_query_rows() - the rows (see the top), sorted. Returns K_OK or K_ENOMEM; on K_OK free
 * `out` with node_rows_cleanup(). */
int nodes_query_rows(struct nodes_query *q, struct node_rows *out);

void nodes_query_cleanup(struct nodes_query *q);

/*
 * nodes_fetch() - the whole command's reads: one paged LIST of the nodes matching
 * `label_selector` (NULL: all; cli/usage.h usage_list_nodes_selected, protobuf), the non-terminal
 * pods (cli/usage.h usage_fetch: one paged LIST of every pod in protobuf, or, with a selector
 * naming at most USAGE_SEQUENTIAL_MAX nodes, one LIST per node), and, unless dra_classes is NULL,
 * the DRA objects when discovery says resource.k8s.io is served (DeviceClasses, and only when a
 * GPU class exists the ResourceSlices, ResourceClaims and DeviceTaintRules; a user who may not
 * list them gets the resource rows and out->note says so). Returns K_OK or a K_* error, err
 * filled; on K_OK free `out` with node_rows_cleanup().
 */
int nodes_fetch(struct kube_client *c, const struct gpu_set *gpus,
                const struct gpu_set *dra_classes, const char *label_selector, const char *resource,
                struct node_rows *out, struct kube_error *err);

/*
 * nodes_render_table() - the kubectl-style table (cli/table.h): NODE RESOURCE CAPACITY
 * ALLOCATABLE IN USE FREE PODS WHY, or with `wide` NODE RESOURCE CAPACITY ALLOCATABLE IN USE FREE
 * UNHEALTHY TAINTED PODS HOLDERS WHY; a class row's RESOURCE is NODES_CLASS_PREFIX "<class>", an
 * empty WHY or HOLDERS "<none>", HOLDERS "ns/name=N" joined by ',' (a claim "claim:ns/name=N";
 * ",+N more" past what was kept). Nothing at all for zero rows.
 */
int nodes_render_table(const struct node_rows *rows, bool wide, struct buf *out);

/*
 * nodes_rows_json() - {"apiVersion": NODES_API_VERSION, "kind": NODES_LIST_KIND, "metadata": {},
 * "items": [{"apiVersion", "kind": NODES_ITEM_KIND, "metadata": {"name": <node>}, "node",
 * "resource", "type" ("resource" | "deviceClass"), "driver" (class rows, else null), "capacity",
 * "allocatable", "inUse", "free", "unhealthy", "tainted", "pods", "holders": [{"namespace",
 * "name", "kind" ("Pod" | "ResourceClaim"), "count"}], "moreHolders", "why": [strings]}]}, rows
 * in their order: the shape of a Kubernetes list, as cli/printer.h prints it. A new object the
 * caller puts, or NULL on ENOMEM.
 */
json_object *nodes_rows_json(const struct node_rows *rows);

/* node_rows_cleanup() - free the rows. */
void node_rows_cleanup(struct node_rows *rows);

#endif
