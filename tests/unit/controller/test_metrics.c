/* Tests for controller/metrics.c (the Prometheus text, compared literally). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"
#include "text.h"
#include "util/result.h"

static const char expected_empty[] =
    "# HELP gputri_pending_gpu_pods Pending pods requesting a GPU, by namespace, the cause gputri "
    "found and the resource (spelled as kube-state-metrics does).\n"
    "# TYPE gputri_pending_gpu_pods gauge\n"
    "# HELP gputri_gpu_pod_pending_seconds How long GPU pods stayed pending, observed when one was "
    "bound or deleted, by the last blocking cause it had (none: never blocked).\n"
    "# TYPE gputri_gpu_pod_pending_seconds histogram\n"
    "# HELP gputri_cause_transitions_total gputri/cause values written, by the cause the pod "
    "carried before (none: no cause) and the cause written.\n"
    "# TYPE gputri_cause_transitions_total counter\n"
    "# HELP gputri_classifications_total Pods classified.\n"
    "# TYPE gputri_classifications_total counter\n"
    "gputri_classifications_total 0\n"
    "# HELP gputri_patches_total gputri/cause annotation patches written.\n"
    "# TYPE gputri_patches_total counter\n"
    "gputri_patches_total 0\n"
    "# HELP gputri_events_total Events created or updated (aggregated).\n"
    "# TYPE gputri_events_total counter\n"
    "gputri_events_total 0\n"
    "# HELP gputri_objects_too_large_total Objects read from the API server and skipped: their "
    "JSON tree would be over the memory budget of one object.\n"
    "# TYPE gputri_objects_too_large_total counter\n"
    "gputri_objects_too_large_total 0\n"
    "# HELP gputri_api_requests_total Kubernetes API requests by HTTP status; code 0 is a "
    "transport error.\n"
    "# TYPE gputri_api_requests_total counter\n"
    "# HELP gputri_workqueue_depth Keys ready to be processed.\n"
    "# TYPE gputri_workqueue_depth gauge\n"
    "gputri_workqueue_depth 0\n"
    "# HELP gputri_workqueue_priority_depth Keys ready to be processed, by priority: high (a "
    "pod seen first or whose own object changed), low (re-checked after other objects "
    "changed).\n"
    "# TYPE gputri_workqueue_priority_depth gauge\n"
    "gputri_workqueue_priority_depth{priority=\"high\"} 0\n"
    "gputri_workqueue_priority_depth{priority=\"low\"} 0\n"
    "# HELP gputri_workqueue_delayed_depth Keys waiting for a delay: coalesced re-checks, "
    "backoffs and grace timers.\n"
    "# TYPE gputri_workqueue_delayed_depth gauge\n"
    "gputri_workqueue_delayed_depth 0\n"
    "# HELP gputri_workqueue_latency_seconds How long a key waited in the workqueue before a "
    "worker took it.\n"
    "# TYPE gputri_workqueue_latency_seconds histogram\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.001\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.005\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.01\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.05\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.1\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"0.5\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"1\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"5\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"10\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"60\"} 0\n"
    "gputri_workqueue_latency_seconds_bucket{le=\"+Inf\"} 0\n"
    "gputri_workqueue_latency_seconds_sum 0.000\n"
    "gputri_workqueue_latency_seconds_count 0\n"
    "# HELP gputri_workqueue_high_priority_seconds Time from a key's high-priority add (a pod "
    "seen first or whose own object changed) until a worker finished it.\n"
    "# TYPE gputri_workqueue_high_priority_seconds histogram\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.001\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.005\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.01\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.05\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.1\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"0.5\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"1\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"5\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"10\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"60\"} 0\n"
    "gputri_workqueue_high_priority_seconds_bucket{le=\"+Inf\"} 0\n"
    "gputri_workqueue_high_priority_seconds_sum 0.000\n"
    "gputri_workqueue_high_priority_seconds_count 0\n"
    "# HELP gputri_watch_restarts_total Watches that ended (server timeout, error or expiry) and "
    "were restarted.\n"
    "# TYPE gputri_watch_restarts_total counter\n"
    "# HELP gputri_leader 1 while this replica is the leader (or leader election is off), else "
    "0.\n"
    "# TYPE gputri_leader gauge\n"
    "gputri_leader 0\n"
    "# HELP gputri_quota_refused_owners ReplicaSets, StatefulSets and Jobs whose GPU pods a "
    "ResourceQuota refuses (FailedCreate), by kind.\n"
    "# TYPE gputri_quota_refused_owners gauge\n"
    "gputri_quota_refused_owners{kind=\"ReplicaSet\"} 0\n"
    "gputri_quota_refused_owners{kind=\"StatefulSet\"} 0\n"
    "gputri_quota_refused_owners{kind=\"Job\"} 0\n"
    "# HELP gputri_store_write_lock_wait_seconds_total Time the informers waited for the object "
    "store's write lock.\n"
    "# TYPE gputri_store_write_lock_wait_seconds_total counter\n"
    "gputri_store_write_lock_wait_seconds_total 0.000000\n"
    "# HELP gputri_store_write_locks_total Times the informers took the object store's write "
    "lock.\n"
    "# TYPE gputri_store_write_locks_total counter\n"
    "gputri_store_write_locks_total 0\n"
    "# HELP gputri_store_unchanged_updates_total Pod and Node updates that changed nothing the "
    "store keeps, found under its read lock without taking the write lock.\n"
    "# TYPE gputri_store_unchanged_updates_total counter\n"
    "gputri_store_unchanged_updates_total 0\n";

static void test_empty(void **state)
{
    (void)state;
    struct metrics *m = metrics_new();
    struct metrics_gauges g = {0};
    struct buf out;
    buf_init(&out, 1 << 20);
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    assert_string_equal(buf_cstr(&out), expected_empty);
    buf_cleanup(&out);
    metrics_free(m);
}

static void test_values(void **state)
{
    (void)state;
    struct metrics *m = metrics_new();
    metrics_inc_classifications(m);
    metrics_inc_classifications(m);
    metrics_inc_patches(m);
    metrics_inc_events(m);
    metrics_api_request(m, 200);
    metrics_api_request(m, 200);
    metrics_api_request(m, 409);
    metrics_api_request(m, 0);
    metrics_api_request(m, 999); /* nonsense status: counted as no response */
    metrics_watch_restart(m, "pods");
    metrics_watch_restart(m, "pods");
    metrics_watch_restart(m, "nodes");
    metrics_queue_latency(m, 0);
    metrics_queue_latency(m, 7);
    metrics_queue_latency(m, 2000);
    metrics_queue_latency(m, 120000);
    metrics_high_priority_done(m, 3);
    metrics_high_priority_done(m, 700);
    metrics_inc_patches(NULL); /* NULL-safe */

    struct metrics_pending p[] = {
        {"none", "ml", "amd.com/gpu", 1},
        {"exhausted", "ml", "nvidia.com/gpu", 2},
        {"we\"ird\\\n", "a", "x", 1},
        {"exhausted", "ml", "resource.k8s.io/claims", 1},
        {"exhausted", "ml", "nvidia.com/gpu", 1}, /* summed with the second */
        {"exhausted", "batch", "nvidia.com/gpu", 1},
    };
    struct metrics_gauges g = {.pending = p,
                               .n_pending = 6,
                               .queue_depth = 5,
                               .leader = 1,
                               .store_write_locks = 40,
                               .store_write_wait_ns = 1500000001,
                               .store_unchanged = 7,
                               .queue_depth_high = 3,
                               .queue_depth_low = 2,
                               .queue_delayed = 4};
    struct buf out;
    char got[4096];
    buf_init(&out, 1 << 20);
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    const char *text = buf_cstr(&out);

    test_lines_with(text, "gputri_pending_gpu_pods{", got, sizeof(got));
    assert_string_equal(
        got,
        "gputri_pending_gpu_pods{namespace=\"batch\",cause=\"exhausted\",resource=\"nvidia_com_"
        "gpu\"} 1\n"
        "gputri_pending_gpu_pods{namespace=\"ml\",cause=\"exhausted\",resource=\"nvidia_com_gpu\"} "
        "3\n"
        "gputri_pending_gpu_pods{namespace=\"ml\",cause=\"exhausted\",resource=\"resource_k8s_io_"
        "claims\"} 1\n"
        "gputri_pending_gpu_pods{namespace=\"ml\",cause=\"none\",resource=\"amd_com_gpu\"} 1\n"
        "gputri_pending_gpu_pods{namespace=\"a\",cause=\"we\\\"ird\\\\\\n\",resource=\"x\"} 1\n");
    test_lines_with(text, "gputri_api_requests_total{", got, sizeof(got));
    assert_string_equal(got, "gputri_api_requests_total{code=\"0\"} 2\n"
                             "gputri_api_requests_total{code=\"200\"} 2\n"
                             "gputri_api_requests_total{code=\"409\"} 1\n");
    test_lines_with(text, "gputri_store_", got, sizeof(got));
    assert_string_equal(got, "gputri_store_write_lock_wait_seconds_total 1.500000\n"
                             "gputri_store_write_locks_total 40\n"
                             "gputri_store_unchanged_updates_total 7\n");
    test_lines_with(text, "gputri_watch_restarts_total{", got, sizeof(got));
    assert_string_equal(got, "gputri_watch_restarts_total{resource=\"pods\"} 2\n"
                             "gputri_watch_restarts_total{resource=\"nodes\"} 1\n");
    test_lines_with(text, "gputri_workqueue_latency_seconds", got, sizeof(got));
    assert_string_equal(got, "gputri_workqueue_latency_seconds_bucket{le=\"0.001\"} 1\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"0.005\"} 1\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"0.01\"} 2\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"0.05\"} 2\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"0.1\"} 2\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"0.5\"} 2\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"1\"} 2\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"5\"} 3\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"10\"} 3\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"60\"} 3\n"
                             "gputri_workqueue_latency_seconds_bucket{le=\"+Inf\"} 4\n"
                             "gputri_workqueue_latency_seconds_sum 122.007\n"
                             "gputri_workqueue_latency_seconds_count 4\n");
    test_lines_with(text, "gputri_classifications_total ", got, sizeof(got));
    assert_string_equal(got, "gputri_classifications_total 2\n");
    test_lines_with(text, "gputri_workqueue_depth ", got, sizeof(got));
    assert_string_equal(got, "gputri_workqueue_depth 5\n");
    test_lines_with(text, "gputri_workqueue_priority_depth{", got, sizeof(got));
    assert_string_equal(got, "gputri_workqueue_priority_depth{priority=\"high\"} 3\n"
                             "gputri_workqueue_priority_depth{priority=\"low\"} 2\n");
    test_lines_with(text, "gputri_workqueue_delayed_depth ", got, sizeof(got));
    assert_string_equal(got, "gputri_workqueue_delayed_depth 4\n");
    test_lines_with(text, "gputri_workqueue_high_priority_seconds_", got, sizeof(got));
    assert_string_equal(got, "gputri_workqueue_high_priority_seconds_bucket{le=\"0.001\"} 0\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"0.005\"} 1\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"0.01\"} 1\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"0.05\"} 1\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"0.1\"} 1\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"0.5\"} 1\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"1\"} 2\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"5\"} 2\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"10\"} 2\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"60\"} 2\n"
                             "gputri_workqueue_high_priority_seconds_bucket{le=\"+Inf\"} 2\n"
                             "gputri_workqueue_high_priority_seconds_sum 0.703\n"
                             "gputri_workqueue_high_priority_seconds_count 2\n");
    test_lines_with(text, "gputri_leader ", got, sizeof(got));
    assert_string_equal(got, "gputri_leader 1\n");
    assert_int_equal(metrics_patches(m), 1);
    assert_int_equal(metrics_events(m), 1);
    buf_cleanup(&out);
    metrics_free(m);
}

/* Resource names as kube-state-metrics spells them: [^a-zA-Z0-9_] -> "_". */
static void test_label_name(void **state)
{
    (void)state;
    char out[32];
    metrics_label_name("nvidia.com/gpu", out, sizeof(out));
    assert_string_equal(out, "nvidia_com_gpu");
    metrics_label_name("nvidia.com/mig-1g.5gb", out, sizeof(out));
    assert_string_equal(out, "nvidia_com_mig_1g_5gb");
    metrics_label_name(METRICS_DRA_RESOURCE, out, sizeof(out));
    assert_string_equal(out, "resource_k8s_io_claims");
    metrics_label_name("gpu.intel.com/i915", out, sizeof(out));
    assert_string_equal(out, "gpu_intel_com_i915");
    metrics_label_name("a\xc3\xa9z", out, sizeof(out)); /* one rune, one "_" */
    assert_string_equal(out, "a_z");
    metrics_label_name("0123456789abcdef", out, 8); /* truncated */
    assert_string_equal(out, "0123456");
    metrics_label_name("", out, sizeof(out));
    assert_string_equal(out, "");
}

/* Count the lines of `text` that start with `prefix`. */
static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, plen = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, plen) == 0)
            n++;
    return n;
}

/*
 * More than METRICS_MAX_NAMESPACES namespaces: the ones with the most pending pods keep their
 * series, the others are summed under namespace="other".
 */
static void test_namespace_cap(void **state)
{
    (void)state;
    enum { N = METRICS_MAX_NAMESPACES + 3 };
    static char names[N][16];
    static struct metrics_pending p[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "ns-%04d", i);
        /* ns-0000 .. ns-0002 have 1 pod, the others 2: the first three are folded */
        p[i] = (struct metrics_pending){"exhausted", names[i], "nvidia.com/gpu", i < 3 ? 1 : 2};
    }
    struct metrics *m = metrics_new();
    struct metrics_gauges g = {.pending = p, .n_pending = N, .leader = 1};
    struct buf out;
    buf_init(&out, 1 << 22);
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    const char *text = buf_cstr(&out);
    assert_int_equal(count_lines(text, "gputri_pending_gpu_pods{"), METRICS_MAX_NAMESPACES + 1);
    assert_non_null(strstr(text, "gputri_pending_gpu_pods{namespace=\"other\",cause=\"exhausted\","
                                 "resource=\"nvidia_com_gpu\"} 3\n"));
    assert_null(strstr(text, "namespace=\"ns-0000\""));
    assert_null(strstr(text, "namespace=\"ns-0002\""));
    assert_non_null(strstr(text,
                           "gputri_pending_gpu_pods{namespace=\"ns-0003\",cause=\"exhausted\","
                           "resource=\"nvidia_com_gpu\"} 2\n"));
    assert_non_null(strstr(text, "namespace=\"ns-1002\""));

    /* at the cap exactly nothing is folded */
    buf_reset(&out);
    g.pending = p + 3;
    g.n_pending = METRICS_MAX_NAMESPACES;
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    assert_null(strstr(buf_cstr(&out), "namespace=\"other\""));
    buf_cleanup(&out);
    metrics_free(m);
}

/*
 * metrics_pending_step(): a pod is observed once when it stops being pending, by its last
 * blocking cause, and only when asked to (the leader); a pod recreated under its name is
 * another pod.
 */
static void test_pending_step(void **state)
{
    (void)state;
    struct metrics *m = metrics_new();
    struct metrics_pending_mark mark = {0};
    struct metrics_pending_pod pod = {true, "uid-1", 1000000, METRICS_NO_CAUSE};
    metrics_pending_step(m, &mark, &pod, 1060000, true);
    assert_true(mark.set);
    assert_int_equal(mark.cause, METRICS_NO_CAUSE);
    pod.cause = CAUSE_EXHAUSTED;
    metrics_pending_step(m, &mark, &pod, 1070000, true);
    pod.cause = CAUSE_PREEMPTING; /* not blocking: exhausted stands */
    metrics_pending_step(m, &mark, &pod, 1080000, true);
    assert_int_equal(mark.cause, CAUSE_EXHAUSTED);
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 0);
    pod.pending = false;
    metrics_pending_step(m, &mark, &pod, 1600000, true);
    assert_false(mark.set);
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 1);
    metrics_pending_step(m, &mark, &pod, 1700000, true); /* placed again: nothing more */
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 1);

    /* recreated under the same name: the first pod is observed, the second marked */
    pod = (struct metrics_pending_pod){true, "uid-2", 2000000, CAUSE_TAINT};
    metrics_pending_step(m, &mark, &pod, 2000000, true);
    pod = (struct metrics_pending_pod){true, "uid-3", 3000000, METRICS_NO_CAUSE};
    metrics_pending_step(m, &mark, &pod, 3000000, true);
    assert_int_equal(metrics_pending_count(m, CAUSE_TAINT), 1);
    assert_string_equal(mark.uid, "uid-3");
    assert_int_equal(mark.cause, METRICS_NO_CAUSE);

    /* not the leader: forgotten without being observed */
    pod.pending = false;
    metrics_pending_step(m, &mark, &pod, 3500000, false);
    assert_false(mark.set);
    assert_int_equal(metrics_pending_count(m, METRICS_NO_CAUSE), 0);
    metrics_free(m);
}

/* gputri_gpu_pod_pending_seconds per cause and gputri_cause_transitions_total{from,to}. */
static void test_pending_time_and_transitions(void **state)
{
    (void)state;
    struct metrics *m = metrics_new();
    metrics_pending_time(m, CAUSE_EXHAUSTED, 1000);            /* le 1 */
    metrics_pending_time(m, CAUSE_EXHAUSTED, 1001);            /* le 5 */
    metrics_pending_time(m, CAUSE_EXHAUSTED, 1200 * 1000);     /* le 1800 */
    metrics_pending_time(m, CAUSE_EXHAUSTED, 200000 * 1000LL); /* +Inf */
    metrics_pending_time(m, METRICS_NO_CAUSE, -5);             /* a skewed clock: 0 */
    metrics_pending_time(m, 999, 2500);                        /* no cause: "none" */
    metrics_pending_time(NULL, CAUSE_TAINT, 1);                /* NULL-safe */
    metrics_cause_transition(m, METRICS_NO_CAUSE, CAUSE_EXHAUSTED);
    metrics_cause_transition(m, CAUSE_EXHAUSTED, CAUSE_OK);
    metrics_cause_transition(m, CAUSE_EXHAUSTED, CAUSE_OK);
    metrics_cause_transition(m, CAUSE_OK, CAUSE_NODE_REJECTED);
    metrics_cause_transition(m, CAUSE_OK, -1);          /* no cause written: ignored */
    metrics_cause_transition(m, CAUSE_OK, CAUSE_COUNT); /* ignored */
    metrics_cause_transition(NULL, CAUSE_OK, CAUSE_TAINT);
    assert_int_equal(metrics_transitions(m, CAUSE_EXHAUSTED, CAUSE_OK), 2);
    assert_int_equal(metrics_transitions(m, METRICS_NO_CAUSE, CAUSE_EXHAUSTED), 1);
    assert_int_equal(metrics_pending_count(m, CAUSE_EXHAUSTED), 4);
    assert_int_equal(metrics_pending_count(m, METRICS_NO_CAUSE), 2);
    assert_int_equal(metrics_pending_count(m, CAUSE_TAINT), 0);

    struct metrics_gauges g = {0};
    struct buf out;
    char got[8192];
    buf_init(&out, 1 << 20);
    assert_int_equal(metrics_render(m, &g, &out), K_OK);
    const char *text = buf_cstr(&out);
    test_lines_with(text, "gputri_gpu_pod_pending_seconds_", got, sizeof(got));
    assert_string_equal(
        got, "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"1\"} 1\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"5\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"15\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"30\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"60\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"120\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"300\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"600\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"900\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"1800\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"3600\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"7200\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"14400\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"43200\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"86400\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"none\",le=\"+Inf\"} 2\n"
             "gputri_gpu_pod_pending_seconds_sum{cause=\"none\"} 2.500\n"
             "gputri_gpu_pod_pending_seconds_count{cause=\"none\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"1\"} 1\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"5\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"15\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"30\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"60\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"120\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"300\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"600\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"900\"} 2\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"1800\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"3600\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"7200\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"14400\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"43200\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"86400\"} 3\n"
             "gputri_gpu_pod_pending_seconds_bucket{cause=\"exhausted\",le=\"+Inf\"} 4\n"
             "gputri_gpu_pod_pending_seconds_sum{cause=\"exhausted\"} 201202.001\n"
             "gputri_gpu_pod_pending_seconds_count{cause=\"exhausted\"} 4\n");
    test_lines_with(text, "gputri_cause_transitions_total{", got, sizeof(got));
    assert_string_equal(got, "gputri_cause_transitions_total{from=\"none\",to=\"exhausted\"} 1\n"
                             "gputri_cause_transitions_total{from=\"ok\",to=\"node-rejected\"} 1\n"
                             "gputri_cause_transitions_total{from=\"exhausted\",to=\"ok\"} 2\n");
    buf_cleanup(&out);
    metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_label_name),
        cmocka_unit_test(test_namespace_cap),
        cmocka_unit_test(test_pending_time_and_transitions),
        cmocka_unit_test(test_pending_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
