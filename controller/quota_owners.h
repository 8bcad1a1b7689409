/*
 * quota_owners.h - the ReplicaSets, StatefulSets and Jobs whose GPU pods a ResourceQuota refuses
 * (classify/quota.h quota_owner_event): there is no pod to annotate, so the controller keeps
 * them here, counts them in /metrics (gputri_quota_refused_owners) and writes an Event on the
 * owner. One entry per owner uid, from its newest FailedCreate Event (the workload controllers
 * write a new Event object per refused pod name, then one "(combined from similar events)").
 *
 * Bounds: at most `max` owners (quota_owners_new), at most max / QUOTA_OWNER_NS_SHARE of one
 * namespace (a table of fewer than QUOTA_OWNER_NS_SHARE owners is one share); a further owner is
 * refused and counted. Forgetting: an entry goes when the Event it came from is deleted (Events
 * expire, --event-ttl), when a relist of the Events no longer has it, or when
 * quota_owners_expire_noted() finds it no longer current (classify/quota.h quota_owner_current: no
 * newer FailedCreate for QUOTA_OWNER_WINDOW, or a pod of the owner created after its newest
 * refusal, i.e. the owner got its pods), or when the owner is found deleted (quota_owners_due, then
 * quota_owners_forget).
 *
 * Thread-safety: every function takes the table's own lock; callbacks run with it held and must
 * not call into the table.
 */
#ifndef GPUTRI_CONTROLLER_QUOTA_OWNERS_H
#define GPUTRI_CONTROLLER_QUOTA_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/quota.h"

#define QUOTA_OWNERS_MAX 4096

enum quota_owners_change {
    QUOTA_OWNERS_SAME,    /* nothing a reader sees changed (or an older Event) */
    QUOTA_OWNERS_NEW,     /* a new owner */
    QUOTA_OWNERS_CHANGED, /* the owner's quota, key, used or limit changed */
    QUOTA_OWNERS_FULL,    /* refused: the table holds `max` owners, or the owner's namespace its
                             share (QUOTA_OWNER_NS_SHARE) */
    QUOTA_OWNERS_REMOVED, /* a deletion removed the owner */
};

struct quota_owners;

/* quota_owners_new() - an empty table of at most max owners (0: QUOTA_OWNERS_MAX). NULL: ENOMEM. */
struct quota_owners *quota_owners_new(size_t max);
void quota_owners_free(struct quota_owners *t);

/*
 * quota_owners_apply() - a FailedCreate Event `o` was seen (deleted false) or deleted (true). An
 * upsert replaces the owner's entry when it is not older; a deletion removes the entry only when
 * it came from that Event object. Returns what changed.
 */
enum quota_owners_change quota_owners_apply(struct quota_owners *t, const struct quota_owner *o,
                                            bool deleted);

/*
 * quota_owners_note_pod() - a pod whose controller ownerReference uid is `owner_uid` and which
 * was created at `created` (seconds since the epoch) was seen: kept as the owner's newest pod
 * when the owner is in the table (the object store keeps no owner for most pods). Cost: one
 * scan of the table (empty on most clusters).
 */
void quota_owners_note_pod(struct quota_owners *t, const char *owner_uid, int64_t created);

/*
 * quota_owners_expire_noted() - drop each owner for which quota_owner_current(o, now, its newest
 * pod noted by quota_owners_note_pod()) is false, copying at most `max` of them to `gone` (may
 * be NULL) and whether each went because it got a pod to `admitted` (may be NULL); returns how
 * many were dropped.
 */
size_t quota_owners_expire_noted(struct quota_owners *t, int64_t now, struct quota_owner *gone,
                                 bool *admitted, size_t max);

/*
 * quota_owners_due() - the owners to check for deletion (core/triage/owner_alive.h): those never
 * checked, and those not checked in the last `quiet` seconds. Marks them checked at `now` and
 * copies at most `max` to out; returns how many it copied.
 */
size_t quota_owners_due(struct quota_owners *t, int64_t now, int64_t quiet, struct quota_owner *out,
                        size_t max);

/* quota_owners_forget() - drop the owner of `uid` (it was deleted); true when it was there. */
bool quota_owners_forget(struct quota_owners *t, const char *uid);

/* A relist of the Events: entries not applied between begin and end are dropped at the end. */
void quota_owners_sync_begin(struct quota_owners *t);
void quota_owners_sync_end(struct quota_owners *t);

/* quota_owners_counts() - owners held per kind into counts[QUOTA_OWNER_KINDS]; refused: owners
 * turned away because the table was full (may be NULL). */
void quota_owners_counts(struct quota_owners *t, size_t counts[QUOTA_OWNER_KINDS],
                         uint64_t *refused);

#endif
