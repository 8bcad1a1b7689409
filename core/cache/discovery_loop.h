/*
 * discovery_loop.h - the discovery thread of a set of informers that follow an API group's
 * version (cache/dra_informers.h for resource.k8s.io, cache/workload_informer.h for
 * kueue.x-k8s.io, cache/gang_informers.h for the gang groups): a client for the discovery GETs
 * whose requests end when the loop stops, and a util/periodic.h thread that runs the owner's check
 * every interval, and sooner when poked (an informer got 404).
 *
 * Thread-safety: discovery_loop_poke() from any thread; the rest from the owner's thread.
 */
#ifndef GPUTRI_CACHE_DISCOVERY_LOOP_H
#define GPUTRI_CACHE_DISCOVERY_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"
#include "util/periodic.h"

/* How often discovery is asked again (ms), and the shortest gap after a poke (ms): an API group
 * installed or removed is seen within a minute, and within seconds of a watch's 404. */
#define DISCOVERY_LOOP_INTERVAL_MS 60000
#define DISCOVERY_LOOP_MIN_GAP_MS 5000

struct discovery_loop {
    struct kube_client *client; /* the discovery GETs' (owned) */
    struct periodic loop;
    bool stopped;
};

/*
 * discovery_loop_init() - `check(ctx)` every interval_ms, and min_gap_ms after the last run when
 * poked (interval_ms <= 0: DISCOVERY_LOOP_INTERVAL_MS); the client reads through `cfg` (borrowed;
 * must outlive it), through `transport` instead of HTTP when not NULL (tests), with `user_agent`
 * (borrowed, static; NULL: "gputri"). Nothing runs until
 * discovery_loop_start(). Returns K_OK or K_ENOMEM; discovery_loop_destroy() is safe after
 * either.
 */
int discovery_loop_init(struct discovery_loop *d, const struct kube_config *cfg,
                        const struct kube_transport *transport, const char *user_agent,
                        int64_t interval_ms, int64_t min_gap_ms, void (*check)(void *ctx),
                        void *ctx);

/* discovery_loop_start() - start the thread: the first check at once unless the caller has just
 * run it (`checked`). Returns K_OK or K_ENOMEM. Call once. */
int discovery_loop_start(struct discovery_loop *d, bool checked);

/* discovery_loop_poke() - check soon (at most every min_gap_ms). */
void discovery_loop_poke(struct discovery_loop *d);

/* discovery_loop_stop() - stop the thread (joined; a request in flight ends). Returns true the
 * first time, false when already stopped. */
bool discovery_loop_stop(struct discovery_loop *d);

/* discovery_loop_destroy() - stop and free the client. */
void discovery_loop_destroy(struct discovery_loop *d);

#endif
