/* events.c - admission warnings to Events (see events.h). */
#include "events.h"

size_t wh_events_post(struct event_recorder *rec, const struct admission_result *r, bool may_record,
                      const char *instance)
{
    if (!may_record || r->dry_run || !r->ns[0] || !r->name[0])
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < r->warnings.n; i++) {
        struct kube_event_spec e = {
            .ns = r->ns,
            .kind = r->kind,
            .api_version = r->api_version,
            .name = r->name,
            .uid = r->uid,
            .type = "Warning",
            .reason = r->warnings.items[i].reason,
            .message = r->warnings.items[i].text,
            .component = WH_EVENT_COMPONENT,
            .instance = instance,
        };
        n += event_recorder_post(rec, &e);
    }
    return n;
}
