/*
 * hints.h - near misses the detail names after the ladder's word (the word stays what the ladder
 * says). Internal to core/classify; pure; a line is used by one thread.
 *
 * The hints, each only where its word is the answer:
 *   no-gpu-node       a node its cloud labels as a GPU node (cloud.google.com/gke-accelerator,
 *                     k8s.amazonaws.com/accelerator, kubernetes.azure.com/accelerator) that lists
 *                     no GPU resource yet: the driver installer or device plugin has not finished;
 *                     the GPU resources the closest node does advertise (a MIG profile of another
 *                     size, nvidia.com/gpu.shared after time-slicing renamed it)
 *   label-mismatch    a node whose label has the asked value plus "-SHARED" (NVIDIA GPU feature
 *                     discovery with time-slicing renameByDefault renames nvidia.com/gpu.product)
 *   exhausted, gpu-fits   GPUs of the deciding node that are unhealthy (allocatable below
 *                     capacity: the device plugin reports them so)
 *   any node-level word   a resource only a vendor's scheduler places (gpu.h
 *                     gpu_vendor_scheduler) asked of another scheduler
 * Sources: NVIDIA k8s-device-plugin (docs on sharing: renameByDefault, nvidia.com/gpu.shared,
 * "-SHARED"; MIG strategies mixed/single), GKE/EKS/AKS node labels of GPU node pools, HAMi and
 * Volcano vGPU resource names.
 */
#ifndef GPUTRI_CLASSIFY_HINTS_H
#define GPUTRI_CLASSIFY_HINTS_H

#include "classify/classify.h"
#include "classify/line.h"

/*
 * hints_put() - append "; <hint>" for each hint that applies to the outcome `cause` of `in`'s pod;
 * `best` is the deciding node's verdict (NULL for label-mismatch, where no node is a candidate).
 * Reads only its arguments. Cost: the nodes times the pod's node-selector entries.
 */
void hints_put(struct line *l, const struct classify_input *in, enum cause cause,
               const struct node_verdict *best);

#endif
