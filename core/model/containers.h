/*
 * containers.h - what the kubelet leaves on a bound pod: per container of spec.initContainers and
 * spec.containers, its status.initContainerStatuses / containerStatuses entry (kubernetes/api:
 * core/v1/types.go ContainerStatus, ContainerState*), and whether the container is a GPU
 * container. Read by the after-placement steps of the ladder (classify/placement.h) and by the
 * store's rule of which bound pods it keeps watching (cache/store.h store_is_starting_gpu_pod).
 *
 * Bounds: at most POD_CONTAINERS_MAX containers are kept (init containers first, then the
 * regular ones, in spec order; `total` counts them all), each message at most
 * CONTAINER_MESSAGE_MAX bytes, cut at a UTF-8 character boundary (a runtime error chain is a few
 * hundred bytes; the API server does not bound these strings).
 *
 * Ownership: struct pod_containers owns its array and every string in it (pod_containers_free).
 * Strings are NUL-terminated, NULL when absent. Not thread-safe; plain data.
 */
#ifndef GPUTRI_MODEL_CONTAINERS_H
#define GPUTRI_MODEL_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POD_CONTAINERS_MAX 32
#define CONTAINER_MESSAGE_MAX 1024

struct kpod;

struct container_state {
    char *name;
    uint32_t index;    /* over spec.initContainers, then spec.containers (as pod_ext_request) */
    bool init;         /* from spec.initContainers */
    bool gpu_resource; /* its requests or limits name a GPU resource of the set, or an extended
                          resource a DeviceClass may serve (model/dra.h pod_ext_request) */
    bool claim_ref;    /* resources.claims names one of the pod's resource claims */
    bool has_status;   /* the kubelet wrote a status for it */
    bool running;      /* state.running */
    bool terminated;   /* state.terminated */
    bool started;      /* status.started */
    char *term_reason; /* state.terminated.reason */
    char *waiting_reason, *waiting_message; /* state.waiting */
    bool has_last;                          /* lastState.terminated is set */
    char *last_reason, *last_message;       /* lastState.terminated */
    int32_t last_exit_code;
    int32_t restarts; /* restartCount */
};

struct pod_containers {
    struct container_state *items;
    size_t n;     /* kept, at most POD_CONTAINERS_MAX */
    size_t total; /* containers in the spec */
};

/* pod_containers_free() - free *c and everything in it. NULL-safe. */
void pod_containers_free(struct pod_containers *c);

/* pod_containers_equal() - the same containers, states and strings in order (NULL equals only
 * NULL). Pure. */
bool pod_containers_equal(const struct pod_containers *a, const struct pod_containers *b);

/*
 * container_start_failed_reason() - whether a terminated reason is the runtime's "the task could
 * not start" (containerd CRI errorStartReason "StartError"; Docker's "ContainerCannotRun"), as
 * opposed to an application that ran and exited. NULL-safe; pure.
 */
bool container_start_failed_reason(const char *reason);

/*
 * container_started_once() - whether the container has run at all, as far as its status tells:
 * state.running, or state.terminated / lastState.terminated with a reason other than a start
 * failure (container_start_failed_reason). A container without a status has not. Pure.
 */
bool container_started_once(const struct container_state *c);

/*
 * container_is_gpu() - whether `c` counts as a GPU container of its pod: it requests a GPU
 * resource (gpu_resource), or it references a claim and `claims_gpu` (the pod's claims ask for
 * a GPU, or the caller cannot tell and must assume so). When the pod has no container that does
 * either (pod-level resources, a GPU reached otherwise), every container counts:
 * pod_containers_any_gpu() says which case holds. Pure.
 */
bool container_is_gpu(const struct container_state *c, bool claims_gpu);
bool pod_containers_any_gpu(const struct pod_containers *cs, bool claims_gpu);

/*
 * pod_gpu_containers_started() - whether every GPU container of the pod (container_is_gpu, or
 * every container when none is one) has started once. True when the pod has no container
 * projection, or is in phase Running with no container status at all (the kubelet writes the
 * statuses with the phase, kubernetes/kubernetes: pkg/kubelet/kubelet_pods.go getPhase; only a
 * fake node does otherwise): nothing to watch. `claims_gpu` as container_is_gpu. Pure; thread-safe
 * on read-only input.
 */
bool pod_gpu_containers_started(const struct kpod *p, bool claims_gpu);

/*
 * container_message_dup() - a copy of `s` of at most CONTAINER_MESSAGE_MAX bytes, cut at a
 * UTF-8 character boundary (a cut never splits a sequence; invalid bytes count as one each).
 * NULL for NULL. *out receives the copy; returns 0, or -1 on ENOMEM.
 */
int container_message_dup(const char *s, char **out);

#endif
