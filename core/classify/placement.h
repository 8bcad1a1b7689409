/*
 * placement.h - the after-placement steps of the ladder (classify.h: runtime-missing,
 * image-pull-failed, container-start-failed): a bound GPU pod whose GPU containers have not all
 * started once, read from its container statuses (model/containers.h) and the kubelet's Warning
 * Events about it. Facts and exact message shapes: kubernetes/kubernetes:
 * pkg/kubelet/kuberuntime/kuberuntime_manager.go (FailedCreatePodSandBox "Failed to create pod
 * sandbox: %v"), pkg/kubelet/images/image_manager.go ("Failed to pull image %q: %v"),
 * pkg/kubelet/kuberuntime/kuberuntime_container.go ("Error: %v"); containerd CRI ("no runtime for
 * %q is configured", errorStartReason "StartError", "CDI device injection failed"); CRI-O
 * ("failed to find runtime handler %s from runtime list"); NVIDIA/libnvidia-container
 * (nvidia-container-cli "<stage> error: <detail>") and NVIDIA/nvidia-container-toolkit
 * ("unresolvable CDI devices"); GPU feature discovery's node labels
 * nvidia.com/cuda.driver-version.* and nvidia.com/cuda.runtime-version.*.
 *
 * Pure: no I/O, no clock, no globals; everything bounded by the inputs' bounds (at most
 * POD_CONTAINERS_MAX containers, PLACEMENT_MAX_EVENTS Events, messages of bounded length).
 * Thread-safe on read-only input.
 */
#ifndef GPUTRI_CLASSIFY_PLACEMENT_H
#define GPUTRI_CLASSIFY_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"
#include "model/model.h"

/* One kubelet Event about the pod, as the triage layer hands it over (strings borrowed). */
struct placement_event {
    const char *reason;  /* "FailedCreatePodSandBox", "Failed", ... */
    const char *message; /* "" when absent */
    int64_t at;          /* the newest of its times, seconds since the epoch; 0: unknown */
};

/* Kubelet Events per pod the ladder reads (cache/pod_events.h keeps as many per pod). */
#define PLACEMENT_MAX_EVENTS 8

/* What classify() reads for the after-placement steps beyond the pod and its node. */
struct placement_facts {
    const struct placement_event *events; /* any order; NULL / 0: none */
    size_t n_events;
};

/*
 * placement_event_kept() - whether an Event is one the after-placement steps read: written by
 * the kubelet (source.component "kubelet"), type Warning, and reason FailedCreatePodSandBox, or
 * reason Failed with a message that is not the bare "Error: ErrImagePull" / "Error:
 * ImagePullBackOff" the kubelet writes after the one that quotes the registry (a cache keeping
 * the newest Event per reason would else lose the registry's words). NULL-safe; pure.
 */
bool placement_event_kept(const char *component, const char *type, const char *reason,
                          const char *message);

/*
 * placement_word() - the after-placement word for bound pod `pod` (node_name set, not rejected):
 * CAUSE_RUNTIME_MISSING, CAUSE_IMAGE_PULL_FAILED or CAUSE_CONTAINER_START_FAILED with the detail
 * appended to `l`, or CAUSE_COUNT (nothing written) when its GPU containers all started once
 * (model/containers.h pod_gpu_containers_started) or nothing GPU-specific stops them (an
 * application that exits, a missing ConfigMap, an image not yet pulled: the pod is `ok`).
 * `node` is the pod's Node (NULL when not known: the driver version is then not named);
 * `claims_gpu` says whether the pod's claims ask for a GPU (containers referencing one are GPU
 * containers); `facts` may be NULL. The rules:
 *   runtime-missing    a FailedCreatePodSandBox Event names a runtime handler the runtime does
 *                      not have, and no GPU container got past ContainerCreating;
 *   image-pull-failed  a GPU container waits in ErrImagePull or ImagePullBackOff; the detail
 *                      quotes the newest "Failed to pull image" Event, else the waiting message;
 *   container-start-failed  a GPU container waits in CreateContainerError or RunContainerError,
 *                      or its last start ended in StartError (CrashLoopBackOff after it), and
 *                      the runtime's message (the status's, else the newest "Error: " Event)
 *                      speaks of the GPU stack: the hint sorts it (driver not loaded, CUDA
 *                      requirement above the node's driver, CDI device unresolved, toolkit hook
 *                      error).
 */
struct line;
enum cause placement_word(const struct kpod *pod, const struct knode *node, bool claims_gpu,
                          const struct placement_facts *facts, struct line *l);

#endif
