/*
 * kueue_api.h - which version of Kueue's API (group kueue.x-k8s.io) the API server serves, and the
 * Workloads' collection path at it.
 *
 * Versions read, best first: v1beta2 (Kueue 0.15+ stores it), v1beta1 (older Kueue; the fields
 * gputri reads, model/workload.h, are the same in both). Discovery is one GET of the APIGroup
 * document /apis/kueue.x-k8s.io (versions[].version; no RBAC needed: system:discovery), as
 * client-go's discovery client reads it (kubernetes/kubernetes:
 * staging/src/k8s.io/client-go/discovery/discovery_client.go); 404: Kueue's CRDs are not
 * installed. As kube/dra_api.h does for resource.k8s.io.
 *
 * Thread-safety: everything here is pure or uses only its arguments.
 */
#ifndef GPUTRI_KUBE_KUEUE_API_H
#define GPUTRI_KUBE_KUEUE_API_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"

enum kueue_api_version {
    KUEUE_API_NONE = 0,
    KUEUE_API_V1BETA1,
    KUEUE_API_V1BETA2,
    KUEUE_API_VERSION_COUNT,
};

#define KUEUE_API_GROUP "kueue.x-k8s.io"
#define KUEUE_API_GROUP_PATH "/apis/kueue.x-k8s.io"

/* kueue_api_version_name() - "v1beta2", "v1beta1"; "none" otherwise. Static string. */
const char *kueue_api_version_name(enum kueue_api_version v);

/* kueue_workloads_path() - "/apis/kueue.x-k8s.io/<v>/workloads", or "/apis/kueue.x-k8s.io/<v>/
 * namespaces/<ns>/workloads" with ns non-NULL, into buf (len bytes, terminated); "" for
 * KUEUE_API_NONE. Returns buf. Pure. */
char *kueue_workloads_path(enum kueue_api_version v, const char *ns, char *buf, size_t len);

/*
 * kueue_api_choose() - the best version an APIGroup document (`group`, borrowed; GET
 * KUEUE_API_GROUP_PATH) lists in versions[].version: v1beta2, else v1beta1, else KUEUE_API_NONE
 * (also for NULL or a document of another group). Pure.
 */
enum kueue_api_version kueue_api_choose(json_object *group);

/*
 * kueue_api_discover() - one discovery GET through `client` (borrowed). K_OK: *v holds the
 * version to read (KUEUE_API_NONE on 404: not served). Any other K_* (err filled): not known, *v
 * unchanged. Uses only its arguments.
 */
int kueue_api_discover(struct kube_client *client, enum kueue_api_version *v,
                       struct kube_error *err);

/*
 * What the discovery loop of one daemon remembers (zero-initialise; not thread-safe): the version
 * chosen, whether a check has answered, whether a failure was said.
 */
struct kueue_api_probe {
    enum kueue_api_version version;
    bool checked;
    bool failure_said;
};

/*
 * kueue_api_probe_step() - one discovery check applied to `p`. Returns true when p->version
 * changed (the first answer counts). Logs one line at --v=0 on the first answer and on every
 * change ("Kueue API kueue.x-k8s.io: reading Workloads at v1beta2", "... is not served: no Kueue
 * Workloads"); a failed check keeps p->version and is said once at --v=0, then at --v=2.
 */
bool kueue_api_probe_step(struct kube_client *client, struct kueue_api_probe *p);

#endif
