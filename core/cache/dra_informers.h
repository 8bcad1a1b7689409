/*
 * dra_informers.h - the DRA informers (kube/dra_api.h kinds) of a daemon, at the version of
 * resource.k8s.io the API server serves, feeding one DRA store (dra_store.h).
 *
 * Discovery (kube/dra_api.h dra_api_probe_step: the core kinds at v1, else v1beta2, else v1beta1,
 * else none; DeviceTaintRules, when the owner reads them, at the newest of v1, v1beta2, v1alpha3
 * that lists them) runs at start and then every `discovery_ms` in a thread of its own
 * (util/periodic.h), and at once (at most every DRA_INFORMERS_POKE_MS) after an informer got
 * 404: a version that goes away is seen within seconds. When the DeviceTaintRules' version alone
 * changes, only their informer switches (to none: a relist of nothing through the owner's
 * handlers empties them from the store). When the core kinds' version changes (their informers
 * switch; the DeviceTaintRules' too when theirs changed):
 *   - to another version: the informers of the old one are stopped, the store is told the new
 *     version (dra_store_set_api_version) and keeps its objects until the new informers' first
 *     LIST replaces them (a relist: dra_store_sync_*), so readers never see an empty store;
 *   - to none: the informers are stopped and every kind of the store marked not synced
 *     (dra_store_unsync; the objects stay until a relist replaces them), so the checks that need
 *     synced DRA objects turn off (the webhook's), and the owner stops using the store when it
 *     sees the version none (the controller, controller_dra_follow);
 *   - from none: the informers of the version are made and started.
 * Each change is one log line (dra_api_probe_step); an API server that never serves the DRA API
 * costs one GET per interval and no other request and no other log line.
 *
 * Thread-safety: dra_informers_version, _synced and _generation may be called from any thread;
 * new/start/stop/free from the owner's thread; dra_informers_check only where no thread runs
 * (tests).
 */
#ifndef GPUTRI_CACHE_DRA_INFORMERS_H
#define GPUTRI_CACHE_DRA_INFORMERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache/discovery_loop.h"
#include "cache/dra_store.h"
#include "cache/informer.h"
#include "kube/config.h"
#include "kube/dra_api.h"

/* Between two discovery checks by default, and at least between two after informers' 404s. */
#define DRA_INFORMERS_DISCOVERY_MS DISCOVERY_LOOP_INTERVAL_MS
#define DRA_INFORMERS_POKE_MS DISCOVERY_LOOP_MIN_GAP_MS

struct dra_informers_options {
    const char *user_agent; /* the discovery client's (borrowed; static) */
    int64_t discovery_ms;   /* <= 0: DRA_INFORMERS_DISCOVERY_MS */
    /* Tests: the discovery GETs and the informers' requests go through these instead of HTTP
     * (borrowed; NULL: HTTP). */
    const struct kube_transport *discovery_transport, *transport;
};

struct dra_informers;

/*
 * dra_informers_new() - informers of the kinds reading through `cfg` (borrowed; must outlive it)
 * and calling handlers[kind] (copied; their ctx borrowed: it must outlive it) for each: a kind
 * whose handlers have no upsert is not read; DeviceTaintRules (DRA_KIND_TAINT_RULE) at the
 * newest version that lists them (kube/dra_api.h dra_api_discover_kinds; none: not read, said in
 * discovery's line); they
 * must apply what they get to `store` (borrowed; dra_store_handlers does, the controller's own
 * handlers too), whose API version and clearing this component owns. `o` is copied (NULL:
 * defaults). Nothing runs until dra_informers_start(). NULL on ENOMEM.
 */
struct dra_informers *dra_informers_new(const struct kube_config *cfg, struct dra_store *store,
                                        const struct informer_handlers handlers[DRA_KIND_COUNT],
                                        const struct dra_informers_options *o);

/*
 * dra_informers_start() - start the discovery thread. With `check_now` the first check
 * (dra_informers_check) runs here first (blocking for one GET: the caller knows the version
 * when it returns, e.g. to wait for the informers to sync); without, it runs at once on the
 * thread. Returns K_OK or K_ENOMEM. Call once.
 */
int dra_informers_start(struct dra_informers *w, bool check_now);

/*
 * dra_informers_check() - one discovery check and, when the version changed, the switch the
 * header describes. Returns K_OK or K_ENOMEM (informers could not be made or started: the
 * version is then taken as none, and the next check tries again). The thread calls it; tests
 * call it directly instead of dra_informers_start().
 */
int dra_informers_check(struct dra_informers *w);

/* dra_informers_version() - the version read now (DRA_API_NONE before the first answer). */
enum dra_api_version dra_informers_version(struct dra_informers *w);

/*
 * dra_informers_synced() - a version is read and each of its informers (the kinds read) has
 * listed once: the store holds what the API server holds.
 */
bool dra_informers_synced(struct dra_informers *w);

/* dra_informers_generation() - a number that changes each time the version of a kind read
 * changes. */
unsigned dra_informers_generation(struct dra_informers *w);

/* dra_informers_stop() - stop the thread and the informers (joined). Idempotent. */
void dra_informers_stop(struct dra_informers *w);
/* dra_informers_free() - stop and free. NULL-safe. */
void dra_informers_free(struct dra_informers *w);

#endif
