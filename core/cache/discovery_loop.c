/* discovery_loop.c - the discovery thread and client of informers that follow an API version. */
#include "cache/discovery_loop.h"

#include "util/result.h"

int discovery_loop_init(struct discovery_loop *d, const struct kube_config *cfg,
                        const struct kube_transport *transport, const char *user_agent,
                        int64_t interval_ms, int64_t min_gap_ms, void (*check)(void *ctx),
                        void *ctx)
{
    d->stopped = false;
    if (interval_ms <= 0)
        interval_ms = DISCOVERY_LOOP_INTERVAL_MS;
    if (!user_agent)
        user_agent = "gputri";
    periodic_init(&d->loop, interval_ms, min_gap_ms, check, ctx);
    d->client = transport ? kube_client_new_transport(cfg, transport, user_agent)
                          : kube_client_new(cfg, user_agent);
    if (!d->client)
        return K_ENOMEM;
    kube_client_set_cancel(d->client, periodic_stop_flag(&d->loop));
    return K_OK;
}

int discovery_loop_start(struct discovery_loop *d, bool checked)
{
    return periodic_start(&d->loop, !checked) == 0 ? K_OK : K_ENOMEM;
}

void discovery_loop_poke(struct discovery_loop *d)
{
    periodic_poke(&d->loop);
}

bool discovery_loop_stop(struct discovery_loop *d)
{
    if (d->stopped)
        return false;
    d->stopped = true;
    periodic_stop(&d->loop);
    return true;
}

void discovery_loop_destroy(struct discovery_loop *d)
{
    discovery_loop_stop(d);
    kube_client_free(d->client);
    d->client = NULL;
    periodic_destroy(&d->loop);
}
