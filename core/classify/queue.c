/* queue.c - queue-waiting from a Kueue Workload's conditions. */
#include "classify/queue.h"

bool queue_kueue_waiting(const struct kworkload *w, struct line *l)
{
    const char *type = NULL;
    const struct pod_condition *c = workload_waiting(w, &type);
    if (!c)
        return false;
    line_printf(l, "Kueue Workload %s/%s: %s=False", w->ns, w->name, type);
    if (c->reason && *c->reason)
        line_printf(l, " (%s)", c->reason);
    if (c->message && *c->message)
        line_printf(l, ": %s", c->message);
    if (w->cluster_queue && *w->cluster_queue)
        line_printf(l, "; ClusterQueue %s", w->cluster_queue);
    else if (w->queue_name && *w->queue_name)
        line_printf(l, "; LocalQueue %s/%s", w->ns, w->queue_name);
    return true;
}
