/* dra_taints.c - device taints on the DRA steps of the ladder (dra_taints.h). */
#include "classify/dra_taints.h"

#include <string.h>

const struct dra_taint *dra_device_blocking_taint(const struct dra_view *view,
                                                  const struct dra_exact *e, const char *driver,
                                                  const char *pool, const struct dra_device *d,
                                                  const struct dra_taint_rule **rule)
{
    *rule = NULL;
    for (size_t i = 0; i < d->n_taints; i++)
        if (dra_taint_blocks(&d->taints[i], e->tolerations, e->n_tolerations))
            return &d->taints[i];
    if (!view || !view->device_taint_rules)
        return NULL;
    const struct dra_taint_rule *buf[DRA_MAX_DEVICE_RULES];
    size_t n =
        view->device_taint_rules(view->ctx, driver, pool, d->name, buf, DRA_MAX_DEVICE_RULES);
    if (n > DRA_MAX_DEVICE_RULES)
        n = DRA_MAX_DEVICE_RULES;
    for (size_t i = 0; i < n; i++)
        if (buf[i] && dra_taint_blocks(&buf[i]->taint, e->tolerations, e->n_tolerations)) {
            *rule = buf[i];
            return &buf[i]->taint;
        }
    return NULL;
}

static bool key_is(const struct dra_taint *t, const char *key)
{
    return t->key && strcmp(t->key, key) == 0;
}

void dra_put_device_taint(struct line *l, const struct dra_slice *s, const struct dra_device *d,
                          const struct dra_taint *t, const struct dra_taint_rule *rule)
{
    const char *dev = d && d->name ? d->name : "?";
    line_printf(l, "device %s (pool %s) has taint %s%s%s:%s", dev, s && s->pool ? s->pool : "?",
                t->key ? t->key : "", t->value ? "=" : "", t->value ? t->value : "",
                dra_taint_effect_word(t->effect));
    if (rule)
        line_printf(l, " (DeviceTaintRule %s)", rule->name ? rule->name : "");
    else if (s && s->name)
        line_printf(l, " (ResourceSlice %s)", s->name);
    if (key_is(t, "gpu.nvidia.com/xid") || key_is(t, "gpu.nvidia.com/gpu-lost")) {
        if (key_is(t, "gpu.nvidia.com/xid"))
            line_printf(l, "; the driver marked GPU %s unhealthy: XID %s", dev,
                        t->value ? t->value : "(no value)");
        else
            line_printf(l, "; the driver marked GPU %s unhealthy: the GPU is lost", dev);
        line_printf(l, "; repair or reset the GPU (or remove the taint once it is healthy): a "
                       "toleration would place the pod on it");
        return;
    }
    line_printf(l, "; tolerate it in the request (exactly.tolerations or "
                   "firstAvailable[].tolerations) or remove the taint");
}
