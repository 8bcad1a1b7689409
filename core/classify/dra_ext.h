/*
 * dra_ext.h - the requests kube-scheduler builds for a pod's extended resources served by DRA
 * (KEP-5004): the ladder's (dra_ladder.c), and the admission webhook's quota check, which
 * counts what the claim will ask. Semantics: classify.h; upstream:
 * kubernetes/kubernetes: pkg/scheduler/framework/plugins/dynamicresources/
 * extendeddynamicresources.go (createRequestsAndMappings, createResourceRequestAndMappings).
 */
#ifndef GPUTRI_CLASSIFY_DRA_EXT_H
#define GPUTRI_CLASSIFY_DRA_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "classify/classify.h"

/* Room for "container-<uint32>-request-<uint32>". */
#define DRA_EXT_NAME_MAX 48

/* One request of the special claim. */
struct dra_ext_req {
    const char *resource;        /* borrowed from the pod */
    const struct dra_class *cls; /* the serving class, borrowed from the view */
    char name[DRA_EXT_NAME_MAX];
    int64_t count;
};

/*
 * dra_ext_build() - the special claim's requests for `pod` (pod->ext requests whose resource
 * view->extended_class serves), sorted by name as the scheduler sorts them: per resource one
 * request per long-lived container (regular or sidecar) asking for it, then for the non-sidecar
 * init containers the largest of what each asks beyond the long-lived requests of the
 * containers from its own index on. Writes at most `max` to out and returns how many there
 * are (0 without view->extended_class). Pure but for the view's lookups.
 */
size_t dra_ext_build(const struct kpod *pod, const struct dra_view *view, struct dra_ext_req *out,
                     size_t max);

#endif
