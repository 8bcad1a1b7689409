/*
 * cache.h - the webhook's watch caches, one informer each (core/cache/informer.h):
 *   nodes           /api/v1/nodes, kept in a core store (core/cache/store.h);
 *   RuntimeClasses  /apis/node.k8s.io/v1/runtimeclasses;
 *   ResourceQuotas  /api/v1/resourcequotas (all namespaces);
 *   Namespaces      /api/v1/namespaces (for their labels);
 *   DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates
 *                   /apis/resource.k8s.io/<version>/... (all namespaces), when DRA checks are
 *                   on, at the version the API server serves (core/cache/dra_informers.h:
 *                   discovery at start and every minute, v1, else v1beta2, else v1beta1, else
 *                   none: no DRA informer runs and the DRA checks stay off), kept in a core DRA
 *                   store (core/cache/dra_store.h, dra_store_handlers);
 *   node autoscalers the one flag names, or that discovery finds (autoscaler.h: a thread of its
 *                   own checks at start and every discovery interval), as an atomic value.
 * RuntimeClasses, quotas and Namespaces are sorted arrays of snapshot.h projections under the
 * cache's own rwlock; relists are mark and sweep, like the stores'.
 *
 * Readers: wh_cache_read() fills a snapshot and takes the read locks in this order: the node
 * store, the cache's own, then the DRA store; writers take one of them at a time, so the order
 * cannot deadlock. Everything in the snapshot is valid until wh_cache_release(). Writers are the
 * informer threads. All functions are thread-safe except new/start/stop/free, which the owner
 * calls from one thread.
 */
#ifndef GPUTRI_WEBHOOK_CACHE_H
#define GPUTRI_WEBHOOK_CACHE_H

#include <stdbool.h>

#include "autoscaler.h"
#include "kube/config.h"
#include "model/gpu.h"
#include "snapshot.h"

struct wh_cache;

/* What the snapshot says about node autoscalers (autoscaler.h). */
struct wh_cache_autoscaler {
    enum wh_autoscaler_mode mode; /* AUTO: discovery; otherwise fixed by the flag */
    int64_t discovery_ms;         /* between discovery checks; <= 0: WH_AUTOSCALER_DISCOVERY_MS */
};

/*
 * wh_cache_new() - caches reading through `cfg`, projecting with `gpus` (both borrowed; they
 * must outlive the cache). `dra_gpus` (borrowed, may be NULL) is the DRA GPU class set copied
 * into every snapshot; NULL: no DRA informers and no DRA checks. `assume_ert` is copied into
 * every snapshot. `as` (copied; NULL: mode none) decides snap->autoscalers: the fixed mode's
 * autoscaler, or with WH_AUTOSCALER_MODE_AUTO what the discovery thread found last. NULL on
 * ENOMEM.
 */
struct wh_cache *wh_cache_new(const struct kube_config *cfg, const struct gpu_set *gpus,
                              const struct gpu_set *dra_gpus, bool assume_ert,
                              const struct wh_cache_autoscaler *as);

/* wh_cache_start() - start the informer threads (and the autoscaler discovery thread in mode
 * auto). Returns K_OK or K_ENOMEM. */
int wh_cache_start(struct wh_cache *c);

/*
 * wh_cache_synced() - the nodes, RuntimeClass, quota and namespace informers have listed at
 * least once, and in mode auto the first autoscaler discovery check has ended, whatever it found
 * (the /readyz condition). The DRA informers do not count: on an API server that serves no DRA
 * version none runs, and until they list the DRA checks that need them stay off (snapshot.h).
 */
bool wh_cache_synced(struct wh_cache *c);

/* wh_cache_read() - take the read locks and fill *snap. Pair with wh_cache_release(). */
void wh_cache_read(struct wh_cache *c, struct wh_snapshot *snap);
void wh_cache_release(struct wh_cache *c);

/* wh_cache_stop() - stop and join the informers. Idempotent. */
void wh_cache_stop(struct wh_cache *c);
/* wh_cache_free() - stop and free everything. NULL-safe. */
void wh_cache_free(struct wh_cache *c);

#endif
