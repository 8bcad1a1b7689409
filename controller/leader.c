/* leader.c - the Lease election state machine (see leader.h). */
#include "leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/result.h"

struct leader_elector {
    struct leader_options opts;
    char identity[256];
    struct lease_lock lock;
    struct clock clock;
    unsigned seed;

    /* Only the stepping thread writes these; mu guards what other threads read. */
    pthread_mutex_t mu;
    bool leading;
    int64_t renewed_ms; /* monotonic start of the last successful acquire or renew */
    struct lease_record observed;
    int64_t observed_ms; /* monotonic time `observed` was first seen */
    bool have_observed;
};

static int64_t mono_ms(struct leader_elector *le)
{
    return clock_mono_ms(&le->clock);
}

struct leader_elector *leader_new(const struct leader_options *opts, const struct lease_lock *lock,
                                  const struct clock *clock)
{
    struct leader_options o = *opts;
    if (o.lease_duration_ms <= 0)
        o.lease_duration_ms = 15000;
    if (o.renew_deadline_ms <= 0)
        o.renew_deadline_ms = 10000;
    if (o.retry_period_ms <= 0)
        o.retry_period_ms = 2000;
    if (o.renew_deadline_ms >= o.lease_duration_ms || o.retry_period_ms >= o.renew_deadline_ms ||
        !o.identity || !*o.identity ||
        strlen(o.identity) >= sizeof(((struct leader_elector *)0)->identity))
        return NULL;
    struct leader_elector *le = calloc(1, sizeof(*le));
    if (!le)
        return NULL;
    le->opts = o;
    snprintf(le->identity, sizeof(le->identity), "%s", o.identity);
    le->opts.identity = le->identity;
    le->lock = *lock;
    le->clock = clock ? *clock : *clock_system();
    le->seed = (unsigned)clock_mono_ns(&le->clock) ^ (unsigned)(uintptr_t)le;
    pthread_mutex_init(&le->mu, NULL);
    return le;
}

void leader_free(struct leader_elector *le)
{
    if (!le)
        return;
    pthread_mutex_destroy(&le->mu);
    free(le);
}

static void observe(struct leader_elector *le, const struct lease_record *rec, int64_t now)
{
    pthread_mutex_lock(&le->mu);
    if (!le->have_observed || !lease_record_equal(&le->observed, rec)) {
        le->observed = *rec;
        le->observed_ms = now;
        le->have_observed = true;
    }
    pthread_mutex_unlock(&le->mu);
}

enum attempt {
    ATTEMPT_OK,     /* we hold the lease now */
    ATTEMPT_FAILED, /* could not tell or could not write: try again */
    ATTEMPT_HELD,   /* someone else holds a valid lease */
};

/* client-go tryAcquireOrRenew. */
static enum attempt try_acquire_or_renew(struct leader_elector *le)
{
    struct lease_record old, rec;
    struct kube_error err = {0};
    char now_text[LEASE_TIME_MAX];
    lease_format_time(clock_wall_ms(&le->clock), now_text);

    memset(&rec, 0, sizeof(rec));
    snprintf(rec.holder, sizeof(rec.holder), "%s", le->identity);
    rec.duration_s = (int)((le->opts.lease_duration_ms + 999) / 1000);
    memcpy(rec.acquire_time, now_text, sizeof(now_text));
    memcpy(rec.renew_time, now_text, sizeof(now_text));

    int rc = le->lock.get(le->lock.ctx, &old, &err);
    if (rc == K_ENOTFOUND) {
        rc = le->lock.create(le->lock.ctx, &rec, &err);
        if (rc) {
            log_info_kv(1, "leader election: creating the lease failed",
                        LOG_STR("err", k_strerror(rc)), LOG_STR("detail", err.message));
            return ATTEMPT_FAILED;
        }
        observe(le, &rec, mono_ms(le));
        return ATTEMPT_OK;
    }
    if (rc) {
        log_warn_kv("leader election: reading the lease failed", LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message));
        return ATTEMPT_FAILED;
    }

    int64_t now = mono_ms(le);
    observe(le, &old, now);
    bool ours = strcmp(old.holder, le->identity) == 0;
    pthread_mutex_lock(&le->mu);
    bool valid = now < le->observed_ms + le->opts.lease_duration_ms;
    pthread_mutex_unlock(&le->mu);
    if (old.holder[0] && valid && !ours)
        return ATTEMPT_HELD;

    if (ours) {
        memcpy(rec.acquire_time, old.acquire_time, sizeof(rec.acquire_time));
        rec.transitions = old.transitions;
    } else {
        rec.transitions = old.transitions + 1;
    }
    rc = le->lock.update(le->lock.ctx, &rec, &err);
    if (rc) {
        log_info_kv(1, "leader election: writing the lease failed", LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message));
        return ATTEMPT_FAILED;
    }
    observe(le, &rec, mono_ms(le));
    return ATTEMPT_OK;
}

bool leader_step(struct leader_elector *le)
{
    int64_t start = mono_ms(le);
    enum attempt a = try_acquire_or_renew(le);
    int64_t now = mono_ms(le);

    pthread_mutex_lock(&le->mu);
    bool was = le->leading;
    if (a == ATTEMPT_OK) {
        /* The start of the attempt: others saw the new record no earlier than that. */
        le->renewed_ms = start;
        le->leading = true;
    } else if (le->leading &&
               (a == ATTEMPT_HELD || now - le->renewed_ms >= le->opts.renew_deadline_ms)) {
        le->leading = false;
    }
    bool leading = le->leading;
    char holder[sizeof(le->observed.holder)];
    memcpy(holder, le->observed.holder, sizeof(holder));
    pthread_mutex_unlock(&le->mu);

    if (leading && !was)
        log_info_kv(0, "leader election: acquired the lease", LOG_STR("identity", le->identity));
    else if (!leading && was)
        log_warn_kv("leader election: lost the lease", LOG_STR("identity", le->identity),
                    LOG_STR("reason", a == ATTEMPT_HELD ? "another holder took it"
                                                        : "renew deadline passed"));
    return leading;
}

bool leader_is_leading(struct leader_elector *le)
{
    int64_t now = mono_ms(le);
    pthread_mutex_lock(&le->mu);
    bool leading = le->leading && now - le->renewed_ms < le->opts.renew_deadline_ms;
    pthread_mutex_unlock(&le->mu);
    return leading;
}

int leader_release(struct leader_elector *le)
{
    pthread_mutex_lock(&le->mu);
    bool leading = le->leading;
    int transitions = le->observed.transitions;
    le->leading = false;
    pthread_mutex_unlock(&le->mu);
    if (!leading)
        return K_OK;

    struct lease_record rec;
    struct kube_error err = {0};
    memset(&rec, 0, sizeof(rec));
    rec.duration_s = 1;
    rec.transitions = transitions;
    lease_format_time(clock_wall_ms(&le->clock), rec.renew_time);
    memcpy(rec.acquire_time, rec.renew_time, sizeof(rec.acquire_time));
    int rc = le->lock.update(le->lock.ctx, &rec, &err);
    /*
     * A conflict can be our own last renewal: a write the shutdown cut short may still have
     * been applied, leaving the Lease at a version we never saw. If the Lease still names us,
     * release it at its current version; if it names someone else, it is not ours to release.
     */
    for (int attempt = 0; rc == K_ECONFLICT && attempt < 2; attempt++) {
        struct lease_record now_rec;
        struct kube_error gerr = {0};
        if (le->lock.get(le->lock.ctx, &now_rec, &gerr) != K_OK ||
            strcmp(now_rec.holder, le->identity) != 0)
            break;
        rec.transitions = now_rec.transitions;
        memset(&err, 0, sizeof(err));
        rc = le->lock.update(le->lock.ctx, &rec, &err);
    }
    if (rc) {
        log_warn_kv("leader election: releasing the lease failed", LOG_STR("err", k_strerror(rc)),
                    LOG_STR("detail", err.message));
        return rc;
    }
    observe(le, &rec, mono_ms(le));
    log_info_kv(0, "leader election: released the lease", LOG_STR("identity", le->identity));
    return K_OK;
}

void leader_observed_holder(struct leader_elector *le, char *out, size_t len)
{
    pthread_mutex_lock(&le->mu);
    snprintf(out, len, "%s", le->observed.holder);
    pthread_mutex_unlock(&le->mu);
}

int64_t leader_next_delay_ms(struct leader_elector *le)
{
    int64_t period = le->opts.retry_period_ms;
    pthread_mutex_lock(&le->mu);
    bool leading = le->leading;
    pthread_mutex_unlock(&le->mu);
    if (leading)
        return period;
    return period + (int64_t)((double)period * 1.2 * (rand_r(&le->seed) / (double)RAND_MAX));
}
