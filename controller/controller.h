/*
 * controller.h - the gputri controller: informers for pods and nodes feed the store, event
 * handlers turn changes into pod keys on a workqueue, and workers reconcile each key
 * (reconcile.h). The sample-controller architecture
 * (kubernetes/sample-controller: controller.go), in C.
 */
#ifndef GPUTRI_CONTROLLER_H
#define GPUTRI_CONTROLLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/config.h"
#include "model/gpu.h"
#include "util/clock.h"

struct controller_options {
    int workers;        /* reconcile threads, default 2 */
    int resync_seconds; /* re-check every pending GPU pod this often, default 300 */
    /*
     * After a change of nodes, GPU usage or DRA devices: false (--recheck=targeted, the
     * default) re-checks only the pending pods whose word the change can move
     * (core/triage/requeue.h); true (--recheck=all) every pending GPU pod, as before.
     */
    bool recheck_all;
    /*
     * The shortest time between two re-checks of one pod caused by other objects' changes
     * (workqueue_set_recheck_interval; --recheck-interval, whose default is 1000); 0: every
     * change re-checks at once. Changes of the pod itself are never delayed.
     */
    int64_t recheck_interval_ms;
    const char *instance; /* reportingInstance of Events (host name) */

    /*
     * Leader election (leader.h). When off, this replica always writes. When on, every replica
     * keeps its caches synced, but only the holder of Lease lease_namespace/lease_name writes.
     */
    int leader_elect;
    const char *lease_namespace;
    const char *lease_name;
    const char *identity; /* holderIdentity: host name + "_" + random */
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;

    /* "[host]:port" to serve /metrics and /healthz + /readyz on; NULL or "0" = off. */
    const char *metrics_addr;
    const char *health_addr;
    /* --metrics-secure: /metrics over HTTPS, each request allowed only after a TokenReview and a
     * SubjectAccessReview (metrics_auth.h); the certificate from metrics_cert_file and
     * metrics_key_file (re-read when they change, http/tls_source.h), or self-signed when both
     * are NULL. The probes stay plain HTTP on health_addr (which must then differ). */
    int metrics_secure;
    const char *metrics_cert_file, *metrics_key_file;

    /*
     * DRA: the DeviceClass / driver name patterns of GPU claims (--gpu-device-classes; borrowed,
     * must outlive the controller). NULL: DRA off. When set, the controller reads the DRA objects
     * at the version of resource.k8s.io the API server serves (core/cache/dra_informers.h:
     * discovery at start and every CONTROLLER_DRA_DISCOVERY_MS; v1, else v1beta2, else v1beta1)
     * and runs without DRA while none is served.
     */
    const struct gpu_set *dra_classes;

    /*
     * Read the autoscalers' Events on pods (Cluster Autoscaler's and Karpenter's, one watch of
     * /api/v1/events per source.component; --autoscaler-events, default on) and let them decide
     * scaling-up / scale-up-blocked (classify.h classify_input.autoscaler) for
     * `provision_window` seconds (--max-node-provision-time; 0: CLASSIFY_PROVISION_WINDOW).
     */
    bool autoscaler_events;
    int64_t provision_window;
    /* Seconds a new pod's blocking per-node word waits for an autoscaler's on a cluster where an
     * autoscaler wrote a verdict in the last hour (--autoscaler-grace-period; 0: none;
     * reconcile.h reconcile_env.autoscaler_grace). */
    int64_t autoscaler_grace;

    /* Seconds a pod of a non-default scheduler may go without a PodScheduled condition before
     * it is no-scheduler (--no-scheduler-grace-period); 0: CLASSIFY_NO_SCHEDULER_GRACE. */
    int64_t no_scheduler_grace;

    /* Time for backoff, the gpu-fits grace, Event timestamps, leader election and resync
     * (borrowed, must outlive the controller); NULL for the system clocks. */
    const struct clock *clock;
};

struct controller;

/*
 * controller_new() - wire everything up (informers for pods and nodes, and for the four DRA
 * kinds of resource.k8s.io at the version served: resourceclaims, resourceclaimtemplates,
 * deviceclasses, resourceslices); `cfg` and `gpus` are borrowed and must outlive the
 * controller. Returns NULL on allocation failure.
 */
struct controller *controller_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                                  const struct controller_options *opts);

/*
 * controller_run() - start the metrics and probe servers, informers, leader election and
 * workers, wait for the caches to sync, then serve until *stop becomes non-zero (set from a
 * signal handler or another thread). Shuts down cleanly: workers finish, then a held Lease is
 * released, then the informers stop. Returns 0, or 1 when it could not start (e.g. a bind
 * address in use).
 */
int controller_run(struct controller *c, const atomic_int *stop);

void controller_free(struct controller *c);

#endif
