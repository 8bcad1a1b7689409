/*
 * gang_informers.h - the informers of the gang objects (model/gang.h) a daemon reads, each only
 * while its API is served, feeding one gang store (cache/gang_store.h); and one informer of the
 * Events about PodGroups (fieldSelector involvedObject.kind=PodGroup), whose queue and gang
 * words go into the store too (gang_store_event).
 *
 * Discovery per kind: GET /apis/<group>/<version> and its resources[].name (the versions, best
 * first: KAI scheduling.run.ai/v2alpha2 podgroups; Volcano scheduling.volcano.sh/v1beta1
 * podgroups; upstream scheduling.k8s.io/v1beta1 podgroups (1.37), else v1alpha2 (1.36);
 * scheduling.k8s.io/v1alpha1 workloads (1.35, the pods' spec.workloadRef)). 404, or a document
 * without the resource: not served. Any other error keeps the last answer. Discovery runs at start,
 * then every `discovery_ms` (util/periodic.h), and at once (at most every
 * GANG_INFORMERS_POKE_MS) after an informer got 404, as kube/dra_api.h does for resource.k8s.io.
 * When a kind starts being served its informer starts and the store says the kind is read
 * (gang_store_set_read) once it has listed; when it stops, the informer stops, the kind is not
 * read any more and `changed` is called with a NULL group (every group of the kind).
 * Discovery needs no RBAC (system:discovery); the objects need get/list/watch on exactly the
 * resources above, the Events list/watch.
 *
 * Thread-safety: gang_informers_synced from any thread; the rest from the owner's thread;
 * `changed` is called from the informers' and the discovery thread, without the store's mutex.
 */
#ifndef GPUTRI_CACHE_GANG_INFORMERS_H
#define GPUTRI_CACHE_GANG_INFORMERS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cache/discovery_loop.h"
#include "cache/gang_store.h"
#include "kube/client.h"
#include "kube/config.h"

#define GANG_INFORMERS_DISCOVERY_MS DISCOVERY_LOOP_INTERVAL_MS
#define GANG_INFORMERS_POKE_MS DISCOVERY_LOOP_MIN_GAP_MS
/* The Events about PodGroups (KAI, Volcano, upstream). */
#define GANG_EVENTS_PATH "/api/v1/events?fieldSelector=involvedObject.kind%3DPodGroup"

struct gang_informers_options {
    const char *user_agent; /* static; NULL: "gputri" */
    int64_t discovery_ms;   /* <= 0: GANG_INFORMERS_DISCOVERY_MS */
    bool no_events;         /* do not read the PodGroup Events */
    /* tests: requests go through these instead of HTTP (borrowed) */
    const struct kube_transport *discovery_transport, *transport;
};

/*
 * changed(ctx, kind, ns, name): a group (or its Event) changed, appeared or went away; ns and
 * name NULL: every group of the kind. Borrowed strings, valid during the call.
 */
typedef void (*gang_changed_fn)(void *ctx, enum gang_kind k, const char *ns, const char *name);

struct gang_informers;

/* gang_informers_new() - nothing runs until start. `cfg`, `store` and ctx borrowed; `o` copied
 * (NULL: defaults). NULL on ENOMEM. */
struct gang_informers *gang_informers_new(const struct kube_config *cfg, struct gang_store *store,
                                          const struct gang_informers_options *o,
                                          gang_changed_fn changed, void *ctx);

/* gang_informers_start() - the discovery thread, the first check here when check_now (one GET
 * per kind), and the Events informer. K_OK or K_ENOMEM. Once. */
int gang_informers_start(struct gang_informers *w, bool check_now);

/* gang_informers_check() - one discovery pass (the thread calls it; tests directly). K_OK or
 * K_ENOMEM (an informer could not be made: the next pass tries again). */
int gang_informers_check(struct gang_informers *w);

/* gang_informers_synced() - every kind served now has listed once. */
bool gang_informers_synced(struct gang_informers *w);

/* gang_informers_served() - whether kind k is served (the last discovery answer). */
bool gang_informers_served(struct gang_informers *w, enum gang_kind k);

/* gang_informers_stop() - stop the thread and every informer (joined). Idempotent.
 * gang_informers_free() - stop and free. NULL-safe. */
void gang_informers_stop(struct gang_informers *w);
void gang_informers_free(struct gang_informers *w);

/*
 * gang_api_path() - the collection path of kind k at the version discovery chose (`version`),
 * e.g. "/apis/scheduling.run.ai/v2alpha2/podgroups"; with `ns` and `name` the object's path
 * (escaped by the caller). Writes at most `cap` bytes; false when it does not fit.
 */
bool gang_api_path(char *out, size_t cap, enum gang_kind k, const char *version, const char *ns,
                   const char *name);

/*
 * gang_api_probe() - the version of kind k the API server serves (GET /apis/<group>/<version>
 * for each candidate, best first), written to `version` (cap bytes); *served false when none
 * is. K_OK when answered (served or not), else the first error that was neither 200 nor 404
 * (then nothing is known). For the CLI and the discovery pass.
 */
int gang_api_probe(struct kube_client *c, enum gang_kind k, bool *served, char *version, size_t cap,
                   struct kube_error *err);

/*
 * gang_event_apply() - a core/v1 Event (`ev`, borrowed) into the store when it is about a gang
 * group (involvedObject apiVersion and kind, model/gang.h gang_kind_of_api_version): its reason,
 * message and lastTimestamp (else eventTime) through gang_store_event. Returns whether what the
 * store keeps changed. The informer's rule, and the CLI's for the Events it lists.
 */
bool gang_event_apply(struct gang_store *s, json_object *ev);

#endif
