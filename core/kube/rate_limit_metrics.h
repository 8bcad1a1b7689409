/*
 * rate_limit_metrics.h - the client-side rate limit (kube/client.h kube_set_rate_limit) as
 * Prometheus counters, on the /metrics of both daemons:
 *
 *   gputri_kube_client_rate_limiter_throttled_requests_total  counter: requests to the API server
 *                                         that had to wait for the rate limit (--kube-api-qps,
 *                                         --kube-api-burst) before they were sent
 *   gputri_kube_client_rate_limiter_wait_seconds_total        counter: the seconds they were
 *                                         told to wait, summed (a wait cut short by shutdown
 *                                         counts whole)
 *
 * client-go measures the same wait as the histogram rest_client_rate_limiter_duration_seconds
 * (kubernetes/client-go: rest/request.go tryThrottle, tools/metrics/metrics.go RateLimiterLatency;
 * kubernetes/component-base: metrics/prometheus/restclient/metrics.go), observed for every request
 * including those that did not wait. gputri counts only the requests that waited, with no verb or
 * host label (one API server, one limit per process): rate(..._wait_seconds_total) is the share of
 * a second requests spent waiting, and above zero for long it means --kube-api-qps is too low for
 * the cluster's churn. Both stay 0 without a limit (a negative --kube-api-qps).
 */
#ifndef GPUTRI_KUBE_RATE_LIMIT_METRICS_H
#define GPUTRI_KUBE_RATE_LIMIT_METRICS_H

#include <stdint.h>

#include "util/buf.h"

/*
 * kube_rate_limit_metrics_render() - append both families, each with its HELP and TYPE lines, in
 * the text exposition format 0.0.4: `requests` throttled requests and `waited_ns` nanoseconds of
 * waiting (written in seconds). Returns K_OK or the buf error. Pure but for `out`.
 */
int kube_rate_limit_metrics_render(uint64_t requests, uint64_t waited_ns, struct buf *out);

/*
 * kube_rate_limit_metrics_append() - kube_rate_limit_metrics_render() of the process's
 * kube_rate_limit_stats(): what the daemons add to /metrics. Returns K_OK or the buf error.
 * Thread-safe.
 */
int kube_rate_limit_metrics_append(struct buf *out);

#endif
