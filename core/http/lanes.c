/* lanes.c - worker lanes for the server's handlers (see lanes.h). */
#include "http/lanes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/errbuf.h"
#include "util/log.h"
#include "util/result.h"

struct lane {
    struct http_lane_options o;
    struct lane_job *head, *tail;
    unsigned queued, busy;
    uint64_t run, shed;
    pthread_cond_t cv; /* a job queued, or stopping */
};

struct worker {
    struct lanes *l;
    unsigned lane;
    pthread_t thread;
};

struct lanes {
    pthread_mutex_t mu; /* guards the lanes' queues, counters and `stopping` */
    bool stopping;
    unsigned n;
    struct lane lane[HTTP_MAX_LANES];
    struct worker *workers;
    unsigned n_workers;
    lane_run_fn run;
    void *ctx;
    const char *name;
};

static void set_nice(const struct lanes *l, int nice)
{
    if (nice <= 0)
        return;
    /* Linux: a thread's nice value is its own (setpriority on its thread id). */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (setpriority(PRIO_PROCESS, (id_t)tid, nice) != 0)
        log_warn_kv("cannot lower a worker's CPU priority", LOG_STR("lane", l->name),
                    LOG_INT("nice", nice), LOG_STR("err", strerror(errno)));
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct lanes *l = w->l;
    struct lane *ln = &l->lane[w->lane];
    set_nice(l, ln->o.nice);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!ln->head && !l->stopping)
            pthread_cond_wait(&ln->cv, &l->mu);
        struct lane_job *job = ln->head;
        if (!job)
            break; /* stopping, and nothing left */
        ln->head = job->next;
        if (!ln->head)
            ln->tail = NULL;
        ln->queued--;
        bool shed = l->stopping || (ln->o.max_wait_ms > 0 &&
                                    clock_mono_ms(NULL) - job->queued_ms > ln->o.max_wait_ms);
        if (shed)
            ln->shed++;
        else
            ln->run++;
        ln->busy++;
        pthread_mutex_unlock(&l->mu);
        l->run(l->ctx, job, shed);
        pthread_mutex_lock(&l->mu);
        ln->busy--;
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int lanes_start(const struct http_lane_options *o, unsigned n, lane_run_fn run, void *ctx,
                const char *name, struct lanes **out, char *err, size_t errlen)
{
    *out = NULL;
    if (n == 0 || n > HTTP_MAX_LANES) {
        errbuf_printf(err, errlen, "%u lanes (1 to %d)", n, HTTP_MAX_LANES);
        return K_EINVAL;
    }
    struct lanes *l = calloc(1, sizeof(*l));
    if (!l)
        return K_ENOMEM;
    l->n = n;
    l->run = run;
    l->ctx = ctx;
    l->name = name ? name : "http";
    pthread_mutex_init(&l->mu, NULL);
    unsigned total = 0;
    for (unsigned i = 0; i < n; i++) {
        l->lane[i].o = o[i];
        if (!l->lane[i].o.workers)
            l->lane[i].o.workers = 1;
        if (!l->lane[i].o.max_queued)
            l->lane[i].o.max_queued = 64;
        pthread_cond_init(&l->lane[i].cv, NULL);
        total += l->lane[i].o.workers;
    }
    l->workers = calloc(total, sizeof(*l->workers));
    if (!l->workers) {
        lanes_close(l);
        lanes_free(l);
        return K_ENOMEM;
    }
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < l->lane[i].o.workers; k++) {
            struct worker *w = &l->workers[l->n_workers];
            w->l = l;
            w->lane = i;
            int rc = pthread_create(&w->thread, NULL, work, w);
            if (rc != 0) {
                errbuf_printf(err, errlen, "cannot start a worker thread: %s", strerror(rc));
                lanes_close(l);
                lanes_free(l);
                return K_EIO;
            }
            l->n_workers++;
        }
    *out = l;
    return K_OK;
}

bool lanes_submit(struct lanes *l, unsigned lane, struct lane_job *job)
{
    if (lane >= l->n)
        lane = 0;
    struct lane *ln = &l->lane[lane];
    job->next = NULL;
    job->queued_ms = clock_mono_ms(NULL);
    pthread_mutex_lock(&l->mu);
    if (l->stopping || ln->queued >= ln->o.max_queued) {
        ln->shed++;
        pthread_mutex_unlock(&l->mu);
        return false;
    }
    if (ln->tail)
        ln->tail->next = job;
    else
        ln->head = job;
    ln->tail = job;
    ln->queued++;
    pthread_cond_signal(&ln->cv);
    pthread_mutex_unlock(&l->mu);
    return true;
}

void lanes_stats(struct lanes *l, unsigned lane, struct lane_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!l || lane >= l->n)
        return;
    pthread_mutex_lock(&l->mu);
    out->run = l->lane[lane].run;
    out->shed = l->lane[lane].shed;
    out->queued = l->lane[lane].queued;
    out->busy = l->lane[lane].busy;
    pthread_mutex_unlock(&l->mu);
}

void lanes_close(struct lanes *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    bool was = l->stopping;
    l->stopping = true;
    for (unsigned i = 0; i < l->n; i++)
        pthread_cond_broadcast(&l->lane[i].cv);
    pthread_mutex_unlock(&l->mu);
    if (was)
        return;
    /* the workers run what is queued shed, then leave */
    for (unsigned i = 0; i < l->n_workers; i++)
        pthread_join(l->workers[i].thread, NULL);
}

void lanes_free(struct lanes *l)
{
    if (!l)
        return;
    for (unsigned i = 0; i < l->n; i++)
        pthread_cond_destroy(&l->lane[i].cv);
    pthread_mutex_destroy(&l->mu);
    free(l->workers);
    free(l);
}
