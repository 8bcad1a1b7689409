/* rate_limit_metrics.c - the client-side rate limit's counters (see rate_limit_metrics.h). */
#include "rate_limit_metrics.h"

#include "kube/client.h"
#include "util/result.h"

int kube_rate_limit_metrics_render(uint64_t requests, uint64_t waited_ns, struct buf *out)
{
    return buf_printf(out,
                      "# HELP gputri_kube_client_rate_limiter_throttled_requests_total Requests to "
                      "the API server that waited for the client-side rate limit "
                      "(--kube-api-qps, --kube-api-burst).\n"
                      "# TYPE gputri_kube_client_rate_limiter_throttled_requests_total counter\n"
                      "gputri_kube_client_rate_limiter_throttled_requests_total %llu\n"
                      "# HELP gputri_kube_client_rate_limiter_wait_seconds_total Seconds requests "
                      "to the API server waited for the client-side rate limit.\n"
                      "# TYPE gputri_kube_client_rate_limiter_wait_seconds_total counter\n"
                      "gputri_kube_client_rate_limiter_wait_seconds_total %llu.%09llu\n",
                      (unsigned long long)requests, (unsigned long long)(waited_ns / 1000000000u),
                      (unsigned long long)(waited_ns % 1000000000u));
}

int kube_rate_limit_metrics_append(struct buf *out)
{
    uint64_t requests, waited_ns;
    kube_rate_limit_stats(&requests, &waited_ns);
    return kube_rate_limit_metrics_render(requests, waited_ns, out);
}
