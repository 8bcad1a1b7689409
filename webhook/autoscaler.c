/* autoscaler.c - which node autoscaler is present: the flag's value, or discovery (autoscaler.h).
 */
#include "autoscaler.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/deadline.h"
#include "util/log.h"
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

/* One presence GET: 1 present, 0 absent, -1 unknown (rc and err say why). */
static int present_at(struct kube_client *client, const char *path, int *rc, struct kube_error *err)
{
    json_object *doc = NULL;
    memset(err, 0, sizeof(*err));
    *rc = kube_get(client, path, &doc, err);
    json_object_put(doc);
    if (*rc == K_OK)
        return 1;
    return *rc == K_ENOTFOUND ? 0 : -1;
}

unsigned wh_autoscaler_discover(struct kube_client *client, struct wh_autoscaler_probe *p)
{
    unsigned before = p->present, now = p->present;
    struct kube_error err;
    int rc;
    int k = present_at(client, WH_AUTOSCALER_KARPENTER_PATH, &rc, &err);
    if (k >= 0)
        now = k ? now | WH_AUTOSCALER_KARPENTER : now & ~WH_AUTOSCALER_KARPENTER;
    else
        log_info(1, "GET %s: %s%s%s; keeping what the last check found for Karpenter",
                 WH_AUTOSCALER_KARPENTER_PATH, k_strerror(rc), err.message[0] ? ": " : "",
                 err.message);
    int c = present_at(client, WH_AUTOSCALER_CA_STATUS_PATH, &rc, &err);
    if (c < 0 && rc == K_EFORBIDDEN) {
        if (!p->forbidden_said)
            log_warn("cannot read ConfigMap kube-system/cluster-autoscaler-status (%s): taking "
                     "Cluster Autoscaler as absent; grant get on it "
                     "(manifests/03-rbac-webhook.yaml) or pass --autoscaler",
                     err.message[0] ? err.message : k_strerror(rc));
        p->forbidden_said = true;
        c = 0;
    }
    if (c >= 0)
        now = c ? now | WH_AUTOSCALER_CA : now & ~WH_AUTOSCALER_CA;
    else
        log_info(1, "GET %s: %s%s%s; keeping what the last check found for Cluster Autoscaler",
                 WH_AUTOSCALER_CA_STATUS_PATH, k_strerror(rc), err.message[0] ? ": " : "",
                 err.message);
    if (!p->checked || now != before)
        log_info(0,
                 "node autoscaler%s: %s (API group karpenter.sh %s, ConfigMap "
                 "kube-system/cluster-autoscaler-status %s)",
                 p->checked ? " changed" : "", now ? wh_autoscaler_name(now) : "none",
                 now & WH_AUTOSCALER_KARPENTER ? "served" : "not served",
                 now & WH_AUTOSCALER_CA ? "present" : "absent");
    p->checked = true;
    p->present = now;
    return now;
}

/* ------------------------------------------------------------------ the thread */

struct wh_autoscaler_watch {
    int64_t interval_ms;
    atomic_uint *present;
    struct kube_client *client;
    struct wh_autoscaler_probe probe;
    pthread_t thread;
    bool started;
    atomic_bool checked;
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *watch_run(void *arg)
{
    struct wh_autoscaler_watch *w = arg;
    while (!atomic_load(&w->stop)) {
        atomic_store(w->present, wh_autoscaler_discover(w->client, &w->probe));
        atomic_store(&w->checked, true);
        int64_t until = clock_mono_ms(NULL) + w->interval_ms;
        pthread_mutex_lock(&w->mu);
        while (!atomic_load(&w->stop) &&
               !deadline_wait(&w->cv, &w->mu, CLOCK_REALTIME, NULL, until, 0))
            ;
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

struct wh_autoscaler_watch *wh_autoscaler_watch_new(const struct kube_config *cfg,
                                                    int64_t interval_ms, atomic_uint *present)
{
    struct wh_autoscaler_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->interval_ms = interval_ms > 0 ? interval_ms : WH_AUTOSCALER_DISCOVERY_MS;
    w->present = present;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->client = kube_client_new(cfg, "gputri-webhook/" GPUTRI_VERSION);
    if (!w->client) {
        wh_autoscaler_watch_free(w);
        return NULL;
    }
    kube_client_set_cancel(w->client, &w->stop);
    return w;
}

int wh_autoscaler_watch_start(struct wh_autoscaler_watch *w)
{
    if (pthread_create(&w->thread, NULL, watch_run, w) != 0)
        return K_ENOMEM;
    w->started = true;
    return K_OK;
}

bool wh_autoscaler_watch_checked(struct wh_autoscaler_watch *w)
{
    return atomic_load(&w->checked);
}

void wh_autoscaler_watch_free(struct wh_autoscaler_watch *w)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->mu);
        atomic_store(&w->stop, 1);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
    }
    kube_client_free(w->client);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
