/*
 * gang_store.h - the gang objects (model/gang.h: KAI and Volcano PodGroups, upstream Workloads
 * and PodGroups) and the newest Event on each that speaks of its gang or its queue
 * (model/gang.h gang_event_speaks), by kind, namespace and name; and which kinds are read (their
 * API served and listed). Fed by the controller's informers (cache/gang_informers.h) or by the
 * CLI's GETs; read by core/triage, which copies out what the ladder needs (gang_store_facts).
 *
 * Bounds: a record is fixed size (struct gang_group); at most GANG_STORE_MAX_RECORDS records
 * (past it, new ones are dropped and counted), of which at most GANG_STORE_MAX_EVENT_ONLY are
 * made by an Event on a group not held; Event reasons and messages are cut.
 *
 * Thread-safety: every function takes the store's own mutex; callable from any thread. Lock
 * order: the object store's read lock may be held around gang_store_facts (the gang store's
 * mutex is taken last and held only inside its functions).
 */
#ifndef GPUTRI_CACHE_GANG_STORE_H
#define GPUTRI_CACHE_GANG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/gang.h"
#include "model/model.h"

#define GANG_STORE_MAX_RECORDS 200000
/* Records of an Event whose group is not held (the Event came first, or names no group at all):
 * at most this many, since anyone who may write Events in a namespace can name thousands of
 * groups that do not exist, each costing a whole record (about 6 KiB). */
#define GANG_STORE_MAX_EVENT_ONLY 1024

struct gang_store;

struct gang_store *gang_store_new(void);
void gang_store_free(struct gang_store *s); /* NULL-safe */

/* gang_store_set_read() - whether kind k is read now (its API served and listed once); a kind
 * not read says nothing of its groups. gang_store_is_read() - the current answer. */
void gang_store_set_read(struct gang_store *s, enum gang_kind k, bool read);
bool gang_store_is_read(struct gang_store *s, enum gang_kind k);

/*
 * gang_store_set_served() - what discovery said of kind k: served at `version`, or not served
 * (version NULL). gang_store_served() - 1 served (its version copied to `version`, cap bytes),
 * 0 not served, -1 not asked yet. For one-shot readers that ask once per kind.
 */
void gang_store_set_served(struct gang_store *s, enum gang_kind k, const char *version);
int gang_store_served(struct gang_store *s, enum gang_kind k, char *version, size_t cap);

/*
 * gang_store_put() - insert or replace the group (copied); *changed (may be NULL) true when
 * anything the ladder reads changed. K_OK, K_ENOMEM, or K_ETOOBIG past GANG_STORE_MAX_RECORDS.
 * gang_store_remove() - forget the group (its Event stays, bounded, until it is replaced).
 */
int gang_store_put(struct gang_store *s, const struct gang_group *g, bool *changed);
void gang_store_remove(struct gang_store *s, enum gang_kind k, const char *ns, const char *name);

/* A relist of kind k: sync_begin marks every group of the kind, put clears the mark, sync_end
 * removes the groups still marked and then, with the store's mutex released, calls gone(ctx,
 * group) for each (may be NULL; `group` valid during the call only). */
void gang_store_sync_begin(struct gang_store *s, enum gang_kind k);
void gang_store_sync_end(struct gang_store *s, enum gang_kind k,
                         void (*gone)(void *ctx, const struct gang_group *g), void *ctx);

/*
 * gang_store_event() - an Event on group (k, ns, name) with `reason`, `message` and its time
 * (seconds since the epoch, lastTimestamp / eventTime; 0 unknown): kept when it speaks
 * (gang_event_speaks) and is not older than the one kept (for a group not held, only while fewer
 * than GANG_STORE_MAX_EVENT_ONLY such records exist; past it dropped and counted); an Event that
 * does not speak but is newer clears the one kept when it is the group's scheduler saying it moved
 * on (reason Scheduled or a Normal Event with another reason from the same group). Returns true
 * when what is kept changed. Strings are cut to fit.
 */
bool gang_store_event(struct gang_store *s, enum gang_kind k, const char *ns, const char *name,
                      const char *reason, const char *message, int64_t at);

/*
 * gang_store_event_gone() - an Event on group (k, ns, name) was deleted (Events expire, or their
 * namespace goes): the record it made for a group not held goes with it, so that Events forged
 * for groups that never exist do not keep GANG_STORE_MAX_EVENT_ONLY full. A held group keeps its
 * word until a newer Event replaces it.
 */
void gang_store_event_gone(struct gang_store *s, enum gang_kind k, const char *ns,
                           const char *name);

/*
 * gang_store_facts() - for `pod` with a gang link: the read flag of its kind, its group when
 * held (copied) and the group's Event into *f (which the caller zeroed; member counts are not
 * touched). False (nothing written) when the pod has no link. NULL store: false.
 */
bool gang_store_facts(struct gang_store *s, const struct kpod *pod, struct gang_facts *f);

/* gang_store_count() - groups held of kind k; gang_store_dropped() - records refused at the
 * bound. */
size_t gang_store_count(struct gang_store *s, enum gang_kind k);
size_t gang_store_dropped(struct gang_store *s);

#endif
