/*
 * dra_ladder.h - the DRA steps of the ladder (classify.h), internal to core/classify.
 *
 * classify() prepares once per call (dra_prep_new: resolves the pod's claims through the view
 * and compiles every selector once), then asks per node (dra_node). Semantics and upstream
 * sources: classify.h. A prep is read-only after dra_prep_new but for its CEL budget, which every
 * evaluation charges; it is used by one classify() call (one thread).
 */
#ifndef GPUTRI_CLASSIFY_DRA_LADDER_H
#define GPUTRI_CLASSIFY_DRA_LADDER_H

#include <stdbool.h>

#include "classify/classify.h"
#include "classify/line.h"

struct dra_prep;

/*
 * dra_prep_new() - resolve pod->claims through `view`, and add the requests kube-scheduler
 * builds for the pod's extended resources that a DeviceClass serves (dra_ext.h). *out is NULL
 * when the pod has no claims and no such resources (nothing to do). Returns K_OK or K_ENOMEM.
 */
int dra_prep_new(const struct kpod *pod, const struct dra_view *view, struct dra_prep **out);
void dra_prep_free(struct dra_prep *p);

/*
 * dra_prep_serves() - whether a DeviceClass serves the pod's extended resource `resource` (the
 * prep holds requests for it, dra_ext.h): on a node whose allocatable lacks it, the DRA steps
 * take the place of the resource steps. False for a NULL prep.
 */
bool dra_prep_serves(const struct dra_prep *p, const char *resource);

/*
 * dra_prep_ext() - whether a DeviceClass serves one of the pod's extended resources (the prep
 * holds requests for it): on a node without a device plugin for it, kube-scheduler creates the
 * pod's claim for them in PreBind, so a nominated node may mean binding. False for a NULL prep.
 */
bool dra_prep_ext(const struct dra_prep *p);

/* Whether the pod has GPU claims (or claims that cannot be inspected). */
bool dra_prep_gpu(const struct dra_prep *p);

/* dra_prep_allocated() - the pod's own claims that are allocated (status.allocation; borrowed
 * from the view), *n their number; p NULL: none (NULL, 0). */
const struct dra_claim *const *dra_prep_allocated(const struct dra_prep *p, size_t *n);

/*
 * dra_prep_pod_cause() - the pod-level steps: CAUSE_DRA_TEMPLATE_MISSING,
 * CAUSE_DRA_CLAIM_MISSING or CAUSE_DRA_CLASS_MISSING with the detail written to `l`, or
 * CAUSE_GPU_FITS when they pass (nothing written).
 */
enum cause dra_prep_pod_cause(const struct dra_prep *p, struct line *l);

/* Whether every allocated claim of the pod allows the node (status.allocation.nodeSelector). */
bool dra_prep_node_allowed(const struct dra_prep *p, const struct knode *node);
/* Name the allocated claims whose nodeSelector narrows the candidates ("" when none). */
void dra_prep_put_narrowing(const struct dra_prep *p, struct line *l);

/*
 * dra_node() - the DRA step for one candidate node: fills v->dra_* (v->dra_step
 * CAUSE_GPU_FITS when the pod has nothing to allocate or it fits), charging the prep's CEL
 * budget (classify.h dra_view.cel_budget) and recording in v->dra_cel_left what was left
 * before. With `l` non-NULL the node is described there instead, from a verdict this function
 * filled before: it is evaluated again with a budget of v->dra_cel_left steps, so the
 * description agrees with the verdict whatever was spent in between; those steps are charged
 * to the prep's budget for describing (dra_put_holders), not to the verdicts'.
 */
void dra_node(const struct dra_prep *p, const struct knode *node, struct node_verdict *v,
              struct line *l);

/* dra_put_holders() - "; node N: m matching, f free; held by claim ns/c (pod p)" for the first
 * request that is exhausted on the node; nothing when none is, or when the prep's budget for
 * describing (DRA_CEL_MAX_STEPS more, shared with dra_node's descriptions) is spent. */
void dra_put_holders(const struct dra_prep *p, const struct knode *node, struct line *l);

#endif
