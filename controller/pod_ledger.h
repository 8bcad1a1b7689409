/*
 * pod_ledger.h - what the controller remembers about a pod beyond the object cache, keyed by the
 * pod's "namespace/name" (cache/key.h):
 *   - written:  the cause this controller wrote, and to which pod uid, until the watch shows it
 *               (the cache lags a patch; without it a worker would write the same cause again);
 *   - fits:     since when (monotonic ms) the pod's GPUs fit, for the gpu-fits grace;
 *   - owed:     the Event of a write whose annotation went through and whose Event failed;
 *   - pending:  the pending-time mark of a pending GPU pod (metrics.h metrics_pending_mark);
 *   - verdict:  the word its last classification found, for the targeted re-check policy
 *               (triage/requeue.h struct requeue_record).
 * A pod's record goes when its last part is cleared, or with the pod (pod_ledger_forget).
 *
 * Entries carry the pod uid they speak for where it matters (written, owed, pending): a pod
 * deleted and recreated under the same name while the watch was down is another pod.
 *
 * Locking: one mutex, taken and released inside every call; no call takes another lock or
 * calls out while holding it, except pod_ledger_prune()'s callback. So the ledger is the
 * innermost lock: callers may hold the store's read lock around a call, never the other way.
 * Writers: the workers (written, fits, owed, verdict) and the pods informer's thread (pending,
 * forget, prune); the workqueue hands one key to one worker at a time.
 */
#ifndef GPUTRI_POD_LEDGER_H
#define GPUTRI_POD_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"
#include "metrics.h"
#include "reconcile.h"
#include "triage/requeue.h"
#include "util/clock.h"

struct pod_ledger;

/* A cause this controller wrote to the pod with uid `uid`. */
struct pod_written {
    char uid[64];
    enum cause cause;
};

/*
 * pod_ledger_new() - an empty ledger reading monotonic time from `clock` (borrowed, must
 * outlive the ledger; NULL: the system clock). NULL on allocation failure.
 */
struct pod_ledger *pod_ledger_new(const struct clock *clock);
void pod_ledger_free(struct pod_ledger *l);

/*
 * pod_ledger_set_written() - remember that `cause` was written to pod `uid` (truncated to 63
 * bytes) under `key`, replacing what was remembered. Returns K_OK, or K_ENOMEM (then nothing is
 * remembered and the pod may be written twice, which is harmless).
 */
int pod_ledger_set_written(struct pod_ledger *l, const char *key, const char *uid,
                           enum cause cause);
/* pod_ledger_written() - what was written under `key` into *out (may be NULL); false: nothing. */
bool pod_ledger_written(struct pod_ledger *l, const char *key, struct pod_written *out);
/*
 * pod_ledger_seen() - the watch showed pod `key` carrying cause word `seen` (NULL: none): the
 * written entry is forgotten once it shows what was written.
 */
void pod_ledger_seen(struct pod_ledger *l, const char *key, const char *seen);

/*
 * pod_ledger_fits_wait() - the pod's GPUs fit now: the ms left before `grace_ms` have passed
 * since it was first seen fitting (the first call starts the grace and returns grace_ms), 0 when
 * over. Out of memory: the grace starts again at the next call.
 */
int64_t pod_ledger_fits_wait(struct pod_ledger *l, const char *key, int64_t grace_ms);
/* pod_ledger_fits_forget() - the pod's GPUs no longer fit (or it was written): forget since when.
 */
void pod_ledger_fits_forget(struct pod_ledger *l, const char *key);

/*
 * pod_ledger_owe_event() - the annotation of `plan` went through and its Event did not: keep a
 * copy of the plan, replacing an earlier one. Out of memory: the Event is not retried.
 */
void pod_ledger_owe_event(struct pod_ledger *l, const char *key, const struct reconcile_plan *plan);
/*
 * pod_ledger_owed_event() - the Event owed for `key` into *out, if the pod (uid `uid`) still
 * carries the cause owed (word `cause`); an owed Event for a pod that is gone (uid NULL),
 * recreated, or carrying another cause now is dropped. Returns whether one is owed.
 */
bool pod_ledger_owed_event(struct pod_ledger *l, const char *key, const char *uid,
                           const char *cause, struct reconcile_plan *out);
/* pod_ledger_event_done() - the owed Event was recorded (or will never be): forget it. */
void pod_ledger_event_done(struct pod_ledger *l, const char *key);

/*
 * pod_ledger_pending() - the pending-time mark of `key` into *out (zeroed when none: out->set
 * false). pod_ledger_set_pending() - store *mark (a copy), or forget it when !mark->set.
 * Out of memory: the mark is not kept and the pod is not observed.
 */
void pod_ledger_pending(struct pod_ledger *l, const char *key, struct metrics_pending_mark *out);
void pod_ledger_set_pending(struct pod_ledger *l, const char *key,
                            const struct metrics_pending_mark *mark);

/*
 * pod_ledger_forget_verdict() - forget the verdict of `key`: a classification of it is about to
 * read the caches (a change judged until pod_ledger_set_verdict() then re-checks the pod, as
 * the classification may not have seen it), or the pod is no longer pending.
 * pod_ledger_set_verdict() - the classification of pod
 * `uid` (truncated to 63 bytes) found per-node word `word`, which an autoscaler's word replaced
 * when `autoscaler` (core/triage/requeue.h struct requeue_record). Out of memory: no verdict is
 * kept (the pod is then re-checked after every change, as without a record).
 */
void pod_ledger_forget_verdict(struct pod_ledger *l, const char *key);
void pod_ledger_set_verdict(struct pod_ledger *l, const char *key, const char *uid, enum cause word,
                            bool autoscaler);
/* pod_ledger_verdict() - the verdict of `key` into *out (out->valid false when none). */
void pod_ledger_verdict(struct pod_ledger *l, const char *key, struct requeue_record *out);

/* pod_ledger_forget() - the pod is gone: forget all about `key`. */
void pod_ledger_forget(struct pod_ledger *l, const char *key);

/*
 * Which parts of a record pod_ledger_prune() keeps: the pod is still in the cache
 * (POD_LEDGER_KEEP_POD) and still a pending GPU pod (POD_LEDGER_KEEP_PENDING).
 */
enum { POD_LEDGER_KEEP_POD = 1, POD_LEDGER_KEEP_PENDING = 2 };

/*
 * pod_ledger_prune() - after a relist: `keep(ctx, key)` returns POD_LEDGER_KEEP_* bits for every
 * record's key; a pod not kept loses its record, a pod not pending its pending mark (pods
 * deleted or placed while the watch was down; their pending time is not known). keep is called
 * with the ledger's lock held: it may read the store under a read lock its caller holds, and
 * must not call into the ledger.
 */
void pod_ledger_prune(struct pod_ledger *l, unsigned (*keep)(void *ctx, const char *key),
                      void *ctx);

/* pod_ledger_len() - how many pods have a record (for tests and logs). */
size_t pod_ledger_len(struct pod_ledger *l);

#endif
