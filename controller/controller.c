/*
 * controller.c - the controller's lifecycle: wire informers -> store -> workqueue -> workers
 * (controller_new), start and stop them in order (controller_run), and the leader-election
 * thread that gates the writes. The parts: handlers.c, workers.c, probes.c
 * (controller_internal.h).
 */
#include "controller.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller_internal.h"
#include "kube/event_recorder.h"
#include "metrics.h"
#include "util/deadline.h"
#include "util/log.h"
#include "util/result.h"

struct controller *controller_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                                  const struct controller_options *opts)
{
    struct controller *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = cfg;
    c->opts = *opts;
    c->clock = opts->clock ? *opts->clock : *clock_system();
    if (c->opts.workers <= 0)
        c->opts.workers = 2;
    if (c->opts.resync_seconds <= 0)
        c->opts.resync_seconds = 300;
    pthread_mutex_init(&c->le_mu, NULL);
    pthread_mutex_init(&c->apply_mu, NULL);
    pthread_cond_init(&c->le_cv, NULL);
    c->ledger = pod_ledger_new(&c->clock);
    c->metrics = metrics_new();
    c->events = event_recorder_new(&(struct event_recorder_options){
        .aggregate_ttl_ms = 10 * 60 * 1000, .max_entries = 4096, .clock = &c->clock});
    c->store = store_new(gpus);
    if (c->store)
        store_keep_gpu_pods_only(c->store);
    c->queue = workqueue_new(5, 1000 * 1000, &c->clock);
    if (c->queue)
        workqueue_set_recheck_interval(c->queue, c->opts.recheck_interval_ms);
    struct informer_handlers ph = controller_pod_handlers(c);
    struct informer_options po = {.name = "pods", .path = "/api/v1/pods"};
    struct informer_handlers nh = controller_node_handlers(c);
    struct informer_options no = {.name = "nodes", .path = "/api/v1/nodes"};
    c->pods = informer_new(cfg, &po, &ph);
    c->nodes = informer_new(cfg, &no, &nh);
    c->dra = dra_store_new();
    int dra_ok = c->dra != NULL;
    if (dra_ok && c->opts.dra_classes) {
        struct informer_handlers dh[DRA_KIND_COUNT];
        for (int k = 0; k < DRA_KIND_COUNT; k++) {
            c->dra_ctx[k] = (struct controller_dra_ctx){c, (enum dra_kind)k};
            dh[k] = controller_dra_handlers(c, (enum dra_kind)k);
        }
        struct dra_informers_options dopt = {.user_agent = USER_AGENT,
                                             .discovery_ms = CONTROLLER_DRA_DISCOVERY_MS};
        dra_ok = (c->dra_watch = dra_informers_new(cfg, c->dra, dh, &dopt)) != NULL;
    }
    c->workloads = workload_store_new();
    if (c->workloads) {
        struct informer_handlers wh = controller_workload_handlers(c);
        struct workload_informer_options wo = {.user_agent = USER_AGENT};
        c->workload_watch = workload_informer_new(cfg, c->workloads, &wh, &wo);
    }
    c->gangs = gang_store_new();
    struct gang_informers_options gopt = {.user_agent = USER_AGENT};
    int gang_ok = c->gangs && (c->gang_watch = gang_informers_new(cfg, c->gangs, &gopt,
                                                                  controller_gang_changed, c));
    c->pod_events = pod_events_new(0);
    int events_ok = c->pod_events != NULL;
    static const char *const sources[CONTROLLER_EVENT_SOURCES][3] = {
        {"cluster-autoscaler", "events/cluster-autoscaler",
         "/api/v1/events?fieldSelector=source%3Dcluster-autoscaler"},
        {"karpenter", "events/karpenter", "/api/v1/events?fieldSelector=source%3Dkarpenter"},
        /* quota-exceeded (classify/quota.h): kube-controller-manager's resourceclaim controller
           refusing a pod's claim, and the workload controllers refusing an owner's pods */
        {"resource_claim", "events/resource_claim",
         "/api/v1/events?fieldSelector=type%3DWarning%2Creason%3DFailedResourceClaimCreation"},
        {CONTROLLER_OWNER_EVENTS, "events/failed-create",
         "/api/v1/events?fieldSelector=type%3DWarning%2Creason%3DFailedCreate"},
        /* what the kubelet says of a bound GPU pod whose containers do not start
         * (classify/placement.h) */
        {"kubelet", "events/kubelet",
         "/api/v1/events?fieldSelector=source%3Dkubelet%2Ctype%3DWarning"},
    };
    c->quota_owners = quota_owners_new(0);
    /* anyone who may write Events in a namespace can write FailedCreate there: the owners'
       Events go through the webhook's token buckets (event_recorder.h), not one per forgery */
    static const struct event_limit_options owner_limit = {
        .ns_burst = EVENT_LIMIT_NS_BURST,
        .ns_refill_ms = EVENT_LIMIT_NS_REFILL_MS,
        .burst = EVENT_LIMIT_BURST,
        .refill_ms = EVENT_LIMIT_REFILL_MS,
    };
    c->owner_events =
        event_recorder_new(&(struct event_recorder_options){.limit = &owner_limit,
                                                            .aggregate_ttl_ms = 10 * 60 * 1000,
                                                            .max_entries = 4096,
                                                            .queue_capacity = 1024,
                                                            .clock = &c->clock});
    events_ok &= c->quota_owners != NULL && c->owner_events != NULL;
    for (int k = 0; k < CONTROLLER_EVENT_SOURCES; k++) {
        if (k < CONTROLLER_AUTOSCALER_SOURCES && !c->opts.autoscaler_events)
            continue;
        c->events_ctx[k] = (struct controller_events_ctx){c, sources[k][0], sources[k][1]};
        struct informer_handlers eh = controller_events_handlers(&c->events_ctx[k]);
        struct informer_options eo = {.name = sources[k][1], .path = sources[k][2]};
        events_ok &= (c->events_inf[k] = informer_new(cfg, &eo, &eh)) != NULL;
    }
    if (!c->ledger || !c->store || !c->queue || !c->pods || !c->nodes || !c->metrics ||
        !c->events || !dra_ok || !events_ok || !c->workload_watch || !gang_ok) {
        controller_free(c);
        return NULL;
    }
    if (c->opts.leader_elect) {
        struct leader_options lo = {
            .identity = c->opts.identity,
            .lease_duration_ms = c->opts.lease_duration_ms,
            .renew_deadline_ms = c->opts.renew_deadline_ms,
            .retry_period_ms = c->opts.retry_period_ms,
        };
        c->le_client = kube_client_new(cfg, USER_AGENT " leader-election");
        if (c->le_client) /* renewals never queue behind the workers' writes */
            kube_client_set_rate_limited(c->le_client, false);
        if (!c->le_client ||
            kube_lease_lock_init(&c->le_lock, c->le_client, c->opts.lease_namespace,
                                 c->opts.lease_name) != K_OK) {
            controller_free(c);
            return NULL;
        }
        struct lease_lock ops = kube_lease_lock_ops(&c->le_lock);
        c->le = leader_new(&lo, &ops, &c->clock);
        if (!c->le) {
            controller_free(c);
            return NULL;
        }
    }
    return c;
}

/* The elector thread: one step per retry period; a new leader requeues every pending pod. */
static void *elect(void *arg)
{
    struct controller *c = arg;
    int was = 0;
    while (!atomic_load(&c->le_stop)) {
        int leading = leader_step(c->le);
        if (leading && !was)
            controller_enqueue_pending(c);
        was = leading;
        int64_t until = clock_mono_ms(NULL) + leader_next_delay_ms(c->le); /* real time */
        pthread_mutex_lock(&c->le_mu);
        if (!atomic_load(&c->le_stop))
            deadline_wait(&c->le_cv, &c->le_mu, CLOCK_REALTIME, NULL, until, 0);
        pthread_mutex_unlock(&c->le_mu);
    }
    return NULL;
}

static void stop_elector(struct controller *c)
{
    if (!c->le_started)
        return;
    pthread_mutex_lock(&c->le_mu);
    atomic_store(&c->le_stop, 1);
    pthread_cond_broadcast(&c->le_cv);
    pthread_mutex_unlock(&c->le_mu);
    pthread_join(c->le_thread, NULL);
    c->le_started = 0;
}

/* Once the DRA informers have synced: reconciles use the DRA store from now on. */
static void dra_now_synced(struct controller *c)
{
    dra_store_read_lock(c->dra);
    log_info_kv(0, "DRA caches synced", LOG_STR("group", DRA_API_GROUP),
                LOG_STR("version", dra_api_version_name(dra_store_api_version(c->dra))),
                LOG_INT("resourceclaims", dra_store_count(c->dra, DRA_KIND_CLAIM)),
                LOG_INT("resourceclaimtemplates", dra_store_count(c->dra, DRA_KIND_TEMPLATE)),
                LOG_INT("deviceclasses", dra_store_count(c->dra, DRA_KIND_CLASS)),
                LOG_INT("resourceslices", dra_store_count(c->dra, DRA_KIND_SLICE)),
                LOG_INT("devicetaintrules", dra_store_count(c->dra, DRA_KIND_TAINT_RULE)));
    dra_store_read_unlock(c->dra);
    atomic_store(&c->dra_synced, 1);
}

bool controller_dra_follow(struct controller *c)
{
    if (!c->dra_watch)
        return false;
    unsigned gen = dra_informers_generation(c->dra_watch);
    if (dra_informers_version(c->dra_watch) == DRA_API_NONE) {
        c->dra_generation = gen;
        if (!atomic_load(&c->dra_synced))
            return false;
        atomic_store(&c->dra_synced, 0);
        controller_dra_gone(c);
        return true;
    }
    if (gen == c->dra_generation || !dra_informers_synced(c->dra_watch))
        return false;
    c->dra_generation = gen;
    dra_now_synced(c);
    controller_enqueue_claim_pods(c);
    return true;
}

/* Wait for the DRA informers' first LIST, when a version is served. False when stopped. */
static bool wait_dra_synced(struct controller *c, const atomic_int *stop)
{
    while (c->dra_watch && dra_informers_version(c->dra_watch) != DRA_API_NONE &&
           !dra_informers_synced(c->dra_watch)) {
        if (atomic_load(stop))
            return false;
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/*
 * The autoscalers' Events, before the first classification, so that a pod an autoscaler is
 * serving does not get the current nodes' word first; but not for long: Events are evidence,
 * not what the controller cannot work without (a cluster that forbids reading them, or an API
 * server slow to list them, still gets the ladder's words).
 */
static void wait_events_synced(struct controller *c, const atomic_int *stop)
{
    int64_t until = clock_mono_ms(NULL) + CONTROLLER_EVENTS_SYNC_WAIT_MS;
    for (int k = 0; k < CONTROLLER_EVENT_SOURCES; k++) {
        while (c->events_inf[k] && !informer_has_synced(c->events_inf[k]) && !atomic_load(stop)) {
            if (clock_mono_ms(NULL) >= until) {
                log_warn_kv("informer not synced in time: going on without what it has not "
                            "listed yet",
                            LOG_STR("informer", c->events_ctx[k].name),
                            LOG_INT("waitedSeconds", CONTROLLER_EVENTS_SYNC_WAIT_MS / 1000));
                return;
            }
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The gang objects' first LIST, as the autoscalers' Events: not for long (a kind not listed yet
 * is not read, so its pods get the ladder's other words meanwhile). */
static void wait_gangs_synced(struct controller *c, const atomic_int *stop)
{
    int64_t until = clock_mono_ms(NULL) + CONTROLLER_EVENTS_SYNC_WAIT_MS;
    while (!gang_informers_synced(c->gang_watch) && !atomic_load(stop)) {
        if (clock_mono_ms(NULL) >= until) {
            log_warn_kv("the gang informers have not synced in time: going on without them",
                        LOG_INT("waitedSeconds", CONTROLLER_EVENTS_SYNC_WAIT_MS / 1000));
            return;
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
}

int controller_run(struct controller *c, const atomic_int *stop)
{
    int started_workers = 0, rc = 1;
    if (controller_probes_start(c) != K_OK)
        goto out;
    if (informer_start(c->nodes) != K_OK || informer_start(c->pods) != K_OK) {
        log_error_kv("cannot start informers");
        goto out;
    }
    if (c->dra_watch && dra_informers_start(c->dra_watch, true) != K_OK) {
        log_error_kv("cannot start informers");
        goto out;
    }
    if (workload_informer_start(c->workload_watch, true) != K_OK) {
        log_error_kv("cannot start informers");
        goto out;
    }
    if (c->le) {
        log_info_kv(
            0, "leader election: competing for the lease", LOG_STR("identity", c->opts.identity),
            LOG_STR("namespace", c->opts.lease_namespace), LOG_STR("lease", c->opts.lease_name));
        kube_client_set_cancel(c->le_client, &c->le_stop);
        if (pthread_create(&c->le_thread, NULL, elect, c) != 0) {
            log_error_kv("cannot start leader election");
            goto out;
        }
        c->le_started = 1;
    }
    log_info_kv(0, "waiting for the node and pod caches to sync");
    if (!informer_wait_synced(c->nodes, stop) || !informer_wait_synced(c->pods, stop)) {
        rc = 0; /* stopped before the caches synced */
        goto out;
    }
    if (!wait_dra_synced(c, stop)) {
        rc = 0;
        goto out;
    }
    /* Kueue's Workloads before the first classification (queue-waiting over scheduling-gated),
     * but not for long: a slow LIST only delays that word */
    for (int64_t until = clock_mono_ms(NULL) + CONTROLLER_EVENTS_SYNC_WAIT_MS;
         !workload_informer_synced(c->workload_watch) && !atomic_load(stop) &&
         clock_mono_ms(NULL) < until;) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    if (c->dra_watch) { /* not the claim pods again: the workers start after this */
        c->dra_generation = dra_informers_generation(c->dra_watch);
        if (dra_informers_synced(c->dra_watch))
            dra_now_synced(c);
    }
    /* after the pods: an Event is kept only for a pod the store holds */
    for (int k = 0; k < CONTROLLER_EVENT_SOURCES; k++)
        if (c->events_inf[k] && informer_start(c->events_inf[k]) != K_OK) {
            log_error_kv("cannot start informers");
            goto out;
        }
    /* after the pods: a group's change queues its pods from the store */
    if (gang_informers_start(c->gang_watch, true) != K_OK) {
        log_error_kv("cannot start informers");
        goto out;
    }
    wait_events_synced(c, stop);
    c->owner_client = kube_client_new(c->cfg, USER_AGENT " owner-events");
    c->owner_get_client = kube_client_new(c->cfg, USER_AGENT " owners");
    if (!c->owner_client || !c->owner_get_client ||
        event_recorder_start(c->owner_events, c->owner_client) != K_OK) {
        log_error_kv("cannot start the owners' Event writer");
        goto out;
    }
    wait_gangs_synced(c, stop);
    store_read_lock(c->store);
    log_info_kv(0, "caches synced", LOG_INT("nodes", store_node_count(c->store)),
                LOG_INT("pods", store_pod_count(c->store)),
                LOG_INT("pendingGPUPods", store_pending_gpu_pod_count(c->store)));
    store_read_unlock(c->store);
    c->workers = calloc((size_t)c->opts.workers, sizeof(*c->workers));
    if (!c->workers)
        goto out;
    for (; started_workers < c->opts.workers; started_workers++)
        if (pthread_create(&c->workers[started_workers], NULL, controller_worker, c) != 0)
            goto out;
    controller_enqueue_pending(c);
    int64_t resync_ms = (int64_t)c->opts.resync_seconds * 1000;
    int64_t next_resync = clock_mono_ms(&c->clock) + resync_ms;
    while (!atomic_load(stop)) {
        struct timespec ts = {0, 100 * 1000000};
        nanosleep(&ts, NULL);
        controller_dra_follow(c);
        controller_quota_owners_tick(c);
        if (clock_mono_ms(&c->clock) >= next_resync) {
            log_info_kv(2, "resync: re-checking every pending GPU pod");
            controller_enqueue_pending(c);
            next_resync = clock_mono_ms(&c->clock) + resync_ms;
        }
    }
    rc = 0;
out:
    log_info_kv(0, "shutting down");
    workqueue_shutdown(c->queue);
    for (int i = 0; i < started_workers; i++)
        pthread_join(c->workers[i], NULL);
    /* No write is in flight any more: hand the Lease over (client-go ReleaseOnCancel). */
    stop_elector(c);
    if (c->le) {
        kube_client_set_cancel(c->le_client, NULL);
        leader_release(c->le);
    }
    informer_stop(c->pods);
    informer_stop(c->nodes);
    for (int k = 0; k < CONTROLLER_EVENT_SOURCES; k++)
        if (c->events_inf[k])
            informer_stop(c->events_inf[k]);
    dra_informers_stop(c->dra_watch);
    workload_informer_stop(c->workload_watch);
    event_recorder_stop(c->owner_events, 1000);
    gang_informers_stop(c->gang_watch);
    controller_probes_stop(c);
    return rc;
}

void controller_free(struct controller *c)
{
    if (!c)
        return;
    stop_elector(c);
    leader_free(c->le);
    kube_lease_lock_cleanup(&c->le_lock);
    kube_client_free(c->le_client);
    controller_probes_stop(c);
    event_recorder_free(c->events);
    metrics_free(c->metrics);
    pthread_cond_destroy(&c->le_cv);
    pthread_mutex_destroy(&c->le_mu);
    pthread_mutex_destroy(&c->apply_mu);
    informer_free(c->pods);
    informer_free(c->nodes);
    dra_informers_free(c->dra_watch);
    workload_informer_free(c->workload_watch);
    workload_store_free(c->workloads);
    for (int k = 0; k < CONTROLLER_EVENT_SOURCES; k++)
        informer_free(c->events_inf[k]);
    pod_events_free(c->pod_events);
    event_recorder_free(c->owner_events);
    kube_client_free(c->owner_client);
    kube_client_free(c->owner_get_client);
    quota_owners_free(c->quota_owners);
    gang_informers_free(c->gang_watch);
    gang_store_free(c->gangs);
    dra_store_free(c->dra);
    workqueue_free(c->queue);
    store_free(c->store);
    pod_ledger_free(c->ledger);
    free(c->workers);
    free(c);
}
