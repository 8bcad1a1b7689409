/*
 * requeue_model.h - the equivalence check of the targeted re-check policy (core/triage/requeue.h)
 * against re-checking every pending pod, on a small random cluster driven by a byte stream.
 *
 * The model keeps a store of up to RQ_NODES nodes and RQ_PODS pods in namespace "t", built from
 * API JSON through the store's *_delta writers. Each step applies one change (a pending pod
 * created or changed, bound, a GPU holder placed, finished or deleted; a node added, removed,
 * relabelled, tainted, cordoned, its capacity or allocatable changed), then does what the
 * controller does: the pod written is re-checked (its own change), every other pending GPU pod
 * only when requeue_after_store_change() says so, each re-check recording the word in the pod's
 * requeue_record. Then every pending GPU pod is classified from scratch, as re-checking
 * everything would, and the two words compared. DRA: a DeviceClass that comes and goes, one
 * ResourceSlice per node (0 to 3 devices), pod i's ResourceClaim c<i> (created, allocated on a
 * node with a nodeSelector, released, deleted) and holder claims h<j> taking devices on node j;
 * after each DRA write the pending claim pods requeue_after_dra_event() names are re-checked.
 */
#ifndef GPUTRI_TEST_REQUEUE_MODEL_H
#define GPUTRI_TEST_REQUEUE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define RQ_NODES 6
#define RQ_PODS 12

struct rq_model;

/* rq_model_new() - an empty cluster; NULL on ENOMEM. */
struct rq_model *rq_model_new(void);
void rq_model_free(struct rq_model *m);

/*
 * rq_model_step() - apply the change that (op, a, b, c) choose (any byte values) and compare.
 * Returns 0 when every pending GPU pod's recorded word equals its classification from scratch,
 * -1 otherwise (rq_model_why() says which pod and what). Any other failure (out of memory)
 * aborts.
 */
int rq_model_step(struct rq_model *m, uint8_t op, uint8_t a, uint8_t b, uint8_t c);

/* rq_model_why() - the last difference found, "" when none. Borrowed. */
const char *rq_model_why(const struct rq_model *m);

/* How many classifications each policy made so far (targeted: own changes and re-checks; all:
 * every pending GPU pod after every change of usage or nodes, plus own changes). */
void rq_model_counts(const struct rq_model *m, size_t *targeted, size_t *all, size_t *steps);

#endif
