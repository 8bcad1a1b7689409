/* events.c - admission warnings to Events (see events.h). */
#include "events.h"

#include <string.h>

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

static const char *const MODE_NAMES[] = {
    [WH_EVENT_VERIFY_AUTO] = "auto",
    [WH_EVENT_VERIFY_CLIENT_CERT] = "client-cert",
    [WH_EVENT_VERIFY_LOOKUP] = "lookup",
    [WH_EVENT_VERIFY_OFF] = "off",
};

const char *wh_event_verification_name(enum wh_event_verification mode)
{
    return (unsigned)mode < sizeof(MODE_NAMES) / sizeof(MODE_NAMES[0]) ? MODE_NAMES[mode] : "?";
}

bool wh_event_verification_parse(const char *s, enum wh_event_verification *out)
{
    for (size_t i = 0; s && i < sizeof(MODE_NAMES) / sizeof(MODE_NAMES[0]); i++)
        if (strcmp(s, MODE_NAMES[i]) == 0) {
            *out = (enum wh_event_verification)i;
            return true;
        }
    return false;
}

enum wh_event_path wh_events_path(enum wh_event_verification mode, bool client_checked,
                                  bool client_verified, const struct admission_result *r)
{
    if (mode == WH_EVENT_VERIFY_OFF || r->warnings.n == 0 || r->dry_run || !r->ns[0] || !r->name[0])
        return WH_EVENT_NONE;
    bool verified = client_checked && client_verified;
    if (verified && (mode == WH_EVENT_VERIFY_AUTO || mode == WH_EVENT_VERIFY_CLIENT_CERT))
        return WH_EVENT_DIRECT;
    if (mode == WH_EVENT_VERIFY_CLIENT_CERT)
        return WH_EVENT_NONE;
    /* AUTO without a verified certificate, or LOOKUP */
    if (strcmp(r->operation, "CREATE") != 0 || !r->uid[0])
        return WH_EVENT_NONE;
    return WH_EVENT_LOOKUP;
}
