/*
 * http/lanes.h - worker threads that run the server's handlers off its network threads, in lanes
 * of their own, so that a costly request waits behind other costly ones and never in front of a
 * cheap one.
 *
 * Why: libmicrohttpd binds each connection to one of its polling threads; a handler that runs on
 * that thread for a second stalls every other connection the thread serves (a normal review of
 * the API server behind a review whose DRA selectors are costly). With lanes the polling thread
 * suspends the connection, a lane's worker runs the handler, and the connection is resumed with
 * the answer (http/server.c).
 *
 * A lane is a FIFO queue of at most max_queued jobs and `workers` threads. A job that cannot be
 * queued (the lane is full, or the lanes are stopping), or that waited over max_wait_ms for a
 * worker, is run "shed": its run function is told so and answers cheaply instead (e.g. says
 * the request was not checked). A lane's workers may run at a lower CPU priority (nice), so that
 * when the machine's cores are busy the other lanes' work goes first.
 *
 * Thread-safety: lanes_submit() from any thread; lanes_start() and lanes_stop() by one owner.
 */
#ifndef GPUTRI_HTTP_LANES_H
#define GPUTRI_HTTP_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_LANES 4

struct http_lane_options {
    unsigned workers;    /* threads; 0 means 1 */
    unsigned max_queued; /* jobs waiting for a worker; 0 means 64 */
    int64_t max_wait_ms; /* a job waiting longer is run shed; 0: no limit */
    int nice;            /* added to the workers' nice value (0..19; Linux, per thread) */
};

/* Embedded in the caller's job; the lanes own it between submit and run. */
struct lane_job {
    struct lane_job *next;
    int64_t queued_ms; /* the monotonic clock (util/clock.h) when queued */
};

/* Runs one job on a worker (or, shed at submit, on the caller's thread). `shed`: answer without
 * the costly work. The job is the caller's again when it returns. */
typedef void (*lane_run_fn)(void *ctx, struct lane_job *job, bool shed);

struct lanes;

/* Counters since start, per lane. */
struct lane_stats {
    uint64_t run;    /* jobs run in full */
    uint64_t shed;   /* jobs run shed: queue full, waited too long, or stopping */
    unsigned queued; /* waiting now */
    unsigned busy;   /* workers running a job now */
};

/*
 * lanes_start() - n (1..HTTP_MAX_LANES) lanes as o[0..n) says, whose workers call
 * run(ctx, job, shed). Returns K_OK and *out, K_ENOMEM, or K_EIO (a thread could not be
 * started; err says so). A nice value that cannot be set is logged once and ignored.
 */
int lanes_start(const struct http_lane_options *o, unsigned n, lane_run_fn run, void *ctx,
                const char *name, struct lanes **out, char *err, size_t errlen);

/*
 * lanes_submit() - queue `job` on lane `lane` (an index below n; anything else is lane 0).
 * When the lane is full or stopping, the job is run shed on the calling thread before this
 * returns. Returns true when queued.
 */
bool lanes_submit(struct lanes *l, unsigned lane, struct lane_job *job);

/* lanes_stats() - a snapshot of lane `lane`'s counters (zeros for an index out of range). */
void lanes_stats(struct lanes *l, unsigned lane, struct lane_stats *out);

/*
 * lanes_stop() - the jobs still queued are run shed, the ones running finish, the workers are
 * joined, everything is freed. Submissions after the start of lanes_stop() are run shed on the
 * caller's thread; none may come after it returns. NULL-safe.
 */
void lanes_stop(struct lanes *l);

#endif
