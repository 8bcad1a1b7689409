/* autoscaler.c - which node autoscaler is present: the flag's value, or discovery (autoscaler.h).
 */
#include "autoscaler.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/periodic.h"
#include "util/result.h"
#include "util/version.h"

int wh_autoscaler_mode_parse(const char *s, enum wh_autoscaler_mode *out)
{
    static const struct {
        const char *name;
        enum wh_autoscaler_mode mode;
    } modes[] = {
        {"auto", WH_AUTOSCALER_MODE_AUTO},
        {"none", WH_AUTOSCALER_MODE_NONE},
        {"karpenter", WH_AUTOSCALER_MODE_KARPENTER},
        {"cluster-autoscaler", WH_AUTOSCALER_MODE_CA},
    };
    for (size_t i = 0; s && i < sizeof(modes) / sizeof(modes[0]); i++)
        if (strcmp(s, modes[i].name) == 0) {
            *out = modes[i].mode;
            return K_OK;
        }
    return K_EINVAL;
}

unsigned wh_autoscaler_mode_bits(enum wh_autoscaler_mode m)
{
    switch (m) {
    case WH_AUTOSCALER_MODE_KARPENTER:
        return WH_AUTOSCALER_KARPENTER;
    case WH_AUTOSCALER_MODE_CA:
        return WH_AUTOSCALER_CA;
    case WH_AUTOSCALER_MODE_AUTO:
    case WH_AUTOSCALER_MODE_NONE:
        break;
    }
    return 0;
}

const char *wh_autoscaler_name(unsigned present)
{
    switch (present & (WH_AUTOSCALER_KARPENTER | WH_AUTOSCALER_CA)) {
    case WH_AUTOSCALER_KARPENTER:
        return "Karpenter";
    case WH_AUTOSCALER_CA:
        return "Cluster Autoscaler";
    case WH_AUTOSCALER_KARPENTER | WH_AUTOSCALER_CA:
        return "Karpenter or Cluster Autoscaler";
    default:
        return NULL;
    }
}

/*
 * One presence GET for autoscaler `bit`, applied to *present: 200 sets it, 404 clears it. A 403
 * on the status ConfigMap clears it too (said once, through *forbidden_said). Anything else
 * leaves it as the last check found (logged at --v=1).
 */
static void check_one(struct kube_client *client, const char *path, unsigned bit, unsigned *present,
                      bool *forbidden_said)
{
    json_object *doc = NULL;
    struct kube_error err = {0};
    int rc = kube_get(client, path, &doc, &err);
    json_object_put(doc);
    const char *why = err.message[0] ? err.message : k_strerror(rc);
    if (rc == K_EFORBIDDEN && bit == WH_AUTOSCALER_CA) {
        if (!*forbidden_said)
            log_warn_kv("cannot read ConfigMap kube-system/cluster-autoscaler-status: taking "
                        "Cluster Autoscaler as absent; grant get on it "
                        "(manifests/03-rbac-webhook.yaml) or pass --autoscaler",
                        LOG_STR("err", why));
        *forbidden_said = true;
        rc = K_ENOTFOUND;
    }
    if (rc == K_OK)
        *present |= bit;
    else if (rc == K_ENOTFOUND)
        *present &= ~bit;
    else
        log_info_kv(1, "autoscaler check failed; keeping what the last check found",
                    LOG_STR("path", path), LOG_STR("err", why),
                    LOG_STR("autoscaler", wh_autoscaler_name(bit)));
}

unsigned wh_autoscaler_discover(struct kube_client *client, struct wh_autoscaler_probe *p)
{
    unsigned now = p->present;
    check_one(client, WH_AUTOSCALER_KARPENTER_PATH, WH_AUTOSCALER_KARPENTER, &now,
              &p->forbidden_said);
    check_one(client, WH_AUTOSCALER_CA_STATUS_PATH, WH_AUTOSCALER_CA, &now, &p->forbidden_said);
    if (!p->checked || now != p->present)
        log_info_kv(
            0, p->checked ? "node autoscaler changed" : "node autoscaler",
            LOG_STR("autoscaler", now ? wh_autoscaler_name(now) : "none"),
            LOG_STR("karpenterAPIGroup", now & WH_AUTOSCALER_KARPENTER ? "served" : "not served"),
            LOG_STR("clusterAutoscalerStatus", now & WH_AUTOSCALER_CA ? "present" : "absent"));
    p->checked = true;
    p->present = now;
    return now;
}

/* ------------------------------------------------------------------ the thread */

struct wh_autoscaler_watch {
    atomic_uint *present;
    struct kube_client *client;
    struct wh_autoscaler_probe probe;
    struct periodic loop; /* the thread */
    atomic_bool checked;
};

static void check(void *arg)
{
    struct wh_autoscaler_watch *w = arg;
    atomic_store(w->present, wh_autoscaler_discover(w->client, &w->probe));
    atomic_store(&w->checked, true);
}

struct wh_autoscaler_watch *wh_autoscaler_watch_new(const struct kube_config *cfg,
                                                    int64_t interval_ms, atomic_uint *present)
{
    struct wh_autoscaler_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->present = present;
    periodic_init(&w->loop, interval_ms > 0 ? interval_ms : WH_AUTOSCALER_DISCOVERY_MS, 0, check,
                  w);
    w->client = kube_client_new(cfg, "gputri-webhook/" GPUTRI_VERSION);
    if (!w->client) {
        wh_autoscaler_watch_free(w);
        return NULL;
    }
    kube_client_set_cancel(w->client, periodic_stop_flag(&w->loop));
    return w;
}

int wh_autoscaler_watch_start(struct wh_autoscaler_watch *w)
{
    return periodic_start(&w->loop, true) == 0 ? K_OK : K_ENOMEM;
}

bool wh_autoscaler_watch_checked(struct wh_autoscaler_watch *w)
{
    return atomic_load(&w->checked);
}

void wh_autoscaler_watch_free(struct wh_autoscaler_watch *w)
{
    if (!w)
        return;
    periodic_destroy(&w->loop); /* stops the thread first */
    kube_client_free(w->client);
    free(w);
}
