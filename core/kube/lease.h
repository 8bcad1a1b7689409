/*
 * lease.h - a coordination.k8s.io/v1 Lease as a leader-election lock
 * (kubernetes/client-go: tools/leaderelection/resourcelock/leaselock.go).
 *
 * struct lease_lock is the seam between the election state machine and the API: get, create and
 * update one record. The Kubernetes implementation keeps the Lease it last read or wrote and
 * replaces it with PUT carrying that metadata.resourceVersion, so a concurrent writer makes the
 * update fail with K_ECONFLICT instead of being overwritten. Unit tests use a fake lock.
 */
#ifndef GPUTRI_KUBE_LEASE_H
#define GPUTRI_KUBE_LEASE_H

#include <stdint.h>

#include "kube/client.h"

#define LEASE_TIME_MAX 40 /* "2026-11-30T14:30:00.123456Z" and NUL, with room */

/* The election record (client-go LeaderElectionRecord), as kept in the Lease's spec. */
struct lease_record {
    char holder[256];                  /* spec.holderIdentity; "" when released */
    int duration_s;                    /* spec.leaseDurationSeconds */
    char acquire_time[LEASE_TIME_MAX]; /* spec.acquireTime, MicroTime text */
    char renew_time[LEASE_TIME_MAX];   /* spec.renewTime, MicroTime text */
    int transitions;                   /* spec.leaseTransitions */
};

/*
 * The lock operations. Every function returns a K_* value and fills err (never NULL) on failure.
 * All three are called from one thread at a time.
 */
struct lease_lock {
    void *ctx;
    /* read the record: K_OK and *rec, K_ENOTFOUND when the Lease does not exist */
    int (*get)(void *ctx, struct lease_record *rec, struct kube_error *err);
    /* create the Lease holding `rec`: K_ECONFLICT when someone else created it first */
    int (*create)(void *ctx, const struct lease_record *rec, struct kube_error *err);
    /* replace the record last read or written: K_ECONFLICT when the Lease changed since */
    int (*update)(void *ctx, const struct lease_record *rec, struct kube_error *err);
};

/* lease_record_equal() - all fields equal (client-go compares the raw records the same way). */
int lease_record_equal(const struct lease_record *a, const struct lease_record *b);

/*
 * lease_format_time() - `wall_ms` (milliseconds since the epoch) as a MicroTime:
 * "YYYY-MM-DDTHH:MM:SS.uuuuuuZ", into out (LEASE_TIME_MAX bytes).
 */
void lease_format_time(int64_t wall_ms, char out[LEASE_TIME_MAX]);

/*
 * lease_record_from_json() - read spec of a Lease object (borrowed) into *rec; missing fields are
 * left empty or 0. Returns K_OK, or K_EPARSE when `lease` has no object spec.
 */
int lease_record_from_json(json_object *lease, struct lease_record *rec);

/* The Kubernetes-backed lock: one Lease "ns/name" read and written through `client`. */
struct kube_lease_lock {
    struct kube_client *client; /* borrowed */
    char ns[254];
    char name[254];
    json_object *last; /* the Lease last read or written, owned; NULL before the first get */
};

/*
 * kube_lease_lock_init() - set up `l` for Lease `ns`/`name` over `client` (borrowed; it must
 * outlive the lock). Returns K_OK or K_ETOOBIG for names too long.
 */
int kube_lease_lock_init(struct kube_lease_lock *l, struct kube_client *client, const char *ns,
                         const char *name);

/* kube_lease_lock_ops() - the lease_lock operations over `l` (borrowed). */
struct lease_lock kube_lease_lock_ops(struct kube_lease_lock *l);

/* kube_lease_lock_cleanup() - release the cached Lease. Idempotent. */
void kube_lease_lock_cleanup(struct kube_lease_lock *l);

#endif
