/*
 * classify.h - name in one word why a GPU pod is not running. Pure: no I/O, no clock, no globals.
 *
 * The ladder, checked in this order (the seed lab's order; semantics from the default
 * kube-scheduler, see each step):
 *   no-request       the pod's effective request of every GPU resource is 0
 *   node-rejected    bound, then status.phase Failed with a status.reason the kubelet's pod
 *                    admission writes (UnexpectedAdmissionError from the device manager,
 *                    TopologyAffinityError, OutOf<resource>, NodeAffinity, ...; the set of
 *                    kubernetes/kubernetes: pkg/kubelet/kubelet.go admissionRejectionReasons and
 *                    pkg/kubelet/lifecycle/predicate.go; Evicted only with the admission
 *                    handler's "The node had condition" message, pkg/kubelet/eviction)
 *   runtime-missing  bound, a GPU container not started yet, and the pod sandbox cannot be
 *                    created because the node's container runtime has no handler for the pod's
 *                    RuntimeClass (kubelet Event FailedCreatePodSandBox "no runtime for "nvidia"
 *                    is configured"; pkg/kubelet/kuberuntime/kuberuntime_manager.go)
 *   image-pull-failed  bound, a GPU container waits in ErrImagePull / ImagePullBackOff
 *                    (pkg/kubelet/images/image_manager.go); the detail quotes the registry
 *   container-start-failed  bound, a GPU container never started for a GPU reason: the NVIDIA
 *                    container toolkit's hook or CDI device injection failed (waiting
 *                    CreateContainerError / RunContainerError / CrashLoopBackOff with
 *                    lastState.terminated.reason StartError; pkg/kubelet/kubelet_pods.go getPhase
 *                    keeps such a pod in phase Running)
 *   ok               spec.nodeName is set
 *   quota-exceeded   a ResourceQuota refuses an object the pod needs: its ResourceClaim from
 *                    a template (kube-controller-manager's Event FailedResourceClaimCreation,
 *                    "exceeded quota"; pkg/controller/resourceclaim/controller.go)
 *   queue-waiting    a queue controller holds the pod back: its Kueue Workload has not
 *                    reserved quota, or its KAI / Volcano PodGroup reports the queue over its
 *                    quota; the detail quotes the queue's own reason and names the object
 *   gang-waiting     the pod's gang (KAI or Volcano PodGroup, upstream Workload / PodGroup) needs
 *                    more member pods than exist, so no scheduler tries it
 *   scheduling-gated spec.schedulingGates is not empty: the scheduler does not look at the pod
 *                    (PodScheduled reason SchedulingGated; kubernetes/kubernetes:
 *                    pkg/scheduler/framework/plugins/schedulinggates)
 *   preempting       status.nominatedNodeName is set and pods are still terminating on that
 *                    node (classify_input.victims): a scheduler evicted lower-priority pods there
 *                    and the pod will most likely run (pkg/scheduler/framework/preemption); also
 *                    when nothing terminates there and the pod has no claims, PVC volumes or
 *                    binding conditions (preemption done, the pod not bound yet); not blocking
 *   binding-failed   (the pod is not bound) an allocated device of its claims has a
 *                    bindingFailureCondition True in status.devices, or its bindingConditions
 *                    are not all True past status.allocation.allocationTimestamp +
 *                    classify_input.binding_timeout, or the scheduler's PodScheduled message is
 *                    its "device binding failed" / "device binding timeout" error (not
 *                    nominated again): the scheduler gives up the node, clears the allocation and
 *                    schedules again (pkg/scheduler/framework/plugins/dynamicresources PreBind,
 *                    isClaimReadyForBinding, isClaimTimeout); blocking. The name is the
 *                    scheduler's own: ErrDeviceBindingFailed "device binding failed" (the
 *                    timeout, ErrDeviceBindingTimeout, is a binding that failed to finish)
 *   binding          status.nominatedNodeName is set, no pod terminates there, and the pod has
 *                    claims, PVC volumes or binding conditions: since
 *                    NominatedNodeNameForExpectation (KEP-5278, on from 1.35) the scheduler
 *                    nominates at the start of binding when PreBind has work; the detail quotes
 *                    the binding conditions still pending (classify/binding.h); not blocking
 *   no-scheduler     spec.schedulerName is not default-scheduler and the pod has had no
 *                    PodScheduled condition for no_scheduler_grace seconds: no scheduler of
 *                    that name serves it (every scheduler sets the condition on its first try,
 *                    pkg/scheduler/schedule_one.go handleSchedulingFailure)
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
 * beats one that does not, then the later failing step beats the earlier, then (both exhausted)
 * more free units; ties go to the first node in input order. The detail counts the per-node
 * outcomes like the scheduler's histogram.
 *
 * The per-node ladder (classify_node), the ranking (node_verdict_cmp) and the loop over the nodes
 * (classify_nodes) are exported so that every consumer (explain, the admission webhook) evaluates
 * nodes with this one implementation.
 *
 * Dynamic Resource Allocation (resource.k8s.io/v1), when classify_input.dra is set. A pod has
 * GPU claims when a request (exactly, or any firstAvailable alternative) of one of its
 * claims names a DeviceClass whose name, or the driver the class selects (model/dra.h), is in
 * dra->gpu_classes; a claim or template that cannot be found cannot be inspected, and the pod
 * is still reported (it is blocked by it, and nothing says it is not a GPU claim). The full
 * ladder is then:
 *   no-request, ok       as above (a bound pod is ok whatever its claims)
 *   dra-template-missing a resourceClaimTemplateName names no ResourceClaimTemplate (the pod
 *                        gets no PodScheduled condition, only FailedResourceClaimCreation)
 *   dra-claim-missing    a resourceClaimName (or the claim generated for a template, from
 *                        status.resourceClaimStatuses) names no ResourceClaim, the claim is
 *                        being deleted, or a generated claim is owned by another pod
 *                        (pkg/scheduler/framework/plugins/dynamicresources PreEnqueue)
 *   dra-class-missing    a request, or every firstAvailable alternative, names no DeviceClass
 *                        (PreFilter: "request r: device class c does not exist")
 *   label-mismatch, taint   as above; a pod claim already allocated (status.allocation) with a
 *                        nodeSelector removes the nodes outside it from the candidates
 *                        ("resourceclaim not available on the node")
 *   no-gpu-node .. exhausted   for extended-resource requests, as above
 *   dra-no-driver        no device of the request's class's driver reaches the node
 *   dra-no-match         devices are there but none satisfies the class and request selectors
 *   dra-tainted          matching devices exist and enough of them are free, but too few of the
 *                        free ones are free of a NoSchedule / NoExecute device taint the request
 *                        does not tolerate (every free one, for one device): the taints, not
 *                        other claims, keep the request off them; allocationMode All: a matching
 *                        device carries such a taint (classify/dra_taints.h)
 *   dra-exhausted        matching devices exist, fewer than requested are free (other claims'
 *                        status.allocation results hold them)
 *   gpu-fits
 * A pod asking for both runs both on each node; the earlier failing step decides the node.
 * Extended resources backed by DRA (KEP-5004; DRAExtendedResource, on from 1.36): when
 * dra->extended_class names a DeviceClass serving an extended resource the pod asks for
 * (spec.extendedResourceName, or the implicit deviceclass.resource.kubernetes.io/<class>), a
 * node whose status.allocatable lacks it (absent or 0) does not take the resource steps
 * (no-gpu-node .. exhausted) for it: kube-scheduler builds a claim for the pod there instead,
 * one ExactCount request of the class per container asking for it (named
 * container-<i>-request-<j>, count the container's quantity; a non-sidecar init container's
 * request only for what the later long-lived containers do not already cover, the largest of
 * them kept), and the DRA steps above run for those requests on that node
 * (kubernetes/kubernetes: pkg/scheduler/framework/plugins/dynamicresources/
 * extendeddynamicresources.go filterExtendedResources, createRequestsAndMappings;
 * pkg/scheduler/framework/plugins/noderesources/fit.go shouldDelegateResourceToDRA). The detail
 * says "<resource> is served by DeviceClass <class>". Nodes that list the resource in
 * allocatable keep the device-plugin steps. The claim the scheduler creates for a placed pod
 * (annotation resource.kubernetes.io/extended-resource-claim) holds its devices like any claim.
 * A pod whose only GPU request is such a resource under its implicit name is a GPU pod when the
 * class is a GPU class (dra_exact_is_gpu).
 * Allocation follows kubernetes/kubernetes:
 *   staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go
 *     (GatherPools: per node, the slices with nodeName = node, allNodes, or a matching
 *     nodeSelector; per (driver, pool) only the highest generation; a pool is incomplete when
 *     it has fewer slices than resourceSliceCount; perDeviceNodeSelection slices are not
 *     modelled and reach no node here);
 *   .../stable/allocator_stable.go (validateDeviceRequest, allocateOne, selectorsMatch):
 *     ExactCount takes `count` free matching devices (devices of incomplete pools count);
 *     All takes every matching device, fails when a pool is incomplete or a matching device is
 *     in use, and needs at least one; firstAvailable tries the alternatives in order;
 *     constraints[].matchAttribute: the devices of the named requests (all when none are named)
 *     share one value of the attribute, devices without it never qualify; class selectors, then
 *     request selectors, in order, stopping at the first false or error.
 * What is not modelled is never guessed: requests are checked one by one and against the free
 * devices of their driver together (a joint assignment that upstream's search could still
 * fail is reported as fitting), a selector outside the CEL subset (core/cel/cel.h
 * CEL_UNSUPPORTED) or a lookup it cannot answer makes the devices it decides uncertain: the
 * node is then reported fitting unless something certain fails it (no driver; too few free
 * devices of the driver at all), and the detail names the expression. Shared counters
 * (partitionable devices: a device is free only while the counter sets it draws on still hold
 * what it consumes after every allocated device of its pool) and consumable capacity (a device
 * with allowMultipleAllocations is free for the capacity its shares leave; a request's capacity,
 * or the policy's default, rounded up per validValues / validRange step, must fit; a capacity
 * it can never have makes the device not match) follow the 1.37 allocator: classify/dra_share.h;
 * a device held that way is dra-exhausted, the detail naming the counter set or the shared device
 * and the claims holding it. Device taints (ResourceSlice devices[].taints and DeviceTaintRules)
 * follow the allocator: a device with a NoSchedule or NoExecute taint that no toleration of the
 * request tolerates is never allocated (None and unknown effects never block; allocator_stable.go
 * taintPreventsAllocation). adminAccess, invalid pools (duplicate device names),
 * status.reservedFor being full, and the limit of 32 devices per claim
 * (AllocationResultsMaxSize) are not modelled. When some but not all firstAvailable classes
 * exist, the missing alternatives are skipped. A CEL runtime error on a free device (a
 * SchedulerError upstream, not "cannot allocate") is reported as dra-no-match naming the
 * expression; allocationMode All over an incomplete pool (also a SchedulerError upstream) as
 * dra-no-driver naming the pool.
 */
#ifndef GPUTRI_CLASSIFY_H
#define GPUTRI_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dra.h"
#include "model/gpu.h"
#include "model/model.h"
#include "model/workload.h"

enum cause {
    CAUSE_NO_REQUEST,
    CAUSE_OK,
    CAUSE_LABEL_MISMATCH,
    CAUSE_TAINT,
    CAUSE_NO_GPU_NODE,
    CAUSE_ALLOCATABLE_ZERO,
    CAUSE_EXHAUSTED,
    CAUSE_GPU_FITS,
    /* DRA; their place on the ladder is cause_rank(), not the enum value */
    CAUSE_DRA_TEMPLATE_MISSING,
    CAUSE_DRA_CLAIM_MISSING,
    CAUSE_DRA_CLASS_MISSING,
    CAUSE_DRA_NO_DRIVER,
    CAUSE_DRA_NO_MATCH,
    CAUSE_DRA_EXHAUSTED,
    CAUSE_DRA_TAINTED,
    /* outside "Pending and unschedulable"; their place is cause_rank() too */
    CAUSE_NODE_REJECTED,
    CAUSE_SCHEDULING_GATED,
    CAUSE_NO_SCHEDULER,
    CAUSE_PREEMPTING,
    /* an autoscaler's word on the pod, over the per-node ladder's (classify_input.autoscaler) */
    CAUSE_SCALING_UP,
    CAUSE_SCALE_UP_BLOCKED,
    /* a nominated node without preemption (classify/binding.h); their place is cause_rank() */
    CAUSE_BINDING,
    CAUSE_BINDING_FAILED,
    /* bound, a GPU container not started yet (after node-rejected, before ok) */
    CAUSE_RUNTIME_MISSING,
    CAUSE_IMAGE_PULL_FAILED,
    CAUSE_CONTAINER_START_FAILED,
    /* stopped before kube-scheduler: quota, a queue, a gang (before scheduling-gated) */
    CAUSE_QUOTA_EXCEEDED,
    CAUSE_QUEUE_WAITING,
    CAUSE_GANG_WAITING,
    CAUSE_COUNT, /* not a cause: the number of causes */
};

/*
 * cause_rank() - the position of a cause on the ladder (the order of this file's header):
 * no-request 0, node-rejected 1, runtime-missing 2, image-pull-failed 3,
 * container-start-failed 4, ok 5, quota-exceeded 6, queue-waiting 7, gang-waiting 8,
 * scheduling-gated 9, preempting, binding-failed, binding, no-scheduler, dra-template-missing,
 * dra-claim-missing, dra-class-missing, label-mismatch, taint, no-gpu-node, allocatable-zero,
 * exhausted, dra-no-driver, dra-no-match, dra-tainted, dra-exhausted, gpu-fits 26, then
 * scaling-up 27 and scale-up-blocked 28, which replace a per-node
 * word with an autoscaler's and are never a node's step. Among the per-node steps (label-mismatch
 * to gpu-fits) a higher rank is a later step (closer to running). -1 for a value that is no cause.
 * Pure.
 */
int cause_rank(enum cause c);

/* cause_word() - "no-request", "ok", ... "gpu-fits". Static string. */
const char *cause_word(enum cause c);
/* cause_from_word() - the inverse; returns -1 for an unknown word. */
int cause_from_word(const char *word);
/*
 * cause_event_reason() - the CamelCase Event reason for a cause: GPUNotRequested, GPUPlaced,
 * NodeSelectorMismatch, UntoleratedTaint, NoGPUNode, GPUAllocatableZero, GPUExhausted, GPUFits,
 * DRAClaimTemplateMissing, DRAClaimMissing, DRADeviceClassMissing, DRANoDriver,
 * DRANoMatchingDevice, DRADeviceTainted, DRADevicesExhausted, KubeletRejected, SchedulingGated,
 * SchedulerNotRunning, GPUPreempting, GPUScalingUp, GPUScaleUpBlocked, GPUBinding,
 * DeviceBindingFailed.
 */
const char *cause_event_reason(enum cause c);
/* cause_is_blocking() - true for every cause but no-request, ok, preempting, scaling-up and
 * binding. */
int cause_is_blocking(enum cause c);

/*
 * How far one node got on the per-node ladder (classify_node() fills it). `step` is where the
 * node stops: CAUSE_LABEL_MISMATCH when it fails node selection (then nothing else is set), the
 * failing step CAUSE_TAINT .. CAUSE_EXHAUSTED, or CAUSE_GPU_FITS when the GPU request fits there.
 */
struct node_verdict {
    const struct knode *node; /* borrowed from the input */
    enum cause step;
    /*
     * The resource outcome alone, as if no taint or cordon were there: the earliest resource step
     * (CAUSE_NO_GPU_NODE .. CAUSE_EXHAUSTED) any requested resource fails, or CAUSE_GPU_FITS.
     * Equal to `step` unless step is CAUSE_TAINT (or CAUSE_LABEL_MISMATCH).
     */
    enum cause resource_step;
    /* Every requested GPU resource is listed in status.capacity above 0 (resource_step is past
     * CAUSE_NO_GPU_NODE). */
    bool full_capacity;
    /* For CAUSE_TAINT: the first untolerated taint (borrowed), or NULL for spec.unschedulable. */
    const struct taint *taint;
    /* The resource behind resource_step (borrowed from the pod) and its numbers on this node;
     * with several requested resources the first in request order that fails earliest. */
    const char *resource;
    int64_t capacity, allocatable, allocated, requested;
    /*
     * DRA (classify_input.dra set and the pod has claims to allocate): the step of the pod's
     * requests on this node, CAUSE_DRA_NO_DRIVER .. CAUSE_DRA_EXHAUSTED (CAUSE_DRA_TAINTED
     * included), or CAUSE_GPU_FITS (also
     * when the pod has none). resource_step already includes it. The request that decides
     * (the one that fails earliest; borrowed from the view's records) and its numbers here:
     * devices of the driver that reach the node, those matching the selectors, and of those
     * the free ones; `dra_wanted` the count asked (0 for allocationMode All).
     */
    enum cause dra_step;
    const char *dra_request;
    const char *dra_class;
    const char *dra_driver;
    size_t dra_devices, dra_matching, dra_free;
    int64_t dra_wanted;
    /* Of the matching devices (and the free ones whose selectors are undecided), the free ones
     * (not counted in dra_free) and, for allocationMode All, the held ones that carry a device
     * taint the request does not tolerate. */
    size_t dra_tainted;
    /* The alternative of dra_request that decides (a firstAvailable sub-request, or the request
     * itself) and its class (NULL when the class does not exist); both borrowed from the view's
     * records, NULL when no alternative applies. For dra_pool_counts(). */
    const struct dra_exact *dra_exact;
    const struct dra_class *dra_cls;
    /* The CEL budget's steps left (dra_view.cel_budget) when this node's DRA step began, so that
     * describing the node afterwards evaluates it alike; and whether devices were left
     * undecided on it because the budget was spent (DRA_CEL_MAX_STEPS). */
    uint64_t dra_cel_left;
    bool dra_too_costly;
    /* When the deciding request is one kube-scheduler builds for an extended resource served
     * by DRA: the resource (borrowed from the pod); dra_request then names it too, dra_exact is
     * NULL and dra_cls the serving class (the request is ExactCount dra_wanted of it). */
    const char *dra_resource;
};

/*
 * Usage callback: the sum of the effective requests of `resource` over the non-terminal pods
 * bound to `node` (terminal = Succeeded or Failed; terminating pods still count), the pod being
 * classified excluded. The cache keeps these sums up to date; tests compute them from fixtures.
 */
typedef int64_t (*node_usage_fn)(void *ctx, const char *node, const char *resource);

/*
 * node_resource_step() - the resource steps of the ladder for one requested resource on one node,
 * from status.capacity and status.allocatable of `node` (a missing entry reads as 0) and the units
 * `allocated` to the node's pods: CAUSE_NO_GPU_NODE when capacity <= 0, CAUSE_ALLOCATABLE_ZERO
 * when allocatable <= 0, CAUSE_EXHAUSTED when allocatable - allocated < requested (computed
 * without overflow), else CAUSE_GPU_FITS. Units are the resource's whole units (model.h).
 * kubernetes/kubernetes: pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest (one
 * "Insufficient" for all three; the ladder tells them apart). Pure; thread-safe.
 */
enum cause node_resource_step(const struct knode *node, const char *resource, int64_t requested,
                              int64_t allocated);

/*
 * classify_node() - the per-node ladder for `pod` on one node, the filters in the scheduler's
 * order: node selection (spec.nodeSelector and required node affinity,
 * kubernetes/kubernetes: pkg/scheduler/framework/plugins/nodeaffinity), cordon
 * (pkg/scheduler/framework/plugins/nodeunschedulable: spec.unschedulable blocks unless the pod
 * tolerates node.kubernetes.io/unschedulable:NoSchedule), taints
 * (pkg/scheduler/framework/plugins/tainttoleration: the first NoSchedule/NoExecute taint not
 * tolerated), then node_resource_step() for every requested GPU resource (amounts <= 0 skipped)
 * with usage(usage_ctx, node name, resource) as `allocated` (usage may be NULL: nothing
 * allocated; a negative sum reads as 0). Unlike the scheduler it evaluates the resources of a
 * tainted node too, so `resource_step` says what would follow once the taint is tolerated.
 * Fills *out (zeroed first; pointers borrowed from pod and node) and returns true when the node
 * passes node selection (a candidate), false otherwise (out->step CAUSE_LABEL_MISMATCH). The pod's
 * spec.nodeName is not looked at. Reads nothing but its arguments; thread-safe on read-only input.
 */
bool classify_node(const struct kpod *pod, const struct knode *node, node_usage_fn usage,
                   void *usage_ctx, struct node_verdict *out);

/*
 * node_verdict_free() - the free units of the verdict's resource: allocatable - allocated, 0
 * when that is not positive, INT64_MAX when it is larger. Pure; thread-safe.
 */
int64_t node_verdict_free(const struct node_verdict *v);

/*
 * node_verdict_cmp() - the closest-node ranking, qsort-compatible over struct node_verdict
 * (a and b point to verdicts): negative when a came closer than b, positive when b did, 0 when
 * equally close. Closer means, in this order: lists every requested resource in capacity
 * (full_capacity), then a later step on the ladder (cause_rank), then (both CAUSE_EXHAUSTED) more
 * free units of the failing resource, (both CAUSE_DRA_EXHAUSTED) more free matching devices.
 * classify() keeps the first node in input order among equally close ones; qsort callers add their
 * own tie-break for a stable order. Pure; thread-safe.
 */
int node_verdict_cmp(const void *a, const void *b);

/*
 * classify_nodes() - the per-node ladder of `pod` over every node and the closest candidate, by
 * the loop classify() runs (without DRA: claims are not looked at): verdicts[i] (caller storage
 * for n_nodes entries) receives classify_node() of nodes[i], in input order (step
 * CAUSE_LABEL_MISMATCH for a node outside the selection, and for a NULL entry). Returns the index
 * of the closest candidate by node_verdict_cmp, the first in input order among equally close ones
 * (the node classify() decides by), or SIZE_MAX when no node is a candidate. usage / usage_ctx
 * as classify_node (usage NULL: nothing allocated). For consumers that look at the nodes
 * themselves (the admission webhook's node checks). Pointers in the verdicts borrow from pod and
 * nodes. Reads nothing but its arguments; thread-safe on read-only input and distinct verdicts.
 */
size_t classify_nodes(const struct kpod *pod, const struct knode *const *nodes, size_t n_nodes,
                      node_usage_fn usage, void *usage_ctx, struct node_verdict *verdicts);

/*
 * The DRA objects, served by lookups the cache answers from its indexes (tests from fixtures).
 * Every record returned is borrowed: it must stay valid and unchanged for the classify() call
 * and for as long as the caller reads the result's verdicts (they point into it). The
 * callbacks must be safe to call from several threads at once when classify() is.
 *   claim(ctx, ns, name)          the ResourceClaim, or NULL
 *   claim_template(ctx, ns, name) the ResourceClaimTemplate, or NULL
 *   device_class(ctx, name)       the DeviceClass, or NULL
 *   node_slices(ctx, node, driver, buf, cap)  the ResourceSlices of `driver` (every driver when
 *                                 NULL) that may reach the node: those with that nodeName and
 *                                 every allNodes / nodeSelector slice (a superset is fine:
 *                                 classify applies the node selection, generations and pool
 *                                 completeness itself). Writes at most `cap` borrowed pointers
 *                                 to buf (classify's scratch, DRA_MAX_NODE_SLICES entries) and
 *                                 returns how many there are in all; past `cap` the rest is not
 *                                 looked at.
 *   device_holder(ctx, driver, pool, device)  the claim whose status.allocation.devices.results
 *                                 names this device (without adminAccess, without a shareID), or
 *                                 NULL when it is free.
 *   device_shares(ctx, driver, pool, device, buf, cap)  the claims whose results name this
 *                                 device with a shareID (a device that allows multiple
 *                                 allocations, KEP-5075), each once; writes at most `cap`
 *                                 borrowed pointers, returns how many there are in all. NULL:
 *                                 no shares are known (every shared device counts as unused).
 *   device_taint_rules(ctx, driver, pool, device, buf, cap)  the DeviceTaintRules selecting the
 *                                 device (model/dra.h dra_taint_rule_selects), at most `cap`
 *                                 borrowed pointers to buf, returning how many there are in all;
 *                                 NULL: no rules (their taints are added to the device's own, as
 *                                 the scheduler's ResourceSlice tracker does).
 */
struct cel_budget;

struct dra_view {
    const struct gpu_set
        *gpu_classes; /* DeviceClass / driver name patterns (DRA_GPU_SET_DEFAULT) */
    /*
     * The CEL budget (core/cel/cel.h struct cel_budget) that compiling and evaluating the
     * selectors charges, or NULL: each classify(), dra_count_matching() and dra_pool_counts()
     * call then charges one of its own of DRA_CEL_MAX_STEPS. A caller wanting one bound over
     * several calls (the webhook: one per admitted object) points it at its own budget; the
     * budget is the one thing the calls write through the view, so such a view is used by one
     * thread at a time. Carried in the view rather than as a parameter so that every caller
     * that builds a view ({0}, dra_store_view) gets the default without a change.
     */
    struct cel_budget *cel_budget;
    void *ctx;
    const struct dra_claim *(*claim)(void *ctx, const char *ns, const char *name);
    const struct dra_template *(*claim_template)(void *ctx, const char *ns, const char *name);
    const struct dra_class *(*device_class)(void *ctx, const char *name);
    size_t (*node_slices)(void *ctx, const char *node, const char *driver,
                          const struct dra_slice **buf, size_t cap);
    const struct dra_claim *(*device_holder)(void *ctx, const char *driver, const char *pool,
                                             const char *device);
    size_t (*device_shares)(void *ctx, const char *driver, const char *pool, const char *device,
                            const struct dra_claim **buf, size_t cap);
    size_t (*device_taint_rules)(void *ctx, const char *driver, const char *pool,
                                 const char *device, const struct dra_taint_rule **buf, size_t cap);
    /* The DeviceClass serving an extended resource (model/dra.h dra_extended_class_serves, of
     * several dra_extended_class_wins), or NULL; a NULL callback: DRA serves no extended
     * resource (the ladder then treats them as before KEP-5004). */
    const struct dra_class *(*extended_class)(void *ctx, const char *resource);
};

/* Slices per node and driver that classify() looks at (node_slices above). */
#define DRA_MAX_NODE_SLICES 1024

/*
 * The CEL steps (core/cel/cel.h: cost) one classification may spend on selectors, compiling
 * and evaluating, whatever the number of nodes and devices: 8,388,608 steps, at most about
 * 126 ms of CPU at CEL_NS_PER_STEP (15 ns). A lab-sized or 5,000-node cluster of 8-device
 * slices with selectors of a few comparisons spends well under a million. Once it is spent,
 * every further device is undecided (CEL_UNKNOWN, as for a selector outside the subset): the
 * ladder counts it as possibly matching, so no dra-no-match or dra-exhausted verdict rests on
 * a selector that was not evaluated (a step that holds either way stays, its numbers marked
 * uncertain), and the detail says "selectors too costly to check (the CEL budget of this
 * classification is spent), so only what is certain is reported" (or "... on other nodes"
 * when the deciding node was evaluated in full). Describing the deciding node and the holders
 * of others takes at most as much again (dra_ladder.h), so classify() spends at most
 * 2 * DRA_CEL_MAX_STEPS, about 0.25 s. Kubernetes itself limits each evaluation, not their
 * number (cel.h). For a caller that builds classify_input (the controller, the CLI): nothing
 * to do for this bound; to share one budget over several calls, point dra_view.cel_budget at
 * it.
 */
#define DRA_CEL_MAX_STEPS (8u << 20)

/*
 * dra_exact_is_gpu() - whether one request alternative (`exactly`, or one firstAvailable
 * sub-request) is a GPU request: its deviceClassName, or the driver its class `cls` selects
 * (model/dra.h dra_class.driver; cls may be NULL when the class does not exist), is in
 * view->gpu_classes. The rule classify() uses to tell pods with GPU claims. Pure; thread-safe.
 */
bool dra_exact_is_gpu(const struct dra_view *view, const struct dra_exact *e,
                      const struct dra_class *cls);

/* What dra_count_matching() found for one request alternative over a set of nodes. */
struct dra_match_count {
    size_t most;              /* the most devices satisfying the selectors on one node */
    size_t most_possible;     /* the most on one node counting devices the selectors leave
                                 undecided (CEL_UNKNOWN: an expression outside the subset) */
    const struct knode *node; /* the first node with `most` (borrowed), NULL when no node */
    size_t devices;           /* devices of the class's driver that reach that node */
    bool reached;             /* some device of the class's driver reaches some node */
    const char *undecided;    /* an expression that could not be evaluated (borrowed), or NULL */
    bool too_costly;          /* some devices were left undecided because the CEL budget
                                 (dra_view.cel_budget) was spent: CEL_TOO_COSTLY */
};

/*
 * dra_count_matching() - per node, the devices that the per-node DRA step of the ladder counts
 * as `dra_matching` (node_verdict) for one alternative `e` of class `cls` (non-NULL): the
 * devices of the class's driver (every driver when the class selects none) in the pools that
 * reach the node (newest generation; view->node_slices), satisfying the class selectors then
 * e's selectors (allocator_stable.go selectorsMatch), whether allocated or not (held devices
 * count: this is what the node has, not what is free). The evaluation is the ladder's own
 * (dra_ladder.c), with the selectors compiled once for all nodes. `nodes` may be any subset;
 * view->device_holder is not needed (may be NULL). Fills *out (zeroed first). Returns K_OK or
 * K_ENOMEM. Cost: the devices reaching each node times the selectors. Thread-safe on
 * read-only input.
 */
int dra_count_matching(const struct dra_view *view, const struct dra_exact *e,
                       const struct dra_class *cls, const struct knode *const *nodes,
                       size_t n_nodes, struct dra_match_count *out);

/* One pool of a driver on one node, as dra_pool_counts() counts it. */
struct dra_pool_count {
    const char *driver, *pool; /* borrowed from the view's slices */
    size_t devices;            /* devices of the pool's newest generation reaching the node */
    size_t matching;           /* of those, the ones satisfying the class and request selectors */
    size_t free_matching;      /* of the matching, those no other claim holds and without a
                                  device taint the request does not tolerate */
    size_t tainted;            /* of the matching, free but with such a taint */
};

/*
 * dra_pool_counts() - per pool of the class's driver reaching `node` (newest generation; pools
 * in the order node_slices returns their slices), the devices, those matching alternative `e`
 * of class `cls` (non-NULL), and of those the free ones, by the same evaluation as
 * dra_count_matching() and the ladder's per-node step (dra_ladder.c alt_node; an expression
 * outside the CEL subset counts as not matching here). Free means view->device_holder (may be
 * NULL: all free) names no claim. Writes at most `max` rows to `out` and their number to *n;
 * pools past `max` are not counted. Returns K_OK or K_ENOMEM. Thread-safe on read-only input.
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/
 * internal/stable/pools_stable.go (GatherPools: the newest generation of each pool).
 */
int dra_pool_counts(const struct dra_view *view, const struct dra_exact *e,
                    const struct dra_class *cls, const struct knode *node,
                    struct dra_pool_count *out, size_t max, size_t *n);

/* One device of a class on a node, as dra_class_devices() sees it (every pointer borrowed from
 * the view, valid while the caller holds the view's lock). */
struct dra_device_seen {
    const struct dra_slice *slice; /* the newest generation of its pool reaching the node */
    const struct dra_device *device;
    int match;  /* the class selectors: 1 true, 0 false or an error, -1 undecided (CEL_UNKNOWN) */
    bool free_; /* no claim holds it (a shared device: capacity and counters left) */
    /* the first taint no toleration of a request without tolerations tolerates (NoSchedule or
     * NoExecute; dra_taints.h dra_device_blocking_taint), or NULL; taint_rule: the
     * DeviceTaintRule it comes from (NULL: the ResourceSlice's own). Only for match != 0. */
    const struct dra_taint *taint;
    const struct dra_taint_rule *taint_rule;
};

/*
 * dra_class_devices() - call fn once per device of class `cls`'s driver (every driver when the
 * class selects none) in the pools reaching `node`, with what the per-node DRA step of the ladder
 * sees for a request of the class without selectors, tolerations or admin access (the same
 * evaluation as dra_pool_counts: allocated = view->device_holder names a claim or a shared
 * device has nothing left, tainted = a taint blocks it). For the node view of the CLI
 * (cli/nodes.h), so that "allocated" and "tainted" have one implementation. Returns K_OK or
 * K_ENOMEM. Thread-safe on read-only input.
 */
int dra_class_devices(const struct dra_view *view, const struct dra_class *cls,
                      const struct knode *node,
                      void (*fn)(void *ctx, const struct dra_device_seen *seen), void *ctx);

struct autoscaler_evidence; /* classify/autoscaler.h */
struct gang_facts;          /* model/gang.h */
struct quota_refusal;       /* classify/quota.h */
struct placement_facts;     /* classify/placement.h */

struct classify_input {
    const struct kpod *pod;
    const struct knode *const *nodes; /* every Node object */
    size_t n_nodes;
    node_usage_fn usage;
    void *usage_ctx;
    const struct dra_view *dra; /* NULL: no DRA (claims not looked at) */
    /* What classify() cannot see in the objects (it reads no clock and no other pod): */
    int64_t now;                /* seconds since the epoch; 0: unknown, no-scheduler is never
                                   decided */
    int64_t no_scheduler_grace; /* seconds; 0: CLASSIFY_NO_SCHEDULER_GRACE */
    size_t rejected_siblings;   /* for node-rejected: other pods of the pod's controller
                                   (owner_uid) that a kubelet rejected in the last hour */
    const char *const *victims; /* for preempting: pods still terminating on the nominated node
                                   ("namespace/name", borrowed), the first n_victims of
                                   victims_total */
    size_t n_victims, victims_total;
    /* The DynamicResources plugin's bindingTimeout in seconds (binding-failed); 0:
     * CLASSIFY_BINDING_TIMEOUT. */
    int64_t binding_timeout;
    /*
     * What node autoscalers said about the pod (classify/autoscaler.h records, borrowed, any
     * order; NULL / 0: nothing) and how long such a word holds: `provision_window` seconds
     * (Cluster Autoscaler's --max-node-provision-time; 0: CLASSIFY_PROVISION_WINDOW). Read only
     * when the per-node ladder gives the word (label-mismatch .. gpu-fits, dra-no-driver ..
     * dra-exhausted): the newest record that is not stale (autoscaler_pick, with `now`) turns it
     * into scaling-up (a scale-up triggered; a Karpenter nomination whose node is absent or still
     * joining) or scale-up-blocked (refused or failed); without one, a candidate node an
     * autoscaler is still adding (node_state.h node_autoscaler_joining) makes it scaling-up. The
     * detail then keeps what the current nodes say: "...; on the current nodes: <word>: ...".
     */
    const struct autoscaler_evidence *autoscaler;
    size_t n_autoscaler;
    int64_t provision_window;
    /* queue-waiting from Kueue (classify/queue.h): the pod's Kueue Workload (borrowed; NULL:
     * none known, or Kueue's API not served). */
    const struct kworkload *workload;
    /*
     * quota-exceeded: kube-controller-manager's newest refusal of one of the pod's claims by a
     * ResourceQuota (classify/quota.h quota_claim_event; borrowed; NULL: none). It decides only
     * while it still holds (quota_claim_current: the pod unbound, that template claim not created).
     */
    const struct quota_refusal *quota;
    /* The pod's gang (classify/gang.h: its group, its members, the group's Events), borrowed;
     * NULL: the pod has no gang link or its kind is not read (gang-waiting and the PodGroup half
     * of queue-waiting are then never decided). */
    const struct gang_facts *gang;
    /* For runtime-missing .. container-start-failed: the kubelet's Warning Events about the
     * bound pod (classify/placement.h; borrowed; NULL: none). The pod's node (its GPU feature
     * discovery labels) is read from `nodes`. */
    const struct placement_facts *placement;
};

/* The default provisioning window: Cluster Autoscaler's --max-node-provision-time (15 minutes,
 * kubernetes/autoscaler: cluster-autoscaler/config/flags). */
#define CLASSIFY_PROVISION_WINDOW 900

/* The default binding timeout: kubernetes/kubernetes: pkg/scheduler/apis/config/
 * types_pluginargs.go DynamicResourcesBindingTimeoutDefault (600 s, DynamicResourcesArgs
 * bindingTimeout). */
#define CLASSIFY_BINDING_TIMEOUT 600

/* The default grace period before a pod of a scheduler that never answers is no-scheduler. */
#define CLASSIFY_NO_SCHEDULER_GRACE 30

/* node-rejected is decided by model/model.h pod_rejected_by_kubelet(). */

/*
 * pod_no_scheduler_pending() - for a pod that would be no-scheduler but for its age: the seconds
 * until the grace period ends (> 0), else 0. Lets a caller look again then. Pure.
 */
int64_t pod_no_scheduler_pending(const struct kpod *pod, int64_t now, int64_t grace);

struct classify_result {
    enum cause cause;
    char detail[1024];   /* one line, the numbers and node names; no trailing newline */
    size_t n_candidates; /* nodes that pass node selection */
    /* per-outcome counts over the candidates, indexed by enum cause */
    size_t counts[CAUSE_COUNT];
    /* per-node verdicts in input order, filled only when the caller passes storage */
    struct node_verdict *verdicts; /* caller-owned array of n_nodes, or NULL */
    size_t n_verdicts;             /* set by classify(): candidates written to `verdicts` */
    struct node_verdict closest;   /* the deciding node; .node NULL when there is none */
    /*
     * The per-node ladder's word when autoscaler evidence or a joining node replaced it with
     * scaling-up or scale-up-blocked; otherwise equal to `cause`. What the current nodes say,
     * for the re-check policy (core/triage/requeue.h).
     */
    enum cause ladder_cause;
    /* When the evidence that decided goes stale (seconds since the epoch; 0: none decided, or
     * it never does): the word may change then without any object changing. */
    int64_t autoscaler_until;
    /* binding: the scheduler waits for binding conditions not yet True (classify/binding.h),
     * rather than binding at once */
    bool binding_waits;
    /* binding: when the binding timeout of a pending claim passes (seconds since the epoch; 0:
     * none): the word turns binding-failed then without any object changing */
    int64_t binding_until;
};

/*
 * classify() - run the ladder. `out->verdicts` may point to caller storage for n_nodes entries
 * to receive every candidate's verdict (used by `explain`); otherwise set it to NULL.
 * Returns K_OK, K_EINVAL when in->pod is NULL, or K_ENOMEM (DRA: the selectors are compiled
 * once per call into scratch memory). Reads nothing but its arguments (and the DRA view's
 * lookups); safe to call from several threads on shared read-only input.
 */
int classify(const struct classify_input *in, struct classify_result *out);

#endif
