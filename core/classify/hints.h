/*
 * hints.h - near misses the detail names after the ladder's word (the word stays what the ladder
 * says). Internal to core/classify; pure; a line is used by one thread.
 *
 * The hints, each only where its word is the answer:
 *   taint, no-gpu-node, allocatable-zero, exhausted   over the pod's candidates only (nodes that
 *                     pass its node selection, pod_matches_node_selection(); a node left out by
 *                     an allocated DRA claim still counts): those in a GPU stack state
 *                     (node_state.h node_gpu_stack_state(): MIG change, driver upgrade, operand
 *                     gates, VM workloads), the deciding node first, two named and the rest
 *                     counted; then those labelled GPU nodes by their cloud or provisioner
 *                     (node_state.h node_gpu_label()) that list no GPU resource at all and are in
 *                     no GPU stack state: the driver installer or device plugin has not finished.
 *                     Nodes that serve the resource (listed, all allocatable, untainted,
 *                     schedulable) are not looked at; with taint and exhausted neither are nodes
 *                     that list no GPU resource key at all (not even at 0): their labels would be
 *                     read for every such pod of a cluster of CPU nodes (bench_classify)
 *   no-gpu-node       before those, the GPU resources the deciding node does advertise (a MIG
 *                     profile of another size, nvidia.com/gpu.shared after time-slicing renamed
 *                     it)
 *   label-mismatch    a node whose label has the asked value plus "-SHARED" (NVIDIA GPU feature
 *                     discovery with time-slicing renameByDefault renames nvidia.com/gpu.product)
 *   exhausted, gpu-fits   GPUs of the deciding node that are unhealthy (allocatable below
 *                     capacity: the device plugin reports them so)
 *   any node-level word   a resource only a vendor's scheduler places (gpu.h
 *                     gpu_vendor_scheduler) asked of another scheduler
 * Sources: NVIDIA k8s-device-plugin (docs on sharing: renameByDefault, nvidia.com/gpu.shared,
 * "-SHARED"; MIG strategies mixed/single), node_state.h for the node labels, HAMi and Volcano
 * vGPU resource names.
 */
#ifndef GPUTRI_CLASSIFY_HINTS_H
#define GPUTRI_CLASSIFY_HINTS_H

#include "classify/classify.h"
#include "classify/line.h"

/*
 * hints_put() - append "; <hint>" for each hint that applies to the outcome `cause` of `in`'s pod;
 * `best` is the deciding node's verdict (NULL for label-mismatch, where no node is a candidate).
 * Reads only its arguments. Cost: the nodes times the pod's node selection (selector entries
 * and affinity requirements) plus their labels.
 */
void hints_put(struct line *l, const struct classify_input *in, enum cause cause,
               const struct node_verdict *best);

#endif
