/*
 * controller.h - the gputri controller: informers for pods and nodes feed the store, event
 * handlers turn changes into pod keys on a workqueue, and workers reconcile each key
 * (reconcile.h). The sample-controller architecture
 * (kubernetes/sample-controller: controller.go), in C.
 */
#ifndef GPUTRI_CONTROLLER_H
#define GPUTRI_CONTROLLER_H

#include "kube/config.h"
#include "model/gpu.h"

struct controller_options {
    int workers;             /* reconcile threads, default 2 */
    int resync_seconds;      /* re-check every pending GPU pod this often, default 300 */
    const char *instance;    /* reportingInstance of Events (host name) */
};

struct controller;

/*
 * controller_new() - wire everything up; `cfg` and `gpus` are borrowed and must outlive the
 * controller. Returns NULL on allocation failure.
 */
struct controller *controller_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                                  const struct controller_options *opts);

/*
 * controller_run() - start informers and workers, wait for the caches to sync, then serve until
 * *stop becomes non-zero (set from a signal handler or another thread); shuts down cleanly and
 * returns 0, or 1 when it could not start.
 */
int controller_run(struct controller *c, const volatile int *stop);

void controller_free(struct controller *c);

#endif
