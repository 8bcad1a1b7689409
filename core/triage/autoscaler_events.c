/* autoscaler_events.c - which Events of a pod the ladder reads (one rule for the controller and the
 * one-shot tools), and those Events read once, for one-shot tools (triage.h). */
#include <stdio.h>
#include <string.h>

#include "cache/informer.h"
#include "classify/autoscaler.h"
#include "classify/placement.h"
#include "classify/quota.h"
#include "kube/project.h"
#include "triage/triage.h"
#include "util/clock.h"
#include "util/result.h"

struct reading {
    struct pod_events *pe;
    size_t kept;
};

enum triage_event_kind triage_event_kind(const struct kevent *ev)
{
    struct autoscaler_evidence e;
    struct quota_refusal q;
    if (autoscaler_parse(ev, &e))
        return TRIAGE_EVENT_AUTOSCALER;
    if (quota_claim_event(ev, &q))
        return TRIAGE_EVENT_QUOTA;
    if (placement_event_kept(ev->component, ev->type, ev->reason, ev->message))
        return TRIAGE_EVENT_PLACEMENT;
    return TRIAGE_EVENT_NONE;
}

static void keep(void *ctx, json_object *obj)
{
    struct reading *r = ctx;
    struct kevent ev;
    if (project_event(obj, &ev) != K_OK || triage_event_kind(&ev) == TRIAGE_EVENT_NONE)
        return;
    int64_t not_after = clock_wall_s(clock_system()) + AUTOSCALER_CLOCK_SKEW;
    if (pod_events_apply(r->pe, &ev, false, not_after, NULL) == K_OK)
        r->kept++;
}

int triage_read_pod_events(struct kube_client *c, struct pod_events *pe, const char *ns,
                           const char *pod_uid, struct kube_error *err)
{
    /* field selectors, escaped: the autoscalers' Events, a claim refused by a ResourceQuota
     * (classify/quota.h), and the kubelets' warnings (classify/placement.h) */
    static const char *const sources[] = {
        "source%3Dcluster-autoscaler", "source%3Dkarpenter",
        ("type%3DWarning%2Creason%3D" QUOTA_CLAIM_EVENT_REASON),
        "source%3Dkubelet%2Ctype%3DWarning%2Creason%3DFailedCreatePodSandBox",
        "source%3Dkubelet%2Ctype%3DWarning%2Creason%3DFailed"};
    char ns_esc[256], base[512], path[1024];
    if (ns) {
        if (kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK)
            return K_EINVAL;
        snprintf(base, sizeof(base), "/api/v1/namespaces/%s/events", ns_esc);
    } else {
        snprintf(base, sizeof(base), "/api/v1/events");
    }
    struct reading r = {pe, 0};
    struct informer_handlers h = {.ctx = &r, .upsert = keep};
    if (pod_uid) {
        char uid_esc[256];
        if (kube_path_escape(pod_uid, uid_esc, sizeof(uid_esc)) != K_OK)
            return K_EINVAL;
        snprintf(path, sizeof(path), "%s?fieldSelector=involvedObject.uid%%3D%s", base, uid_esc);
        return informer_list_once(c, path, 500, &h, NULL, 0, err);
    }
    for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
        snprintf(path, sizeof(path), "%s?fieldSelector=%s", base, sources[i]);
        int rc = informer_list_once(c, path, 500, &h, NULL, 0, err);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}
