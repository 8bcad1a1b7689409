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
 * queued (the lane is full, or the lanes are closed) is refused: the caller answers it itself,
 * cheaply. A job that waited over max_wait_ms for a worker is run "shed": its run function is
 * told so and answers cheaply instead of doing the work (e.g. says the request was not checked).
 * A lane's workers may run at a lower CPU priority (nice), so that when the machine's cores are
 * busy the other lanes' work goes first.
 *
 * Thread-safety: lanes_submit() and lanes_stats() from any thread until lanes_free();
 * lanes_start(), lanes_close() and lanes_free() by one owner.
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

/* Runs one job on a worker. `shed`: answer without the costly work. The job is the caller's again
 * when it returns. */
typedef void (*lane_run_fn)(void *ctx, struct lane_job *job, bool shed);

struct lanes;

/* Counters since start, per lane. */
struct lane_stats {
    uint64_t run;    /* jobs run in full */
    uint64_t shed;   /* jobs run shed (waited too long, or queued when closed) or refused (queue
                        full, or closed) */
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
 * Returns true when queued (the run function will be called once for it), false when the lane
 * is full or the lanes are closed (it will not be: the job is the caller's).
 */
bool lanes_submit(struct lanes *l, unsigned lane, struct lane_job *job);

/* lanes_stats() - a snapshot of lane `lane`'s counters (zeros for an index out of range). */
void lanes_stats(struct lanes *l, unsigned lane, struct lane_stats *out);

/*
 * lanes_close() - refuse new jobs, run the ones still queued shed, let the running ones finish,
 * join the workers. Submissions may still come (they are refused) until lanes_free(). NULL-safe.
 */
void lanes_close(struct lanes *l);

/* lanes_free() - free closed lanes; no call on l may be running or come after. NULL-safe. */
void lanes_free(struct lanes *l);

#endif
