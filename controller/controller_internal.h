/*
 * controller_internal.h - the state the controller's parts share, and how they call each other.
 * Not the controller's API (controller.h); the controller's own files and its unit tests include
 * it. Where each concern lives:
 *   controller.c - lifecycle: wiring (controller_new), startup and shutdown (controller_run),
 *                  the leader-election thread
 *   handlers.c   - informer event handlers: objects into the store, pod keys onto the workqueue
 *   workers.c    - the reconcile workers: one key at a time, writes gated by leadership
 *   probes.c     - /metrics, /healthz, /livez, /readyz and the API request counter
 *   pod_ledger.c - what the controller remembers about a pod beyond the cache (pod_ledger.h)
 */
#ifndef GPUTRI_CONTROLLER_INTERNAL_H
#define GPUTRI_CONTROLLER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cache/dra_informers.h"
#include "cache/dra_store.h"
#include "cache/workload_informer.h"
#include "cache/workload_store.h"
#include "cache/gang_informers.h"
#include "cache/gang_store.h"
#include "cache/informer.h"
#include "cache/pod_events.h"
#include "cache/store.h"
#include "cache/workqueue.h"
#include "controller.h"
#include "httpd.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/lease.h"
#include "leader.h"
#include "pod_ledger.h"
#include "quota_owners.h"
#include "reconcile.h"
#include "util/clock.h"
#include "util/version.h"

#define USER_AGENT "gputri-controller/" GPUTRI_VERSION

/*
 * A pod whose GPUs fit is only reported once it stayed unplaced for GPU_FITS_GRACE_MS: right
 * after a GPU is freed the scheduler's last PodScheduled=False still stands until its next try,
 * which its backoff (at most 10 s by default) may delay.
 */
#define GPU_FITS_GRACE_MS 10000

/* The Event streams the controller reads (controller.c: one informer each): the autoscalers'
 * (the first CONTROLLER_AUTOSCALER_SOURCES, --autoscaler-events), then the quota refusals of
 * pods' claims (resource_claim) and of owners' pods (FailedCreate, CONTROLLER_OWNER_EVENTS), and
 * the kubelets' warnings about bound GPU pods that have not started (kubelet). */
#define CONTROLLER_EVENT_SOURCES 5
#define CONTROLLER_AUTOSCALER_SOURCES 2
/* The component name of the FailedCreate stream (several writers: no source selector). */
#define CONTROLLER_OWNER_EVENTS "workload-controllers"
/* How long controller_run waits for their first LIST before the workers start. */
#define CONTROLLER_EVENTS_SYNC_WAIT_MS 10000

struct controller {
    const struct kube_config *cfg;
    struct controller_options opts;
    struct clock clock; /* opts.clock, or the system clock */
    struct store *store;
    struct workqueue *queue;
    struct informer *pods, *nodes;
    /* DRA: the store, and its informers at the version of resource.k8s.io served (NULL when
     * opts.dra_classes is NULL) */
    struct dra_store *dra;
    struct dra_informers *dra_watch;
    struct controller_dra_ctx {
        struct controller *c;
        enum dra_kind kind;
    } dra_ctx[DRA_KIND_COUNT];
    /* the pods' Event records (triage_event_kind: the autoscalers', the quota refusals' of claims,
     * the kubelets'), and one informer per Event stream (CONTROLLER_EVENT_SOURCES) */
    struct pod_events *pod_events;
    struct informer *events_inf[CONTROLLER_EVENT_SOURCES];
    /* the owners whose GPU pods a ResourceQuota refuses (quota_owners.h), and the recorder that
     * writes their Events from its own thread (posted by the FailedCreate handler) */
    struct quota_owners *quota_owners;
    struct event_recorder *owner_events;
    struct kube_client *owner_client;
    struct kube_client *owner_get_client; /* the main thread's: is a refused owner still there */
    int64_t quota_tick_ms;                /* controller_quota_owners_tick's last run (monotonic) */
    struct controller_events_ctx {
        struct controller *c;
        const char *component; /* "cluster-autoscaler", "karpenter", "resource_claim",
                                  CONTROLLER_OWNER_EVENTS, "kubelet" (static) */
        const char *name;      /* the informer's name, "events/<component>" (static) */
    } events_ctx[CONTROLLER_EVENT_SOURCES];
    /* Kueue's Workloads (queue-waiting) and their informer at the version of kueue.x-k8s.io
     * served (workloads.c) */
    struct workload_store *workloads;
    struct workload_informer *workload_watch;
    /* gangs: the gang objects and PodGroup Events (cache/gang_store.h), read by gang_watch
     * while their APIs are served (cache/gang_informers.h) */
    struct gang_store *gangs;
    struct gang_informers *gang_watch;
    atomic_llong autoscaler_seen; /* wall seconds of the last autoscaler verdict on any pod */
    atomic_int dra_synced;        /* a DRA version is read and its informers have synced:
                                   * reconciles use the DRA store (set by the main thread) */
    unsigned dra_generation;      /* dra_informers_generation() last followed (main thread) */
    pthread_t *workers;
    int n_workers;
    /* causes written, gpu-fits grace, owed Events, pending-time marks (its own lock) */
    struct pod_ledger *ledger;
    /* while a LIST is being applied, node/usage changes are folded into one requeue at its end */
    atomic_int listing;
    /*
     * Held by the informers' handlers from a store or DRA store write until the change is
     * judged (which pending pods it can affect, core/triage/requeue.h): the changes are judged
     * one by one in the order they were applied, each against the verdicts as they stood
     * before it. Taken before the store's locks; the workers never take it.
     */
    pthread_mutex_t apply_mu;

    struct metrics *metrics;
    struct event_recorder *events;
    struct httpd *metrics_srv, *health_srv;
    /* --metrics-secure: the certificate, the reviews' client and the decision cache */
    struct tls_source *metrics_tls;
    struct kube_client *auth_client;
    struct metrics_auth *metrics_auth;

    /* leader election: NULL le when off */
    struct leader_elector *le;
    struct kube_client *le_client;
    struct kube_lease_lock le_lock;
    pthread_t le_thread;
    int le_started;
    atomic_int le_stop;
    pthread_mutex_t le_mu;
    pthread_cond_t le_cv;
};

/* ---- workloads.c */

/*
 * controller_workload_handlers() - the Workload informer's handlers (ctx = c): project the
 * Workload (kube/project_workload.h; an object that cannot be read is dropped, logged at
 * --v=2), put it into c->workloads or remove it, and on a change of what gputri reads requeue
 * the pending pods it owns: a Pod owner by its key, any other owner (a Job) by the pending pods
 * of that controller owner.
 */
struct informer_handlers controller_workload_handlers(struct controller *c);

/* ---- controller.c */

/*
 * controller_dra_follow() - follow the DRA informers (core/cache/dra_informers.h) from the main
 * thread: when a version is read and its informers have synced since the version last changed,
 * the DRA store is used from then on (dra_synced) and every pending pod with claims is looked at
 * again; when none is read any more, the store is not used (controller_dra_gone). Returns
 * whether it changed anything. Not thread-safe (the main thread calls it).
 */
#define CONTROLLER_DRA_DISCOVERY_MS DRA_INFORMERS_DISCOVERY_MS
bool controller_dra_follow(struct controller *c);

/* ---- handlers.c */

/*
 * controller_pod_handlers() / controller_node_handlers() - the informer handlers for pods and
 * nodes (ctx = c): apply the object to the store (one store lock per event); for a pod, tell the
 * ledger what the watch showed (the cause it carries settles a written one; the pending-time
 * mark moves on, metrics_pending_step) and forget a deleted pod; queue the pod's key when its
 * work may have changed and drop it when the pod needs none; after node or usage changes
 * (batched while a LIST is applied) queue the pending GPU pods whose word the change can move
 * (core/triage/requeue.h, from the verdict the ledger keeps; every one with opts.recheck_all);
 * after a relist of pods, prune the ledger of pods gone. Called from the informers' threads.
 */
struct informer_handlers controller_pod_handlers(struct controller *c);
struct informer_handlers controller_node_handlers(struct controller *c);

/*
 * controller_dra_handlers() - the informer handlers for DRA kind `kind` (ctx =
 * &c->dra_ctx[kind], which must be filled): apply the object to the DRA store; after a change
 * (batched while a LIST is applied, like node changes) queue, as re-checks, the pending pods
 * with resourceClaims it may concern: for a ResourceClaim that holds no devices before or
 * after (no status.allocation in the cached or the new version; what kube-controller-manager
 * creates for every pod made from a template) the pods that use it (by resourceClaimName or
 * status.resourceClaimStatuses); for a ResourceClaimTemplate the pods that name it; for a
 * DeviceClass the pods whose claims may name it; for a ResourceSlice or an allocated claim
 * (devices appear, vanish, are taken or freed) the claim's users and the pods whose verdict
 * reads devices (core/triage/requeue.h requeue_after_dra_change; every claim pod with
 * opts.recheck_all); for an object that could not be read, every claim pod. Called from the
 * informers' threads.
 */
struct informer_handlers controller_dra_handlers(struct controller *c, enum dra_kind kind);

/*
 * controller_events_handlers() - the informer handlers for one autoscaler's Events (x->c, its
 * source.component and name must be filled): an Event that is an autoscaler's verdict on a pod
 * (classify/autoscaler.h autoscaler_parse) about a pending GPU pod the store holds (same uid)
 * goes into c->pod_events, and the pod is queued as a re-check (low priority, coalesced: an
 * Event storm must not hold back newly blocked pods) when its records changed; a deleted Event
 * removes its record; a relist sweeps that writer's records and re-checks every pending pod. Called
 * from the informer's thread.
 */
struct informer_handlers controller_events_handlers(struct controller_events_ctx *x);

/*
 * controller_quota_owners_tick() - at most every CONTROLLER_QUOTA_TICK_MS: forget the owners
 * that are no longer refused (quota_owners_expire_noted: a pod of theirs created after the refusal,
 * or no refusal for QUOTA_OWNER_WINDOW), writing a Normal Event on those that got their pods;
 * and those found deleted (core/triage/owner_alive.h, a blocking GET each). Main thread.
 */
#define CONTROLLER_QUOTA_TICK_MS 2000
/* A refused owner is looked up (GET) when it enters the table and then every this many seconds,
 * at most CONTROLLER_OWNER_CHECKS per tick; a deleted one is forgotten. */
#define CONTROLLER_OWNER_CHECK_S 30
#define CONTROLLER_OWNER_CHECKS 4
void controller_quota_owners_tick(struct controller *c);

/*
 * controller_enqueue_recheck() - queue pod `key` for a re-check caused by something other than
 * the pod's own object (a node, GPU usage, a DRA object, a relist, a resync, a new leader). The
 * one way such keys are queued; a pod's own change goes straight onto the workqueue.
 * Thread-safe.
 */
void controller_enqueue_recheck(struct controller *c, const char *key);
/*
 * controller_enqueue_pending() - queue every pending GPU pod, and every bound GPU pod whose GPU
 * containers have not all started (store_is_starting_gpu_pod), as re-checks (they may have a
 * new answer): at low priority (workqueue_add_low: behind pods seen first or changed themselves,
 * and at most once per --recheck-interval each).
 */
void controller_enqueue_pending(struct controller *c);
/* controller_enqueue_claim_pods() - queue every pending pod that has resourceClaims (low). */
void controller_enqueue_claim_pods(struct controller *c);
/*
 * controller_dra_gone() - the DRA API is not read any more (its informers stopped, maybe in the
 * middle of a LIST): forget the DRA informers' LIST marks (`listing`) and queue every pending
 * GPU pod (low), whose word may have depended on DRA objects.
 */
void controller_dra_gone(struct controller *c);

/*
 * controller_gang_changed() - a gang_changed_fn (cache/gang_informers.h; ctx = c): queue, as
 * re-checks, the pending GPU pods of group (kind, ns, name), or every pending GPU pod of a gang
 * of that kind when ns / name are NULL. Thread-safe.
 */
void controller_gang_changed(void *ctx, enum gang_kind k, const char *ns, const char *name);

/* ---- workers.c */

/* controller_may_write() - true without leader election, else while this replica leads. */
bool controller_may_write(struct controller *c);

/*
 * A pod_writer around `inner` that refuses (K_ECANCELED, "not the leader") when this replica may
 * not write, checked right before each write, and counts successful writes in the metrics.
 */
struct gated_writer {
    struct controller *c;
    struct pod_writer inner;
};
struct pod_writer controller_gated_writer(struct gated_writer *g);

/*
 * controller_process() - reconcile key "ns/name" once through `w`: plan (reconcile.h); hold a
 * gpu-fits verdict back until GPU_FITS_GRACE_MS after it was first seen (requeued with a delay);
 * write; remember what was written until the watch shows it; requeue with backoff on 429, 5xx
 * and transport errors (at least Retry-After), at once on 409. Thread-safe for different keys
 * (the workqueue never hands one key to two workers).
 */
void controller_process(struct controller *c, struct pod_writer *w, const char *key);

/* controller_worker() - the worker thread (arg = c): workqueue_get, process, done, until shut. */
void *controller_worker(void *arg);

/* ---- probes.c */

/*
 * controller_probes_start() - serve /metrics on opts.metrics_addr and the probes on
 * opts.health_addr (on the metrics server when both name one fixed address), and count every API
 * request in the metrics. Returns K_OK, or the error of a server that could not start (logged).
 */
int controller_probes_start(struct controller *c);
/* controller_probes_stop() - stop both servers and the request counting. Idempotent. */
void controller_probes_stop(struct controller *c);

/* controller_serve() - answer one probe or metrics request (an httpd_handler_fn, ctx = c). */
unsigned controller_serve(void *ctx, const char *path, struct buf *body, const char **content_type);

#endif
