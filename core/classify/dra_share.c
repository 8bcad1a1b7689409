/*
 * dra_share.c - shared counters and consumable capacity of DRA devices (dra_share.h; semantics
 * and upstream sources there). Every loop is bounded by the model's limits (model/dra.h) or by
 * DRA_MAX_COUNTER_ENTRIES / DRA_MAX_SHARES.
 */
#include "classify/dra_share.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel.h"
#include "util/result.h"

static bool milli(const char *q, int64_t *out)
{
    return q && cel_quantity_milli(q, out) == CEL_LOOKUP_FOUND;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

void dra_counters_reset(struct dra_counters *c)
{
    c->n = 0;
    c->overflow = false;
    c->overflow_driver = c->overflow_pool = NULL;
    c->incomplete = false;
}

static bool same_pool(const struct dra_counter_left *e, const struct dra_slice *s)
{
    return strcmp(e->driver, s->driver) == 0 && strcmp(e->pool, s->pool) == 0;
}

static struct dra_counter_left *find(const struct dra_counters *c, const struct dra_slice *s,
                                     const char *set, const char *counter)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct dra_counter_left *e = &c->e[i];
        if (same_pool(e, s) && strcmp(e->set, set) == 0 && strcmp(e->counter, counter) == 0)
            return (struct dra_counter_left *)e;
    }
    return NULL;
}

void dra_counters_add_sets(struct dra_counters *c, const struct dra_slice *s)
{
    for (size_t i = 0; i < s->n_counter_sets; i++) {
        const struct dra_counter_set *cs = &s->counter_sets[i];
        for (size_t j = 0; cs->name && j < cs->n_counters; j++) {
            const struct dra_quantity *q = &cs->counters[j];
            if (!q->name || find(c, s, cs->name, q->name))
                continue; /* a duplicate set makes the pool invalid upstream; keep the first */
            if (c->n == DRA_MAX_COUNTER_ENTRIES) {
                c->overflow = true;
                c->overflow_driver = s->driver;
                c->overflow_pool = s->pool;
                return;
            }
            struct dra_counter_left *e = &c->e[c->n++];
            memset(e, 0, sizeof(*e));
            e->driver = s->driver;
            e->pool = s->pool;
            e->set = cs->name;
            e->counter = q->name;
            e->unknown = !milli(q->value, &e->total);
            e->left = e->total;
        }
    }
}

void dra_counters_charge(struct dra_counters *c, const struct dra_slice *s,
                         const struct dra_device *d, const struct dra_claim *by)
{
    for (size_t i = 0; i < d->n_consumes; i++) {
        const struct dra_counter_use *u = &d->consumes[i];
        for (size_t j = 0; u->counter_set && j < u->n_counters; j++) {
            const struct dra_quantity *q = &u->counters[j];
            struct dra_counter_left *e = q->name ? find(c, s, u->counter_set, q->name) : NULL;
            if (!e)
                continue;
            int64_t v;
            if (!milli(q->value, &v))
                e->unknown = true;
            else
                e->left = add_sat(e->left, -v);
            bool seen = false;
            for (size_t h = 0; h < e->n_holders; h++)
                seen = seen || e->holders[h] == by;
            if (by && !seen) {
                if (e->n_holders < DRA_SHARE_MAX_HOLDERS)
                    e->holders[e->n_holders++] = by;
                else
                    e->more_holders = true;
            }
        }
    }
}

/* What device d draws from (set, counter): *out milli-units; false when not representable. */
static bool draws(const struct dra_device *d, const char *set, const char *counter, int64_t *out)
{
    *out = 0;
    for (size_t i = 0; i < d->n_consumes; i++) {
        const struct dra_counter_use *u = &d->consumes[i];
        if (!u->counter_set || strcmp(u->counter_set, set) != 0)
            continue;
        for (size_t j = 0; j < u->n_counters; j++) {
            int64_t v;
            if (!u->counters[j].name || strcmp(u->counters[j].name, counter) != 0)
                continue;
            if (!milli(u->counters[j].value, &v))
                return false;
            *out = add_sat(*out, v);
        }
    }
    return true;
}

/* Whether every counter d consumes is one of its pool's (else the pool is invalid upstream). */
static bool consumes_known(const struct dra_counters *c, const struct dra_slice *s,
                           const struct dra_device *d)
{
    for (size_t i = 0; i < d->n_consumes; i++) {
        const struct dra_counter_use *u = &d->consumes[i];
        for (size_t j = 0; j < u->n_counters; j++)
            if (!u->counter_set || !u->counters[j].name ||
                !find(c, s, u->counter_set, u->counters[j].name))
                return false;
    }
    return true;
}

/* checkAvailableCounters for one device: every counter of its pool, less what it draws. */
static enum dra_fit counters_fit(const struct dra_counters *c, const struct dra_slice *s,
                                 const struct dra_device *d, struct dra_fit_why *why)
{
    if (c->incomplete ||
        (c->overflow && c->overflow_driver && strcmp(c->overflow_driver, s->driver) == 0 &&
         strcmp(c->overflow_pool, s->pool) == 0))
        return DRA_FIT_UNKNOWN;
    if (!consumes_known(c, s, d))
        return DRA_FIT_UNKNOWN;
    enum dra_fit res = DRA_FIT;
    for (size_t i = 0; i < c->n; i++) {
        const struct dra_counter_left *e = &c->e[i];
        if (!same_pool(e, s))
            continue;
        int64_t need;
        if (!draws(d, e->set, e->counter, &need) || e->unknown) {
            res = DRA_FIT_UNKNOWN;
            continue;
        }
        if (add_sat(e->left, -need) < 0) {
            why->counter = e;
            why->need = need;
            why->n_holders = e->n_holders;
            memcpy(why->holders, e->holders, sizeof(why->holders));
            return DRA_FIT_HELD;
        }
    }
    return res;
}

bool dra_share_consumed(const struct dra_claim *claim, const char *driver, const char *pool,
                        const char *device, const char *qname, int64_t *out)
{
    *out = 0;
    for (size_t i = 0; i < claim->n_results; i++) {
        const struct dra_result *r = &claim->results[i];
        if (!r->share_id || r->admin_access || !r->driver || !r->pool || !r->device ||
            strcmp(r->driver, driver) != 0 || strcmp(r->pool, pool) != 0 ||
            strcmp(r->device, device) != 0)
            continue;
        for (size_t j = 0; j < r->n_consumed; j++) {
            int64_t v;
            if (!dra_qname_is(driver, r->consumed[j].name, qname))
                continue;
            if (!milli(r->consumed[j].value, &v))
                return false;
            *out = add_sat(*out, v);
        }
    }
    return true;
}

/* calculateConsumedCapacity: what a request (NULL: none for this capacity) consumes. */
static enum dra_fit consumed_by(const struct dra_capacity *cap, const char *req, int64_t *out)
{
    if (!req) {
        const char *q = cap->has_policy && cap->policy_default ? cap->policy_default : cap->value;
        return milli(q, out) ? DRA_FIT : DRA_FIT_UNKNOWN;
    }
    int64_t r;
    if (!milli(req, &r))
        return DRA_FIT_UNKNOWN;
    *out = r;
    if (!cap->has_policy)
        return DRA_FIT;
    if (cap->range_min) {
        int64_t min, step;
        if (!milli(cap->range_min, &min))
            return DRA_FIT_UNKNOWN;
        if (r < min) {
            *out = min;
            return DRA_FIT;
        }
        if (!cap->range_step)
            return DRA_FIT;
        if (!milli(cap->range_step, &step) || step <= 0)
            return DRA_FIT_UNKNOWN;
        /* a negative validRange.min (a driver's) with a large request overflows: not
           representable, an error upstream */
        int64_t span, rounded;
        if (__builtin_sub_overflow(r, min, &span))
            return DRA_FIT_UNKNOWN;
        int64_t n = span / step + (span % step != 0);
        if (__builtin_mul_overflow(n, step, &rounded) ||
            __builtin_add_overflow(min, rounded, &rounded))
            return DRA_FIT_UNKNOWN;
        *out = rounded;
        return DRA_FIT;
    }
    for (size_t i = 0; i < cap->n_valid_values; i++) {
        int64_t v;
        if (!milli(cap->valid_values[i], &v))
            return DRA_FIT_UNKNOWN;
        if (r <= v) {
            *out = v;
            return DRA_FIT;
        }
    }
    return DRA_FIT;
}

/* violatesPolicy; *unknown when a quantity of the policy is not representable. */
static bool violates(const struct dra_capacity *cap, int64_t v, bool *unknown)
{
    int64_t q;
    if (!cap->has_policy)
        return false;
    if (cap->policy_default && milli(cap->policy_default, &q) && q == v)
        return false;
    if (cap->range_min) {
        if (cap->range_max) {
            if (!milli(cap->range_max, &q))
                return *unknown = true, false;
            if (v > q)
                return true;
        }
        if (cap->range_step) {
            int64_t min, step;
            if (!milli(cap->range_min, &min) || !milli(cap->range_step, &step) || step <= 0)
                return *unknown = true, false;
            int64_t span;
            if (__builtin_sub_overflow(v, min, &span))
                return *unknown = true, false;
            return span % step != 0;
        }
        return false;
    }
    if (cap->n_valid_values == 0)
        return false;
    for (size_t i = 0; i < cap->n_valid_values; i++) {
        if (!milli(cap->valid_values[i], &q))
            return *unknown = true, false;
        if (q == v)
            return false;
    }
    return true;
}

/* CmpRequestOverCapacity for one device, given the claims sharing it. */
static enum dra_fit capacity_fit(const struct dra_slice *s, const struct dra_device *d,
                                 const struct dra_exact *e, const struct dra_claim *const *shares,
                                 size_t n_shares, struct dra_fit_why *why)
{
    for (size_t i = 0; i < e->n_capacity; i++) {
        bool found = false;
        for (size_t k = 0; k < d->n_caps && !found; k++)
            found = dra_qname_is(s->driver, e->capacity[i].name, d->caps[k].name);
        if (!found) {
            why->missing = e->capacity[i].name;
            return DRA_FIT_NEVER;
        }
    }
    enum dra_fit res = DRA_FIT;
    bool held = false;
    for (size_t k = 0; k < d->n_caps; k++) {
        const struct dra_capacity *cap = &d->caps[k];
        const char *req = NULL;
        for (size_t i = 0; i < e->n_capacity && !req; i++)
            if (dra_qname_is(s->driver, e->capacity[i].name, cap->name))
                req = e->capacity[i].value;
        int64_t need = 0, total, used = 0;
        bool unknown = false;
        if (consumed_by(cap, req, &need) != DRA_FIT || !milli(cap->value, &total) || need < 0) {
            res = DRA_FIT_UNKNOWN;
            continue;
        }
        for (size_t j = 0; j < n_shares; j++) {
            int64_t v;
            if (!dra_share_consumed(shares[j], s->driver, s->pool, d->name, cap->name, &v))
                unknown = true;
            used = add_sat(used, v);
        }
        bool policy = violates(cap, need, &unknown);
        if (policy || need > total) {
            why->capacity = cap->name;
            why->cap_total = total;
            why->cap_used = used;
            why->cap_need = need;
            why->policy = policy;
            return DRA_FIT_NEVER;
        }
        if (unknown) {
            res = DRA_FIT_UNKNOWN;
            continue;
        }
        if (!held && add_sat(used, need) > total) {
            held = true;
            why->capacity = cap->name;
            why->cap_total = total;
            why->cap_used = used;
            why->cap_need = need;
        }
    }
    if (held && res == DRA_FIT) {
        for (size_t j = 0; j < n_shares && why->n_holders < DRA_SHARE_MAX_HOLDERS; j++)
            why->holders[why->n_holders++] = shares[j];
        return DRA_FIT_HELD;
    }
    return res;
}

enum dra_fit dra_share_fit(const struct dra_counters *c, const struct dra_slice *s,
                           const struct dra_device *d, const struct dra_exact *e,
                           const struct dra_claim *const *shares, size_t n_shares,
                           struct dra_fit_why *why)
{
    memset(why, 0, sizeof(*why));
    if (n_shares > DRA_MAX_SHARES)
        return DRA_FIT_UNKNOWN;
    enum dra_fit res = DRA_FIT;
    /* a shared device already in use has had its counters charged once */
    if (d->n_consumes > 0 && !(d->allow_multiple && n_shares > 0)) {
        res = counters_fit(c, s, d, why);
        if (res == DRA_FIT_HELD)
            return res;
    }
    struct dra_fit_why cw;
    memset(&cw, 0, sizeof(cw));
    enum dra_fit capres = capacity_fit(s, d, e, d->allow_multiple ? shares : NULL,
                                       d->allow_multiple ? n_shares : 0, &cw);
    if (capres == DRA_FIT_NEVER || capres == DRA_FIT_HELD) {
        *why = cw;
        return capres;
    }
    return res == DRA_FIT_UNKNOWN || capres == DRA_FIT_UNKNOWN ? DRA_FIT_UNKNOWN : DRA_FIT;
}

const char *dra_milli_str(int64_t m, char *buf, size_t len)
{
    static const struct {
        const char *suffix;
        int64_t units;
    } bin[] = {{"Ti", INT64_C(1) << 40},
               {"Gi", INT64_C(1) << 30},
               {"Mi", INT64_C(1) << 20},
               {"Ki", INT64_C(1) << 10}};
    if (m % 1000 != 0) {
        snprintf(buf, len, "%" PRId64 "m", m);
        return buf;
    }
    int64_t v = m / 1000;
    for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++)
        if (v != 0 && v % bin[i].units == 0 && (v / bin[i].units) < 100000) {
            snprintf(buf, len, "%" PRId64 "%s", v / bin[i].units, bin[i].suffix);
            return buf;
        }
    snprintf(buf, len, "%" PRId64, v);
    return buf;
}
