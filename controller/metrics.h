/*
 * metrics.h - the controller's Prometheus metrics, rendered in the text exposition format
 * (version 0.0.4, https://prometheus.io/docs/instrumenting/exposition_formats/).
 *
 * Counters and the latency histogram live in struct metrics and are updated from any thread
 * (atomics, one mutex for the histogram). Gauges that describe the cache (pending GPU pods,
 * workqueue depth) are not stored: the caller computes them at scrape time and passes a
 * struct metrics_gauges to metrics_render().
 *
 *   gputri_pending_gpu_pods{cause,resource}   gauge; cause "none" until one is written; pods
 *                                             asking through ResourceClaims are counted under
 *                                             resource METRICS_DRA_RESOURCE once annotated
 *   gputri_classifications_total              counter
 *   gputri_patches_total                      counter: annotation patches that succeeded
 *   gputri_events_total                       counter: Events created or updated (aggregated)
 *   gputri_api_requests_total{code}           counter per HTTP status; "0" = transport error
 *   gputri_workqueue_depth                    gauge: keys ready to be processed
 *   gputri_workqueue_latency_seconds          histogram: time a key waited before a worker
 *   gputri_watch_restarts_total{resource}     counter: watches that ended and were restarted
 *   gputri_leader                             gauge: 1 while this replica leads (or when leader
 *                                             election is off), else 0
 */
#ifndef GPUTRI_METRICS_H
#define GPUTRI_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define METRICS_MAX_RESOURCES 8 /* distinct watch_restarts resource labels kept */

struct metrics;

/* The resource label of pending pods that ask for GPUs through ResourceClaims. */
#define METRICS_DRA_RESOURCE "resource.k8s.io/claims"

/* One gputri_pending_gpu_pods sample. Strings are borrowed. */
struct metrics_pending {
    const char *cause;
    const char *resource;
    int64_t count;
};

struct metrics_gauges {
    const struct metrics_pending *pending;
    size_t n_pending;
    size_t queue_depth;
    int leader; /* 0 or 1 */
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

/* Reads for tests and logs. Thread-safe. */
uint64_t metrics_patches(struct metrics *m);
uint64_t metrics_events(struct metrics *m);

/*
 * metrics_render() - append every metric family, with HELP and TYPE lines, to `out`. Label
 * values are escaped (backslash, double quote, newline). Returns K_OK, or the buf error.
 * Thread-safe.
 */
int metrics_render(struct metrics *m, const struct metrics_gauges *g, struct buf *out);

#endif
