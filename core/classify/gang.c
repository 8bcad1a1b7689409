/* gang.c - gang-waiting and queue-waiting from PodGroups (classify/gang.h). */
#include "classify/gang.h"

#include <string.h>

/* "scheduling.run.ai" and so on: where to look for the group's Queue. */
static const char *queue_api(enum gang_kind k)
{
    return k == GANG_KAI ? "queues.scheduling.run.ai" : "queues.scheduling.volcano.sh";
}

static void put_group(struct line *l, const struct pod_gang *link, const char *ns)
{
    const char *group = "";
    gang_kind_api(link->kind, &group, NULL, NULL);
    line_printf(l, "%s %s/%s (%s)", gang_kind_name(link->kind), ns ? ns : "", link->name, group);
}

static void put_queue(struct line *l, const struct gang_group *g)
{
    if (g->queue[0])
        line_printf(l, "; look at Queue %s (kubectl get %s %s) and the PodGroup's status", g->queue,
                    queue_api(g->kind), g->queue);
    else
        line_printf(l, "; look at the PodGroup's queue and status");
}

static const char *scheduler_of(enum gang_kind k)
{
    switch (k) {
    case GANG_KAI:
        return "kai-scheduler does not try the gang (it writes only a PodGroup Event NotReady, "
               "no pod condition)";
    case GANG_VOLCANO:
        return "Volcano's gang plugin does not place the gang";
    default:
        return "kube-scheduler keeps every member out of its queue (GangScheduling PreEnqueue: no "
               "PodScheduled condition, no Event)";
    }
}

enum cause gang_word(const struct kpod *pod, const struct gang_facts *f, struct line *l)
{
    const struct pod_gang *link = pod->gang;
    if (!link || !f || !f->read || (pod->node_name && *pod->node_name))
        return CAUSE_COUNT;
    const struct gang_group *g = f->found ? &f->group : NULL;
    bool batch = link->kind == GANG_KAI || link->kind == GANG_VOLCANO;
    if (batch && g && g->queue_reason[0]) {
        put_group(l, link, pod->ns);
        line_printf(l, " is held back by its queue: %s", g->queue_reason);
        if (g->queue_message[0])
            line_printf(l, ": %s", g->queue_message);
        put_queue(l, g);
        return CAUSE_QUEUE_WAITING;
    }
    if (batch && g && f->event_reason[0] &&
        gang_event_is_queue(f->event_reason, f->event_message)) {
        put_group(l, link, pod->ns);
        line_printf(l, " is held back by its queue: Event %s: %s", f->event_reason,
                    f->event_message);
        put_queue(l, g);
        return CAUSE_QUEUE_WAITING;
    }
    if (!g) {
        put_group(l, link, pod->ns);
        line_printf(l, " does not exist: %s until it does; %zu pod%s reference it",
                    scheduler_of(link->kind), f->exist, f->exist == 1 ? "" : "s");
        if (link->kind == GANG_KAI)
            line_printf(l, " (KAI's podgrouper creates it; look at its pod Events "
                           "PodGrouperWarning)");
        return CAUSE_GANG_WAITING;
    }
    int64_t min = g->min;
    const char *field = batch ? "minMember" : "minCount";
    if (link->kind == GANG_WORKLOAD) {
        min = gang_group_sub_min(g, link->sub);
        if (min < 0) {
            put_group(l, link, pod->ns);
            line_printf(l, " has no podGroup %s: kube-scheduler keeps the pod out of its queue",
                        link->sub ? link->sub : "(none named in spec.workloadRef)");
            return CAUSE_GANG_WAITING;
        }
    }
    size_t ready = f->exist > f->gated ? f->exist - f->gated : 0;
    if (!g->gang || min <= 0 || (int64_t)ready >= min)
        return CAUSE_COUNT;
    /* kube-scheduler and kai-scheduler write no condition while the gang is short: one that
       tried the pod does not enforce the gang (1.35 / 1.36 without the GangScheduling gate); a
       gated pod's SchedulingGated is the API server's, not a try */
    if (link->kind != GANG_VOLCANO && pod->scheduled.status != COND_ABSENT &&
        !(pod->scheduled.reason && strcmp(pod->scheduled.reason, "SchedulingGated") == 0))
        return CAUSE_COUNT;
    put_group(l, link, pod->ns);
    if (link->kind == GANG_WORKLOAD)
        line_printf(l, " podGroup %s", link->sub);
    line_printf(l, " needs %s %lld, %zu pod%s, %zu gated: %s until %lld are there", field,
                (long long)min, f->exist, f->exist == 1 ? " exists" : "s exist", f->gated,
                scheduler_of(link->kind), (long long)min);
    if (link->kind == GANG_KAI && g->n_subs)
        line_printf(l, "; %zu subGroup%s", g->n_subs, g->n_subs == 1 ? "" : "s");
    if (f->event_reason[0])
        line_printf(l, "; Event %s: %s", f->event_reason, f->event_message);
    return CAUSE_GANG_WAITING;
}
