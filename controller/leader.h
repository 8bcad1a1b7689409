/*
 * leader.h - leader election on a Lease, with client-go's semantics
 * (kubernetes/client-go: tools/leaderelection/leaderelection.go, tryAcquireOrRenew and renew).
 *
 * A candidate calls leader_step() every retry period (with jitter while it is not leading). Each
 * step reads the Lease and
 *   - creates it holding our identity when it does not exist;
 *   - leaves it alone while another holder's lease is valid: valid means the record was seen to
 *     change less than lease_duration ago by OUR clock (the record's own timestamps are not
 *     compared with our clock, so clock skew between replicas does not matter);
 *   - otherwise (expired, released with an empty holder, or ours) writes our record with a fresh
 *     renewTime through a resourceVersion-guarded update, so of two candidates only one wins.
 * A leader whose renewals have not succeeded for renew_deadline stops leading (and must stop
 * writing); since renew_deadline < lease_duration it stops before anyone else may take over.
 * leader_release() hands the lease back on clean shutdown (holder "", leaseDurationSeconds 1, as
 * client-go's ReleaseOnCancel), so a successor takes over at once.
 *
 * Time comes from an injected clock, so tests drive the machine by hand with a fake lease_lock.
 * leader_step() and leader_release() must be called from one thread at a time; leader_is_leading()
 * and leader_observed_holder() are thread-safe.
 */
#ifndef GPUTRI_LEADER_H
#define GPUTRI_LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/lease.h"
#include "util/clock.h"

struct leader_options {
    const char *identity;      /* e.g. "host_1f2e..." (copied) */
    int64_t lease_duration_ms; /* how long a non-renewed lease stays valid, default 15000 */
    int64_t renew_deadline_ms; /* a leader gives up after this long without renewing, 10000 */
    int64_t retry_period_ms;   /* time between attempts, default 2000 */
};

struct leader_elector;

/*
 * leader_new() - a candidate using `lock` (copied; its ctx is borrowed and must outlive the
 * elector). `clock` (copied; its ctx borrowed): the monotonic time for deadlines and the wall
 * time for the record; NULL for the system clocks.
 * Returns NULL on allocation failure or invalid options (renew_deadline >= lease_duration, or
 * retry_period >= renew_deadline, as client-go refuses them).
 */
struct leader_elector *leader_new(const struct leader_options *opts, const struct lease_lock *lock,
                                  const struct clock *clock);
void leader_free(struct leader_elector *le);

/*
 * leader_step() - one acquire-or-renew attempt at the current time. Returns true when we lead
 * after it. A failed renewal keeps leadership until renew_deadline has passed since the last
 * successful one; seeing another holder in the Lease ends it at once.
 */
bool leader_step(struct leader_elector *le);

/*
 * leader_is_leading() - whether we lead right now: the last successful renewal started less
 * than renew_deadline ago. Check it immediately before every write. Thread-safe.
 */
bool leader_is_leading(struct leader_elector *le);

/*
 * leader_release() - if we lead, write a released record (empty holder, duration 1 s) and stop
 * leading. When the write conflicts (the Lease moved on: possibly our own renewal that a
 * shutdown cut short after the API server applied it), the Lease is read again and the release
 * retried, twice at most, as long as it still names us. Returns K_OK (also when not leading) or
 * the lock's error; leadership ends either way.
 */
int leader_release(struct leader_elector *le);

/* leader_observed_holder() - the holder last seen in the Lease ("" when none), into out. */
void leader_observed_holder(struct leader_elector *le, char *out, size_t len);

/* leader_next_delay_ms() - how long to wait before the next step: the retry period, and while
 * not leading up to 1.2 times more (client-go's JitterUntil with factor 1.2). */
int64_t leader_next_delay_ms(struct leader_elector *le);

#endif
