/*
 * dra_share.h - shared counters (partitionable devices, KEP-4815: a whole GPU and its MIG
 * partitions draw on one counter set) and consumable capacity (KEP-5075: a device with
 * allowMultipleAllocations is shared by several claims until its capacity is used up) for the
 * DRA steps of the ladder (dra_ladder.c); the CLI's explain reads the same counters
 * (dra_node_counters).
 *
 * Follows the allocator Kubernetes 1.37 runs with its default gates (DRAPartitionableDevices and
 * DRAConsumableCapacity beta, on), kubernetes/kubernetes:
 *   staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
 *     allocator_incubating.go   allocateDevice: a device in use (a result without shareID) is
 *                               taken; a device that allows multiple allocations and already has
 *                               shares skips the counter check (its counters are charged once);
 *                               otherwise checkAvailableCounters: every counter set of the pool,
 *                               less what every allocated device of the pool (dedicated or
 *                               shared) consumes, must still hold what this device consumes;
 *                               then CmpRequestOverCapacity for every device.
 *     consumable_capacity.go    CmpRequestOverCapacity, calculateConsumedCapacity (no request:
 *                               requestPolicy.default, else the whole capacity; validRange:
 *                               below min reads as min, rounded up to min + n*step;
 *                               validValues: the first value not below the request),
 *                               violatesPolicy; a request naming a capacity the device lacks
 *                               skips the device.
 *     pools_incubating.go       buildPool: the counter sets are those of the pool's slices with
 *                               sharedCounters (from 1.35 slices of their own).
 *   pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go: results with a shareID
 *   are shares (their consumedCapacity adds up), results with adminAccess hold nothing.
 * With the gates off (1.34/1.35) the API server drops these fields, so none of this applies.
 *
 * Quantities are compared in int64 milli-units (cel_quantity_milli); one that is not
 * representable makes the device UNKNOWN, never a verdict (DRAFractionalCapacityRange's milli
 * arithmetic and Value() arithmetic agree for whole-number ranges). Not modelled: a device whose
 * consumesCounters names a counter set the pool lacks (an invalid pool upstream) reads as
 * UNKNOWN; several requests of one pod drawing on the same counter set or shared device
 * together are checked one by one.
 *
 * Not thread-safe on one struct dra_counters; the functions are otherwise pure.
 */
#ifndef GPUTRI_CLASSIFY_DRA_SHARE_H
#define GPUTRI_CLASSIFY_DRA_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dra.h"

/* Counters tracked per node (every counter of every counter set of the pools reaching it);
 * past this the devices drawing on the rest are UNKNOWN. */
#define DRA_MAX_COUNTER_ENTRIES 512
/* Claims named per counter or shared device. */
#define DRA_SHARE_MAX_HOLDERS 4
/* Shares of one device looked at; past this the device is UNKNOWN. */
#define DRA_MAX_SHARES 64

/* One counter of one counter set of a pool, after the allocated devices drew on it. */
struct dra_counter_left {
    const char *driver, *pool, *set, *counter; /* borrowed from the slices */
    int64_t total, left;                       /* milli-units; left may be negative */
    bool unknown;                              /* a quantity not representable */
    const struct dra_claim *holders[DRA_SHARE_MAX_HOLDERS];
    size_t n_holders;
    bool more_holders;
};

struct dra_counters {
    struct dra_counter_left e[DRA_MAX_COUNTER_ENTRIES];
    size_t n;
    bool overflow; /* a counter set did not fit: its pool's devices are UNKNOWN */
    const char *overflow_driver, *overflow_pool;
    /* not every allocated device was charged (the caller's work budget ran out): every device
     * that draws on counters is UNKNOWN */
    bool incomplete;
};

/* dra_counters_reset() - empty the table (call once per node and alternative). */
void dra_counters_reset(struct dra_counters *c);

/* dra_counters_add_sets() - the counter sets of slice `s` (spec.sharedCounters), at their
 * total. The slice must be one the allocator uses for the node (newest generation). */
void dra_counters_add_sets(struct dra_counters *c, const struct dra_slice *s);

/*
 * dra_counters_charge() - device `d` of slice `s` is allocated (by `by`, named in the
 * details; may be NULL): what it consumes leaves its pool's counters. Call once per allocated
 * device, after every dra_counters_add_sets() of the node. Counters the pool lacks are skipped
 * (upstream does the same).
 */
void dra_counters_charge(struct dra_counters *c, const struct dra_slice *s,
                         const struct dra_device *d, const struct dra_claim *by);

enum dra_fit {
    DRA_FIT,         /* nothing here keeps the device from the request */
    DRA_FIT_HELD,    /* counters or capacity used up by other claims (why says which) */
    DRA_FIT_NEVER,   /* the request's capacity can never be had from the device */
    DRA_FIT_UNKNOWN, /* a quantity could not be compared: neither verdict is certain */
};

/* Why dra_share_fit() did not answer DRA_FIT. */
struct dra_fit_why {
    /* DRA_FIT_HELD by counters: the counter that is short and what the device draws from it */
    const struct dra_counter_left *counter;
    int64_t need;
    /* DRA_FIT_HELD / DRA_FIT_NEVER by capacity: the device's capacity (qualified name) */
    const char *capacity;
    int64_t cap_total, cap_used, cap_need; /* milli-units */
    bool policy;         /* NEVER: cap_need is outside the capacity's requestPolicy */
    const char *missing; /* NEVER: the request asks this capacity, which the device lacks */
    /* HELD: the claims that hold it (the counter's, or the device's shares) */
    const struct dra_claim *holders[DRA_SHARE_MAX_HOLDERS];
    size_t n_holders;
};

/*
 * dra_share_fit() - whether free device `d` (no dedicated holder) of slice `s` can serve
 * request alternative `e`, given the counters of its node `c` and the claims holding shares of
 * it (`shares`, n_shares of them, the pod's own left out). Fills *why unless DRA_FIT.
 */
enum dra_fit dra_share_fit(const struct dra_counters *c, const struct dra_slice *s,
                           const struct dra_device *d, const struct dra_exact *e,
                           const struct dra_claim *const *shares, size_t n_shares,
                           struct dra_fit_why *why);

/* dra_share_consumed() - what the shares in `claim`'s results of (driver, pool, device)
 * consume of capacity `qname`, in milli-units (saturating); false when a value is not
 * representable. */
bool dra_share_consumed(const struct dra_claim *claim, const char *driver, const char *pool,
                        const char *device, const char *qname, int64_t *milli);

struct dra_view;
struct knode;
/*
 * dra_node_counters() - the counters of the pools of `driver` (every driver when NULL)
 * reaching `node`, less what their allocated devices consume, exactly as the ladder counts
 * them for a pod that holds nothing (dra_ladder.c). `out` is caller storage. Returns K_OK or
 * K_ENOMEM. Reads the view only; thread-safe on read-only input.
 */
int dra_node_counters(const struct dra_view *view, const struct knode *node, const char *driver,
                      struct dra_counters *out);

/* dra_milli_str() - a milli-unit quantity for a detail ("80Gi", "3", "500m") into buf. */
const char *dra_milli_str(int64_t milli, char *buf, size_t len);

#endif
