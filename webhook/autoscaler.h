/*
 * autoscaler.h - whether a node autoscaler adds nodes on demand in this cluster, for the
 * webhook's node checks (warnings.h): where one is present, "no current node fits" is the
 * normal state before a node is added, not "pods will stay Pending".
 *
 * --autoscaler (options.h) names it, or (auto, the default) discovery finds it
 * (shared/reference/autoscalers.md 4, presence checks):
 *   Karpenter           the API serves group karpenter.sh: GET /apis/karpenter.sh answers 200
 *                       (its CRDs nodepools.karpenter.sh and nodeclaims.karpenter.sh are
 *                       installed; sigs.k8s.io/karpenter: pkg/apis/crds). Discovery needs no
 *                       RBAC (system:discovery).
 *   Cluster Autoscaler  its status ConfigMap exists: GET
 *                       /api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status
 *                       answers 200 (--status-config-map-name, default cluster-autoscaler-status,
 *                       in --namespace, default kube-system; kubernetes/autoscaler:
 *                       cluster-autoscaler/config/flags). Needs get on that one ConfigMap
 *                       (manifests/03-rbac-webhook.yaml).
 * 404 means absent. 403 on the ConfigMap means it cannot be known: it is logged once and taken as
 * absent. Any other failure (transport, 5xx, 429) keeps what the previous check found for that
 * autoscaler (absent before the first answer). The check runs when the webhook starts and every
 * --autoscaler-discovery-interval (default WH_AUTOSCALER_DISCOVERY_MS) in a thread of its own, so
 * an autoscaler installed or removed later is seen without a restart.
 */
#ifndef GPUTRI_WEBHOOK_AUTOSCALER_H
#define GPUTRI_WEBHOOK_AUTOSCALER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"

/* Autoscalers present, as bits of wh_snapshot.autoscalers. */
#define WH_AUTOSCALER_KARPENTER 1u
#define WH_AUTOSCALER_CA 2u

#define WH_AUTOSCALER_DISCOVERY_MS (5 * 60 * 1000)
#define WH_AUTOSCALER_KARPENTER_PATH "/apis/karpenter.sh"
#define WH_AUTOSCALER_CA_STATUS_PATH                                                               \
    "/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status"

/* --autoscaler: discovery (auto), or what the flag says. */
enum wh_autoscaler_mode {
    WH_AUTOSCALER_MODE_AUTO = 0,
    WH_AUTOSCALER_MODE_NONE,
    WH_AUTOSCALER_MODE_KARPENTER,
    WH_AUTOSCALER_MODE_CA,
};

/*
 * wh_autoscaler_mode_parse() - "auto", "none", "karpenter" or "cluster-autoscaler" into *out.
 * Returns K_OK or K_EINVAL (*out unchanged). Pure.
 */
int wh_autoscaler_mode_parse(const char *s, enum wh_autoscaler_mode *out);

/* wh_autoscaler_mode_bits() - the autoscalers a fixed mode names (0 for none and auto). Pure. */
unsigned wh_autoscaler_mode_bits(enum wh_autoscaler_mode m);

/*
 * wh_autoscaler_name() - how a warning names the autoscalers in `present`: "Karpenter",
 * "Cluster Autoscaler", "Karpenter or Cluster Autoscaler"; NULL when present is 0. Static
 * strings. Pure.
 */
const char *wh_autoscaler_name(unsigned present);

/* What one discovery check remembers for the next (zero-initialise). */
struct wh_autoscaler_probe {
    unsigned present; /* WH_AUTOSCALER_* bits the last check found */
    bool checked;     /* a check has run (its result was logged) */
    bool forbidden_said;
};

/*
 * wh_autoscaler_discover() - one discovery check through `client` (borrowed): GET
 * WH_AUTOSCALER_KARPENTER_PATH and WH_AUTOSCALER_CA_STATUS_PATH, read as the header says, into
 * p->present, which it returns. Logs the first result and every change at --v=0, a 403 on the
 * ConfigMap once (warning), other failures at --v=1. Not thread-safe on one `p`.
 */
unsigned wh_autoscaler_discover(struct kube_client *client, struct wh_autoscaler_probe *p);

/*
 * The discovery thread: wh_autoscaler_discover() at once and every interval_ms, through a client
 * of its own on `cfg` (borrowed; must outlive it), storing each result in *present (borrowed;
 * readers atomic_load it from any thread).
 */
struct wh_autoscaler_watch;

/* wh_autoscaler_watch_new() - NULL on ENOMEM. Nothing runs until _start. */
struct wh_autoscaler_watch *wh_autoscaler_watch_new(const struct kube_config *cfg,
                                                    int64_t interval_ms, atomic_uint *present);
/* wh_autoscaler_watch_start() - start the thread. K_OK or K_ENOMEM. Call once. */
int wh_autoscaler_watch_start(struct wh_autoscaler_watch *w);
/* wh_autoscaler_watch_checked() - the first check has ended (whatever it found). Thread-safe. */
bool wh_autoscaler_watch_checked(struct wh_autoscaler_watch *w);
/* wh_autoscaler_watch_free() - stop the thread (a request in flight is cancelled), join it and
 * free everything. NULL-safe; from the owner's thread. */
void wh_autoscaler_watch_free(struct wh_autoscaler_watch *w);

#endif
