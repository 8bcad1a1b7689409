/*
 * binding.h - a pod the scheduler nominated a node for: preemption, or binding in progress
 * (internal to core/classify; the words preempting, binding and binding-failed of classify.h).
 *
 * Since NominatedNodeNameForExpectation (KEP-5278, beta and on from 1.35) the scheduler sets
 * status.nominatedNodeName at the start of a binding cycle when a PreBind plugin has work:
 * DynamicResources publishing claim allocations and waiting for binding conditions, VolumeBinding
 * binding PVCs (kubernetes/kubernetes: pkg/scheduler/schedule_one.go, PreBindPreFlight). Before,
 * only preemption set it (pkg/scheduler/framework/preemption). So a nominated node with pods
 * still terminating there is preemption; without, for a pod with claims, PVC volumes or binding
 * conditions, it is binding.
 *
 * Binding conditions (KEP-5007; kubernetes/kubernetes: pkg/scheduler/framework/plugins/
 * dynamicresources/dynamicresources.go isClaimReadyForBinding, isClaimTimeout, PreBind): an
 * allocated device whose result lists bindingConditions is ready when every one is True in the
 * claim's status.devices[] entry for it (no entry: not ready); it failed when one of its
 * bindingFailureConditions is True there; it timed out when it is not ready and
 * status.allocation.allocationTimestamp + the plugin's bindingTimeout is past. The scheduler then
 * clears the allocation (PostFilter) and schedules the pod again, and the pod's PodScheduled
 * condition keeps the scheduler's error ("device binding failed: ...", "device binding timeout:
 * ...", ErrDeviceBindingFailed / ErrDeviceBindingTimeout) until the next attempt.
 */
#ifndef GPUTRI_CLASSIFY_BINDING_H
#define GPUTRI_CLASSIFY_BINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"
#include "classify/line.h"

/* What the pod's own allocated claims say about binding conditions. */
struct binding_facts {
    size_t devices; /* allocated devices whose result lists bindingConditions */
    size_t pending; /* of those, the ones not ready (no failure condition True) */
    /* the first pending device: its claim and result, and its first condition not True */
    const struct dra_claim *pending_claim;
    const struct dra_result *pending_result;
    const char *pending_condition;
    /* the first device with a bindingFailureCondition True, and that condition */
    const struct dra_claim *failed_claim;
    const struct dra_result *failed_result;
    const struct dra_condition *failed;
    /* the first claim not ready past its allocationTimestamp + timeout, and how long it waited
     * (seconds since allocationTimestamp; with `now` 0 nothing times out) */
    const struct dra_claim *timed_out_claim;
    int64_t waited;
    /* the earliest time a pending claim times out: its allocationTimestamp + timeout + 1
     * (seconds since the epoch; 0: none, or no timestamp); the word changes then by itself */
    int64_t deadline;
};

/*
 * binding_facts_of() - fill *out (zeroed first; pointers borrowed from claims) from the pod's own
 * claims claims[0..n) (NULL entries skipped): only allocated results with bindingConditions
 * count. now: seconds since the epoch (0: unknown, no timeout decided); timeout: seconds (the
 * plugin's bindingTimeout). Pure; thread-safe on read-only input.
 */
void binding_facts_of(const struct dra_claim *const *claims, size_t n, int64_t now, int64_t timeout,
                      struct binding_facts *out);

/* Whether the scheduler's PodScheduled message is its binding-condition error (failed or timed
 * out, see above). */
bool binding_scheduler_failed(const struct kpod *pod);

/*
 * binding_put() - the detail of `binding` (failed false) or `binding-failed` (failed true) for
 * `pod` with these facts, into l: the nominated node (when set), what PreBind waits for
 * (conditions pending with device and claim, how long of `timeout`; or the claims / PVCs it
 * binds), the failure condition with reason and message, the timeout, or the scheduler's
 * message. Pure.
 */
void binding_put(struct line *l, const struct kpod *pod, const struct binding_facts *f,
                 int64_t timeout, bool failed);

#endif
