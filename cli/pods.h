/*
 * pods.h - `kubectl gputri pods`: the GPU pods that have not started, with why.
 *
 * A row is a GPU pod (a GPU resource, or claims) that has not Succeeded and has not started: not
 * terminal and not Running (pending pods, and pods placed on a node that has not started them
 * yet), rejected by its kubelet (Failed: store_is_rejected_gpu_pod), or bound with a GPU container
 * that has never started whatever its phase (a container that cannot start leaves its pod
 * Running: store_is_starting_gpu_pod). Its cause and detail come from
 * the controller's annotations (gputri/cause, gputri/detail) when present and still consistent
 * (an annotation other than "ok" on a pod that is now bound is stale), otherwise from classifying
 * the pod on the spot ("live") against a store filled by one LIST of nodes and the pods of the
 * nodes whose usage those pods' ladders read (cli/usage.h).
 *
 * Split for testing: pods_query_* works on JSON objects and a store (no I/O); pods_fetch() does
 * the LISTs; pods_render_*() format rows.
 */
#ifndef GPUTRI_CLI_PODS_H
#define GPUTRI_CLI_PODS_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cache/dra_store.h"
#include "cache/gang_store.h"
#include "cache/pod_events.h"
#include "cache/store.h"
#include "cache/workload_store.h"
#include "kube/client.h"
#include "model/gpu.h"
#include "printer.h"
#include "util/buf.h"

enum pod_row_source {
    POD_ROW_ANNOTATION, /* gputri/cause written by the controller */
    POD_ROW_LIVE,       /* classified by this command */
    POD_ROW_EVENTS,     /* no pod: an owner whose GPU pods a ResourceQuota refuses, read from
                           its FailedCreate Events (pods_fetch_owner_rows); name "<Kind>/<name>" */
    POD_ROW_NONE,       /* no usable annotation, and a live classification was forbidden
                           (pods_query.no_live): cause "-" */
};

struct pod_row {
    char *ns, *name;
    struct resource_list gpus; /* the pod's effective GPU requests, owned */
    char *cause;
    char *detail;
    char *node;  /* spec.nodeName or NULL */
    char *phase; /* "Pending", "Unknown", ... */
    enum pod_row_source source;
    /* since when it has been blocked, seconds since the epoch (0: unknown): the pod's
     * metadata.creationTimestamp; for POD_ROW_EVENTS the owner's newest refusal Event */
    int64_t since;
    json_object *labels; /* the pod's metadata.labels (a reference owned), NULL when none */
};

struct pod_rows {
    struct pod_row *items;
    size_t n, cap;
    /* pods of the LIST that could not be read (did not project, or passed a bound): no row, so
     * the rows are not the whole answer (pods_fetch) */
    size_t skipped;
    /* a LIST a live classification needs was refused (403): the resource the API server named
     * ("nodes"; "" when it named none) and the rows without a usable annotation are
     * POD_ROW_NONE; forbidden[0] is '\0' when nothing was refused */
    char forbidden[64];
    bool live_forbidden;
};

/* The query state: the store and the keys of the pods that will become rows. */
struct pods_query {
    struct store *store;  /* owned */
    const char *ns;       /* namespace filter (borrowed), NULL for all */
    char **keys;          /* "ns/name" of the candidate pods, owned */
    json_object **labels; /* per key: its pod's metadata.labels (a reference owned) or NULL */
    size_t n_keys, cap_keys;
    size_t n_unannotated; /* candidates that need live classification */
    int error;            /* first K_ENOMEM while observing, else K_OK */
    size_t skipped;       /* pods observed that did not project or passed a bound */
    size_t n_claim_pods;  /* candidates needing live classification that have
                             spec.resourceClaims (the DRA objects are read only for them) */
    size_t n_ext_pods;    /* the others asking extended resources a DeviceClass may serve
                             (KEP-5004: the DeviceClasses are read for them, the rest when
                             one serves an extended resource; usage.h usage_list_dra) */
    /* DRA objects for the live classification of pods with claims (pods_query_set_dra); NULL:
     * claims are not looked at */
    struct dra_store *dra;             /* owned */
    const struct gpu_set *dra_classes; /* borrowed; set with dra */
    /* classify_input.no_scheduler_grace of live classifications (seconds; 0: the default) */
    int64_t no_scheduler_grace;
    /* the autoscalers' Events for live classifications (owned; NULL: none) */
    struct pod_events *events;
    /* Kueue's Workloads of the namespace for live classifications (owned; NULL: none) */
    struct workload_store *workloads;
    /* the gangs of the candidates classified live (owned; NULL: none; pods_read_gangs) */
    struct gang_store *gangs;
    /* a live classification is forbidden (the user may not list nodes): rows without a usable
     * annotation are POD_ROW_NONE instead */
    bool no_live;
};

/* pods_query_init() - an empty query over `gpus` (borrowed). Returns K_OK or K_ENOMEM. */
int pods_query_init(struct pods_query *q, const struct gpu_set *gpus, const char *ns);

/*
 * pods_query_observe() - put a listed Pod (borrowed) into the store and remember it when it is a
 * candidate (in q->ns, a GPU pod that has not started: see the top). Objects that do not project
 * are skipped. Sets q->error on K_ENOMEM.
 */
void pods_query_observe(struct pods_query *q, json_object *pod);

/* pods_query_add_node() - a store-only upsert of a Node for live classification. */
void pods_query_add_node(struct pods_query *q, json_object *node);

/* pods_query_needs_live() - whether some candidate has no usable annotation. */
bool pods_query_needs_live(const struct pods_query *q);

/*
 * pods_query_set_dra() - classify pods with claims with the DRA objects of `dra` (ownership
 * taken); GPU claims are those of `dra_classes` (borrowed, must outlive q).
 */
void pods_query_set_dra(struct pods_query *q, struct dra_store *dra,
                        const struct gpu_set *dra_classes);

/*
 * pods_query_rows() - build the rows, sorted by namespace then name, classifying the pods
 * without a usable annotation against the store. Returns K_OK or K_ENOMEM; on K_OK free `out`
 * with pod_rows_cleanup().
 */
int pods_query_rows(struct pods_query *q, struct pod_rows *out);

void pods_query_cleanup(struct pods_query *q);

/*
 * pods_fetch() - the whole command's I/O: LIST the pods of `ns` (NULL: all namespaces) that are
 * neither Running nor Succeeded (fieldSelector on status.phase; Failed stays for the pods a
 * kubelet rejected); only when some candidate needs live classification, LIST the nodes, the
 * DRA objects when a candidate has claims, and the non-terminal pods of every namespace on the
 * nodes the live candidates' ladders read (usage_fetch()). Returns a K_* value, err filled on
 * API errors (K_EPARSE when nodes, pods on them or DRA objects a live row depends on could not be
 * read); on K_OK free `out` with pod_rows_cleanup(). On K_OK with out->skipped > 0 some listed
 * pods could not be read: the rows are the others, and err holds the line that says so
 * (informer_list_skipped).
 */
int pods_fetch(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, struct pod_rows *out,
               struct kube_error *err);

/* The apiVersion of pods_list()'s list and items (and of explain -o json|yaml). */
#define PODS_API_VERSION "gputri.io/v1alpha1"

/* What a `pods` LIST selects, beyond the namespace (kubectl's -l and --field-selector). */
struct pods_selectors {
    const char *label_selector; /* -l/--selector, passed as labelSelector; NULL: none */
    /* --field-selector, passed with status.phase!=Succeeded as fieldSelector; NULL: none */
    const char *field_selector;
    bool no_owner_rows; /* no rows for owners without pods (also implied by either selector) */
    /* out: the pod LIST's metadata.resourceVersion, for a watch */
    char resource_version[128];
};

/*
 * pods_path() - the collection path of the pods LIST (and WATCH) of `ns` (NULL: every
 * namespace) with fieldSelector status.phase!=Succeeded[,field_selector] and labelSelector,
 * percent-encoded, into out (outlen bytes). Returns K_OK, K_ETOOBIG (out too small), K_EINVAL.
 */
int pods_path(const char *ns, const struct pods_selectors *sel, char *out, size_t outlen);

/*
 * pods_fetch_sel() - pods_fetch() with the selectors of `sel` (may be NULL: none). With a label
 * or field selector, or no_owner_rows, no owner rows are added (an owner has no pod to select).
 * Fills sel->resource_version on K_OK.
 */
int pods_fetch_sel(struct kube_client *c, const struct gpu_set *gpus,
                   const struct gpu_set *dra_classes, int64_t no_scheduler_grace, const char *ns,
                   struct pods_selectors *sel, struct pod_rows *out, struct kube_error *err);

/*
 * pods_fetch_owner_rows() - append to `out` a row per ReplicaSet, StatefulSet or Job of `ns`
 * (NULL: all namespaces) whose GPU pods a ResourceQuota refuses now: LIST the Warning FailedCreate
 * Events (classify/quota.h quota_owner_event with `gpus` and `dra_classes`: a refusal naming a
 * GPU key), the newest per owner, then the pods of each namespace with such an owner (at most
 * 64 namespaces, at most 1024 owners) to drop an owner that has a pod created after its newest
 * refusal (quota_owner_current), and a GET of each remaining owner (at most 64;
 * core/triage/owner_alive.h) to drop one deleted since (a GET that fails keeps the row). Row: name
 * "<Kind>/<name>", phase "NoPod", cause quota-exceeded, source "events". Returns K_OK or the LIST's
 * error (err filled; K_EFORBIDDEN where the caller may not list Events or pods), K_ENOMEM; rows
 * added before an error stay in `out`.
 */
int pods_fetch_owner_rows(struct kube_client *c, const struct gpu_set *gpus,
                          const struct gpu_set *dra_classes, const char *ns, struct pod_rows *out,
                          struct kube_error *err);

/*
 * pods_list() - the rows as a versioned list for cli/printer.h: {"apiVersion":
 * "gputri.io/v1alpha1", "kind": "GPUPodList", "metadata": {}, "items": [...]}, each item
 * {"apiVersion": "gputri.io/v1alpha1", "kind": "GPUPod", "metadata": {"name", "namespace",
 * "creationTimestamp" (pods), "labels" (when any)}, "status": {"phase", "nodeName" (when bound),
 * "gpuRequests": {resource: count}, "cause", "detail", "source": annotation|live|events|none,
 * "blockedSince" (RFC 3339, when known), "ownerKind" (for a row with no pod: the ReplicaSet,
 * StatefulSet or Job a quota refuses; metadata.name is then the owner's)}}. Members without a
 * value are left out, as the API server leaves them out. On K_OK *out is new (json_object_put).
 * Returns K_OK or K_ENOMEM.
 */
int pods_list(const struct pod_rows *rows, json_object **out);

/* pods_item() - pods_list()'s item of one row; NULL on allocation failure. */
json_object *pods_item(const struct pod_row *r);

/*
 * pods_table - the `pods` columns: NAMESPACE (with -A), NAME ("Kind/name" for an owner without
 * pods), GPU (pods_format_requests), CAUSE, AGE (since status.blockedSince), and with -o wide
 * PHASE, NODE, SOURCE, DETAIL; -o name: pod/NAME, or replicaset.apps/, statefulset.apps/,
 * job.batch/ for owners.
 */
extern const struct printer_table pods_table;

/*
 * pods_format_requests() - "nvidia.com/gpu=2", entries joined by ',' in the list's order, "" for
 * an empty list. Returns K_OK, K_ENOMEM or K_ETOOBIG.
 */
int pods_format_requests(const struct resource_list *l, struct buf *out);

/* pod_phase_name() - "Pending", "Running", "Succeeded", "Failed" or "Unknown". */
const char *pod_phase_name(enum pod_phase p);

/* A row printed by pods_watch(): return K_OK to go on, another K_* value to stop with it. */
typedef int (*pods_row_fn)(void *ctx, const struct pod_row *row);

#define PODS_WATCH_TIMEOUT 300       /* seconds: the server ends each WATCH after this */
#define PODS_WATCH_MAX_TRACKED 65536 /* pods whose last cause is remembered */

/*
 * pods_watch() - after the rows `initial` (printed by the caller, from pods_fetch_sel with the
 * same `sel`, whose resource_version the watch starts from), WATCH the same collection and call
 * fn with a row each time a pod's cause changes, as `kubectl get -w` prints a row per change: a
 * pod that becomes a candidate, or whose cause changes (its row read again by one LIST of it by
 * name, classified live where it has no usable annotation, on a clone of `c`); a pod that
 * starts or stops being a GPU pod (cause from its annotation, else "ok"; detail "no longer
 * waiting: phase P"); a pod deleted or no longer selected (phase "Gone"). Each WATCH ends after
 * PODS_WATCH_TIMEOUT seconds and is made again from the last resourceVersion seen; on 410 Gone
 * the pods are listed again and the rows whose cause changed printed. At most
 * PODS_WATCH_MAX_TRACKED pods are remembered. Runs until `cancel` (may be NULL) becomes non-zero
 * (returns K_OK: set it from a SIGINT handler; the watch notices within a second), or an error
 * (K_* with err filled, or fn's value). Not thread-safe.
 */
int pods_watch(struct kube_client *c, const struct gpu_set *gpus, const struct gpu_set *dra_classes,
               int64_t no_scheduler_grace, const char *ns, const struct pods_selectors *sel,
               const struct pod_rows *initial, pods_row_fn fn, void *ctx, const atomic_int *cancel,
               struct kube_error *err);

/* pod_rows_cleanup() - free the rows. */
void pod_rows_cleanup(struct pod_rows *rows);

#endif
