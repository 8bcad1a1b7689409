/* containers.c - the kubelet's container statuses of a bound pod (containers.h). */
#include "containers.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util/utf8.h"

void pod_containers_free(struct pod_containers *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        struct container_state *s = &c->items[i];
        free(s->name);
        free(s->term_reason);
        free(s->waiting_reason);
        free(s->waiting_message);
        free(s->last_reason);
        free(s->last_message);
    }
    free(c->items);
    free(c);
}

static bool state_equal(const struct container_state *a, const struct container_state *b)
{
    return model_str_equal(a->name, b->name) && a->index == b->index && a->init == b->init &&
           a->gpu_resource == b->gpu_resource && a->claim_ref == b->claim_ref &&
           a->has_status == b->has_status && a->running == b->running &&
           a->terminated == b->terminated && a->started == b->started &&
           model_str_equal(a->term_reason, b->term_reason) &&
           model_str_equal(a->waiting_reason, b->waiting_reason) &&
           model_str_equal(a->waiting_message, b->waiting_message) && a->has_last == b->has_last &&
           model_str_equal(a->last_reason, b->last_reason) &&
           model_str_equal(a->last_message, b->last_message) &&
           a->last_exit_code == b->last_exit_code && a->restarts == b->restarts;
}

bool pod_containers_equal(const struct pod_containers *a, const struct pod_containers *b)
{
    if (!a || !b)
        return a == b;
    if (a->n != b->n || a->total != b->total)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!state_equal(&a->items[i], &b->items[i]))
            return false;
    return true;
}

bool container_start_failed_reason(const char *reason)
{
    return reason &&
           (strcmp(reason, "StartError") == 0 || strcmp(reason, "ContainerCannotRun") == 0);
}

bool container_started_once(const struct container_state *c)
{
    if (!c->has_status)
        return false;
    if (c->running || c->started)
        return true;
    if (c->terminated && !container_start_failed_reason(c->term_reason))
        return true;
    return c->has_last && !container_start_failed_reason(c->last_reason);
}

bool container_is_gpu(const struct container_state *c, bool claims_gpu)
{
    return c->gpu_resource || (c->claim_ref && claims_gpu);
}

bool pod_containers_any_gpu(const struct pod_containers *cs, bool claims_gpu)
{
    for (size_t i = 0; cs && i < cs->n; i++)
        if (container_is_gpu(&cs->items[i], claims_gpu))
            return true;
    return false;
}

bool pod_gpu_containers_started(const struct kpod *p, bool claims_gpu)
{
    const struct pod_containers *cs = p->containers;
    if (!cs)
        return true;
    /* Running with no status at all: the kubelet writes statuses with the phase (getPhase counts
     * them), so only a fake node reports this; nothing to read */
    bool any_status = false;
    for (size_t i = 0; i < cs->n && !any_status; i++)
        any_status = cs->items[i].has_status;
    if (!any_status && p->phase == POD_PHASE_RUNNING)
        return true;
    bool any = pod_containers_any_gpu(cs, claims_gpu);
    for (size_t i = 0; i < cs->n; i++) {
        const struct container_state *c = &cs->items[i];
        if ((!any || container_is_gpu(c, claims_gpu)) && !container_started_once(c))
            return false;
    }
    return true;
}

int container_message_dup(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return 0;
    size_t len = strlen(s), keep = 0;
    while (keep < len) {
        unsigned cp;
        size_t step = utf8_decode((const unsigned char *)s + keep, len - keep, &cp);
        if (step == 0)
            step = 1; /* an invalid byte counts as one */
        if (keep + step > CONTAINER_MESSAGE_MAX)
            break;
        keep += step;
    }
    *out = malloc(keep + 1);
    if (!*out)
        return -1;
    memcpy(*out, s, keep);
    (*out)[keep] = '\0';
    return 0;
}
