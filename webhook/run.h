/*
 * run.h - gputri-webhook from parsed flags to a serving process and back: the GPU sets, the
 * serving certificate, the client CAs, the kubeconfig, the caches (cache.h), the Event recorder
 * (events.h) and the HTTPS server (server.h) with /validate, /healthz, /readyz and /metrics.
 * main.c adds only the signals.
 */
#ifndef GPUTRI_WH_RUN_H
#define GPUTRI_WH_RUN_H

#include "options.h"

/* How long a stop waits for requests in flight and for queued Events. */
#define WH_RUN_DRAIN_MS 5000
#define WH_RUN_EVENT_DRAIN_MS 2000

struct wh_run;

/*
 * wh_run_start() - load what `o` names and start serving on o->bind_address:o->port (`o` and its
 * strings borrowed until wh_run_stop). Returns 0 and *out on success; 2 for an invalid
 * --gpu-resources or --gpu-device-classes (said on stderr, as a bad flag is); 1 when a file,
 * the kubeconfig, memory or the listening socket fails (logged). *out is NULL on failure.
 * Call once per process: the server installs the certificate for GnuTLS's callback.
 */
int wh_run_start(const struct wh_options *o, struct wh_run **out);

/* wh_run_port() - the port actually bound (useful with --port 0). */
int wh_run_port(const struct wh_run *r);

/*
 * wh_run_stop() - stop accepting, let requests in flight finish for up to drain_ms (0: close
 * them now), send the queued Events for up to WH_RUN_EVENT_DRAIN_MS, and free it all. NULL-safe.
 */
void wh_run_stop(struct wh_run *r, int drain_ms);

#endif
