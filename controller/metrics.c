/* metrics.c - counters, one histogram, and the Prometheus text rendering (see metrics.h). */
#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

#define STATUS_MAX 600 /* HTTP statuses 0..599; anything else is counted as 0 */

/* Histogram bucket bounds in milliseconds (the rendering prints them in seconds). */
static const int64_t bounds_ms[] = {1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000};
#define N_BOUNDS (sizeof(bounds_ms) / sizeof(bounds_ms[0]))

struct metrics {
    /* counters bumped by any thread without the lock */
    _Atomic uint64_t classifications, patches, events;
    _Atomic uint64_t api[STATUS_MAX];
    pthread_mutex_t mu; /* guards the watch labels and the histogram */
    char watch_name[METRICS_MAX_RESOURCES + 1][64];
    uint64_t watch_count[METRICS_MAX_RESOURCES + 1];
    uint64_t hist[N_BOUNDS + 1];
    int64_t hist_sum_ms;
    uint64_t hist_count;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    snprintf(m->watch_name[METRICS_MAX_RESOURCES], sizeof(m->watch_name[0]), "other");
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static void inc(_Atomic uint64_t *v)
{
    atomic_fetch_add_explicit(v, 1, memory_order_relaxed);
}

static uint64_t get(const _Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

void metrics_inc_classifications(struct metrics *m)
{
    if (m)
        inc(&m->classifications);
}

void metrics_inc_patches(struct metrics *m)
{
    if (m)
        inc(&m->patches);
}

void metrics_inc_events(struct metrics *m)
{
    if (m)
        inc(&m->events);
}

uint64_t metrics_patches(struct metrics *m)
{
    return get(&m->patches);
}

uint64_t metrics_events(struct metrics *m)
{
    return get(&m->events);
}

void metrics_api_request(struct metrics *m, long http_status)
{
    if (!m)
        return;
    inc(&m->api[http_status > 0 && http_status < STATUS_MAX ? http_status : 0]);
}

void metrics_watch_restart(struct metrics *m, const char *resource)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    size_t i;
    for (i = 0; i < METRICS_MAX_RESOURCES && m->watch_name[i][0]; i++)
        if (strcmp(m->watch_name[i], resource) == 0)
            break;
    if (i < METRICS_MAX_RESOURCES && !m->watch_name[i][0])
        snprintf(m->watch_name[i], sizeof(m->watch_name[i]), "%s", resource);
    m->watch_count[i]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_queue_latency(struct metrics *m, int64_t ms)
{
    if (!m)
        return;
    if (ms < 0)
        ms = 0;
    size_t b = 0;
    while (b < N_BOUNDS && ms > bounds_ms[b])
        b++;
    pthread_mutex_lock(&m->mu);
    m->hist[b]++;
    m->hist_sum_ms += ms;
    m->hist_count++;
    pthread_mutex_unlock(&m->mu);
}

/* A label value with \, " and newline escaped. */
static int label(struct buf *out, const char *v)
{
    int rc = K_OK;
    for (const char *p = v; *p && !rc; p++) {
        if (*p == '\\')
            rc = buf_append_str(out, "\\\\");
        else if (*p == '"')
            rc = buf_append_str(out, "\\\"");
        else if (*p == '\n')
            rc = buf_append_str(out, "\\n");
        else
            rc = buf_append(out, p, 1);
    }
    return rc;
}

static int header(struct buf *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int counter(struct buf *out, const char *name, const char *help, uint64_t v)
{
    int rc = header(out, name, "counter", help);
    return rc ? rc : buf_printf(out, "%s %llu\n", name, (unsigned long long)v);
}

static int render_pending(struct buf *out, const struct metrics_gauges *g)
{
    int rc = header(out, "gputri_pending_gpu_pods", "gauge",
                    "Pending pods requesting a GPU, by the cause gputri found and the resource.");
    for (size_t i = 0; !rc && i < g->n_pending; i++) {
        rc = buf_append_str(out, "gputri_pending_gpu_pods{cause=\"");
        if (!rc)
            rc = label(out, g->pending[i].cause);
        if (!rc)
            rc = buf_append_str(out, "\",resource=\"");
        if (!rc)
            rc = label(out, g->pending[i].resource);
        if (!rc)
            rc = buf_printf(out, "\"} %lld\n", (long long)g->pending[i].count);
    }
    return rc;
}

static int render_histogram(struct metrics *m, struct buf *out)
{
    uint64_t hist[N_BOUNDS + 1], count;
    int64_t sum_ms;
    pthread_mutex_lock(&m->mu);
    memcpy(hist, m->hist, sizeof(hist));
    count = m->hist_count;
    sum_ms = m->hist_sum_ms;
    pthread_mutex_unlock(&m->mu);

    const char *name = "gputri_workqueue_latency_seconds";
    int rc = header(out, name, "histogram",
                    "How long a key waited in the workqueue before a worker took it.");
    uint64_t cum = 0;
    for (size_t b = 0; !rc && b < N_BOUNDS; b++) {
        cum += hist[b];
        rc = buf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, (double)bounds_ms[b] / 1000.0,
                        (unsigned long long)cum);
    }
    if (!rc)
        rc = buf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.3f\n%s_count %llu\n", name,
                        (unsigned long long)count, name, (double)sum_ms / 1000.0, name,
                        (unsigned long long)count);
    return rc;
}

int metrics_render(struct metrics *m, const struct metrics_gauges *g, struct buf *out)
{
    int rc = render_pending(out, g);
    if (!rc)
        rc = counter(out, "gputri_classifications_total", "Pods classified.",
                     get(&m->classifications));
    if (!rc)
        rc = counter(out, "gputri_patches_total", "gputri/cause annotation patches written.",
                     get(&m->patches));
    if (!rc)
        rc = counter(out, "gputri_events_total", "Events created or updated (aggregated).",
                     get(&m->events));
    if (!rc)
        rc = header(out, "gputri_api_requests_total", "counter",
                    "Kubernetes API requests by HTTP status; code 0 is a transport error.");
    for (int s = 0; !rc && s < STATUS_MAX; s++) {
        uint64_t v = get(&m->api[s]);
        if (v)
            rc = buf_printf(out, "gputri_api_requests_total{code=\"%d\"} %llu\n", s,
                            (unsigned long long)v);
    }
    if (!rc)
        rc = header(out, "gputri_workqueue_depth", "gauge", "Keys ready to be processed.");
    if (!rc)
        rc = buf_printf(out, "gputri_workqueue_depth %zu\n", g->queue_depth);
    if (!rc)
        rc = render_histogram(m, out);
    if (!rc)
        rc = header(out, "gputri_watch_restarts_total", "counter",
                    "Watches that ended (server timeout, error or expiry) and were restarted.");
    if (!rc) {
        char names[METRICS_MAX_RESOURCES + 1][64];
        uint64_t counts[METRICS_MAX_RESOURCES + 1];
        pthread_mutex_lock(&m->mu);
        memcpy(names, m->watch_name, sizeof(names));
        memcpy(counts, m->watch_count, sizeof(counts));
        pthread_mutex_unlock(&m->mu);
        for (size_t i = 0; !rc && i <= METRICS_MAX_RESOURCES; i++) {
            if (!names[i][0] || (i == METRICS_MAX_RESOURCES && !counts[i]))
                continue;
            rc = buf_append_str(out, "gputri_watch_restarts_total{resource=\"");
            if (!rc)
                rc = label(out, names[i]);
            if (!rc)
                rc = buf_printf(out, "\"} %llu\n", (unsigned long long)counts[i]);
        }
    }
    if (!rc)
        rc = header(out, "gputri_leader", "gauge",
                    "1 while this replica is the leader (or leader election is off), else 0.");
    if (!rc)
        rc = buf_printf(out, "gputri_leader %d\n", g->leader ? 1 : 0);
    return rc;
}
