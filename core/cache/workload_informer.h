/*
 * workload_informer.h - the Kueue Workload informer of a daemon (kube/kueue_api.h), at the
 * version of kueue.x-k8s.io the API server serves, feeding one workload store
 * (workload_store.h) through the owner's handlers.
 *
 * Discovery (kueue_api_probe_step: v1beta2, else v1beta1, else none) runs at start and then every
 * `discovery_ms` on a thread of its own (util/periodic.h), and at once (at most every
 * WORKLOAD_INFORMER_POKE_MS) after the informer got 404. When the version changes the informer of
 * the old one is stopped; to none, the store is cleared (workload_store_clear: Kueue's CRDs are
 * gone); to a version, an informer of it is made and started (its first LIST relists the store).
 * Where Kueue is never installed this costs one GET per interval and one log line. As
 * dra_informers.h does for DRA.
 *
 * Thread-safety: workload_informer_version and _synced from any thread; new/start/stop/free from
 * the owner's thread; workload_informer_check only where no thread runs (tests).
 */
#ifndef GPUTRI_CACHE_WORKLOAD_INFORMER_H
#define GPUTRI_CACHE_WORKLOAD_INFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include "cache/discovery_loop.h"
#include "cache/informer.h"
#include "cache/workload_store.h"
#include "kube/config.h"
#include "kube/kueue_api.h"

#define WORKLOAD_INFORMER_DISCOVERY_MS DISCOVERY_LOOP_INTERVAL_MS
#define WORKLOAD_INFORMER_POKE_MS DISCOVERY_LOOP_MIN_GAP_MS

struct workload_informer_options {
    const char *user_agent; /* borrowed, static */
    int64_t discovery_ms;   /* <= 0: WORKLOAD_INFORMER_DISCOVERY_MS */
    /* Tests: requests go through these instead of HTTP (borrowed; NULL: HTTP). */
    const struct kube_transport *discovery_transport, *transport;
};

struct workload_informer;

/*
 * workload_informer_new() - reading through `cfg` (borrowed; must outlive it) and calling
 * `handlers` (copied; ctx borrowed), which must apply what they get to `store` (borrowed;
 * workload_store_*); the informer clears the store when the API goes away. `o` copied (NULL:
 * defaults). Nothing runs until workload_informer_start(). NULL on ENOMEM.
 */
struct workload_informer *workload_informer_new(const struct kube_config *cfg,
                                                struct workload_store *store,
                                                const struct informer_handlers *handlers,
                                                const struct workload_informer_options *o);

/* workload_informer_start() - start the discovery thread; with `check_now` the first check runs
 * here first (one GET). Returns K_OK or K_ENOMEM. Call once. */
int workload_informer_start(struct workload_informer *w, bool check_now);

/* workload_informer_check() - one discovery check and, on a change, the switch above. Returns
 * K_OK or K_ENOMEM (the version is then taken as none and the next check tries again). */
int workload_informer_check(struct workload_informer *w);

/* workload_informer_version() - the version read now (KUEUE_API_NONE before the first answer). */
enum kueue_api_version workload_informer_version(struct workload_informer *w);

/* workload_informer_poke() - check discovery soon (at most every WORKLOAD_INFORMER_POKE_MS):
 * for an owner that sees a sign of Kueue (a pod with a scheduling gate) while none is read.
 * Any thread. */
void workload_informer_poke(struct workload_informer *w);

/* workload_informer_synced() - no version is served, or its informer has listed once. */
bool workload_informer_synced(struct workload_informer *w);

/* workload_informer_stop() - stop the thread and the informer (joined). Idempotent.
 * workload_informer_free() - stop and free. NULL-safe. */
void workload_informer_stop(struct workload_informer *w);
void workload_informer_free(struct workload_informer *w);

#endif
