/*
 * node_state.h - what a node's labels and taints say about its state for GPU pods, beyond what
 * the ladder's steps read: a node an autoscaler is still adding, a node its cloud or its
 * provisioner labels as a GPU node, and the GPU stack's states that the NVIDIA GPU Operator, its
 * MIG manager and its driver manager write as node labels. The ladder's word never depends on
 * these; hints.c names them after the word, and other consumers (the autoscaler evidence) may
 * ask them.
 *
 * Pure functions over model.h projections: no I/O, no allocation, no globals; arguments are
 * borrowed and only read, so every function is safe to call from several threads on shared
 * read-only input. Returned strings are borrowed from the node or static.
 */
#ifndef GPUTRI_CLASSIFY_NODE_STATE_H
#define GPUTRI_CLASSIFY_NODE_STATE_H

#include <stdbool.h>

#include "classify/line.h"
#include "model/model.h"

/*
 * node_autoscaler_joining() - whether `node` is a node an autoscaler launched that has not
 * finished joining: it carries the taint karpenter.sh/unregistered (any effect; Karpenter sets
 * it at launch and removes it at registration), or it carries the label karpenter.sh/nodepool
 * and lacks karpenter.sh/registered or karpenter.sh/initialized (Karpenter adds those labels
 * once the node registered and once its startup taints are gone and its requested resources,
 * such as nvidia.com/gpu, are registered). Sources: kubernetes-sigs/karpenter:
 * pkg/apis/v1/taints.go, pkg/apis/v1/labels.go, pkg/controllers/nodeclaim/lifecycle/
 * registration.go and initialization.go. NULL reads as false.
 */
bool node_autoscaler_joining(const struct knode *node);

/* A label that says a node is a GPU node (node_gpu_label()). */
struct node_gpu_label {
    const char *key;    /* static, e.g. "karpenter.k8s.aws/instance-gpu-count" */
    const char *value;  /* borrowed from the node's labels */
    const char *writer; /* static: "its cloud", "Karpenter", "EKS Auto Mode" */
};

/*
 * node_gpu_label() - the first label, in this order, that marks `node` as a node of a GPU node
 * pool or instance type, written by its cloud or provisioner (gpu-stack-node-states facts §6):
 *   cloud.google.com/gke-accelerator (GKE; any value; GoogleCloudPlatform/
 *     container-engine-accelerators, kubernetes/autoscaler: cluster-autoscaler/cloudprovider/gce
 *     GPULabel), k8s.amazonaws.com/accelerator (EKS node groups, cloudprovider/aws GPULabel),
 *     kubernetes.azure.com/accelerator (AKS, cloudprovider/azure GPULabel): "its cloud";
 *   karpenter.k8s.aws/instance-gpu-count (aws/karpenter-provider-aws: pkg/apis/v1/labels.go),
 *     karpenter.azure.com/sku-gpu-count (Azure/karpenter-provider-azure: pkg/apis/v1beta1/
 *     labels.go): "Karpenter", only with a value that is a base-10 integer above 0;
 *   eks.amazonaws.com/instance-gpu-count (EKS Auto Mode, AWS docs "create-node-pool"):
 *     "EKS Auto Mode", likewise above 0.
 * A GKE node labelled cloud.google.com/gke-gpu-dra-driver=true exposes its GPUs through DRA,
 * not as an extended resource, and has no such label here. Fills *out and returns true when one
 * is found; false (out untouched) otherwise or for a NULL node.
 */
bool node_gpu_label(const struct knode *node, struct node_gpu_label *out);

/* The GPU stack states node_gpu_stack_state() tells apart, most specific first. */
enum gpu_stack_kind {
    GPU_STACK_NONE,
    GPU_STACK_MIG_FAILED,     /* nvidia.com/mig.config.state=failed */
    GPU_STACK_MIG_REBOOTING,  /* nvidia.com/mig.config.state=rebooting */
    GPU_STACK_MIG_PENDING,    /* nvidia.com/mig.config.state=pending */
    GPU_STACK_UPGRADE_FAILED, /* nvidia.com/gpu-driver-upgrade-state=upgrade-failed */
    GPU_STACK_UPGRADING,      /* nvidia.com/gpu-driver-upgrade-state past upgrade-required and
                                 before upgrade-done */
    GPU_STACK_VM,             /* nvidia.com/gpu.workload.config=vm-passthrough or vm-vgpu */
    GPU_STACK_OPERANDS_OFF,   /* nvidia.com/gpu.deploy.operands=false */
    GPU_STACK_PAUSED_MIG,     /* a gate at paused-for-mig-change */
    GPU_STACK_PAUSED_DRIVER,  /* a gate at paused-for-driver-upgrade */
    GPU_STACK_GATE_OFF,       /* a gate at false or any other value but true */
};

/* One node's GPU stack state; strings borrowed from the node's labels or static. */
struct gpu_stack_state {
    enum gpu_stack_kind kind;
    const char *key, *value; /* the label that says it */
    const char *mig_config;  /* nvidia.com/mig.config (the layout asked), or NULL */
};

/*
 * node_gpu_stack_state() - the GPU stack state of `node` read from the labels the NVIDIA GPU
 * Operator's components write (gpu-stack-node-states facts §1-§3; NVIDIA/gpu-operator:
 * controllers/state_manager.go, NVIDIA/mig-parted reconfigure, NVIDIA/k8s-driver-manager,
 * NVIDIA/k8s-operator-libs: pkg/upgrade/consts.go), the first that holds in enum order. The
 * gates looked at are nvidia.com/gpu.deploy.{device-plugin, driver, container-toolkit,
 * operator-validator}, in that order: the operands the container device plugin needs before it
 * registers a GPU resource (each operand DaemonSet selects its gate =true, so any other value
 * removes its pod); gates of other operands (dcgm-exporter, ...) do not keep a GPU resource
 * away and are not read. A value the component does not write (mig.config.state=success,
 * gpu-driver-upgrade-state upgrade-required or upgrade-done, workload.config container) is no
 * state. Fills *out (zeroed first) and returns true when kind is not GPU_STACK_NONE. NULL node:
 * false.
 */
bool node_gpu_stack_state(const struct knode *node, struct gpu_stack_state *out);

/* node_gpu_states() bits. */
#define NODE_GPU_STACK 1u /* node_gpu_stack_state() holds */
#define NODE_GPU_LABEL 2u /* node_gpu_label() holds */

/*
 * node_gpu_states() - node_gpu_stack_state() into *stack and node_gpu_label() into *label, with
 * one pass over the node's labels (for callers that ask both of many nodes): returns
 * NODE_GPU_STACK and NODE_GPU_LABEL for those that hold; *stack is zeroed first, *label is
 * written only with NODE_GPU_LABEL. NULL node: 0.
 */
unsigned node_gpu_states(const struct knode *node, struct gpu_stack_state *stack,
                         struct node_gpu_label *label);

/*
 * gpu_stack_state_put() - append a clause naming node `node_name` and its state, the label
 * quoted, without a leading separator, e.g. "the MIG manager is reconfiguring node n1 to
 * all-1g.10gb (nvidia.com/mig.config.state=pending; the GPU operands are paused meanwhile)".
 * Nothing for GPU_STACK_NONE.
 */
void gpu_stack_state_put(struct line *l, const char *node_name, const struct gpu_stack_state *s);

#endif
