/* binding.c - preemption or binding in progress on a nominated node (binding.h). */
#include "classify/binding.h"

#include <string.h>

#include "model/dra.h"
#include "util/clock.h"

/* The first bindingFailureCondition of r that is True in s, or NULL. */
static const struct dra_condition *failure_true(const struct dra_result *r,
                                                const struct dra_device_status *s)
{
    for (size_t i = 0; s && i < r->binding.n_failure_conditions; i++) {
        const struct dra_condition *c = dra_device_condition(s, r->binding.failure_conditions[i]);
        if (c && c->status == COND_TRUE)
            return c;
    }
    return NULL;
}

/* The first bindingCondition of r not True in s (all of them when s is NULL), or NULL. */
static const char *condition_pending(const struct dra_result *r, const struct dra_device_status *s)
{
    for (size_t i = 0; i < r->binding.n_conditions; i++) {
        const struct dra_condition *c = dra_device_condition(s, r->binding.conditions[i]);
        if (!c || c->status != COND_TRUE)
            return r->binding.conditions[i];
    }
    return NULL;
}

void binding_facts_of(const struct dra_claim *const *claims, size_t n, int64_t now, int64_t timeout,
                      struct binding_facts *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; claims && i < n; i++) {
        const struct dra_claim *c = claims[i];
        if (!c || !c->allocated)
            continue;
        bool ready = true, failed = false, conditions = false;
        for (size_t j = 0; j < c->n_results; j++) {
            const struct dra_result *r = &c->results[j];
            if (r->binding.n_conditions == 0)
                continue;
            conditions = true;
            out->devices++;
            const struct dra_device_status *s = dra_claim_device_status(c, r);
            const struct dra_condition *f = failure_true(r, s);
            if (f) {
                failed = true;
                if (!out->failed) {
                    out->failed = f;
                    out->failed_claim = c;
                    out->failed_result = r;
                }
                continue;
            }
            const char *p = condition_pending(r, s);
            if (!p)
                continue;
            ready = false;
            out->pending++;
            if (!out->pending_condition) {
                out->pending_condition = p;
                out->pending_claim = c;
                out->pending_result = r;
            }
        }
        if (!conditions || failed || ready || c->allocation_timestamp <= 0)
            continue;
        int64_t deadline = c->allocation_timestamp + timeout + 1;
        if (!out->deadline || deadline < out->deadline)
            out->deadline = deadline;
        if (now <= 0)
            continue;
        int64_t waited = now - c->allocation_timestamp;
        /* upstream: AllocationTimestamp.Add(bindingTimeout).Before(now) */
        if (waited > timeout && !out->timed_out_claim) {
            out->timed_out_claim = c;
            out->waited = waited;
        }
    }
}

bool binding_scheduler_failed(const struct kpod *pod)
{
    const char *m = pod->scheduled.message;
    return pod->scheduled.status == COND_FALSE && m &&
           (strstr(m, "device binding failed") || strstr(m, "device binding timeout"));
}

static void put_device(struct line *l, const struct dra_claim *c, const struct dra_result *r)
{
    line_printf(l, "device %s/%s/%s of claim %s/%s", r->driver ? r->driver : "?",
                r->pool ? r->pool : "?", r->device ? r->device : "?", c->ns ? c->ns : "",
                c->name ? c->name : "?");
}

/* "allocated at T, binding timeout N s" (the claim's allocationTimestamp; stable over time, so
 * the detail changes only when the objects do). */
static void put_allocated(struct line *l, const struct dra_claim *c, int64_t timeout)
{
    if (c->allocation_timestamp > 0) {
        char when[CLOCK_RFC3339_MAX];
        clock_format_rfc3339(c->allocation_timestamp * 1000, false, when, sizeof(when));
        line_printf(l, "allocated at %s, ", when);
    }
    line_printf(l, "binding timeout %lld s", (long long)timeout);
}

/* "X, Y" : the binding conditions of r not True yet. */
static void put_pending(struct line *l, const struct dra_claim *c, const struct dra_result *r)
{
    const struct dra_device_status *s = dra_claim_device_status(c, r);
    size_t k = 0;
    for (size_t i = 0; i < r->binding.n_conditions; i++) {
        const struct dra_condition *cond = dra_device_condition(s, r->binding.conditions[i]);
        if (cond && cond->status == COND_TRUE)
            continue;
        line_printf(l, "%s%s", k++ ? ", " : "", r->binding.conditions[i]);
    }
}

/* What PreBind has to do besides binding conditions: the pod's claims and PVC volumes. */
static void put_work(struct line *l, const struct kpod *pod)
{
    if (pod->n_claims == 0 && !pod->pvc_volumes) {
        /* KEP-5004: the claim for extended resources a DeviceClass serves is made in PreBind */
        line_printf(l, pod_has_ext_requests(pod)
                           ? "binding the claim it creates for the pod's extended resources"
                           : "binding the pod");
        return;
    }
    line_printf(l, "binding ");
    if (pod->n_claims > 0) {
        line_printf(l, "resource claim%s ", pod->n_claims == 1 ? "" : "s");
        for (size_t i = 0; i < pod->n_claims; i++)
            line_printf(l, "%s%s", i ? ", " : "", pod->claims[i].name ? pod->claims[i].name : "?");
    }
    if (pod->pvc_volumes)
        line_printf(l, "%sPVC volumes", pod->n_claims > 0 ? " and " : "");
}

void binding_put(struct line *l, const struct kpod *pod, const struct binding_facts *f,
                 int64_t timeout, bool failed)
{
    if (pod->nominated_node)
        line_printf(l, "nominated node %s: ", pod->nominated_node);
    if (failed && f->failed) {
        line_printf(l, "binding failure condition %s is True on ", f->failed->type);
        put_device(l, f->failed_claim, f->failed_result);
        if (f->failed->reason && *f->failed->reason)
            line_printf(l, " (%s", f->failed->reason);
        if (f->failed->message && *f->failed->message)
            line_printf(l, "%s%s", f->failed->reason && *f->failed->reason ? ": " : " (",
                        f->failed->message);
        if ((f->failed->reason && *f->failed->reason) ||
            (f->failed->message && *f->failed->message))
            line_printf(l, ")");
        line_printf(l, ": the scheduler gives up binding the pod there, clears the allocation and "
                       "schedules it again; the device's driver could not prepare it");
        return;
    }
    if (failed && f->timed_out_claim) {
        line_printf(l,
                    "binding conditions of claim %s/%s not all True past the scheduler's binding "
                    "timeout (DynamicResources bindingTimeout; ",
                    f->timed_out_claim->ns ? f->timed_out_claim->ns : "",
                    f->timed_out_claim->name ? f->timed_out_claim->name : "?");
        put_allocated(l, f->timed_out_claim, timeout);
        line_printf(l, ")");
        if (f->pending_result && f->pending_claim == f->timed_out_claim) {
            line_printf(l, "; still pending: ");
            put_pending(l, f->pending_claim, f->pending_result);
            line_printf(l, " on ");
            put_device(l, f->pending_claim, f->pending_result);
        }
        line_printf(l, ": the scheduler clears the allocation and schedules the pod again; the "
                       "device's driver did not report it ready");
        return;
    }
    if (failed) {
        line_printf(l, "the scheduler's last attempt to bind the pod failed: %s",
                    pod->scheduled.message ? pod->scheduled.message : "");
        return;
    }
    line_printf(l, "the scheduler is binding the pod there (no pod is terminating there, so this "
                   "is no preemption)");
    if (f->pending_condition) {
        line_printf(l, "; waiting for binding condition%s ",
                    f->pending_result->binding.n_conditions == 1 ? "" : "s");
        put_pending(l, f->pending_claim, f->pending_result);
        line_printf(l, " of ");
        put_device(l, f->pending_claim, f->pending_result);
        if (f->pending > 1)
            line_printf(l, " (%zu devices pending)", f->pending);
        line_printf(l, " (");
        put_allocated(l, f->pending_claim, timeout);
        line_printf(l, ")");
        line_printf(l, "; the device's driver sets them on the claim's status.devices");
    } else {
        line_printf(l, "; ");
        put_work(l, pod);
    }
    if (binding_scheduler_failed(pod))
        line_printf(l, "; the previous attempt failed: %s", pod->scheduled.message);
}
