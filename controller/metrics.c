/* metrics.c - counters, one histogram, and the Prometheus text rendering (see metrics.h). */
#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/quota.h"
#include "kube/read_budget.h"
#include "util/result.h"

#define STATUS_MAX 600 /* HTTP statuses 0..599; anything else is counted as 0 */

/* Histogram bucket bounds in milliseconds (the rendering prints them in seconds). */
static const int64_t bounds_ms[] = {1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000};
#define N_BOUNDS (sizeof(bounds_ms) / sizeof(bounds_ms[0]))

/* gputri_gpu_pod_pending_seconds buckets, in seconds: from a pod placed at once to one that
 * waited a day, with 15 minutes (the alert's threshold) a bound of its own. */
static const int64_t pending_bounds_s[] = {1,   5,    15,   30,   60,    120,   300,  600,
                                           900, 1800, 3600, 7200, 14400, 43200, 86400};
#define N_PENDING_BOUNDS (sizeof(pending_bounds_s) / sizeof(pending_bounds_s[0]))

/* Causes as array indexes: 0 is "none", cause c is c + 1. */
#define N_CAUSE_SLOTS (CAUSE_COUNT + 1)

/* A histogram over bounds_ms. */
struct hist {
    uint64_t b[N_BOUNDS + 1];
    int64_t sum_ms;
    uint64_t count;
};

struct metrics {
    /* counters bumped by any thread without the lock */
    _Atomic uint64_t classifications, patches, events;
    _Atomic uint64_t api[STATUS_MAX];
    pthread_mutex_t mu; /* guards the watch labels and the histogram */
    char watch_name[METRICS_MAX_RESOURCES + 1][64];
    uint64_t watch_count[METRICS_MAX_RESOURCES + 1];
    struct hist queue_wait; /* gputri_workqueue_latency_seconds */
    struct hist high_done;  /* gputri_workqueue_high_priority_seconds */
    /* gputri_gpu_pod_pending_seconds per cause slot (under mu) */
    uint64_t pend_hist[N_CAUSE_SLOTS][N_PENDING_BOUNDS + 1];
    int64_t pend_sum_ms[N_CAUSE_SLOTS];
    uint64_t pend_count[N_CAUSE_SLOTS];
    /* gputri_cause_transitions_total[from slot][to cause] */
    _Atomic uint64_t transitions[N_CAUSE_SLOTS][CAUSE_COUNT];
};

/* The slot of `cause`: 0 for METRICS_NO_CAUSE or a value that is no cause. */
static size_t slot(int cause)
{
    return cause >= 0 && cause < CAUSE_COUNT ? (size_t)cause + 1 : 0;
}

static const char *slot_word(size_t s)
{
    return s == 0 ? "none" : cause_word((enum cause)(s - 1));
}

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

static void observe(struct metrics *m, struct hist *h, int64_t ms)
{
    if (!m)
        return;
    if (ms < 0)
        ms = 0;
    size_t b = 0;
    while (b < N_BOUNDS && ms > bounds_ms[b])
        b++;
    pthread_mutex_lock(&m->mu);
    h->b[b]++;
    if (h->sum_ms <= INT64_MAX - ms)
        h->sum_ms += ms;
    h->count++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_queue_latency(struct metrics *m, int64_t ms)
{
    if (m)
        observe(m, &m->queue_wait, ms);
}

void metrics_high_priority_done(struct metrics *m, int64_t ms)
{
    if (m)
        observe(m, &m->high_done, ms);
}

void metrics_pending_time(struct metrics *m, int cause, int64_t ms)
{
    if (!m)
        return;
    if (ms < 0)
        ms = 0;
    size_t b = 0;
    while (b < N_PENDING_BOUNDS && ms > pending_bounds_s[b] * 1000)
        b++;
    size_t s = slot(cause);
    pthread_mutex_lock(&m->mu);
    m->pend_hist[s][b]++;
    if (m->pend_sum_ms[s] <= INT64_MAX - ms)
        m->pend_sum_ms[s] += ms;
    m->pend_count[s]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_pending_step(struct metrics *m, struct metrics_pending_mark *mark,
                          const struct metrics_pending_pod *now, int64_t wall_ms, bool observe)
{
    const char *uid = now->uid ? now->uid : "";
    if (mark->set && (!now->pending || strcmp(mark->uid, uid) != 0)) {
        if (observe && mark->created_ms > 0)
            metrics_pending_time(m, mark->cause, wall_ms - mark->created_ms);
        memset(mark, 0, sizeof(*mark));
    }
    if (!now->pending)
        return;
    if (!mark->set) {
        mark->set = true;
        snprintf(mark->uid, sizeof(mark->uid), "%s", uid);
        mark->created_ms = now->created_ms;
        mark->cause = METRICS_NO_CAUSE;
    }
    /* now preempting, or its cause not yet seen: the blocking cause it had before stands */
    if (now->cause >= 0 && now->cause < CAUSE_COUNT && cause_is_blocking((enum cause)now->cause))
        mark->cause = now->cause;
}

void metrics_cause_transition(struct metrics *m, int from, int to)
{
    if (!m || to < 0 || to >= CAUSE_COUNT || from == to)
        return; /* the same word written again (binding's detail refreshed): no transition */
    inc(&m->transitions[slot(from)][to]);
}

uint64_t metrics_transitions(struct metrics *m, int from, int to)
{
    if (to < 0 || to >= CAUSE_COUNT)
        return 0;
    return get(&m->transitions[slot(from)][to]);
}

uint64_t metrics_pending_count(struct metrics *m, int cause)
{
    pthread_mutex_lock(&m->mu);
    uint64_t n = m->pend_count[slot(cause)];
    pthread_mutex_unlock(&m->mu);
    return n;
}

void metrics_label_name(const char *in, char *out, size_t len)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < len; p++) {
        unsigned char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_') {
            out[o++] = (char)ch;
            continue;
        }
        out[o++] = '_';
        /* one "_" for a whole UTF-8 sequence: skip its continuation bytes (at most 3) */
        for (int k = 0; ch >= 0xC0 && k < 3 && (p[1] & 0xC0) == 0x80; k++)
            p++;
    }
    out[o] = '\0';
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

/* One pending row as rendered: the namespace after the cap, the resource spelled. */
struct prow {
    const char *cause;
    const char *ns;
    char resource[METRICS_RESOURCE_NAME_MAX];
    int64_t count;
};

/* One namespace and its pending GPU pods. */
struct ns_total {
    const char *ns;
    int64_t total;
};

static int cmp_ns_name(const void *a, const void *b)
{
    return strcmp(((const struct ns_total *)a)->ns, ((const struct ns_total *)b)->ns);
}

/* Most pending first, then by name. */
static int cmp_ns_rank(const void *a, const void *b)
{
    const struct ns_total *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->ns, y->ns);
}

static int cmp_prow(const void *a, const void *b)
{
    const struct prow *x = a, *y = b;
    int c = strcmp(x->cause, y->cause);
    if (!c)
        c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->resource, y->resource);
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The rows of `g` with namespaces beyond the METRICS_MAX_NAMESPACES of most pending pods folded
 * into METRICS_OTHER_NAMESPACE, resources spelled, summed and sorted. *out (malloc'd) and *n;
 * K_OK or K_ENOMEM.
 */
static int pending_rows(const struct metrics_gauges *g, struct prow **out, size_t *n)
{
    size_t np = g->n_pending;
    *out = NULL;
    *n = 0;
    if (np == 0)
        return K_OK;
    struct prow *rows = calloc(np, sizeof(*rows));
    struct ns_total *ns = calloc(np, sizeof(*ns));
    const char **kept = calloc(np, sizeof(*kept));
    if (!rows || !ns || !kept) {
        free(rows);
        free(ns);
        free(kept);
        return K_ENOMEM;
    }
    for (size_t i = 0; i < np; i++) {
        ns[i].ns = g->pending[i].ns ? g->pending[i].ns : "";
        ns[i].total = g->pending[i].count;
    }
    /* per namespace totals: sort by name, fold equal names */
    qsort(ns, np, sizeof(*ns), cmp_ns_name);
    size_t nns = 0;
    for (size_t i = 0; i < np; i++) {
        if (nns > 0 && strcmp(ns[nns - 1].ns, ns[i].ns) == 0)
            ns[nns - 1].total += ns[i].total;
        else
            ns[nns++] = ns[i];
    }
    size_t nkept = nns;
    if (nns > METRICS_MAX_NAMESPACES) {
        qsort(ns, nns, sizeof(*ns), cmp_ns_rank);
        nkept = METRICS_MAX_NAMESPACES;
    }
    for (size_t i = 0; i < nkept; i++)
        kept[i] = ns[i].ns;
    qsort(kept, nkept, sizeof(*kept), cmp_str_ptr);
    for (size_t i = 0; i < np; i++) {
        const char *name = g->pending[i].ns ? g->pending[i].ns : "";
        rows[i].cause = g->pending[i].cause ? g->pending[i].cause : "none";
        rows[i].ns = nkept == nns || bsearch(&name, kept, nkept, sizeof(*kept), cmp_str_ptr)
                         ? name
                         : METRICS_OTHER_NAMESPACE;
        metrics_label_name(g->pending[i].resource ? g->pending[i].resource : "", rows[i].resource,
                           sizeof(rows[i].resource));
        rows[i].count = g->pending[i].count;
    }
    free(ns);
    free(kept);
    qsort(rows, np, sizeof(*rows), cmp_prow);
    size_t nr = 0;
    for (size_t i = 0; i < np; i++) {
        if (nr > 0 && cmp_prow(&rows[nr - 1], &rows[i]) == 0)
            rows[nr - 1].count += rows[i].count;
        else
            rows[nr++] = rows[i];
    }
    *out = rows;
    *n = nr;
    return K_OK;
}

static int render_pending(struct buf *out, const struct metrics_gauges *g)
{
    struct prow *rows;
    size_t n;
    int rc = pending_rows(g, &rows, &n);
    if (rc)
        return rc;
    rc = header(out, "gputri_pending_gpu_pods", "gauge",
                "Pending pods requesting a GPU, by namespace, the cause gputri found and the "
                "resource (spelled as kube-state-metrics does).");
    for (size_t i = 0; !rc && i < n; i++) {
        rc = buf_append_str(out, "gputri_pending_gpu_pods{namespace=\"");
        if (!rc)
            rc = label(out, rows[i].ns);
        if (!rc)
            rc = buf_append_str(out, "\",cause=\"");
        if (!rc)
            rc = label(out, rows[i].cause);
        if (!rc)
            rc = buf_append_str(out, "\",resource=\"");
        if (!rc)
            rc = label(out, rows[i].resource);
        if (!rc)
            rc = buf_printf(out, "\"} %lld\n", (long long)rows[i].count);
    }
    free(rows);
    return rc;
}

static int render_pending_time(struct metrics *m, struct buf *out)
{
    const char *name = "gputri_gpu_pod_pending_seconds";
    int rc = header(out, name, "histogram",
                    "How long GPU pods stayed pending, observed when one was bound or deleted, by "
                    "the last blocking cause it had (none: never blocked).");
    uint64_t copy[N_PENDING_BOUNDS + 1], count;
    int64_t sum_ms;
    for (size_t s = 0; !rc && s < N_CAUSE_SLOTS; s++) {
        pthread_mutex_lock(&m->mu);
        memcpy(copy, m->pend_hist[s], sizeof(copy));
        count = m->pend_count[s];
        sum_ms = m->pend_sum_ms[s];
        pthread_mutex_unlock(&m->mu);
        if (!count)
            continue;
        const char *w = slot_word(s);
        uint64_t cum = 0;
        for (size_t b = 0; !rc && b < N_PENDING_BOUNDS; b++) {
            cum += copy[b];
            rc = buf_printf(out, "%s_bucket{cause=\"%s\",le=\"%lld\"} %llu\n", name, w,
                            (long long)pending_bounds_s[b], (unsigned long long)cum);
        }
        if (!rc)
            rc = buf_printf(out,
                            "%s_bucket{cause=\"%s\",le=\"+Inf\"} %llu\n%s_sum{cause=\"%s\"} "
                            "%.3f\n%s_count{cause=\"%s\"} %llu\n",
                            name, w, (unsigned long long)count, name, w, (double)sum_ms / 1000.0,
                            name, w, (unsigned long long)count);
    }
    return rc;
}

static int render_transitions(struct metrics *m, struct buf *out)
{
    const char *name = "gputri_cause_transitions_total";
    int rc = header(out, name, "counter",
                    "gputri/cause values written, by the cause the pod carried before (none: no "
                    "cause) and the cause written.");
    for (size_t f = 0; !rc && f < N_CAUSE_SLOTS; f++)
        for (int t = 0; !rc && t < CAUSE_COUNT; t++) {
            uint64_t v = get(&m->transitions[f][t]);
            if (v)
                rc = buf_printf(out, "%s{from=\"%s\",to=\"%s\"} %llu\n", name, slot_word(f),
                                cause_word((enum cause)t), (unsigned long long)v);
        }
    return rc;
}

static int render_histogram(struct metrics *m, const struct hist *h, const char *name,
                            const char *help, struct buf *out)
{
    uint64_t hist[N_BOUNDS + 1], count;
    int64_t sum_ms;
    pthread_mutex_lock(&m->mu);
    memcpy(hist, h->b, sizeof(hist));
    count = h->count;
    sum_ms = h->sum_ms;
    pthread_mutex_unlock(&m->mu);

    int rc = header(out, name, "histogram", help);
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
        rc = render_pending_time(m, out);
    if (!rc)
        rc = render_transitions(m, out);
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
        rc = counter(out, "gputri_objects_too_large_total",
                     "Objects read from the API server and skipped: their JSON tree would be "
                     "over the memory budget of one object.",
                     kube_read_over_budget_total());
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
        rc = header(out, "gputri_workqueue_priority_depth", "gauge",
                    "Keys ready to be processed, by priority: high (a pod seen first or whose "
                    "own object changed), low (re-checked after other objects changed).");
    if (!rc)
        rc = buf_printf(out,
                        "gputri_workqueue_priority_depth{priority=\"high\"} %zu\n"
                        "gputri_workqueue_priority_depth{priority=\"low\"} %zu\n",
                        g->queue_depth_high, g->queue_depth_low);
    if (!rc)
        rc = header(out, "gputri_workqueue_delayed_depth", "gauge",
                    "Keys waiting for a delay: coalesced re-checks, backoffs and grace timers.");
    if (!rc)
        rc = buf_printf(out, "gputri_workqueue_delayed_depth %zu\n", g->queue_delayed);
    if (!rc)
        rc = render_histogram(m, &m->queue_wait, "gputri_workqueue_latency_seconds",
                              "How long a key waited in the workqueue before a worker took it.",
                              out);
    if (!rc)
        rc = render_histogram(m, &m->high_done, "gputri_workqueue_high_priority_seconds",
                              "Time from a key's high-priority add (a pod seen first or whose "
                              "own object changed) until a worker finished it.",
                              out);
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
    if (!rc)
        rc = header(out, "gputri_quota_refused_owners", "gauge",
                    "ReplicaSets, StatefulSets and Jobs whose GPU pods a ResourceQuota refuses "
                    "(FailedCreate), by kind.");
    for (int k = 0; k < METRICS_QUOTA_OWNER_KINDS && !rc; k++)
        rc =
            buf_printf(out, "gputri_quota_refused_owners{kind=\"%s\"} %zu\n",
                       quota_owner_kind_name((enum quota_owner_kind)k), g->quota_refused_owners[k]);
    if (!rc)
        rc = header(out, "gputri_store_write_lock_wait_seconds_total", "counter",
                    "Time the informers waited for the object store's write lock.");
    if (!rc)
        rc = buf_printf(out, "gputri_store_write_lock_wait_seconds_total %.6f\n",
                        (double)g->store_write_wait_ns / 1e9);
    if (!rc)
        rc = counter(out, "gputri_store_write_locks_total",
                     "Times the informers took the object store's write lock.",
                     g->store_write_locks);
    if (!rc)
        rc = counter(out, "gputri_store_unchanged_updates_total",
                     "Pod and Node updates that changed nothing the store keeps, found under its "
                     "read lock without taking the write lock.",
                     g->store_unchanged);
    return rc;
}
