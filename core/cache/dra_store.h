/*
 * dra_store.h - the DRA objects (resource.k8s.io, at the version kube/dra_api.h discovery chose)
 * in compact form (model/dra.h), kept next to
 * the pod and node store and indexed for the classifier's lookups (classify.h struct dra_view,
 * made by core/triage/triage.h triage_dra_view()):
 *   - ResourceClaims and ResourceClaimTemplates by "namespace/name";
 *   - DeviceClasses by name;
 *   - ResourceSlices by name, plus a per-node index (spec.nodeName) and the list of the
 *     cluster-wide ones (spec.allNodes or spec.nodeSelector), so the slices that may reach one
 *     node cost time in that node's slices and the cluster-wide ones, never in all slices;
 *     slices with spec.perDeviceNodeSelection reach no node (classify.h does not model them) and
 *     are in neither index;
 *   - device -> the claim holding it, from every claim's status.allocation.devices.results, so
 *     a device's holder is one hash lookup, not a walk over the claims. When two claims name one
 *     device (the API does not allow it) the one written last holds it until it goes.
 * Semantics of the lookups: kubernetes/kubernetes:
 *   staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go
 *   (GatherPools: nodeName, allNodes, nodeSelector) and pkg/scheduler/framework/plugins/
 *   dynamicresources (allocated devices from the claims' status.allocation).
 *
 * Readers: the controller and the CLI (through core/triage), and the admission webhook
 * (webhook/snapshot.h borrows the store, read-locked, for one review).
 *
 * Locking: writers (apply / delete / sync) take the write lock themselves. Readers call
 * dra_store_read_lock() around the lookups; records returned are borrowed and valid until
 * dra_store_read_unlock(). The lookups have the shape of classify.h struct dra_view's callbacks
 * (ctx = the store); core/triage/triage.h triage_dra_view() makes the view. Lock order when both
 * are held: the pod/node store (store.h) first, then this one (the webhook: its node store, then
 * its own cache lock, then this one; webhook/cache.h).
 */
#ifndef GPUTRI_DRA_STORE_H
#define GPUTRI_DRA_STORE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "cache/informer.h"
#include "kube/client.h"
#include "kube/dra_api.h"
#include "model/dra.h"

struct dra_store;

/*
 * The kinds (enum dra_kind), their names and collection paths per API version: kube/dra_api.h.
 * The first DRA_KIND_CORE_COUNT are what every DRA reader needs and every release with DRA
 * serves; DeviceTaintRule (resource.k8s.io/v1 from 1.37, on by default there; before, only
 * v1alpha3 or v1beta2 behind a gate) is read at the newest version that lists it, whatever the
 * core kinds' version (kube/dra_api.h dra_api_discover_kinds), by the readers that judge free
 * devices (the controller and the CLI; the webhook judges matching devices only and does not read
 * it).
 */

/* dra_store_new() - an empty store, NULL on ENOMEM. dra_store_free() is NULL-safe. */
struct dra_store *dra_store_new(void);
void dra_store_free(struct dra_store *s);

/*
 * dra_store_set_api_version() - the version of resource.k8s.io the objects of every kind given
 * from now on are read at (kube/dra_api.h; the store starts at DRA_API_V1): an object of an
 * older layout is read through dra_json_as_v1(). dra_store_set_kind_version() - the same for one
 * kind (DeviceTaintRules have a version of their own). What the store holds stays (the relist at
 * the new version replaces it, dra_store_sync_*). Take the write lock.
 * dra_store_api_version() - the core kinds' version (that of the claims);
 * dra_store_kind_version() - kind's (DRA_API_NONE for an invalid kind); read lock held or from
 * the thread that sets it.
 */
void dra_store_set_api_version(struct dra_store *s, enum dra_api_version v);
void dra_store_set_kind_version(struct dra_store *s, enum dra_kind kind, enum dra_api_version v);
enum dra_api_version dra_store_api_version(struct dra_store *s);
enum dra_api_version dra_store_kind_version(struct dra_store *s, enum dra_kind kind);

/*
 * dra_store_unsync() - mark every kind not synced (dra_store_synced), for an API server that
 * stopped serving the DRA API: readers that check the flag stop using the kinds at once. The
 * objects stay (a reader that has not looked at the flag yet still sees a consistent store) until
 * the next relist of each kind replaces them (dra_store_sync_*). Takes the write lock.
 */
void dra_store_unsync(struct dra_store *s);

/*
 * dra_store_apply_json() - project `obj` (borrowed; read at the store's API version, see
 * dra_store_set_api_version; core/kube/project.h project_dra_*) and
 * insert or replace it, or with `deleted` remove the object of that name (the object's last
 * state is only read for metadata.namespace and metadata.name). Returns K_OK, K_EPARSE for an
 * object that does not project or has no name, K_ETOOBIG when it passes the API's limits or
 * its key passes META_KEY_MAX, K_ENOMEM. On an error the store is as before, except on a
 * K_ENOMEM while indexing a replacement: the object is then absent until its next event (or
 * the next relist). Takes the write lock.
 */
int dra_store_apply_json(struct dra_store *s, enum dra_kind kind, json_object *obj, int deleted);

/*
 * Relist (mark and sweep) per kind: sync_begin marks every record of the kind stale, upserts
 * clear the mark, sync_end removes the records still stale. Take the write lock.
 */
void dra_store_sync_begin(struct dra_store *s, enum dra_kind kind);
void dra_store_sync_end(struct dra_store *s, enum dra_kind kind);

/*
 * dra_store_synced() - whether a relist of `kind` has ended (dra_store_sync_end) since
 * dra_store_new(): until then the kind's lookups may miss objects that exist, and a reader that
 * would report an absence (the webhook's "not found" warnings) must say nothing. Stays false
 * while the API server does not serve the DRA API (no informer lists), and again after
 * dra_store_unsync(). Read lock
 * held.
 */
bool dra_store_synced(struct dra_store *s, enum dra_kind kind);

/*
 * dra_store_relist_items() - a relist of `kind` from `items` (borrowed: a JSON array of API
 * objects, as a LIST's items; NULL or not an array: none): dra_store_sync_begin(), every item
 * through dra_store_apply_json(), dra_store_sync_end(); the kind is then synced. For readers
 * whose objects come from a file (benchmarks, tests). Returns K_OK, or the first item's error
 * (every item is still tried and the relist ended). Takes the write lock per step.
 */
int dra_store_relist_items(struct dra_store *s, enum dra_kind kind, json_object *items);

/*
 * What one informer of `kind` feeds into `s` (the ctx of dra_store_handlers()), for a daemon that
 * only keeps the store up to date (the webhook; the controller's handlers also enqueue pods, see
 * controller/handlers.c, and call the same dra_store_apply_json / dra_store_sync_*).
 */
struct dra_store_feed {
    struct dra_store *s;
    enum dra_kind kind;
};
/*
 * dra_store_handlers() - informer handlers (cache/informer.h) applying each event to f->s:
 * upsert and remove with dra_store_apply_json(), sync_begin / sync_end with dra_store_sync_*().
 * An object that does not project is logged (warning) and skipped. `f` is borrowed: it must
 * outlive the informer. Pure.
 */
struct informer_handlers dra_store_handlers(struct dra_store_feed *f);

void dra_store_read_lock(struct dra_store *s);
void dra_store_read_unlock(struct dra_store *s);

/* ---- lookups (read lock held; ctx = the store; struct dra_view's callbacks) ---------------- */
/* The claim / template "ns/name", the class `name`, or NULL. */
const struct dra_claim *dra_store_claim(void *ctx, const char *ns, const char *name);
const struct dra_template *dra_store_template(void *ctx, const char *ns, const char *name);
const struct dra_class *dra_store_class(void *ctx, const char *name);
/*
 * dra_store_extended_class() - the class that serves the extended resource `resource`
 * (model/dra.h dra_extended_class_serves; of several, dra_extended_class_wins), or NULL. An
 * implicit name DRA_EXTENDED_CLASS_PREFIX "<class>" is one hash lookup; any other name walks
 * the classes (a cluster has a handful).
 */
const struct dra_class *dra_store_extended_class(void *ctx, const char *resource);
/*
 * dra_store_node_slices() - the slices of `driver` (every driver when NULL) with
 * spec.nodeName == node, then every cluster-wide one (allNodes / nodeSelector, whose selector
 * the caller evaluates). Writes at most `cap` pointers to buf, returns how many there are in
 * all. Cost: the node's slices plus the cluster-wide ones.
 */
size_t dra_store_node_slices(void *ctx, const char *node, const char *driver,
                             const struct dra_slice **buf, size_t cap);
/*
 * dra_store_device_taint_rules() - the DeviceTaintRules that select (driver, pool, device)
 * (model/dra.h dra_taint_rule_selects), in no particular order. Writes at most `cap` borrowed
 * pointers to buf and returns how many there are in all. Cost: every rule (clusters have few).
 */
size_t dra_store_device_taint_rules(void *ctx, const char *driver, const char *pool,
                                    const char *device, const struct dra_taint_rule **buf,
                                    size_t cap);
/*
 * dra_store_driver_published() - whether any ResourceSlice names `driver` (whatever nodes it
 * reaches, perDeviceNodeSelection included): the driver is installed and publishes. False for
 * NULL. One hash lookup.
 */
bool dra_store_driver_published(struct dra_store *s, const char *driver);
/* dra_store_device_holder() - the claim whose allocation names (driver, pool, device) without
 * adminAccess (such a result holds nothing) and without a shareID (a share of a device that
 * allows multiple allocations does not make it "in use": dra_store_device_shares), or
 * NULL. One hash lookup. */
const struct dra_claim *dra_store_device_holder(void *ctx, const char *driver, const char *pool,
                                                const char *device);
/*
 * dra_store_device_shares() - the claims whose allocation results name (driver, pool, device)
 * with a shareID (consumable capacity, KEP-5075; kubernetes/kubernetes:
 * pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go), each once: at most
 * `cap` borrowed pointers to buf; returns how many there are in all. One hash lookup; call
 * under the read lock like the other lookups.
 */
size_t dra_store_device_shares(void *ctx, const char *driver, const char *pool, const char *device,
                               const struct dra_claim **buf, size_t cap);

/*
 * dra_store_list() - for one-shot tools (the CLI): dra_store_discover(), then one paged LIST of
 * each kind at that version through `client` into the store (dra_store_list_kind), each a relist
 * (dra_store_sync_*: a kind listed is synced). Returns K_OK or the discovery's or first LIST's
 * K_* error (err filled); K_ENOTFOUND when the API server serves none of the versions read (err
 * then says so); K_EPARSE when objects of a kind did not project (informer_list_skipped: the
 * kind's path and how many), after that kind's LIST. A DeviceTaintRule LIST answered K_ENOTFOUND
 * (not served at that version) or K_EFORBIDDEN (the caller may not list them) is no error: the
 * kind stays unsynced and empty.
 */
int dra_store_list(struct kube_client *client, struct dra_store *s, struct kube_error *err);
/*
 * dra_store_discover() - the discovery of dra_store_list() alone (kube/dra_api.h
 * dra_api_discover, dra_api_choose): the core kinds' version becomes the store's
 * (dra_store_set_kind_version); the DeviceTaintRules' is discovered by their
 * dra_store_list_kind (dra_api_discover_kind, as the daemons' dra_informers ask it), so a reader
 * that lists no rules asks nothing more. K_OK, K_ENOTFOUND (no version of the core kinds served;
 * err says so) or the discovery GET's K_* error (err filled).
 */
int dra_store_discover(struct kube_client *client, struct dra_store *s, struct kube_error *err);
/* dra_store_list_kind() - dra_store_list() of one kind, at the store's version of the kind
 * (after dra_store_discover; for DeviceTaintRules first their version, dra_api_discover_kind:
 * a failed discovery GET is its K_* error; at none they are not listed, and their LIST answered
 * K_ENOTFOUND or K_EFORBIDDEN is no error there either). */
int dra_store_list_kind(struct kube_client *client, struct dra_store *s, enum dra_kind kind,
                        struct kube_error *err);
/* dra_store_any_extended() - whether some DeviceClass has spec.extendedResourceName (KEP-5004;
 * never while the API server's DRAExtendedResource gate is off). Read lock held. */
bool dra_store_any_extended(struct dra_store *s);

/*
 * dra_store_classes() - the DeviceClasses, sorted by name: at most `cap` borrowed pointers to buf;
 * returns how many there are in all. Read lock held. Cost: every class and a sort (clusters have a
 * handful).
 */
size_t dra_store_classes(struct dra_store *s, const struct dra_class **buf, size_t cap);

/* Counts per kind, for tests and metrics. Read lock held. */
size_t dra_store_count(struct dra_store *s, enum dra_kind kind);

#endif
