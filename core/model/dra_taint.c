/*
 * dra_taint.c - device taints and tolerations (KEP-5055) of dra.h: the toleration match, the
 * allocator's taint check and a DeviceTaintRule's device selection.
 */
#include <stdlib.h>
#include <string.h>

#include "model/dra.h"

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

const char *dra_taint_effect_word(enum dra_taint_effect e)
{
    switch (e) {
    case DRA_EFFECT_NONE:
        return "None";
    case DRA_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case DRA_EFFECT_NO_EXECUTE:
        return "NoExecute";
    case DRA_EFFECT_UNKNOWN:
    default:
        return "(unknown)";
    }
}

enum dra_taint_effect dra_taint_effect_parse(const char *s)
{
    if (!s)
        return DRA_EFFECT_UNKNOWN;
    if (strcmp(s, "None") == 0)
        return DRA_EFFECT_NONE;
    if (strcmp(s, "NoSchedule") == 0)
        return DRA_EFFECT_NO_SCHEDULE;
    if (strcmp(s, "NoExecute") == 0)
        return DRA_EFFECT_NO_EXECUTE;
    return DRA_EFFECT_UNKNOWN;
}

bool dra_toleration_tolerates(const struct dra_toleration *t, const struct dra_taint *taint)
{
    if (!t || !taint)
        return false;
    if (!t->any_effect && t->effect != taint->effect)
        return false;
    if (t->key && *t->key && strcmp(t->key, str_or_empty(taint->key)) != 0)
        return false;
    switch (t->op) {
    case DRA_TOL_EQUAL:
        return strcmp(str_or_empty(t->value), str_or_empty(taint->value)) == 0;
    case DRA_TOL_EXISTS:
        return true;
    case DRA_TOL_OTHER:
    default:
        return false;
    }
}

bool dra_taint_blocks(const struct dra_taint *taint, const struct dra_toleration *tols, size_t n)
{
    if (!taint ||
        (taint->effect != DRA_EFFECT_NO_SCHEDULE && taint->effect != DRA_EFFECT_NO_EXECUTE))
        return false;
    for (size_t i = 0; tols && i < n; i++)
        if (dra_toleration_tolerates(&tols[i], taint))
            return false;
    return true;
}

bool dra_taint_rule_selects(const struct dra_taint_rule *r, const char *driver, const char *pool,
                            const char *device)
{
    if (!r || !r->has_selector)
        return false;
    if (r->driver && strcmp(r->driver, str_or_empty(driver)) != 0)
        return false;
    if (r->pool && strcmp(r->pool, str_or_empty(pool)) != 0)
        return false;
    if (r->device && strcmp(r->device, str_or_empty(device)) != 0)
        return false;
    return true;
}
