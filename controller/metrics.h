/*
 * metrics.h - the controller's Prometheus metrics, rendered in the text exposition format
 * (version 0.0.4, https://prometheus.io/docs/instrumenting/exposition_formats/), named by
 * Prometheus' conventions (https://prometheus.io/docs/practices/naming/: base units, counters end
 * in _total, a histogram in _seconds).
 *
 * Counters and histograms live in struct metrics and are updated from any thread (atomics, one
 * mutex for the histograms and the labelled counters). Gauges that describe the cache (pending
 * GPU pods, workqueue depth) are not stored: the caller computes them at scrape time and passes a
 * struct metrics_gauges to metrics_render().
 *
 *   gputri_pending_gpu_pods{namespace,cause,resource}
 *                              gauge: pending GPU pods; cause "none" until one is written; pods
 *                              asking through ResourceClaims are counted under resource
 *                              METRICS_DRA_RESOURCE once annotated. At most METRICS_MAX_NAMESPACES
 *                              namespaces get their own series (those with the most pending GPU
 *                              pods, ties by name); the others are summed under
 *                              namespace="other" (METRICS_OTHER_NAMESPACE; a namespace of
 *                              that name shares its series)
 *   gputri_gpu_pod_pending_seconds{cause}
 *                              histogram: how long a GPU pod stayed pending (from its
 *                              creationTimestamp), observed once when it stops being pending
 *                              (bound, or deleted while pending), by the last blocking cause it
 *                              had ("none" when it never had one; "preempting" is not one), by
 *                              the replica that leads; a pod deleted while the pods watch was
 *                              down (swept by the relist) is not observed
 *   gputri_cause_transitions_total{from,to}
 *                              counter: gputri/cause values written (by the leader: only it
 *                              writes); from is the cause the pod carried before, or "none"
 *   gputri_classifications_total              counter
 *   gputri_patches_total                      counter: annotation patches that succeeded
 *   gputri_events_total                       counter: Events created or updated (aggregated)
 *   gputri_objects_too_large_total            counter: objects read (LIST items, watch events,
 *                                             GETs) and skipped as over the memory budget of one
 *                                             object (kube/read_budget.h); process-wide
 *   gputri_api_requests_total{code}           counter per HTTP status; "0" = transport error
 *   gputri_workqueue_depth                    gauge: keys ready to be processed
 *   gputri_workqueue_priority_depth{priority} gauge: the same by priority, "high" (a pod seen
 *                                             first or whose own object changed) or "low" (a
 *                                             re-check after other objects changed;
 *                                             core/cache/workqueue.h)
 *   gputri_workqueue_delayed_depth            gauge: keys waiting for a delay (coalesced
 *                                             re-checks, backoffs, grace timers)
 *   gputri_workqueue_latency_seconds          histogram: time a key waited before a worker
 *   gputri_workqueue_high_priority_seconds    histogram: time from a key's high-priority add
 *                                             until a worker finished it (how soon a new or
 *                                             changed pod is answered, whatever the backlog)
 *   gputri_watch_restarts_total{resource}     counter: watches that ended and were restarted
 *   gputri_leader                             gauge: 1 while this replica leads (or when leader
 *                                             election is off), else 0
 *   gputri_store_write_lock_wait_seconds_total
 *                              counter: time the informers waited for the object store's write
 *                              lock (cache/store.h store_lock_stats), in all
 *   gputri_store_write_locks_total            counter: times they took it
 *   gputri_store_unchanged_updates_total      counter: Pod and Node updates (and Pod deletions)
 *                                             that changed nothing the store keeps (heartbeats,
 *                                             status fields it does not read, pods it does not
 *                                             keep), found under the read lock alone
 *
 * Label values of resources are spelled as kube-state-metrics spells them in
 * kube_pod_container_resource_requests{resource} (kubernetes/kube-state-metrics:
 * internal/store/utils.go SanitizeLabelName, the regexp [^a-zA-Z0-9_] replaced by "_", applied
 * in internal/store/pod.go): "nvidia.com/gpu" is "nvidia_com_gpu", METRICS_DRA_RESOURCE
 * "resource_k8s_io_claims", so the two join on `resource`.
 *
 * /metrics carries the client-side rate limit's gputri_kube_client_rate_limiter_* counters
 * (kube/rate_limit_metrics.h) and the process_* families (util/process_metrics.h) after these
 * (probes.c appends them), as the webhook's does.
 *
 * Cardinality: causes are the fixed set of classify.h (plus "none"), resources the configured
 * GPU set (plus METRICS_DRA_RESOURCE), and namespaces are capped as above; the histogram and the
 * transition counter carry causes only.
 */
#ifndef GPUTRI_METRICS_H
#define GPUTRI_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"
#include "util/buf.h"

#define METRICS_MAX_RESOURCES 8     /* distinct watch_restarts resource labels kept */
#define METRICS_MAX_NAMESPACES 1000 /* namespaces with series of their own in the pending gauge */
#define METRICS_OTHER_NAMESPACE "other"

/* A cause argument that names no cause: the pod had none (rendered "none"). */
#define METRICS_NO_CAUSE (-1)

struct metrics;

/* The resource of pending pods that ask for GPUs through ResourceClaims (rendered
 * "resource_k8s_io_claims"). */
#define METRICS_DRA_RESOURCE "resource.k8s.io/claims"

/* Bytes that hold any resource name with its NUL: a resource name is a qualified name, a DNS
 * subdomain prefix of at most 253 bytes, "/", and a name of at most 63 (kubernetes/apimachinery:
 * pkg/util/validation/validation.go IsQualifiedName). The API server refuses longer ones. */
#define METRICS_RESOURCE_NAME_MAX (253 + 1 + 63 + 1)

/* One gputri_pending_gpu_pods sample before the namespace cap. Strings are borrowed; resource is
 * the Kubernetes name (metrics_render() spells it). */
struct metrics_pending {
    const char *cause;
    const char *ns;
    const char *resource;
    int64_t count;
};

/* ReplicaSet, StatefulSet, Job (classify/quota.h QUOTA_OWNER_KINDS) */
#define METRICS_QUOTA_OWNER_KINDS 3

struct metrics_gauges {
    const struct metrics_pending *pending;
    size_t n_pending;
    size_t queue_depth;
    int leader; /* 0 or 1 */
    /* the object store's counts since it was made (cache/store.h struct store_lock_stats) */
    uint64_t store_write_locks, store_write_wait_ns, store_unchanged;
    size_t queue_depth_high, queue_depth_low; /* queue_depth by priority */
    size_t queue_delayed;                     /* keys waiting for a delay */
    /* owners whose GPU pods a ResourceQuota refuses (quota_owners.h), by kind in the order of
     * classify/quota.h enum quota_owner_kind: gputri_quota_refused_owners{kind} */
    size_t quota_refused_owners[METRICS_QUOTA_OWNER_KINDS];
};

/* metrics_new() - all counters zero. NULL on allocation failure. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* Counter updates. Thread-safe. NULL-safe (a NULL struct metrics ignores them). */
void metrics_inc_classifications(struct metrics *m);
void metrics_inc_patches(struct metrics *m);
void metrics_inc_events(struct metrics *m);
/* metrics_api_request() - one API request ended with `http_status` (0: no response). */
void metrics_api_request(struct metrics *m, long http_status);
/* metrics_watch_restart() - a watch of `resource` ended; names beyond METRICS_MAX_RESOURCES
 * are counted under "other". */
void metrics_watch_restart(struct metrics *m, const char *resource);
/* metrics_queue_latency() - a key waited `ms` milliseconds in the workqueue. */
void metrics_queue_latency(struct metrics *m, int64_t ms);
/* metrics_high_priority_done() - a key finished `ms` milliseconds after its high-priority add. */
void metrics_high_priority_done(struct metrics *m, int64_t ms);
/*
 * metrics_pending_time() - a GPU pod stopped being pending after `ms` milliseconds (negative:
 * counted as 0, a clock skew); `cause` is the last blocking cause it had (enum cause), or
 * METRICS_NO_CAUSE. A value outside both is counted as METRICS_NO_CAUSE.
 */
void metrics_pending_time(struct metrics *m, int cause, int64_t ms);
/*
 * gputri_gpu_pod_pending_seconds' state per pod: the caller keeps one mark per pod between its
 * events (pod_ledger.h) and passes each event through metrics_pending_step(), which decides when
 * the pod is observed and by which cause.
 */
struct metrics_pending_mark {
    bool set;           /* the pod is a pending GPU pod */
    char uid[64];       /* the pod it speaks for */
    int64_t created_ms; /* its creationTimestamp, ms since the epoch; 0: unknown */
    int cause;          /* the last blocking cause it carried, or METRICS_NO_CAUSE */
};

/* What one event shows of a pod. */
struct metrics_pending_pod {
    bool pending;       /* a pending GPU pod now (false: placed, finished, deleted) */
    const char *uid;    /* borrowed; NULL as "" */
    int64_t created_ms; /* creationTimestamp, ms since the epoch; 0: unknown */
    int cause;          /* the cause it carries now (enum cause), or METRICS_NO_CAUSE */
};

/*
 * metrics_pending_step() - advance *mark by one event of its pod, `now`: a pod that was pending
 * and is not any more (or is another pod now, by uid) is observed once after wall_ms -
 * created_ms, by its last blocking cause ("preempting" is not one; "none" when it never had
 * one), when `observe` is set (the leader: every replica sees the same events, and counting
 * once keeps sums across replicas right); a pending pod's mark then holds its uid, creation
 * time and last blocking cause. A mark left unset may be forgotten. Thread-safe for different
 * marks.
 */
void metrics_pending_step(struct metrics *m, struct metrics_pending_mark *mark,
                          const struct metrics_pending_pod *now, int64_t wall_ms, bool observe);
/* metrics_cause_transition() - cause `to` was written over `from` (enum cause values, or
 * METRICS_NO_CAUSE for from; a `to` that is no cause, or equal to `from`, is ignored). */
void metrics_cause_transition(struct metrics *m, int from, int to);

/* Reads for tests and logs. Thread-safe. */
uint64_t metrics_patches(struct metrics *m);
uint64_t metrics_events(struct metrics *m);
/* metrics_transitions() - gputri_cause_transitions_total{from,to} (same arguments). */
uint64_t metrics_transitions(struct metrics *m, int from, int to);
/* metrics_pending_count() - gputri_gpu_pod_pending_seconds_count{cause}. */
uint64_t metrics_pending_count(struct metrics *m, int cause);

/*
 * metrics_label_name() - `in` with every character outside [a-zA-Z0-9_] replaced by "_", as
 * kube-state-metrics spells resource names in label values (above); a multi-byte UTF-8 character
 * becomes one "_" like Go's regexp sees one rune. Truncated to fit `len` (> 0) bytes with the
 * terminating NUL. Pure.
 */
void metrics_label_name(const char *in, char *out, size_t len);

/*
 * metrics_render() - append every metric family, with HELP and TYPE lines, to `out`. Label
 * values are escaped (backslash, double quote, newline). The pending samples are capped to
 * METRICS_MAX_NAMESPACES namespaces (above), summed per (namespace, cause, resource) and sorted
 * by cause, namespace and resource. Returns K_OK, K_ENOMEM, or the buf error. Thread-safe.
 */
int metrics_render(struct metrics *m, const struct metrics_gauges *g, struct buf *out);

#endif
