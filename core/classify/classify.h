/*
 * classify.h - name in one word why a GPU pod is not running. Pure: no I/O, no clock, no globals.
 *
 * The ladder, checked in this order (the seed lab's order; semantics from the default
 * kube-scheduler, see each step):
 *   no-request       the pod's effective request of every GPU resource is 0
 *   ok               spec.nodeName is set
 *   label-mismatch   no node satisfies spec.nodeSelector AND the required node affinity
 *                    (kubernetes/component-helpers: scheduling/corev1/nodeaffinity/nodeaffinity.go)
 *   taint            every candidate has a NoSchedule/NoExecute taint the pod does not tolerate,
 *                    spec.unschedulable counting as node.kubernetes.io/unschedulable:NoSchedule
 *                    (kubernetes/api: core/v1/toleration.go ToleratesTaint;
 *                     kubernetes/kubernetes: pkg/scheduler/framework/plugins/nodeunschedulable)
 *   no-gpu-node      no candidate lists the resource in status.capacity (a 0 counts as absent)
 *   allocatable-zero capacity above 0 but allocatable 0 or absent
 *   exhausted        allocatable minus the requests of the node's non-terminal pods < request
 *                    (kubernetes/kubernetes: pkg/scheduler/framework/plugins/noderesources/fit.go)
 *   gpu-fits         the GPU request fits on some candidate: something else blocks the pod
 *
 * With several candidates each node runs the per-node ladder (taint, capacity, allocatable, free)
 * and the node that came closest decides: a node that lists every requested resource in capacity
 * beats one that does not, then the later failing step beats the earlier; ties go to the first
 * node in input order. The detail counts the per-node outcomes like the scheduler's histogram.
 */
#ifndef GPUTRI_CLASSIFY_H
#define GPUTRI_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

enum cause {
    CAUSE_NO_REQUEST,
    CAUSE_OK,
    CAUSE_LABEL_MISMATCH,
    CAUSE_TAINT,
    CAUSE_NO_GPU_NODE,
    CAUSE_ALLOCATABLE_ZERO,
    CAUSE_EXHAUSTED,
    CAUSE_GPU_FITS,
};

/* cause_word() - "no-request", "ok", ... "gpu-fits". Static string. */
const char *cause_word(enum cause c);
/* cause_from_word() - the inverse; returns -1 for an unknown word. */
int cause_from_word(const char *word);
/*
 * cause_event_reason() - the CamelCase Event reason for a cause: GPUNotRequested, GPUPlaced,
 * NodeSelectorMismatch, UntoleratedTaint, NoGPUNode, GPUAllocatableZero, GPUExhausted, GPUFits.
 */
const char *cause_event_reason(enum cause c);
/* cause_is_blocking() - true for every cause but no-request and ok. */
int cause_is_blocking(enum cause c);

/*
 * How far one candidate node got on the per-node ladder. `step` is the cause the node fails with
 * (CAUSE_TAINT .. CAUSE_EXHAUSTED) or CAUSE_GPU_FITS when the GPU request fits there.
 */
struct node_verdict {
    const struct knode *node; /* borrowed from the input */
    enum cause step;
    /* For CAUSE_TAINT: the first untolerated taint (borrowed), or NULL for spec.unschedulable. */
    const struct taint *taint;
    /* For the resource steps: the first resource that failed (borrowed) and its numbers. */
    const char *resource;
    int64_t capacity, allocatable, allocated, requested;
};

/*
 * Usage callback: the sum of the effective requests of `resource` over the non-terminal pods
 * bound to `node` (terminal = Succeeded or Failed; terminating pods still count), the pod being
 * classified excluded. The cache keeps these sums up to date; tests compute them from fixtures.
 */
typedef int64_t (*node_usage_fn)(void *ctx, const char *node, const char *resource);

struct classify_input {
    const struct kpod *pod;
    const struct knode *const *nodes; /* every Node object */
    size_t n_nodes;
    node_usage_fn usage;
    void *usage_ctx;
};

struct classify_result {
    enum cause cause;
    char detail[1024];   /* one line, the numbers and node names; no trailing newline */
    size_t n_candidates; /* nodes that pass node selection */
    /* per-outcome counts over the candidates, indexed by enum cause */
    size_t counts[CAUSE_GPU_FITS + 1];
    /* per-node verdicts in input order, filled only when the caller passes storage */
    struct node_verdict *verdicts; /* caller-owned array of n_nodes, or NULL */
    size_t n_verdicts;             /* set by classify(): candidates written to `verdicts` */
    struct node_verdict closest;   /* the deciding node; .node NULL when there is none */
};

/*
 * classify() - run the ladder. `out->verdicts` may point to caller storage for n_nodes entries
 * to receive every candidate's verdict (used by `explain`); otherwise set it to NULL.
 * Returns K_OK, or K_EINVAL when in->pod is NULL. Reads nothing but its arguments; safe to call
 * from several threads on shared read-only input.
 */
int classify(const struct classify_input *in, struct classify_result *out);

#endif
