/*
 * dra_taints.h - device taints (KEP-5055) on the DRA steps of the ladder, internal to
 * core/classify: which taint keeps a request off a device, and how the detail names it.
 *
 * A device's taints are its ResourceSlice's devices[].taints followed by the taints of the
 * DeviceTaintRules that select it (classify.h dra_view.device_taint_rules), as the scheduler's
 * ResourceSlice tracker appends them (kubernetes/kubernetes:
 * staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go applyPatches);
 * the allocator skips a device with a NoSchedule / NoExecute taint no toleration of the request
 * tolerates (.../structured/internal/stable/allocator_stable.go taintPreventsAllocation).
 * NVIDIA's DRA driver taints unhealthy GPUs (NVIDIA/k8s-dra-driver-gpu:
 * cmd/gpu-kubelet-plugin/device_health.go): gpu.nvidia.com/xid (value: the XID),
 * gpu.nvidia.com/gpu-lost. Pure; thread-safe on read-only input.
 */
#ifndef GPUTRI_CLASSIFY_DRA_TAINTS_H
#define GPUTRI_CLASSIFY_DRA_TAINTS_H

#include "classify/classify.h"
#include "classify/line.h"

/* DeviceTaintRules looked at per device; more are not looked at (clusters have a few). */
#define DRA_MAX_DEVICE_RULES 16

/*
 * dra_device_blocking_taint() - the first taint of device `d` (of `driver`'s pool `pool`) that
 * keeps request alternative `e` off it (model/dra.h dra_taint_blocks), the device's own first,
 * then those of the DeviceTaintRules `view` names for it; NULL when none does. *rule receives
 * the rule the taint comes from (NULL: the ResourceSlice). Borrowed from the device or the view.
 * Cost: the device's taints plus the view's rule lookup.
 */
const struct dra_taint *dra_device_blocking_taint(const struct dra_view *view,
                                                  const struct dra_exact *e, const char *driver,
                                                  const char *pool, const struct dra_device *d,
                                                  const struct dra_taint_rule **rule);

/*
 * dra_put_device_taint() - "device D (pool P) has taint key=value:Effect (ResourceSlice S |
 * DeviceTaintRule R)", then "; " and what to do: for NVIDIA's health keys "the driver marked GPU
 * D unhealthy: XID 79" (gpu.nvidia.com/xid) or "...: the GPU is lost" (gpu.nvidia.com/gpu-lost)
 * and that tolerating it would place the pod on that GPU; otherwise to tolerate it in the
 * request's tolerations or remove the taint.
 */
void dra_put_device_taint(struct line *l, const struct dra_slice *s, const struct dra_device *d,
                          const struct dra_taint *t, const struct dra_taint_rule *rule);

#endif
